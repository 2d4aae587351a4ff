// Segmented reduction at six granularities (HiDP's Fig. 6.1, Tables 6.3/6.4): LANES
// consecutive lanes per segment (1: a thread, 4, 8, 32: a warp), one block per segment, or
// several blocks per segment (partials, then a thread-per-segment pass over the partials).
// Segments are CSR offsets (u64, nseg + 1 entries) when `offsets` is non-zero, else regular
// segments of `seg_len`. Every lane folds its strided elements left to right and lanes combine
// by a butterfly: the result is exact for integers and for Min/Max, and within rounding of the
// sequential fold for float sums and products (the operators are commutative).
// One module per element type (segmented_reduce_<type>.cu: HK_SCAN_OPS_OF(HK_SEG_REDUCE, <type>),
// 20 entry points).
#pragma once
#include "scan_ops.cuh"
#include "scan_instances.cuh"

#define HK_SEG_THREADS 256
#define HK_FULL 0xffffffffu

HK_DEVICE void seg_bounds(const u64* offsets, u64 seg_len, u64 s, u64* lo, u64* hi) {
    if (offsets) {
        *lo = offsets[s];
        *hi = offsets[s + 1];
    } else {
        *lo = s * seg_len;
        *hi = *lo + seg_len;
    }
}

// LANES lanes per segment; warps loop in lock step so the shuffles see every lane.
template <typename V, typename Op, int LANES>
__device__ void seg_reduce_lanes(const V* x, const u64* offsets, u64 seg_len, u64 nseg, V* out) {
    Op op;
    const u64 per_warp = 32 / LANES;
    const u64 stride = grid_threads() / LANES;
    const int lane = threadIdx.x % LANES;
    const u64 in_warp = (threadIdx.x % 32) / LANES;
    for (u64 base = (global_thread() / 32) * per_warp; base < nseg; base += stride) {
        const u64 s = base + in_warp;
        V acc = op.identity();
        if (s < nseg) {
            u64 lo, hi;
            seg_bounds(offsets, seg_len, s, &lo, &hi);
            for (u64 i = lo + lane; i < hi; i += LANES) acc = op(acc, x[i]);
        }
        for (int d = LANES / 2; d > 0; d /= 2) acc = op(acc, __shfl_xor_sync(HK_FULL, acc, d, LANES));
        if (s < nseg && lane == 0) out[s] = acc;
    }
}

// The block's combination of one value per thread; every thread must call it.
template <typename V, typename Op> __device__ V block_reduce(V acc, V* warp_vals) {
    Op op;
    for (int d = 16; d > 0; d /= 2) acc = op(acc, __shfl_xor_sync(HK_FULL, acc, d));
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0) warp_vals[warp] = acc;
    __syncthreads();
    acc = lane < (int)(blockDim.x / 32) ? warp_vals[lane] : op.identity();
    for (int d = 16; d > 0; d /= 2) acc = op(acc, __shfl_xor_sync(HK_FULL, acc, d));
    __syncthreads();
    return acc;
}

// `parts` blocks per segment: block w reduces part w % parts of segment w / parts into
// out[w] (parts = 1: one block per segment, out holds the results).
template <typename V, typename Op>
__device__ void seg_reduce_blocks(const V* x, const u64* offsets, u64 seg_len, u64 nseg, u64 parts, V* out) {
    Op op;
    __shared__ V warp_vals[HK_SEG_THREADS / 32];
    for (u64 w = blockIdx.x; w < nseg * parts; w += gridDim.x) {
        const u64 s = w / parts, k = w % parts;
        u64 lo, hi;
        seg_bounds(offsets, seg_len, s, &lo, &hi);
        const u64 len = hi - lo;
        const u64 a = lo + len * k / parts, b = lo + len * (k + 1) / parts;
        V acc = op.identity();
        for (u64 i = a + threadIdx.x; i < b; i += blockDim.x) acc = op(acc, x[i]);
        acc = block_reduce<V, Op>(acc, warp_vals);
        if (threadIdx.x == 0) out[w] = acc;
    }
}

#define HK_SEG_REDUCE(OPNAME, OPT, SFX, V, P)                                                              \
    extern "C" __global__ void __launch_bounds__(HK_SEG_THREADS)                                           \
        seg_reduce_t1_##OPNAME##_##SFX(const V* x, const u64* off, u64 seg_len, u64 nseg, V* out) {          \
        seg_reduce_lanes<V, OPT<V>, 1>(x, off, seg_len, nseg, out);                                        \
    }                                                                                                      \
    extern "C" __global__ void __launch_bounds__(HK_SEG_THREADS)                                           \
        seg_reduce_l4_##OPNAME##_##SFX(const V* x, const u64* off, u64 seg_len, u64 nseg, V* out) {          \
        seg_reduce_lanes<V, OPT<V>, 4>(x, off, seg_len, nseg, out);                                        \
    }                                                                                                      \
    extern "C" __global__ void __launch_bounds__(HK_SEG_THREADS)                                           \
        seg_reduce_l8_##OPNAME##_##SFX(const V* x, const u64* off, u64 seg_len, u64 nseg, V* out) {          \
        seg_reduce_lanes<V, OPT<V>, 8>(x, off, seg_len, nseg, out);                                        \
    }                                                                                                      \
    extern "C" __global__ void __launch_bounds__(HK_SEG_THREADS)                                           \
        seg_reduce_w32_##OPNAME##_##SFX(const V* x, const u64* off, u64 seg_len, u64 nseg, V* out) {         \
        seg_reduce_lanes<V, OPT<V>, 32>(x, off, seg_len, nseg, out);                                       \
    }                                                                                                      \
    extern "C" __global__ void __launch_bounds__(HK_SEG_THREADS) seg_reduce_blocks_##OPNAME##_##SFX(        \
        const V* x, const u64* off, u64 seg_len, u64 nseg, u64 parts, V* out) {                            \
        seg_reduce_blocks<V, OPT<V> >(x, off, seg_len, nseg, parts, out);                                  \
    }
