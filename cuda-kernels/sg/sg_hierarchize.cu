// Hierarchization and dehierarchization along chains, one launch per dimension (thesis §4.4.1,
// Listing 4.2, with the chain mapping of sg-cpu).
//
// A chain of dimension t is the set of blocks that differ only in l_t. For a fixed level L of a
// chain, the block's in-block positions k = (hi * 2^(L-1) + p) * 2^s + lo enumerate (hi, p, lo)
// row-major, so the elements of one level of one chain are one contiguous run of memory: thread
// e of a work group handles element e, and a warp reads and writes 32 consecutive values.
//
// Work groups (one thread block each) are built on the host (tables.rs): either one chain and a
// power-of-two range of its hi values and of its lo values (long chains are split, since poles
// with different hi or lo are independent; lo ranges keep at least 32 consecutive values), or
// several whole chains that share (top, h, s) (short chains are merged). The host shrinks the
// group size until a sweep has enough groups to fill the device. A group's row holds: first
// chain, chain count, first hi, hi bits, top level, s, first lo, lo bits.
//
// Inside a group the levels are processed one after the other with a barrier between them:
// hierarchization finest level first (children read their parents while those are still
// nodal), dehierarchization coarsest first (parents are nodal again when children read them).
#include "sg_common.cuh"

#define SG_GROUP_WORDS 8

template <typename T, bool HIERARCHIZE>
__device__ void sg_sweep(const u32* __restrict__ groups, const u64* __restrict__ chains, u32 stride,
                         u32 ncomp, T* __restrict__ v) {
    const u32* g = groups + (u64)blockIdx.x * SG_GROUP_WORDS;
    const u32 c0 = g[0], nch = g[1], hi0 = g[2], hbits = g[3], top = g[4], s = g[5], lo0 = g[6], lbits = g[7];
    const T half = (T)0.5;
    for (u32 step = 0; step < top; ++step) {
        const u32 level = HIERARCHIZE ? top - step : step + 1;
        const u32 lb = level - 1;
        const u32 shift = hbits + lb + lbits;  // element bits per chain at this level
        const u64 points = (u64)nch << shift;
        const u64 count = points * ncomp;
        for (u64 e = threadIdx.x; e < count; e += blockDim.x) {
            u64 pe = e;
            u32 comp = 0;
            if (ncomp != 1) {
                pe = e / ncomp;
                comp = (u32)(e - pe * ncomp);
            }
            const u32 ci = (u32)(pe >> shift);
            const u64 r = pe & ((1ull << shift) - 1ull);
            const u64 hi = (u64)hi0 + (r >> (lb + lbits));
            const u32 p = (u32)((r >> lbits) & ((1ull << lb) - 1ull));
            const u64 lo = (u64)lo0 + (r & ((1ull << lbits) - 1ull));
            const u64* chain = chains + (u64)(c0 + ci) * stride;
            const u32 index = 2u * p + 1u;
            const u64 child = sg_point_base(chain, s, hi, level, index) + lo;
            T sum = (T)0;
            for (u32 side = 0; side < 2; ++side) {
                u32 pl, pi;
                sg_parent(level, index, side, pl, pi);
                const u64 base = sg_point_base(chain, s, hi, pl, pi);
                if (base != SG_NONE) sum += v[(base + lo) * ncomp + comp];
            }
            if (HIERARCHIZE) {
                v[child * ncomp + comp] -= half * sum;
            } else {
                v[child * ncomp + comp] += half * sum;
            }
        }
        // The next level overwrites the parents this level just read.
        __syncthreads();
    }
}

#define SG_SWEEP_INSTANCE(T, SUF)                                                                   \
    extern "C" __global__ void sg_hierarchize_##SUF(const u32* groups, const u64* chains, u32 stride, \
                                                    u32 ncomp, T* v) {                              \
        sg_sweep<T, true>(groups, chains, stride, ncomp, v);                                        \
    }                                                                                               \
    extern "C" __global__ void sg_dehierarchize_##SUF(const u32* groups, const u64* chains,         \
                                                      u32 stride, u32 ncomp, T* v) {                \
        sg_sweep<T, false>(groups, chains, stride, ncomp, v);                                       \
    }

SG_SWEEP_INSTANCE(float, f32)
SG_SWEEP_INSTANCE(double, f64)
