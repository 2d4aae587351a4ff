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
    // w holds c' of rows 0 .. m-2 only: the back substitution never reads the last row's.
    T piv = b[base];
    T cp = m > 1 ? c[base] / piv : T(0), dp = d[base] / piv;
    if (m > 1) w[base] = cp;
    x[base] = dp;
    for (u32 k = 1; k < m; ++k) {
        u64 i = base + (u64)k * es;
        T ak = a[i];
        piv = b[i] - ak * cp;
        dp = (d[i] - ak * dp) / piv;
        if (k + 1 < m) {
            cp = c[i] / piv;
            w[i] = cp;
        }
        x[i] = dp;
    }
    T next = dp;  // x[m-1]; c[m-1] is never used
    for (u32 k = m - 1; k-- > 0;) {
        u64 i = base + (u64)k * es;
        next = x[i] - w[i] * next;
        x[i] = next;
    }
}

// gtsv: elimination with row interchanges (|a_{k+1}| > |pivot| exchanges rows k and k+1), in one
// forward sweep that reads each input once and carries the pending row in registers, as the CPU
// solver does. Per row k < m-1 it keeps U's row (pivot reciprocal inv, super-diagonals du, du2)
// and the eliminated right-hand side (in x): every scratch value written is read once by the back
// substitution, and nothing else is written (the last row stays in registers). Bytes per unknown:
// 4 reads + 4 writes forward, 4 reads + 1 write back. An exactly zero pivot (singular matrix)
// writes NaN to the whole system.
template <typename T>
__device__ void thread_pivot(const T* __restrict__ a, const T* __restrict__ b, const T* __restrict__ c,
                             const T* __restrict__ d, T* __restrict__ x, T* __restrict__ inv, T* __restrict__ du,
                             T* __restrict__ du2, u32 m, u64 G, TriLayout lay) {
    u64 g = global_thread();
    if (g >= G || m == 0) return;
    u64 base = g * lay.sys_stride, es = lay.elem_stride;
    // The pending row p x_k + u x_{k+1} = r.
    T p = b[base], u = m > 1 ? c[base] : T(0), r = d[base];
    bool singular = false;
    for (u32 k = 0; k + 1 < m; ++k) {
        u64 i = base + (u64)k * es, i1 = i + es;
        T lo = a[i1], q = b[i1], dn = d[i1];
        T rr = k + 2 < m ? c[i1] : T(0);
        bool swap = fabs(p) < fabs(lo);
        T piv = swap ? lo : p, other = swap ? p : lo;
        if (piv == T(0)) { singular = true; break; }
        T rcp = T(1) / piv;
        T f = other * rcp;
        T sup1 = swap ? q : u, sup2 = swap ? rr : T(0);
        T first = swap ? dn : r, second = swap ? r : dn;
        inv[i] = rcp; du[i] = sup1; du2[i] = sup2; x[i] = first;
        p = (swap ? u : q) - f * sup1;
        u = swap ? -(f * rr) : rr;
        r = second - f * first;
    }
    if (singular || p == T(0)) {
        for (u32 k = 0; k < m; ++k) x[base + (u64)k * es] = T(0) / T(0);
        return;
    }
    T x1 = r / p, x2 = T(0);
    x[base + (u64)(m - 1) * es] = x1;
    for (u32 k = m - 1; k-- > 0;) {
        u64 i = base + (u64)k * es;
        T v = (x[i] - du[i] * x1 - du2[i] * x2) * inv[i];
        x[i] = v;
        x2 = x1;
        x1 = v;
    }
}

#define TRI_THREAD_ENTRIES(T, S)                                                                           \
    extern "C" __global__ void tridiag_thomas_##S(const T* a, const T* b, const T* c, const T* d, T* x,    \
                                                  T* w, u32 m, u64 G, u64 ss, u64 es) {                    \
        TriLayout lay = {ss, es};                                                                           \
        thread_thomas(a, b, c, d, x, w, m, G, lay);                                                         \
    }                                                                                                       \
    extern "C" __global__ void tridiag_pivot_##S(const T* a, const T* b, const T* c, const T* d, T* x,     \
                                                 T* inv, T* du, T* du2, u32 m, u64 G, u64 ss, u64 es) {    \
        TriLayout lay = {ss, es};                                                                           \
        thread_pivot(a, b, c, d, x, inv, du, du2, m, G, lay);                                                \
    }

TRI_THREAD_ENTRIES(float, f32)
TRI_THREAD_ENTRIES(double, f64)
