// Tree-Partitioning Reduction in three kernels (digest D§3.3.4, corrected boundary rule).
// A system of m rows is padded to np = M * S rows (S, M powers of two). Block indices:
// kernels 1 and 3 take blockIdx.x = g * M + j (slice j of system g), kernel 2 one block (or one
// thread, for large M) per system.
//   w:    G*M*S/2 bottom-chain equations (odd offsets o of each slice, at (o-1)/2): all that
//         stage 3 reads, and nothing else is written
//   tops: G*M slice-top equations T_j (x[lo-1], x[lo], x[hi])
//   xr:   G*M solutions at the slice bottoms
#include "tridiag_steps.cuh"

extern __shared__ __align__(16) unsigned char tridiag_smem[];

template <typename T>
__device__ void tpr_stage1(const T* a, const T* b, const T* c, const T* d, TriEq<T>* w, TriEq<T>* tops, u32 m,
                           u32 S, u32 M, TriLayout lay) {
    TriEq<T>* s = reinterpret_cast<TriEq<T>*>(tridiag_smem);
    TriEq<T>* upd = s + S;
    u64 g = blockIdx.x / M;
    u32 j = blockIdx.x % M, lo = j * S;
    u64 base = g * lay.sys_stride;
    for (u32 o = threadIdx.x; o < S; o += blockDim.x) s[o] = tri_load(a, b, c, d, base, lay.elem_stride, lo + o, m);
    __syncthreads();
    for (u32 st = 2; st <= S; st *= 2) {
        u32 u = st / 2, per_chain = S / st;
        // Updates of this step (top chain o = q*st, bottom chain o = q*st + st-1) go to upd first:
        // at st = 2 the chains cover every equation, so reads must see only the previous step.
        for (u32 t = threadIdx.x; t < 2 * per_chain; t += blockDim.x) {
            u32 q = t % per_chain;
            u32 o = t < per_chain ? q * st : q * st + st - 1;
            bool hl = o >= u, hr = o + u < S;
            upd[t] = tri_reduce(s[o], hl ? s[o - u] : tri_identity<T>(), hl, hr ? s[o + u] : tri_identity<T>(), hr);
        }
        __syncthreads();
        for (u32 t = threadIdx.x; t < 2 * per_chain; t += blockDim.x) {
            u32 q = t % per_chain;
            s[t < per_chain ? q * st : q * st + st - 1] = upd[t];
        }
        __syncthreads();
    }
    u64 wbase = (g * (u64)M + j) * (S / 2);
    for (u32 o = 2 * threadIdx.x + 1; o < S; o += 2 * blockDim.x) w[wbase + o / 2] = s[o];
    if (threadIdx.x == 0) {
        TriEq<T> top = s[0], bot = s[S - 1], t;
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

template <typename T>
__device__ void tpr_stage3(const T* a, const T* b, const T* c, const T* d, const TriEq<T>* w, const T* xr, T* x,
                           u32 m, u32 S, u32 M, TriLayout lay) {
    T* xs = reinterpret_cast<T*>(tridiag_smem);
    u64 g = blockIdx.x / M;
    u32 j = blockIdx.x % M, lo = j * S;
    u64 base = g * lay.sys_stride, wbase = (g * (u64)M + j) * (S / 2);
    T before = j == 0 ? T(0) : xr[g * M + j - 1];
    if (threadIdx.x == 0) xs[S - 1] = xr[g * M + j];
    __syncthreads();
    // Bottom-chain levels, highest first: offsets with exactly k trailing ones, o = st-1 (mod 2st).
    for (u32 st = S / 2; st >= 2; st /= 2) {
        for (u32 o = st - 1 + 2 * st * threadIdx.x; o < S - 1; o += 2 * st * blockDim.x) {
            T left = o >= st ? xs[o - st] : before;
            xs[o] = tri_solve_with(w[wbase + o / 2], left, xs[o + st]);
        }
        __syncthreads();
    }
    // Even offsets from their original equations and x[o -+ 1].
    for (u32 o = 2 * threadIdx.x; o < S; o += 2 * blockDim.x) {
        TriEq<T> e = tri_load(a, b, c, d, base, lay.elem_stride, lo + o, m);
        T left = o >= 1 ? xs[o - 1] : before;
        T right = o + 1 < S ? xs[o + 1] : T(0);
        xs[o] = tri_solve_with(e, left, right);
    }
    __syncthreads();
    for (u32 o = threadIdx.x; o < S; o += blockDim.x) {
        if (lo + o < m) x[base + (u64)(lo + o) * lay.elem_stride] = xs[o];
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
