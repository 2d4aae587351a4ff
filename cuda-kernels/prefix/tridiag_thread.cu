// One thread per system: Thomas (fastest for the interleaved layout, where neighbouring threads
// read neighbouring addresses, and for huge G) and LU with partial pivoting (gtsv) for systems that
// are not diagonally dominant. Grid: ceil(G / blockDim.x) blocks.
#include "tridiag_steps.cuh"

// x <- solution; w: G*m scratch (c'). A zero pivot gives inf/NaN in that system (documented).
template <typename T>
__device__ void thread_thomas(const T* __restrict__ a, const T* __restrict__ b, const T* __restrict__ c,
                              const T* __restrict__ d, T* __restrict__ x, T* __restrict__ w, u32 m, u64 G,
                              TriLayout lay) {
    u64 g = global_thread();
    if (g >= G || m == 0) return;
    u64 base = g * lay.sys_stride, es = lay.elem_stride;
    T piv = b[base];
    T cp = c[base] / piv, dp = d[base] / piv;
    w[base] = cp;
    x[base] = dp;
    for (u32 k = 1; k < m; ++k) {
        u64 i = base + (u64)k * es;
        T ak = a[i];
        piv = b[i] - ak * cp;
        cp = c[i] / piv;
        dp = (d[i] - ak * dp) / piv;
        w[i] = cp;
        x[i] = dp;
    }
    T next = dp;  // x[m-1]; c[m-1] is never used
    for (u32 k = m - 1; k-- > 0;) {
        u64 i = base + (u64)k * es;
        next = x[i] - w[i] * next;
        x[i] = next;
    }
}

// gtsv: elimination with row interchanges; du, du2, dd: G*m scratch each (U's diagonals).
// An exactly zero pivot (singular matrix) writes NaN to the whole system.
template <typename T>
__device__ void thread_pivot(const T* __restrict__ a, const T* __restrict__ b, const T* __restrict__ c,
                             const T* __restrict__ d, T* __restrict__ x, T* __restrict__ dd, T* __restrict__ du,
                             T* __restrict__ du2, u32 m, u64 G, TriLayout lay) {
    u64 g = global_thread();
    if (g >= G || m == 0) return;
    u64 base = g * lay.sys_stride, es = lay.elem_stride;
    for (u32 k = 0; k < m; ++k) {
        u64 i = base + (u64)k * es;
        dd[i] = b[i];
        du[i] = k + 1 < m ? c[i] : T(0);
        du2[i] = T(0);
        x[i] = d[i];
    }
    bool singular = false;
    for (u32 k = 0; k + 1 < m; ++k) {
        u64 i = base + (u64)k * es, i1 = i + es;
        T dk = dd[i], dl = a[i1];
        if (fabs(dk) >= fabs(dl)) {
            if (dk == T(0)) { singular = true; break; }
            T f = dl / dk;
            dd[i1] = dd[i1] - f * du[i];
            x[i1] = x[i1] - f * x[i];
        } else {
            T f = dk / dl;
            dd[i] = dl;
            T t = dd[i1];
            dd[i1] = du[i] - f * t;
            if (k + 2 < m) {
                du2[i] = du[i1];
                du[i1] = -f * du2[i];
            }
            du[i] = t;
            T r = x[i];
            x[i] = x[i1];
            x[i1] = r - f * x[i1];
        }
    }
    if (!singular && dd[base + (u64)(m - 1) * es] == T(0)) singular = true;
    if (singular) {
        for (u32 k = 0; k < m; ++k) x[base + (u64)k * es] = T(0) / T(0);
        return;
    }
    for (u32 k = m; k-- > 0;) {
        u64 i = base + (u64)k * es;
        T s = x[i];
        if (k + 1 < m) s = s - du[i] * x[i + es];
        if (k + 2 < m) s = s - du2[i] * x[i + 2 * es];
        x[i] = s / dd[i];
    }
}

#define TRI_THREAD_ENTRIES(T, S)                                                                           \
    extern "C" __global__ void tridiag_thomas_##S(const T* a, const T* b, const T* c, const T* d, T* x,    \
                                                  T* w, u32 m, u64 G, u64 ss, u64 es) {                    \
        TriLayout lay = {ss, es};                                                                           \
        thread_thomas(a, b, c, d, x, w, m, G, lay);                                                         \
    }                                                                                                       \
    extern "C" __global__ void tridiag_pivot_##S(const T* a, const T* b, const T* c, const T* d, T* x,     \
                                                 T* dd, T* du, T* du2, u32 m, u64 G, u64 ss, u64 es) {     \
        TriLayout lay = {ss, es};                                                                           \
        thread_pivot(a, b, c, d, x, dd, du, du2, m, G, lay);                                                \
    }

TRI_THREAD_ENTRIES(float, f32)
TRI_THREAD_ENTRIES(double, f64)
