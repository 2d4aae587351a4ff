// Batched evaluation u(x_j) = sum over blocks of v[offset + k(x_j)] * phi(x_j) (thesis §4.4.2,
// Listing 4.3 with the "CUDA regs" variant), walking the blocks as a trie of their per-dimension
// kinds (the pseudorecursive idea): blocks that agree in dimensions 0..t share the partial basis
// product and the partial in-block position of that prefix, so each trie node costs one basis
// evaluation, one multiply and one shift-or per point, and a leaf adds one gather and one FMA per
// output component.
// A regular grid has about two trie nodes per block, so the work per block and point is a small
// constant instead of the thesis's 6 d flops.
//
// Every thread walks the same nodes in the same order (no divergence; every node load is a
// broadcast). The node array is staged in shared memory when the host decided it costs no
// occupancy, else read from global memory through the read-only cache (a broadcast L1 hit).
//
// Components: one walk accumulates a tile of `ctile` components of every point (the host picks
// the tile, normally all of them): component c0 of the tile in registers, components
// c0 + 1 .. c0 + nc - 1 in thread-private shared memory slots
// sacc[((c - 1) * PT + q) * blockDim.x + threadIdx.x] (consecutive threads use consecutive words:
// no bank conflicts), after the staged nodes. The values of one point's components are
// contiguous, so a leaf's gathers for the whole tile touch one or two sectors.
//
// Registers: each thread evaluates PT points whose coordinates x[PT][D] live in registers (D and
// PT are template parameters, every loop over them unrolled); the partial products of depth t are
// locals of the depth-t instantiation of the walk, so they live in registers too. Point q of
// thread j of block b is row b * blockDim.x * PT + q * blockDim.x + j, so stores are coalesced.
//
// This header holds the templates; each file of sg/eval/ instantiates one (type, dimension), so
// an evaluation compiles only the module of its own dimension (NVRTC time, issue 17).
#pragma once
#include "sg_common.cuh"

// The dynamic shared memory of an evaluation block: [staged nodes (if any) | accumulators].
extern __shared__ u64 sg_eval_smem[];

// Where a leaf adds its contributions: the value array and the component tile.
template <typename T>
struct SgLeaf {
    const T* __restrict__ values;
    u32 ncomp;
    u32 c0;    // first component of the tile
    u32 nc;    // components in the tile
    T* sacc;   // this thread's first shared accumulator slot
};

template <typename T, int D, int PT, int t>
struct SgWalk {
    static HK_DEVICE void run(const u64* nodes, u64 begin, u64 end, const T (&x)[PT][D], const T (&pp)[PT],
                              const u32 (&pk)[PT], T (&acc)[PT], const SgLeaf<T>& leaf) {
        for (u64 i = begin; i < end;) {
            const u64 w = nodes[i];
            const u32 level = sg_node_level(w);
            const u32 side = sg_node_side(w);
            const u32 bits = sg_node_bits(w);
            const u64 link = sg_node_link(w);
            T p[PT];
            u32 k[PT];
#pragma unroll
            for (int q = 0; q < PT; ++q) {
                T v;
                u32 c;
                sg_basis<T>(level, side, x[q][t], v, c);
                p[q] = t == 0 ? v : pp[q] * v;
                k[q] = t == 0 ? c : ((pk[q] << bits) | c);
            }
            if (t == D - 1) {
#pragma unroll
                for (int q = 0; q < PT; ++q) {
                    const T* vp = leaf.values + (link + k[q]) * leaf.ncomp + leaf.c0;
                    acc[q] += vp[0] * p[q];
                    // Not unrolled: unrolling this runtime loop cost 32 registers at pt = 4.
#pragma unroll 1
                    for (u32 c = 1; c < leaf.nc; ++c) leaf.sacc[((c - 1) * PT + q) * blockDim.x] += vp[c] * p[q];
                }
                ++i;
            } else {
                // The clamp keeps the instantiation finite; at t = D - 1 this branch is dead.
                SgWalk<T, D, PT, (t + 1 < D ? t + 1 : t)>::run(nodes, i + 1, link, x, p, k, acc, leaf);
                i = link;
            }
        }
    }
};

// Copies the node array into shared memory when the host asked for it; returns the array to walk.
HK_DEVICE const u64* sg_stage_nodes(const u64* nodes, u64 n_nodes, u32 staged) {
    if (!staged) return nodes;
    for (u64 i = threadIdx.x; i < n_nodes; i += blockDim.x) sg_eval_smem[i] = nodes[i];
    __syncthreads();
    return sg_eval_smem;
}

// This thread's first accumulator slot, after the staged nodes.
template <typename T>
HK_DEVICE T* sg_acc_slots(u64 n_nodes, u32 staged) {
    return (T*)(sg_eval_smem + (staged ? n_nodes : 0)) + threadIdx.x;
}

template <typename T, int D, int PT>
__device__ void sg_eval_regs(const u64* __restrict__ nodes, u64 n_nodes, u32 staged,
                             const T* __restrict__ values, u32 ncomp, u32 ctile, const T* __restrict__ points,
                             u64 m, T* __restrict__ out) {
    const u64* walk = sg_stage_nodes(nodes, n_nodes, staged);
    const u64 first = (u64)blockIdx.x * blockDim.x * PT + threadIdx.x;
    if (first >= m) return;  // after the barrier in sg_stage_nodes; no barrier follows
    T x[PT][D];
#pragma unroll
    for (int q = 0; q < PT; ++q) {
        const u64 j = first + (u64)q * blockDim.x;
#pragma unroll
        for (int t = 0; t < D; ++t) x[q][t] = j < m ? points[j * D + t] : (T)0;
    }
    SgLeaf<T> leaf{values, ncomp, 0, 0, sg_acc_slots<T>(n_nodes, staged)};
    for (u32 c0 = 0; c0 < ncomp; c0 += ctile) {
        leaf.c0 = c0;
        leaf.nc = ncomp - c0 < ctile ? ncomp - c0 : ctile;
        T acc[PT];
        T one[PT];
        u32 zero[PT];
#pragma unroll
        for (int q = 0; q < PT; ++q) {
            acc[q] = (T)0;
            one[q] = (T)1;
            zero[q] = 0;
        }
        for (u32 s = 0; s < (leaf.nc - 1) * PT; ++s) leaf.sacc[s * blockDim.x] = (T)0;
        SgWalk<T, D, PT, 0>::run(walk, 0, n_nodes, x, one, zero, acc, leaf);
#pragma unroll
        for (int q = 0; q < PT; ++q) {
            const u64 j = first + (u64)q * blockDim.x;
            if (j >= m) continue;
            out[j * ncomp + c0] = acc[q];
            for (u32 c = 1; c < leaf.nc; ++c) out[j * ncomp + c0 + c] = leaf.sacc[((c - 1) * PT + q) * blockDim.x];
        }
    }
}

// Any d up to 64: one point per thread, the per-depth products, positions and subtree ends in
// local memory (cached), an explicit stack instead of template recursion.
#define SG_GENERIC_MAX_D 64

template <typename T>
__device__ void sg_eval_generic(const u64* __restrict__ nodes, u64 n_nodes, u32 staged, u32 d,
                                const T* __restrict__ values, u32 ncomp, u32 ctile, const T* __restrict__ points,
                                u64 m, T* __restrict__ out) {
    const u64* walk = sg_stage_nodes(nodes, n_nodes, staged);
    const u64 j = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= m || d == 0 || d > SG_GENERIC_MAX_D) return;
    T xs[SG_GENERIC_MAX_D];
    T prod[SG_GENERIC_MAX_D];
    u32 idx[SG_GENERIC_MAX_D];
    u64 ends[SG_GENERIC_MAX_D];
    for (u32 t = 0; t < d; ++t) xs[t] = points[j * d + t];
    T* sacc = sg_acc_slots<T>(n_nodes, staged);
    for (u32 c0 = 0; c0 < ncomp; c0 += ctile) {
        const u32 nc = ncomp - c0 < ctile ? ncomp - c0 : ctile;
        for (u32 c = 1; c < nc; ++c) sacc[(c - 1) * blockDim.x] = (T)0;
        T acc = (T)0;
        u32 t = 0;
        ends[0] = n_nodes;
        for (u64 i = 0; i < n_nodes;) {
            while (i == ends[t]) --t;  // leave finished subtrees; ends[0] = n_nodes > i stops it
            const u64 w = walk[i];
            T v;
            u32 c;
            sg_basis<T>(sg_node_level(w), sg_node_side(w), xs[t], v, c);
            const T p = t == 0 ? v : prod[t - 1] * v;
            const u32 k = t == 0 ? c : ((idx[t - 1] << sg_node_bits(w)) | c);
            if (t == d - 1) {
                const T* vp = values + (sg_node_link(w) + k) * ncomp + c0;
                acc += vp[0] * p;
                for (u32 cc = 1; cc < nc; ++cc) sacc[(cc - 1) * blockDim.x] += vp[cc] * p;
            } else {
                prod[t] = p;
                idx[t] = k;
                ends[t + 1] = sg_node_link(w);
                ++t;
            }
            ++i;
        }
        out[j * ncomp + c0] = acc;
        for (u32 c = 1; c < nc; ++c) out[j * ncomp + c0 + c] = sacc[(c - 1) * blockDim.x];
    }
}

#define SG_EVAL_REGS(T, SUF, D, PT)                                                                     \
    extern "C" __global__ void sg_eval_##SUF##_d##D##_p##PT(const u64* nodes, u64 n_nodes, u32 staged,  \
                                                            const T* values, u32 ncomp, u32 ctile,      \
                                                            const T* points, u64 m, T* out) {           \
        sg_eval_regs<T, D, PT>(nodes, n_nodes, staged, values, ncomp, ctile, points, m, out);           \
    }

// One module of sg/eval/: the three points-per-thread variants of one (type, dimension).
#define SG_EVAL_PTS(T, SUF, D) SG_EVAL_REGS(T, SUF, D, 1) SG_EVAL_REGS(T, SUF, D, 2) SG_EVAL_REGS(T, SUF, D, 4)

#define SG_EVAL_GENERIC(T, SUF)                                                                        \
    extern "C" __global__ void sg_eval_##SUF##_generic(const u64* nodes, u64 n_nodes, u32 staged, u32 d,   \
                                                       const T* values, u32 ncomp, u32 ctile,          \
                                                       const T* points, u64 m, T* out) {               \
        sg_eval_generic<T>(nodes, n_nodes, staged, d, values, ncomp, ctile, points, m, out);           \
    }
