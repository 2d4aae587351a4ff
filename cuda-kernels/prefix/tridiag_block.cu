// One thread block per system, the whole system in shared memory: CR, PCR, hybrid CR-PCR,
// RR (Kogge-Stone and Ladner-Fischer/Sklansky; opt-in, unstable beyond m ~ 16) and Wang & Mou.
// Grid: G blocks. Dynamic shared memory as computed by crates/prefix-ops/src/tridiagonal/gpu.rs.
#include "tridiag_steps.cuh"

extern __shared__ __align__(16) unsigned char tridiag_smem[];

// m real rows padded to n = 2^p; output x in the input layout.
template <typename T>
__device__ void block_cr_pcr(const T* a, const T* b, const T* c, const T* d, T* x, u32 m, u32 n,
                             TriLayout lay, u32 pcr_size) {
    // 2n equations (the compact CR levels) and 2n unknowns: cr_pcr_shared() in gpu.rs.
    TriEq<T>* s = reinterpret_cast<TriEq<T>*>(tridiag_smem);
    T* xs = reinterpret_cast<T*>(s + 2 * n);
    u64 base = (u64)blockIdx.x * lay.sys_stride;
    for (u32 k = threadIdx.x; k < n; k += blockDim.x) s[k] = tri_load(a, b, c, d, base, lay.elem_stride, k, m);
    __syncthreads();
    tri_block_cr_pcr(s, xs, n, pcr_size);
    for (u32 k = threadIdx.x; k < m; k += blockDim.x) x[base + (u64)k * lay.elem_stride] = xs[k];
}

template <typename T>
__device__ void block_rr(const T* a, const T* b, const T* c, const T* d, T* x, u32 m, TriLayout lay,
                         bool kogge_stone) {
    TriSeg<T>* s = reinterpret_cast<TriSeg<T>*>(tridiag_smem);
    TriSeg<T>* t = s + m;  // second buffer, Kogge-Stone only
    u64 base = (u64)blockIdx.x * lay.sys_stride;
    for (u32 k = threadIdx.x; k < m; k += blockDim.x) s[k] = tri_seg(tri_load(a, b, c, d, base, lay.elem_stride, k, m));
    __syncthreads();
    if (kogge_stone) {
        for (u32 j = 1; j < m; j *= 2) {
            for (u32 i = threadIdx.x; i < m; i += blockDim.x) t[i] = i >= j ? tri_seg_combine(s[i - j], s[i]) : s[i];
            __syncthreads();
            TriSeg<T>* u = s; s = t; t = u;
        }
    } else {
        // Sklansky: element i with bit k set takes the prefix ending just below its 2^k block;
        // that source has bit k clear, so nothing read in a step is written in it.
        for (u32 k = 0; (1u << k) < m; ++k) {
            for (u32 i = threadIdx.x; i < m; i += blockDim.x) {
                if (i & (1u << k)) s[i] = tri_seg_combine(s[((i >> k) << k) - 1], s[i]);
            }
            __syncthreads();
        }
    }
    T x0 = s[m - 1].cd / s[m - 1].c1;
    for (u32 i = threadIdx.x; i < m; i += blockDim.x) {
        T v = i == 0 ? x0 : (s[i - 1].cd - s[i - 1].c1 * x0) / s[i - 1].c2;
        x[base + (u64)i * lay.elem_stride] = v;
    }
}

template <typename T>
__device__ void block_wm(const T* a, const T* b, const T* c, const T* d, T* x, u32 m, u32 n, TriLayout lay) {
    TriEq<T>* cur = reinterpret_cast<TriEq<T>*>(tridiag_smem);
    TriEq<T>* nxt = cur + n;
    u64 base = (u64)blockIdx.x * lay.sys_stride;
    for (u32 k = threadIdx.x; k < n; k += blockDim.x) cur[k] = tri_load(a, b, c, d, base, lay.elem_stride, k, m);
    __syncthreads();
    for (u32 half = 1; half < n; half *= 2) {
        for (u32 i = threadIdx.x; i < n; i += blockDim.x) nxt[i] = tri_wm_merge(cur[i], i, cur, half);
        __syncthreads();
        TriEq<T>* t = cur; cur = nxt; nxt = t;
    }
    for (u32 k = threadIdx.x; k < m; k += blockDim.x) x[base + (u64)k * lay.elem_stride] = cur[k].d / cur[k].b;
}

#define TRI_BLOCK_ENTRIES(T, S)                                                                          \
    extern "C" __global__ void TRI_BLOCK_BOUNDS tridiag_cr_pcr_##S(const T* a, const T* b, const T* c, const T* d, T* x,  \
                                                  u32 m, u32 n, u64 ss, u64 es, u32 pcr_size) {          \
        TriLayout lay = {ss, es};                                                                         \
        block_cr_pcr(a, b, c, d, x, m, n, lay, pcr_size);                                                 \
    }                                                                                                     \
    extern "C" __global__ void TRI_BLOCK_BOUNDS tridiag_rr_##S(const T* a, const T* b, const T* c, const T* d, T* x,      \
                                              u32 m, u64 ss, u64 es, u32 kogge_stone) {                  \
        TriLayout lay = {ss, es};                                                                         \
        block_rr(a, b, c, d, x, m, lay, kogge_stone != 0);                                                \
    }                                                                                                     \
    extern "C" __global__ void TRI_BLOCK_BOUNDS tridiag_wm_##S(const T* a, const T* b, const T* c, const T* d, T* x,      \
                                              u32 m, u32 n, u64 ss, u64 es) {                            \
        TriLayout lay = {ss, es};                                                                         \
        block_wm(a, b, c, d, x, m, n, lay);                                                               \
    }

TRI_BLOCK_ENTRIES(float, f32)
TRI_BLOCK_ENTRIES(double, f64)
