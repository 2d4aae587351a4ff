// Tree-Partitioning Reduction in three kernels (digest D§3.3.4, corrected boundary rule).
// A system of m rows is padded to np = M * S rows (S, M powers of two). Block indices:
// kernels 1 and 3 take blockIdx.x = g * M + j (slice j of system g), kernel 2 one block (or one
// thread, for large M) per system.
//   w:    G*M*S/2 bottom-chain equations (the odd rows of each slice, in level order: see
//         tpr_stage1): all that stage 3 reads, and nothing else is written
//   tops: G*M slice-top equations T_j (x[lo-1], x[lo], x[hi])
//   xr:   G*M solutions at the slice bottoms
#include "tridiag_steps.cuh"

extern __shared__ __align__(16) unsigned char tridiag_smem[];

// Stage 1 keeps each chain compact per level: the top chain T_l (rows q * 2^l) in place over the
// slice, the bottom chain B_l (rows q * 2^l + 2^l - 1) level after level behind it, so a step
// reads rows 2q - 1, 2q, 2q + 1 (or 2q, 2q + 1, 2q + 2) of the level below and writes row q, in
// the swizzled structure of arrays (no bank conflict), where the in-place steps at stride 2^l hit
// one bank 2^l times. B_l's even entries are final (its odd ones are B_{l+1}): they go to w in
// level order, w[S/2 - (S >> l) + q/2], which puts the slice's bottom row last, as before.
// Shared: 4 arrays of align32(S) + tri_level_off(S, log2 S + 1) values (gpu_banks.rs).
template <typename T>
__device__ void tpr_stage1(const T* a, const T* b, const T* c, const T* d, TriEq<T>* w, TriEq<T>* tops, u32 m,
                           u32 S, u32 M, TriLayout lay) {
    const u32 L = 31 - __clz(S);
    const u32 top_n = tri_align32(S);
    const TriSoa<T> sm = {reinterpret_cast<T*>(tridiag_smem), top_n + tri_level_off(S, L + 1)};
    u64 g = blockIdx.x / M;
    u32 j = blockIdx.x % M, lo = j * S;
    u64 base = g * lay.sys_stride;
    for (u32 o = threadIdx.x; o < S; o += blockDim.x) sm.put(o, tri_load(a, b, c, d, base, lay.elem_stride, lo + o, m));
    __syncthreads();
    const u64 wslice = (g * (u64)M + j) * (S / 2);
    for (u32 l = 1; l <= L; ++l) {
        const u32 cnt = S >> l;
        const u32 bsrc = l == 1 ? 0 : top_n + tri_level_off(S, l - 1);
        const u32 bdst = top_n + tri_level_off(S, l);
        const u32 wlev = S / 2 - cnt;
        // Chunks in increasing q: a chunk overwrites top rows below every row a later one reads.
        for (u32 q0 = 0; q0 < cnt; q0 += blockDim.x) {
            const u32 q = q0 + threadIdx.x;
            TriEq<T> top = tri_identity<T>();
            if (q < cnt) {
                const bool hr = 2 * q + 2 < 2 * cnt;
                TriEq<T> bot = tri_reduce(sm.get(bsrc + 2 * q + 1), sm.get(bsrc + 2 * q), true,
                                          hr ? sm.get(bsrc + 2 * q + 2) : tri_identity<T>(), hr);
                sm.put(bdst + q, bot);
                if ((q & 1) == 0) w[wslice + wlev + q / 2] = bot;
                const bool hl = q > 0;
                top = tri_reduce(sm.get(2 * q), hl ? sm.get(2 * q - 1) : tri_identity<T>(), hl, sm.get(2 * q + 1), true);
            }
            __syncthreads();
            if (q < cnt) sm.put(q, top);
            __syncthreads();
        }
    }
    if (threadIdx.x == 0) {
        TriEq<T> top = sm.get(0), bot = sm.get(top_n + tri_level_off(S, L)), t;
        // Eliminate x[hi+1] from the top equation with the bottom one.
        T f = bot.c == T(0) ? T(0) : top.c / bot.c;
        t.a = top.a - f * bot.a; t.b = top.b; t.c = -f * bot.b; t.d = top.d - f * bot.d;
        tops[g * M + j] = t;
    }
}

// Reduced row of slice j: bottom equation with x[hi+1] eliminated by the next slice's top.
template <typename T>
__device__ TriEq<T> tpr_reduced_row(const TriEq<T>* w, const TriEq<T>* tops, u64 g, u32 j, u32 S, u32 M) {
    TriEq<T> bot = w[(g * (u64)M + j) * (S / 2) + S / 2 - 1];
    if (j + 1 == M) return bot;
    TriEq<T> t = tops[g * M + j + 1];
    T f = bot.c / t.b;
    TriEq<T> r;
    r.a = bot.a; r.b = bot.b - f * t.a; r.c = -f * t.c; r.d = bot.d - f * t.d;
    return r;
}

// Stage 2, small M: one block per system, CR-PCR in shared memory (2M equations + 2M unknowns).
template <typename T>
__device__ void tpr_stage2_block(const TriEq<T>* w, const TriEq<T>* tops, T* xr, u32 S, u32 M, u32 pcr_size) {
    TriEq<T>* s = reinterpret_cast<TriEq<T>*>(tridiag_smem);
    T* xs = reinterpret_cast<T*>(s + 2 * M);
    u64 g = blockIdx.x;
    for (u32 j = threadIdx.x; j < M; j += blockDim.x) {
        TriEq<T> r = tpr_reduced_row(w, tops, g, j, S, M);
        if (j == 0) r.a = T(0);
        s[j] = r;
    }
    __syncthreads();
    tri_block_cr_pcr(s, xs, M, pcr_size);
    for (u32 j = threadIdx.x; j < M; j += blockDim.x) xr[g * M + j] = xs[j];
}

// Stage 2, large M: the reduced rows written out as a strided batch of G systems of M rows (one
// thread per row), which the host solves one TPR level down: no system is left to one thread.
template <typename T>
__device__ void tpr_reduced(const TriEq<T>* w, const TriEq<T>* tops, T* ra, T* rb, T* rc, T* rd, u32 S, u32 M,
                            u64 rows) {
    u64 t = global_thread();
    if (t >= rows) return;
    u64 g = t / M;
    u32 j = (u32)(t % M);
    TriEq<T> r = tpr_reduced_row(w, tops, g, j, S, M);
    ra[t] = r.a; rb[t] = r.b; rc[t] = r.c; rd[t] = r.d;
}

// Stage 3: the unknowns of the bottom chain's levels, compact per level (X_l[q] is the unknown
// of B_l[q]; X_l[2t + 1] = X_{l+1}[t]) in the swizzled layout, highest level first; then the
// even rows from their original equations. Thread t reads X_{l+1}[t] and takes X_{l+1}[t - 1]
// from its neighbour lane (a unit-stride read one element off a bank row would conflict in
// the swizzled layout); lane 0 reads its own. Blocks are whole warps (threads_for in gpu.rs).
// Shared: tri_level_off(S, log2 S + 1) values.
// X_{l+1}[t] and X_{l+1}[t - 1] (`before` for t = 0) of the level at `up`, for t < count; called
// by whole warps (the shuffle's full mask).
template <typename T>
__device__ void tpr_neighbours(const T* xs, u32 up, u32 t, u32 count, T before, T& right, T& left) {
    right = t < count ? xs[tri_swz<T>(up + t)] : T(0);
    left = __shfl_up_sync(0xffffffffu, right, 1);
    if ((threadIdx.x & 31u) == 0) left = t > 0 && t < count ? xs[tri_swz<T>(up + t - 1)] : before;
}

template <typename T>
__device__ void tpr_stage3(const T* a, const T* b, const T* c, const T* d, const TriEq<T>* w, const T* xr, T* x,
                           u32 m, u32 S, u32 M, TriLayout lay) {
    T* xs = reinterpret_cast<T*>(tridiag_smem);
    const u32 L = 31 - __clz(S);
    u64 g = blockIdx.x / M;
    u32 j = blockIdx.x % M, lo = j * S;
    u64 base = g * lay.sys_stride, wbase = (g * (u64)M + j) * (S / 2);
    T before = j == 0 ? T(0) : xr[g * M + j - 1];
    if (threadIdx.x == 0) xs[tri_swz<T>(tri_level_off(S, L))] = xr[g * M + j];
    __syncthreads();
    for (u32 l = L - 1; l >= 1; --l) {
        const u32 half = (S >> l) / 2, up = tri_level_off(S, l + 1), cur = tri_level_off(S, l);
        const u32 wlev = S / 2 - (S >> l);
        for (u32 t0 = 0; t0 < half; t0 += blockDim.x) {
            const u32 t = t0 + threadIdx.x;
            T right, left;
            tpr_neighbours(xs, up, t, half, before, right, left);
            if (t < half) {
                xs[tri_swz<T>(cur + 2 * t)] = tri_solve_with(w[wbase + wlev + t], left, right);
                xs[tri_swz<T>(cur + 2 * t + 1)] = right;
            }
        }
        __syncthreads();
    }
    // Row 2t from its original equation and x[2t -+ 1]; row 2t + 1 is X_1[t].
    for (u32 t0 = 0; t0 < S / 2; t0 += blockDim.x) {
        const u32 t = t0 + threadIdx.x, o = 2 * t;
        T right, left;
        tpr_neighbours(xs, 0, t, S / 2, before, right, left);
        if (t >= S / 2) continue;
        if (lo + o < m) {
            TriEq<T> e = tri_load(a, b, c, d, base, lay.elem_stride, lo + o, m);
            x[base + (u64)(lo + o) * lay.elem_stride] = tri_solve_with(e, left, right);
        }
        if (lo + o + 1 < m) x[base + (u64)(lo + o + 1) * lay.elem_stride] = right;
    }
}

#define TRI_TPR_ENTRIES(T, S_)                                                                               \
    extern "C" __global__ void TRI_BLOCK_BOUNDS tridiag_tpr_stage1_##S_(const T* a, const T* b, const T* c, const T* d,       \
                                                       TriEq<T>* w, TriEq<T>* tops, u32 m, u32 S, u32 M,     \
                                                       u64 ss, u64 es) {                                     \
        TriLayout lay = {ss, es};                                                                             \
        tpr_stage1(a, b, c, d, w, tops, m, S, M, lay);                                                        \
    }                                                                                                         \
    extern "C" __global__ void TRI_BLOCK_BOUNDS tridiag_tpr_stage2_block_##S_(const TriEq<T>* w, const TriEq<T>* tops, T* xr, \
                                                             u32 S, u32 M, u32 pcr_size) {                   \
        tpr_stage2_block(w, tops, xr, S, M, pcr_size);                                                        \
    }                                                                                                         \
    extern "C" __global__ void tridiag_tpr_reduced_##S_(const TriEq<T>* w, const TriEq<T>* tops, T* ra,      \
                                                        T* rb, T* rc, T* rd, u32 S, u32 M, u64 rows) {       \
        tpr_reduced(w, tops, ra, rb, rc, rd, S, M, rows);                                                     \
    }                                                                                                         \
    extern "C" __global__ void TRI_BLOCK_BOUNDS tridiag_tpr_stage3_##S_(const T* a, const T* b, const T* c, const T* d,       \
                                                       const TriEq<T>* w, const T* xr, T* x, u32 m, u32 S,   \
                                                       u32 M, u64 ss, u64 es) {                              \
        TriLayout lay = {ss, es};                                                                             \
        tpr_stage3(a, b, c, d, w, xr, x, m, S, M, lay);                                                       \
    }

TRI_TPR_ENTRIES(float, f32)
TRI_TPR_ENTRIES(double, f64)
