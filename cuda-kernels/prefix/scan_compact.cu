// Stream compaction and stable partition built on scan: `pos` is the INCLUSIVE u32 Add scan of
// the 0/1 flags (computed by scan_lookback_add_u32). Element i is kept when pos[i] steps past
// pos[i-1] (read from the same or the neighbouring line, so the flags are not read a second
// time); kept elements go to out[pos[i] - 1]; with `partition`, the others follow in order at
// out[n_true + i - pos[i]], n_true = pos[n-1] (also the count the host reads back).
#include "../common/types.cuh"

template <typename V>
__device__ void scatter(const V* x, const u32* pos, u64 n, V* out, int partition) {
    if (n == 0) return;
    const u64 n_true = pos[n - 1];
    // Flags other than 0/1 (a caller bug) make the positions overshoot: the range checks keep
    // the writes inside `out`, and the host reports the bad count.
    for (u64 i = global_thread(); i < n; i += grid_threads()) {
        const u64 p = pos[i];
        const bool kept = p > (i == 0 ? 0u : pos[i - 1]);
        const u64 dst = kept ? p - 1 : n_true + i - p;
        if ((kept || partition) && dst < n) out[dst] = x[i];
    }
}

#define HK_SCATTER(SFX, V)                                                                         \
    extern "C" __global__ void scan_scatter_##SFX(const V* x, const u32* pos, u64 n, V* out,       \
                                                  int partition) {                                 \
        scatter(x, pos, n, out, partition);                                                        \
    }
HK_SCATTER(i32, int)
HK_SCATTER(u32, u32)
HK_SCATTER(f32, float)
HK_SCATTER(i64, i64)
HK_SCATTER(u64, u64)
HK_SCATTER(f64, double)
