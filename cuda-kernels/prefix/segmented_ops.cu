// The segmented catalogue beyond reduction, at the granularities of segmented_reduce.cu: LANES
// consecutive lanes per segment (1: a thread, 4, 8, 32: a warp), one block per segment, or
// several blocks ("parts") per segment. Segments are CSR offsets (u64, nseg + 1 entries) when
// `off` is non-zero, else regular segments of `seg_len`.
//
// - scans: lanes scan chunks of LANES elements by shuffles and carry the chunk total; blocks
//   scan chunks of 256 with a block scan; several blocks per segment start from a carry-in
//   (the exclusive scan of the parts' totals, made by the host from seg_reduce_blocks);
// - reverse: W workers per segment swap mirrored pairs (no collectives, any W);
// - stable k-way splits (partition, split3, compact) from a class per element (u32, 0..K):
//   count classes per segment or part, turn the counts into write bases (one thread per
//   segment, which also writes the new descriptor), then scatter: every chunk ranks its
//   elements per class by ballots, so equal classes keep their input order;
// - the descriptor rebuild from head flags and the device quicksort's per-round kernels.
//
// This module holds the kernels that do not depend on the element type (reverse by element
// width, the splits' counts, bases and scatters, the rebuild, the quicksort's round); the
// per-type ones (scans, pivots, 3-way classes) are in segmented_ops_<type>.cu over
// segmented_ops.cuh.
#include "segmented_ops.cuh"

// ---- reverse --------------------------------------------------------------------------------

// W workers per segment (the grid's thread count is a multiple of W).
template <typename V> __device__ void seg_reverse(V* x, const u64* off, u64 seg_len, u64 nseg, u64 W) {
    const u64 per_pass = grid_threads() / W;
    const u64 lane = global_thread() % W;
    for (u64 g = global_thread() / W; g < nseg; g += per_pass) {
        u64 lo, hi;
        seg_bounds(off, seg_len, g, &lo, &hi);
        const u64 half = (hi - lo) / 2;
        for (u64 i = lane; i < half; i += W) {
            const V t = x[lo + i];
            x[lo + i] = x[hi - 1 - i];
            x[hi - 1 - i] = t;
        }
    }
}

extern "C" __global__ void __launch_bounds__(HK_SEG_THREADS)
    seg_reverse_b4(u32* x, const u64* off, u64 seg_len, u64 nseg, u64 W) {
    seg_reverse<u32>(x, off, seg_len, nseg, W);
}
extern "C" __global__ void __launch_bounds__(HK_SEG_THREADS)
    seg_reverse_b8(u64* x, const u64* off, u64 seg_len, u64 nseg, u64 W) {
    seg_reverse<u64>(x, off, seg_len, nseg, W);
}

// The segment id of every element, W workers per segment.
extern "C" __global__ void __launch_bounds__(HK_SEG_THREADS)
    seg_fill_ids(const u64* off, u64 seg_len, u64 nseg, u64 W, u32* ids) {
    const u64 per_pass = grid_threads() / W;
    const u64 lane = global_thread() % W;
    for (u64 g = global_thread() / W; g < nseg; g += per_pass) {
        u64 lo, hi;
        seg_bounds(off, seg_len, g, &lo, &hi);
        for (u64 i = lo + lane; i < hi; i += W) ids[i] = (u32)g;
    }
}

// ---- stable k-way splits ----------------------------------------------------------------------



// Class counts of each segment, LANES lanes per segment: counts[s * K + c].
template <int LANES>
__device__ void seg_count_lanes(const u32* cls, const u64* off, u64 seg_len, u64 nseg, u32 K, u64* counts) {
    const u64 per_warp = 32 / LANES;
    const u64 stride = grid_threads() / LANES;
    const int lane = threadIdx.x % LANES;
    const u64 in_warp = (threadIdx.x % 32) / LANES;
    for (u64 base = (global_thread() / 32) * per_warp; base < nseg; base += stride) {
        const u64 s = base + in_warp;
        u64 n[3] = {0, 0, 0};
        if (s < nseg) {
            u64 lo, hi;
            seg_bounds(off, seg_len, s, &lo, &hi);
            for (u64 i = lo + lane; i < hi; i += LANES) {
                const u32 k = cls[i];
                if (k < 3) n[k] += 1;
            }
        }
        for (int q = 0; q < 3; ++q)
            for (int d = LANES / 2; d > 0; d /= 2) n[q] += __shfl_xor_sync(HK_FULL, n[q], d, LANES);
        if (s < nseg && lane == 0)
            for (u32 q = 0; q < K; ++q) counts[s * K + q] = n[q];
    }
}

// Class counts of each part of each segment: counts[(s * parts + k) * K + c].
__device__ void seg_count_blocks(const u32* cls, const u64* off, u64 seg_len, u64 nseg, u64 parts, u32 K,
                                 u64* counts) {
    __shared__ u64 warp_tot[HK_SEG_THREADS / 32];
    for (u64 w = blockIdx.x; w < nseg * parts; w += gridDim.x) {
        u64 lo, hi, a, b;
        seg_bounds(off, seg_len, w / parts, &lo, &hi);
        part_bounds(lo, hi, w % parts, parts, &a, &b);
        u64 n[3] = {0, 0, 0};
        for (u64 i = a + threadIdx.x; i < b; i += blockDim.x) {
            const u32 k = cls[i];
            if (k < 3) n[k] += 1;
        }
        for (u32 q = 0; q < K; ++q) {
            u64 incl, excl, total;
            block_scan<u64, AddOp<u64> >(n[q], warp_tot, &incl, &excl, &total);
            if (threadIdx.x == 0) counts[w * K + q] = total;
        }
    }
}

// Counts (s, part, class) into write bases, in place: class c of segment s starts after the
// classes before it, each part after the parts before it. The segment starts at `out_start[s]`
// (compaction) or where it started; `new_off`, when given, receives the K * nseg + 1 offsets of
// the parts. One thread per segment.
__device__ void seg_split_bases(u64* counts, const u64* off, u64 seg_len, u64 nseg, u64 parts, u32 K,
                                const u64* out_start, u64* new_off) {
    for (u64 s = global_thread(); s < nseg; s += grid_threads()) {
        u64 lo, hi;
        seg_bounds(off, seg_len, s, &lo, &hi);
        if (out_start) lo = out_start[s];
        u64 total[3] = {0, 0, 0}, run[3] = {0, 0, 0};
        for (u64 k = 0; k < parts; ++k)
            for (u32 q = 0; q < K; ++q) total[q] += counts[(s * parts + k) * K + q];
        u64 at = lo;
        for (u32 q = 0; q < K; ++q) {
            run[q] = at;
            at += total[q];
            if (new_off) new_off[s * K + q + 1] = at;
        }
        if (s == 0 && new_off) new_off[0] = 0;
        for (u64 k = 0; k < parts; ++k)
            for (u32 q = 0; q < K; ++q) {
                const u64 idx = (s * parts + k) * K + q;
                const u64 c = counts[idx];
                counts[idx] = run[q];
                run[q] += c;
            }
    }
}

// Class-0 totals per segment (what compaction keeps), and a trailing 0 so that their
// exclusive scan is the compacted descriptor's nseg + 1 offsets.
__device__ void seg_class0_totals(const u64* counts, u64 nseg, u64 parts, u32 K, u64* kept) {
    for (u64 s = global_thread(); s < nseg; s += grid_threads()) {
        u64 t = 0;
        for (u64 k = 0; k < parts; ++k) t += counts[(s * parts + k) * K];
        kept[s] = t;
    }
    if (global_thread() == 0) kept[nseg] = 0;
}

// Scatter, LANES lanes per segment: chunks of LANES elements in order, each lane's rank among
// the chunk's elements of its class from one ballot per class. Classes >= keep are dropped.
template <typename V, int LANES>
__device__ void seg_scatter_lanes(const V* x, const u32* cls, const u64* off, u64 seg_len, u64 nseg, u32 K,
                                  u32 keep, const u64* bases, V* y) {
    const u64 per_warp = 32 / LANES;
    const u64 stride = grid_threads() / LANES;
    const u32 wl = threadIdx.x % 32;
    const u32 lane = wl % LANES;
    const u32 gmask = LANES == 32 ? HK_FULL : ((1u << LANES) - 1u) << (wl - lane);
    const u32 below = (1u << wl) - 1u;
    const u64 in_warp = wl / LANES;
    for (u64 base = (global_thread() / 32) * per_warp; base < nseg; base += stride) {
        const u64 s = base + in_warp;
        u64 lo = 0, hi = 0, run[3] = {0, 0, 0};
        if (s < nseg) {
            seg_bounds(off, seg_len, s, &lo, &hi);
            for (u32 q = 0; q < K; ++q) run[q] = bases[s * K + q];
        }
        const u64 chunks = warp_max_u64((hi - lo + LANES - 1) / LANES);
        for (u64 c = 0; c < chunks; ++c) {
            const u64 i = lo + c * LANES + lane;
            const u32 k = i < hi ? cls[i] : HK_NO_CLASS;
            for (u32 q = 0; q < K; ++q) {
                const u32 bal = __ballot_sync(HK_FULL, k == q) & gmask;
                if (k == q && q < keep) y[run[q] + __popc(bal & below)] = x[i];
                run[q] += __popc(bal);
            }
        }
    }
}

// Scatter, `parts` blocks per segment: chunks of the block's width in order, ranks from the
// warps' ballots and the block's per-warp counts.
template <typename V>
__device__ void seg_scatter_blocks(const V* x, const u32* cls, const u64* off, u64 seg_len, u64 nseg, u64 parts,
                                   u32 K, u32 keep, const u64* bases, V* y) {
    __shared__ u32 wcount[3][HK_SEG_THREADS / 32];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, nw = blockDim.x / 32;
    const u32 below = (1u << lane) - 1u;
    for (u64 w = blockIdx.x; w < nseg * parts; w += gridDim.x) {
        u64 lo, hi, a, b, run[3] = {0, 0, 0};
        seg_bounds(off, seg_len, w / parts, &lo, &hi);
        part_bounds(lo, hi, w % parts, parts, &a, &b);
        for (u32 q = 0; q < K; ++q) run[q] = bases[w * K + q];
        for (u64 c = a; c < b; c += blockDim.x) {
            const u64 i = c + threadIdx.x;
            const u32 k = i < b ? cls[i] : HK_NO_CLASS;
            u32 rank[3] = {0, 0, 0};
            for (u32 q = 0; q < K; ++q) {
                const u32 bal = __ballot_sync(HK_FULL, k == q);
                if (lane == 0) wcount[q][warp] = __popc(bal);
                rank[q] = __popc(bal & below);
            }
            __syncthreads();
            for (u32 q = 0; q < K; ++q) {
                u64 before = 0, total = 0;
                for (int v = 0; v < nw; ++v) {
                    const u64 m = wcount[q][v];
                    if (v < warp) before += m;
                    total += m;
                }
                if (k == q && q < keep) y[run[q] + before + rank[q]] = x[i];
                run[q] += total;
            }
            __syncthreads();
        }
    }
}

extern "C" __global__ void __launch_bounds__(HK_SEG_THREADS) seg_count_t1(const u32* cls, const u64* off,
                                                                          u64 seg_len, u64 nseg, u32 K, u64* counts) {
    seg_count_lanes<1>(cls, off, seg_len, nseg, K, counts);
}
extern "C" __global__ void __launch_bounds__(HK_SEG_THREADS) seg_count_l4(const u32* cls, const u64* off,
                                                                          u64 seg_len, u64 nseg, u32 K, u64* counts) {
    seg_count_lanes<4>(cls, off, seg_len, nseg, K, counts);
}
extern "C" __global__ void __launch_bounds__(HK_SEG_THREADS) seg_count_l8(const u32* cls, const u64* off,
                                                                          u64 seg_len, u64 nseg, u32 K, u64* counts) {
    seg_count_lanes<8>(cls, off, seg_len, nseg, K, counts);
}
extern "C" __global__ void __launch_bounds__(HK_SEG_THREADS) seg_count_w32(const u32* cls, const u64* off,
                                                                           u64 seg_len, u64 nseg, u32 K, u64* counts) {
    seg_count_lanes<32>(cls, off, seg_len, nseg, K, counts);
}
extern "C" __global__ void __launch_bounds__(HK_SEG_THREADS)
    seg_count_blocks_k(const u32* cls, const u64* off, u64 seg_len, u64 nseg, u64 parts, u32 K, u64* counts) {
    seg_count_blocks(cls, off, seg_len, nseg, parts, K, counts);
}
extern "C" __global__ void __launch_bounds__(HK_SEG_THREADS)
    seg_split_bases_k(u64* counts, const u64* off, u64 seg_len, u64 nseg, u64 parts, u32 K, const u64* out_start,
                      u64* new_off) {
    seg_split_bases(counts, off, seg_len, nseg, parts, K, out_start, new_off);
}
extern "C" __global__ void __launch_bounds__(HK_SEG_THREADS)
    seg_class0_totals_k(const u64* counts, u64 nseg, u64 parts, u32 K, u64* kept) {
    seg_class0_totals(counts, nseg, parts, K, kept);
}

#define HK_SEG_SCATTER(BYTES, V)                                                                           \
    extern "C" __global__ void __launch_bounds__(HK_SEG_THREADS) seg_scatter_t1_##BYTES(                   \
        const V* x, const u32* cls, const u64* off, u64 seg_len, u64 nseg, u32 K, u32 keep, const u64* bases, \
        V* y) {                                                                                            \
        seg_scatter_lanes<V, 1>(x, cls, off, seg_len, nseg, K, keep, bases, y);                            \
    }                                                                                                      \
    extern "C" __global__ void __launch_bounds__(HK_SEG_THREADS) seg_scatter_l4_##BYTES(                   \
        const V* x, const u32* cls, const u64* off, u64 seg_len, u64 nseg, u32 K, u32 keep, const u64* bases, \
        V* y) {                                                                                            \
        seg_scatter_lanes<V, 4>(x, cls, off, seg_len, nseg, K, keep, bases, y);                            \
    }                                                                                                      \
    extern "C" __global__ void __launch_bounds__(HK_SEG_THREADS) seg_scatter_l8_##BYTES(                   \
        const V* x, const u32* cls, const u64* off, u64 seg_len, u64 nseg, u32 K, u32 keep, const u64* bases, \
        V* y) {                                                                                            \
        seg_scatter_lanes<V, 8>(x, cls, off, seg_len, nseg, K, keep, bases, y);                            \
    }                                                                                                      \
    extern "C" __global__ void __launch_bounds__(HK_SEG_THREADS) seg_scatter_w32_##BYTES(                  \
        const V* x, const u32* cls, const u64* off, u64 seg_len, u64 nseg, u32 K, u32 keep, const u64* bases, \
        V* y) {                                                                                            \
        seg_scatter_lanes<V, 32>(x, cls, off, seg_len, nseg, K, keep, bases, y);                           \
    }                                                                                                      \
    extern "C" __global__ void __launch_bounds__(HK_SEG_THREADS) seg_scatter_blocks_##BYTES(               \
        const V* x, const u32* cls, const u64* off, u64 seg_len, u64 nseg, u64 parts, u32 K, u32 keep,     \
        const u64* bases, V* y) {                                                                          \
        seg_scatter_blocks<V>(x, cls, off, seg_len, nseg, parts, K, keep, bases, y);                       \
    }
HK_SEG_SCATTER(b4, u32)
HK_SEG_SCATTER(b8, u64)

// ---- the descriptor rebuild (Fig. 5.7) ----------------------------------------------------------

// 0/1 per head flag, and a trailing 0: their exclusive scan numbers the heads.
extern "C" __global__ void __launch_bounds__(HK_SEG_THREADS)
    seg_heads_to_counts(const u32* flags, u64 n, u64* h) {
    for (u64 i = global_thread(); i < n; i += grid_threads()) h[i] = flags[i] != 0 ? 1ull : 0ull;
    if (global_thread() == 0) h[n] = 0;
}

// Offsets from the numbered heads: head i starts segment pos[i]; pos[n] segments end at n.
extern "C" __global__ void __launch_bounds__(HK_SEG_THREADS)
    seg_heads_to_offsets(const u32* flags, const u64* pos, u64 n, u64* off) {
    for (u64 i = global_thread(); i < n; i += grid_threads())
        if (flags[i] != 0) off[pos[i]] = i;
    if (global_thread() == 0) off[pos[n]] = n;
}

// ---- the device quicksort's round --------------------------------------------------------------


// A part of the 3-way split that still needs sorting: of an active segment, not the `equal`
// part, longer than one element.
HK_DEVICE bool qs_live(const u64* poff, const u32* active, u64 p) {
    return active[p / 3] != 0 && p % 3 != 1 && poff[p + 1] - poff[p] > 1;
}

// 1 where part p starts a segment of the next round: non-empty, and live or after a live part
// (runs of done parts merge into one done segment); a trailing 0 for the scan.
extern "C" __global__ void __launch_bounds__(HK_SEG_THREADS)
    qs_heads(const u64* poff, u64 nparts, const u32* active, u64* head) {
    for (u64 p = global_thread(); p < nparts; p += grid_threads()) {
        u64 h = 0;
        if (poff[p + 1] > poff[p]) {
            if (poff[p] == 0 || qs_live(poff, active, p)) {
                h = 1;
            } else {
                const u64 q = seg_of(poff, 0, p, poff[p] - 1);
                h = qs_live(poff, active, q) ? 1 : 0;
            }
        }
        head[p] = h;
    }
    if (global_thread() == 0) head[nparts] = 0;
}

// The next round's offsets and activity from the numbered heads (`pos`, the exclusive scan of
// qs_heads: part p is a head where pos[p + 1] > pos[p]); summary[0] = segments, summary[1] +=
// active segments (summary zeroed before).
extern "C" __global__ void __launch_bounds__(HK_SEG_THREADS)
    qs_next(const u64* poff, u64 nparts, const u32* active, const u64* pos, u64* new_off, u32* new_active,
            u64* summary) {
    for (u64 p = global_thread(); p < nparts; p += grid_threads()) {
        if (pos[p + 1] == pos[p]) continue;
        const bool live = qs_live(poff, active, p);
        new_off[pos[p]] = poff[p];
        new_active[pos[p]] = live ? 1u : 0u;
        if (live) atomicAdd(&summary[1], 1ull);
    }
    if (global_thread() == 0) {
        new_off[pos[nparts]] = poff[nparts];
        summary[0] = pos[nparts];
    }
}

// Classes from 0/1 flags: flagged elements are class 0 (they go first, or are kept).
extern "C" __global__ void __launch_bounds__(HK_SEG_THREADS) seg_flags_to_classes(const u32* flags, u64 n,
                                                                                  u32* cls) {
    for (u64 i = global_thread(); i < n; i += grid_threads()) cls[i] = flags[i] != 0 ? 0u : 1u;
}
