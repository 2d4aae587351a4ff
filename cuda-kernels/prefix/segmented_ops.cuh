// The segmented catalogue beyond reduction: the kernels of one element type, and the helpers
// every segmented kernel shares. See segmented_ops.cu for the catalogue; per element type
// two modules, so a first call compiles only its own type's entry points: the scans
// seg_scan_{t1,l4,l8,w32,blocks}_<op>_<type> (segmented_scan_<type>.cu, 20 entry points) and the
// quicksort's qs_pivots_<type>, seg_classify3_<type>, seg_count_unordered_<type>
// (segmented_ops_<type>.cu, 3).
#pragma once
#include "scan_ops.cuh"
#include "scan_instances.cuh"

#define HK_SEG_THREADS 256
#define HK_FULL 0xffffffffu
#define HK_NO_CLASS 0xffffffffu

HK_DEVICE void seg_bounds(const u64* off, u64 seg_len, u64 s, u64* lo, u64* hi) {
    if (off) {
        *lo = off[s];
        *hi = off[s + 1];
    } else {
        *lo = s * seg_len;
        *hi = *lo + seg_len;
    }
}

// The largest s < nseg with off[s] <= i: the segment holding element i (empty segments start
// where the next one does, so the largest such s is the non-empty one).
HK_DEVICE u64 seg_of(const u64* off, u64 seg_len, u64 nseg, u64 i) {
    if (!off) return i / seg_len;
    u64 lo = 0, hi = nseg;
    while (hi - lo > 1) {
        const u64 mid = lo + (hi - lo) / 2;
        if (off[mid] <= i) lo = mid; else hi = mid;
    }
    return lo;
}

// Part k of `parts` of segment lo..hi, as seg_reduce_blocks cuts it.
HK_DEVICE void part_bounds(u64 lo, u64 hi, u64 k, u64 parts, u64* a, u64* b) {
    const u64 len = hi - lo;
    *a = lo + len * k / parts;
    *b = lo + len * (k + 1) / parts;
}

// Maximum over the warp; every lane must call it.
HK_DEVICE u64 warp_max_u64(u64 v) {
    for (int d = 16; d > 0; d /= 2) {
        const u64 o = __shfl_xor_sync(HK_FULL, v, d);
        v = o > v ? o : v;
    }
    return v;
}

// ---- scans ----------------------------------------------------------------------------------

template <typename V, typename Op, int LANES>
__device__ void seg_scan_lanes(const V* x, V* y, const u64* off, u64 seg_len, u64 nseg, int exclusive) {
    Op op;
    const u64 per_warp = 32 / LANES;
    const u64 stride = grid_threads() / LANES;
    const int lane = threadIdx.x % LANES;
    const u64 in_warp = (threadIdx.x % 32) / LANES;
    for (u64 base = (global_thread() / 32) * per_warp; base < nseg; base += stride) {
        const u64 s = base + in_warp;
        u64 lo = 0, hi = 0;
        if (s < nseg) seg_bounds(off, seg_len, s, &lo, &hi);
        // Every lane of the warp runs the same number of chunks: the shuffles need them all.
        const u64 chunks = warp_max_u64((hi - lo + LANES - 1) / LANES);
        V carry = op.identity();
        for (u64 c = 0; c < chunks; ++c) {
            const u64 i = lo + c * LANES + lane;
            V v = i < hi ? x[i] : op.identity();
            for (int d = 1; d < LANES; d *= 2) {
                const V o = __shfl_up_sync(HK_FULL, v, d, LANES);
                if (lane >= d) v = op(o, v);
            }
            V before = __shfl_up_sync(HK_FULL, v, 1, LANES);
            if (lane == 0) before = op.identity();
            const V last = __shfl_sync(HK_FULL, v, LANES - 1, LANES);
            if (i < hi) y[i] = exclusive ? op(carry, before) : op(carry, v);
            carry = op(carry, last);
        }
    }
}

// Inclusive and exclusive scan of one value per thread across the block, and the block's
// total; every thread must call it.
template <typename V, typename Op> __device__ void block_scan(V v, V* warp_tot, V* incl, V* excl, V* total) {
    Op op;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, nw = blockDim.x / 32;
    for (int d = 1; d < 32; d *= 2) {
        const V o = __shfl_up_sync(HK_FULL, v, d);
        if (lane >= d) v = op(o, v);
    }
    V before = __shfl_up_sync(HK_FULL, v, 1);
    if (lane == 0) before = op.identity();
    if (lane == 31) warp_tot[warp] = v;
    __syncthreads();
    V pre = op.identity(), all = op.identity();
    for (int w = 0; w < nw; ++w) {
        if (w < warp) pre = op(pre, warp_tot[w]);
        all = op(all, warp_tot[w]);
    }
    __syncthreads();
    *incl = op(pre, v);
    *excl = op(pre, before);
    *total = all;
}

template <typename V, typename Op>
__device__ void seg_scan_blocks(const V* x, V* y, const u64* off, u64 seg_len, u64 nseg, u64 parts,
                                const V* carry_in, int exclusive) {
    Op op;
    __shared__ V warp_tot[HK_SEG_THREADS / 32];
    for (u64 w = blockIdx.x; w < nseg * parts; w += gridDim.x) {
        u64 lo, hi, a, b;
        seg_bounds(off, seg_len, w / parts, &lo, &hi);
        part_bounds(lo, hi, w % parts, parts, &a, &b);
        V carry = carry_in ? carry_in[w] : op.identity();
        for (u64 c = a; c < b; c += blockDim.x) {
            const u64 i = c + threadIdx.x;
            const V v = i < b ? x[i] : op.identity();
            V incl, excl, total;
            block_scan<V, Op>(v, warp_tot, &incl, &excl, &total);
            if (i < b) y[i] = op(carry, exclusive ? excl : incl);
            carry = op(carry, total);
        }
    }
}

#define HK_SEG_SCAN(OPNAME, OPT, SFX, V, P)                                                                \
    extern "C" __global__ void __launch_bounds__(HK_SEG_THREADS) seg_scan_t1_##OPNAME##_##SFX(             \
        const V* x, V* y, const u64* off, u64 seg_len, u64 nseg, int exclusive) {                          \
        seg_scan_lanes<V, OPT<V>, 1>(x, y, off, seg_len, nseg, exclusive);                                 \
    }                                                                                                      \
    extern "C" __global__ void __launch_bounds__(HK_SEG_THREADS) seg_scan_l4_##OPNAME##_##SFX(             \
        const V* x, V* y, const u64* off, u64 seg_len, u64 nseg, int exclusive) {                          \
        seg_scan_lanes<V, OPT<V>, 4>(x, y, off, seg_len, nseg, exclusive);                                 \
    }                                                                                                      \
    extern "C" __global__ void __launch_bounds__(HK_SEG_THREADS) seg_scan_l8_##OPNAME##_##SFX(             \
        const V* x, V* y, const u64* off, u64 seg_len, u64 nseg, int exclusive) {                          \
        seg_scan_lanes<V, OPT<V>, 8>(x, y, off, seg_len, nseg, exclusive);                                 \
    }                                                                                                      \
    extern "C" __global__ void __launch_bounds__(HK_SEG_THREADS) seg_scan_w32_##OPNAME##_##SFX(            \
        const V* x, V* y, const u64* off, u64 seg_len, u64 nseg, int exclusive) {                          \
        seg_scan_lanes<V, OPT<V>, 32>(x, y, off, seg_len, nseg, exclusive);                                \
    }                                                                                                      \
    extern "C" __global__ void __launch_bounds__(HK_SEG_THREADS) seg_scan_blocks_##OPNAME##_##SFX(         \
        const V* x, V* y, const u64* off, u64 seg_len, u64 nseg, u64 parts, const V* carry_in,             \
        int exclusive) {                                                                                   \
        seg_scan_blocks<V, OPT<V> >(x, y, off, seg_len, nseg, parts, carry_in, exclusive);                 \
    }
// ---- per-type pieces of split3 and the device quicksort -----------------------------------------

// Classes per element for split3: below, equal to, or else (above, or unordered) the pivot.
template <typename V>
__device__ void seg_classify3(const V* x, const u64* off, u64 seg_len, u64 nseg, const V* pivots, u64 n,
                              u32* cls) {
    for (u64 i = global_thread(); i < n; i += grid_threads()) {
        const V v = x[i], p = pivots[seg_of(off, seg_len, nseg, i)];
        cls[i] = v < p ? 0u : (v == p ? 1u : 2u);
    }
}

template <typename V> HK_DEVICE V qs_midpoint(V lo, V hi) {
    // floor((lo + hi) / 2) without overflow: arithmetic shifts floor for signed types.
    return (lo >> 1) + (hi >> 1) + (lo & hi & (V)1);
}
template <> HK_DEVICE float qs_midpoint<float>(float lo, float hi) {
    float m = __fadd_rn(__fmul_rn(lo, 0.5f), __fmul_rn(hi, 0.5f));
    if (m != m) m = 0.0f;
    return m < lo ? lo : (m > hi ? hi : m);
}
template <> HK_DEVICE double qs_midpoint<double>(double lo, double hi) {
    double m = __dadd_rn(__dmul_rn(lo, 0.5), __dmul_rn(hi, 0.5));
    if (m != m) m = 0.0;
    return m < lo ? lo : (m > hi ? hi : m);
}

#define HK_QS(SFX, V)                                                                                      \
    extern "C" __global__ void __launch_bounds__(HK_SEG_THREADS)                                           \
        qs_pivots_##SFX(const V* mins, const V* maxs, const u32* active, u64 nseg, V* pivots) {            \
        for (u64 s = global_thread(); s < nseg; s += grid_threads())                                       \
            pivots[s] = active[s] ? qs_midpoint<V>(mins[s], maxs[s]) : mins[s];                            \
    }                                                                                                      \
    extern "C" __global__ void __launch_bounds__(HK_SEG_THREADS) seg_classify3_##SFX(                      \
        const V* x, const u64* off, u64 seg_len, u64 nseg, const V* pivots, u64 n, u32* cls) {             \
        seg_classify3<V>(x, off, seg_len, nseg, pivots, n, cls);                                           \
    }                                                                                                      \
    extern "C" __global__ void __launch_bounds__(HK_SEG_THREADS)                                           \
        seg_count_unordered_##SFX(const V* x, u64 n, u64* count) {                                         \
        for (u64 i = global_thread(); i < n; i += grid_threads())                                          \
            if (!(x[i] == x[i])) atomicAdd(count, 1ull);                                                   \
    }
// HK_QS for the type with suffix SFX, its C type from scan_instances.cuh's table (whose operator
// slots HK_QS does not use).
#define HK_SEG_QS_X(OPNAME, OPT, SFX, V, P) HK_QS(SFX, V)
#define HK_SEG_TYPED(SFX) HK_SCAN_TYPE_##SFX(HK_SEG_QS_X, none, none)
