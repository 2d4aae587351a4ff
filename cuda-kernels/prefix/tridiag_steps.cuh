// Building blocks of the tridiagonal kernels: the equation type, the CR/PCR/TPR reduction, the RR
// segment combine, the Wang & Mou merge, and system load/store for both layouts. Each kernel
// file (tridiag_*.cu) is a thin entry point over these. Mirrors crates/prefix-ops/src/tridiagonal.
#pragma once
#include "../common/types.cuh"

// Block kernels (one block per system or slice) are launched with up to 1024 threads; the bound
// caps them at 64 registers per thread. Without it tridiag_rr_f64 takes 67 registers (sm_90), and
// a block of 1024 threads could not launch (CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES).
#define TRI_BLOCK_BOUNDS __launch_bounds__(1024)

template <typename T>
struct TriEq {
    T a, b, c, d;  // a x[i-u] + b x[i] + c x[i+u] = d
};

template <typename T>
HK_DEVICE TriEq<T> tri_identity() {
    TriEq<T> e;
    e.a = T(0); e.b = T(1); e.c = T(0); e.d = T(0);
    return e;
}

// Eliminate x[i-u] with `l` (if has_l) and x[i+u] with `r` (if has_r). A missing side keeps its
// coupling coefficient: the corrected TPR boundary rule (harmless for CR/PCR, whose missing
// sides have zero coupling already).
template <typename T>
HK_DEVICE TriEq<T> tri_reduce(TriEq<T> e, TriEq<T> l, bool has_l, TriEq<T> r, bool has_r) {
    TriEq<T> o = e;
    if (has_l) {
        T s = e.a / l.b;
        o.a = -l.a * s; o.b = o.b - l.c * s; o.d = o.d - l.d * s;
    }
    if (has_r) {
        T s = e.c / r.b;
        o.c = -r.c * s; o.b = o.b - r.a * s; o.d = o.d - r.d * s;
    }
    return o;
}

template <typename T>
HK_DEVICE T tri_solve_with(TriEq<T> e, T left, T right) {
    return (e.d - e.a * left - e.c * right) / e.b;
}

// Where system g lives: element k at base + k * elem_stride.
struct TriLayout {
    u64 sys_stride;   // m (strided) or 1 (interleaved)
    u64 elem_stride;  // 1 (strided) or G (interleaved)
};

// Equation k of a system of m rows at base; rows k >= m are identity padding; a[0] and c[m-1]
// are ignored.
template <typename T>
HK_DEVICE TriEq<T> tri_load(const T* __restrict__ a, const T* __restrict__ b, const T* __restrict__ c,
                            const T* __restrict__ d, u64 base, u64 es, u32 k, u32 m) {
    if (k >= m) return tri_identity<T>();
    u64 i = base + (u64)k * es;
    TriEq<T> e;
    e.a = k == 0 ? T(0) : a[i];
    e.b = b[i];
    e.c = k + 1 == m ? T(0) : c[i];
    e.d = d[i];
    return e;
}

// ---- Conflict-free shared memory for strided chains (TPR stages 1 and 3) -----------------
// Equations as a structure of four arrays (a, b, c, d), each array swizzled: element i lives at
// i ^ ((i / ROW) & 1), ROW = 128 / sizeof(T) elements (one bank row). A warp reading elements
// 2q + k (any k) then hits every bank once, and one reading q0 + q (q0 a multiple of 32) too; the
// chains are kept compact per level, so every access is one of those two (the bank model in
// crates/prefix-ops/src/tridiagonal/gpu_banks.rs counts them). Each array's length is a
// multiple of 32, so every array starts on a bank row.
template <typename T>
HK_DEVICE u32 tri_swz(u32 i) {
    return i ^ ((i / (128u / (u32)sizeof(T))) & 1u);
}

HK_DEVICE u32 tri_align32(u32 n) { return (n + 31u) & ~31u; }

// Start of chain level l >= 1 (S >> l entries) in a level area: each level rounded up to 32.
// tri_level_off(S, log2 S + 1) is the area's length (gpu_banks.rs: level_offset).
HK_DEVICE u32 tri_level_off(u32 S, u32 l) {
    u32 o = 0;
    for (u32 k = 1; k < l; ++k) o += tri_align32(S >> k);
    return o;
}

template <typename T>
struct TriSoa {
    T* p;
    u32 n;  // length of each of the four arrays
    HK_DEVICE TriEq<T> get(u32 i) const {
        const u32 s = tri_swz<T>(i);
        TriEq<T> e;
        e.a = p[s]; e.b = p[n + s]; e.c = p[2 * n + s]; e.d = p[3 * n + s];
        return e;
    }
    HK_DEVICE void put(u32 i, TriEq<T> e) const {
        const u32 s = tri_swz<T>(i);
        p[s] = e.a; p[n + s] = e.b; p[2 * n + s] = e.c; p[3 * n + s] = e.d;
    }
};

// ---- CR / PCR / hybrid over a shared-memory system of n = 2^p equations ----------------------
// CR forward steps until at most pcr_size equations remain, PCR on those, CR back substitution.
// e: room for 2n equations, the first n holding the system; x: room for 2n unknowns, the first n
// receiving the solution. CR keeps every level compact: level l (n >> l equations) follows level
// l-1 in e, and its unknowns follow level l-1's in x. A step then reads neighbours two equations
// apart and writes contiguously (at most 2-way bank conflicts), where in-place CR at stride 2^l
// makes 2^l threads of a warp hit one bank. PCR double-buffers right after the last level.
template <typename T>
HK_DEVICE void tri_block_cr_pcr(TriEq<T>* e, T* x, u32 n, u32 pcr_size) {
    u32 tid = threadIdx.x, nt = blockDim.x;
    u32 cnt = n, off = 0, levels = 0;
    while (cnt > pcr_size && cnt > 1) {
        const TriEq<T>* cur = e + off;
        TriEq<T>* nxt = e + off + cnt;
        for (u32 j = tid; j < cnt / 2; j += nt) {
            u32 i = 2 * j + 1;
            bool has_r = i + 1 < cnt;
            nxt[j] = tri_reduce(cur[i], cur[i - 1], true, has_r ? cur[i + 1] : tri_identity<T>(), has_r);
        }
        off += cnt;
        cnt /= 2;
        ++levels;
        __syncthreads();
    }
    // The unknowns of a level sit at the same offset in x as its equations in e.
    TriEq<T>* cur = e + off;
    TriEq<T>* nxt = e + off + cnt;
    for (u32 u = 1; u < cnt; u *= 2) {
        for (u32 j = tid; j < cnt; j += nt) {
            bool hl = j >= u, hr = j + u < cnt;
            nxt[j] = tri_reduce(cur[j], hl ? cur[j - u] : tri_identity<T>(), hl,
                                hr ? cur[j + u] : tri_identity<T>(), hr);
        }
        __syncthreads();
        TriEq<T>* t = cur; cur = nxt; nxt = t;
    }
    for (u32 j = tid; j < cnt; j += nt) x[off + j] = cur[j].d / cur[j].b;
    __syncthreads();
    // Back substitution: level l's odd unknowns are level l+1's; its even ones come from their
    // level-l equations and the odd neighbours.
    while (levels-- > 0) {
        u32 up = off, below = cnt;
        cnt *= 2;
        off -= cnt;
        const TriEq<T>* lev = e + off;
        for (u32 j = tid; j < below; j += nt) {
            T right = x[up + j];
            T left = j > 0 ? x[up + j - 1] : T(0);
            x[off + 2 * j] = tri_solve_with(lev[2 * j], left, right);
            x[off + 2 * j + 1] = right;
        }
        __syncthreads();
    }
}

// ---- Redundant Reduction: segment [p..q] in two forms (see rr.rs) --------------------------
template <typename T>
struct TriSeg {
    T i0, i1, i2, id;  // I: x[p-1], x[q], x[q+1]
    T c0, c1, c2, cd;  // C: x[p-1], x[p], x[q+1]
};

template <typename T>
HK_DEVICE TriSeg<T> tri_seg(TriEq<T> e) {
    TriSeg<T> s;
    s.i0 = e.a; s.i1 = e.b; s.i2 = e.c; s.id = e.d;
    s.c0 = e.a; s.c1 = e.b; s.c2 = e.c; s.cd = e.d;
    return s;
}

template <typename T>
HK_DEVICE TriSeg<T> tri_seg_combine(TriSeg<T> L, TriSeg<T> R) {
    TriSeg<T> o;
    // Reduction B then A: I_new in (x[p-1], x[q], x[q+1]).
    T f = L.i2 / R.c1;
    T t0 = L.i0, t1 = L.i1 - f * R.c0, t2 = -f * R.c2, td = L.id - f * R.cd;
    T g = t1 / R.i0;
    o.i0 = t0; o.i1 = -g * R.i1; o.i2 = t2 - g * R.i2; o.id = td - g * R.id;
    // Reduction A then B: C_new in (x[p-1], x[p], x[q+1]).
    T h = L.i1 / R.c0;
    T s0 = L.i0, s1 = L.i2 - h * R.c1, s2 = -h * R.c2, sd = L.id - h * R.cd;
    T e = s1 / L.c2;
    o.c0 = s0 - e * L.c0; o.c1 = -e * L.c1; o.c2 = s2; o.cd = sd - e * L.cd;
    return o;
}

// ---- Wang & Mou: one merge level, blocks of 2*half, double-buffered --------------------------
template <typename T>
HK_DEVICE TriEq<T> tri_wm_merge(TriEq<T> q, u32 i, const TriEq<T>* cur, u32 half) {
    u32 lo = i & ~(2 * half - 1);
    u32 mid = lo + half - 1;
    TriEq<T> r = cur[mid], l = cur[mid + 1];
    T det = r.b * l.b - l.a * r.c;
    if (i <= mid) {
        T f = q.c / det;
        q.a = q.a + f * l.a * r.a;
        q.d = q.d - f * (r.b * l.d - l.a * r.d);
        q.c = -f * r.b * l.c;
    } else {
        T f = q.a / det;
        q.c = q.c + f * r.c * l.c;
        q.d = q.d - f * (l.b * r.d - r.c * l.d);
        q.a = -f * r.a * l.b;
    }
    return q;
}
