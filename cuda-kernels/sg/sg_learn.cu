// The sparse grid learning operators (Pfander 2019, §7.1 and §8.1): the unified streaming
// products v = B (s ⊙ α) and v' = s ⊙ (Bᵀ v) of regression, with B_ij = Π_k φ'(x_ik) the
// unified hat φ'(x) = max(0, 1 − |l'·x − i'|) of Eq. 7.5 (Table 7.1 maps linear and
// modified-linear points to (l', i'), s the Eq. 7.7 scaling), and the mass-matrix product
// (R + λI) v of density estimation (Alg. 10, linear hats).
//
// Layouts: the data are dimension-major, x[k * ldx + row], so the rows a warp holds are read
// coalesced; the grid is dimension-major too, lev[k * ldg + j], so that the transposed operator
// (a thread per grid point) reads it coalesced, while the mult (every thread on the same grid
// point) reads broadcasts. Rows and columns past the end compute on the last valid one and write
// nothing, so no padding is needed.
//
// Compile-time parameters (NVRTC defines prepended by the host; these defaults are the embedded
// module): LEARN_DIM the dimension (0: read at run time, loops not unrollable), LEARN_DATA_BLOCK
// rows per thread of the mult (the thesis's data-block), LEARN_GRID_BLOCK grid points per
// thread of the transposed operator (grid-block), LEARN_UNROLL the unroll factor of the
// dimension loop (max-dim-unroll; 0 unrolls it fully, which needs LEARN_DIM). Launch
// parameters: the block size (local-size), gridDim.y (grid-split / data-split: the streamed
// range is cut into gridDim.y pieces whose partial sums meet in atomics), `prefetch` (items
// staged in shared memory per refill) and `use_shared`.
#include "../common/types.cuh"

#ifndef LEARN_DIM
#define LEARN_DIM 0
#endif
#ifndef LEARN_DATA_BLOCK
#define LEARN_DATA_BLOCK 4
#endif
#ifndef LEARN_GRID_BLOCK
#define LEARN_GRID_BLOCK 2
#endif
#ifndef LEARN_UNROLL
#define LEARN_UNROLL 1
#endif

constexpr int kLearnDim = LEARN_DIM;
constexpr int kLearnDataBlock = LEARN_DATA_BLOCK;
constexpr int kLearnGridBlock = LEARN_GRID_BLOCK;
// Register arrays need a positive extent even when the dimension is read at run time.
constexpr int kLearnDimSlots = kLearnDim > 0 ? kLearnDim : 1;
constexpr int kLearnUnroll = LEARN_UNROLL > 0 ? LEARN_UNROLL : kLearnDimSlots;

static_assert(kLearnDim >= 0 && kLearnDim <= 64, "LEARN_DIM in 0..=64");
static_assert(kLearnDataBlock >= 1 && kLearnDataBlock <= 16, "LEARN_DATA_BLOCK in 1..=16");
static_assert(kLearnGridBlock >= 1 && kLearnGridBlock <= 16, "LEARN_GRID_BLOCK in 1..=16");

HK_DEVICE float learn_max0(float v) { return fmaxf(v, 0.0f); }
HK_DEVICE double learn_max0(double v) { return fmax(v, 0.0); }

// The unified 1-D hat: mul (fused with the sub into an FMA on the device), abs, 1 −, max.
template <typename T>
HK_DEVICE T learn_hat(T lev, T ind, T x) {
    return learn_max0((T)1 - fabs(lev * x - ind));
}

HK_DEVICE u64 learn_min(u64 a, u64 b) { return a < b ? a : b; }

// Where this block's slice of the streamed range [0, len) starts and ends (blockIdx.y of
// gridDim.y slices of `per` items).
HK_DEVICE void learn_slice(u64 len, u64 per, u64* lo, u64* hi) {
    *lo = learn_min((u64)blockIdx.y * per, len);
    *hi = learn_min(*lo + per, len);
}

// A result: stored when this block owns the whole streamed range, else added atomically into
// the zeroed output.
template <typename T>
HK_DEVICE void learn_put(T* out, u64 at, T value) {
    if (gridDim.y > 1) {
        atomicAdd(out + at, value);
    } else {
        out[at] = value;
    }
}

// ---------------------------------------------------------------------------------------------
// v = B (s ⊙ α) (Alg. 4): each thread owns DB rows, strided by blockDim.x; every thread walks the
// same grid points, so the level test (l' = 0: the constant level-1 modified function) is
// warp-uniform and skips that factor.

template <typename T, int D, int DB>
struct LearnRows {
    u64 row[DB];
    T x[DB][D > 0 ? D : 1];
};

// Adds α_j Π_k φ'(x_k) to each row's accumulator for one grid point whose levels and indices
// sit at lv[k * stride], iv[k * stride].
template <typename T, int D, int DB>
HK_DEVICE void learn_mult_point(T (&acc)[DB], const LearnRows<T, D, DB>& r, const T* __restrict__ x, u64 ldx,
                                u32 d, const T* lv, const T* iv, u64 stride, T a) {
    T temp[DB];
#pragma unroll
    for (int b = 0; b < DB; ++b) temp[b] = a;
#pragma unroll (kLearnUnroll)
    for (u32 k = 0; k < d; ++k) {
        const T l = lv[k * stride];
        if (l != (T)0) {
            const T i = iv[k * stride];
#pragma unroll
            for (int b = 0; b < DB; ++b) {
                const T xv = D > 0 ? r.x[b][D > 0 ? k : 0] : x[k * ldx + r.row[b]];
                temp[b] *= learn_hat(l, i, xv);
            }
        }
    }
#pragma unroll
    for (int b = 0; b < DB; ++b) acc[b] += temp[b];
}

template <typename T, int D, int DB>
HK_DEVICE void learn_mult(const T* __restrict__ x, u64 m, u64 ldx, u32 d_rt, const T* __restrict__ lev,
                          const T* __restrict__ ind, const T* __restrict__ alpha, const T* __restrict__ scale,
                          u64 n, u64 ldg, u64 per, u32 prefetch, u32 use_shared, T* __restrict__ v) {
    const u32 d = D > 0 ? (u32)D : d_rt;
    const u64 first = (u64)blockIdx.x * blockDim.x * DB + threadIdx.x;
    LearnRows<T, D, DB> r;
#pragma unroll
    for (int b = 0; b < DB; ++b) {
        r.row[b] = learn_min(first + (u64)b * blockDim.x, m - 1);
        if (D > 0) {
#pragma unroll
            for (int k = 0; k < (D > 0 ? D : 1); ++k) r.x[b][k] = x[(u64)k * ldx + r.row[b]];
        }
    }
    T acc[DB];
#pragma unroll
    for (int b = 0; b < DB; ++b) acc[b] = (T)0;
    u64 g0, g1;
    learn_slice(n, per, &g0, &g1);
    if (use_shared) {
        extern __shared__ unsigned char sg_learn_smem[];
        T* sl = (T*)sg_learn_smem;
        T* si = sl + (u64)d * prefetch;
        T* sa = si + (u64)d * prefetch;
        for (u64 t0 = g0; t0 < g1; t0 += prefetch) {
            const u32 cnt = (u32)learn_min(prefetch, g1 - t0);
            for (u32 t = threadIdx.x; t < cnt; t += blockDim.x) {
                const u64 j = t0 + t;
                sa[t] = alpha[j] * scale[j];
                for (u32 k = 0; k < d; ++k) {
                    sl[k * prefetch + t] = lev[k * ldg + j];
                    si[k * prefetch + t] = ind[k * ldg + j];
                }
            }
            __syncthreads();
            for (u32 t = 0; t < cnt; ++t) learn_mult_point<T, D, DB>(acc, r, x, ldx, d, sl + t, si + t, prefetch, sa[t]);
            // The next refill overwrites the tile.
            __syncthreads();
        }
    } else {
        for (u64 j = g0; j < g1; ++j)
            learn_mult_point<T, D, DB>(acc, r, x, ldx, d, lev + j, ind + j, ldg, alpha[j] * scale[j]);
    }
#pragma unroll
    for (int b = 0; b < DB; ++b) {
        const u64 row = first + (u64)b * blockDim.x;
        if (row < m) learn_put(v, row, acc[b]);
    }
}

// ---------------------------------------------------------------------------------------------
// v' = s ⊙ (Bᵀ v) (Alg. 5, corrected as in the digest's errata): each thread owns GB grid points
// (their levels and indices in registers when the dimension is compiled in) and streams the data
// points of its block's slice, staged in shared memory. Different threads hold different levels,
// so no factor can be skipped.

template <typename T, int D, int GB>
struct LearnCols {
    u64 col[GB];
    T l[GB][D > 0 ? D : 1];
    T i[GB][D > 0 ? D : 1];
};

// Adds v_j Π_k φ'_b(x_k) to each grid point's accumulator for one data point with coordinates
// at xp[k * stride].
template <typename T, int D, int GB>
HK_DEVICE void learn_mult_t_point(T (&acc)[GB], const LearnCols<T, D, GB>& c, const T* __restrict__ lev,
                                  const T* __restrict__ ind, u64 ldg, u32 d, const T* xp, u64 stride, T vj) {
    T temp[GB];
#pragma unroll
    for (int b = 0; b < GB; ++b) temp[b] = vj;
#pragma unroll (kLearnUnroll)
    for (u32 k = 0; k < d; ++k) {
        const T xv = xp[k * stride];
#pragma unroll
        for (int b = 0; b < GB; ++b) {
            const T l = D > 0 ? c.l[b][D > 0 ? k : 0] : lev[k * ldg + c.col[b]];
            const T i = D > 0 ? c.i[b][D > 0 ? k : 0] : ind[k * ldg + c.col[b]];
            temp[b] *= learn_hat(l, i, xv);
        }
    }
#pragma unroll
    for (int b = 0; b < GB; ++b) acc[b] += temp[b];
}

template <typename T, int D, int GB>
HK_DEVICE void learn_mult_t(const T* __restrict__ x, u64 m, u64 ldx, u32 d_rt, const T* __restrict__ lev,
                            const T* __restrict__ ind, const T* __restrict__ scale, u64 n, u64 ldg,
                            const T* __restrict__ v, u64 per, u32 prefetch, u32 use_shared, T* __restrict__ out) {
    const u32 d = D > 0 ? (u32)D : d_rt;
    const u64 first = (u64)blockIdx.x * blockDim.x * GB + threadIdx.x;
    LearnCols<T, D, GB> c;
#pragma unroll
    for (int b = 0; b < GB; ++b) {
        c.col[b] = learn_min(first + (u64)b * blockDim.x, n - 1);
        if (D > 0) {
#pragma unroll
            for (int k = 0; k < (D > 0 ? D : 1); ++k) {
                c.l[b][k] = lev[(u64)k * ldg + c.col[b]];
                c.i[b][k] = ind[(u64)k * ldg + c.col[b]];
            }
        }
    }
    T acc[GB];
#pragma unroll
    for (int b = 0; b < GB; ++b) acc[b] = (T)0;
    u64 r0, r1;
    learn_slice(m, per, &r0, &r1);
    if (use_shared) {
        extern __shared__ unsigned char sg_learn_smem[];
        T* sx = (T*)sg_learn_smem;
        T* sv = sx + (u64)d * prefetch;
        for (u64 t0 = r0; t0 < r1; t0 += prefetch) {
            const u32 cnt = (u32)learn_min(prefetch, r1 - t0);
            for (u32 t = threadIdx.x; t < cnt; t += blockDim.x) {
                sv[t] = v[t0 + t];
                for (u32 k = 0; k < d; ++k) sx[k * prefetch + t] = x[k * ldx + t0 + t];
            }
            __syncthreads();
            for (u32 t = 0; t < cnt; ++t) learn_mult_t_point<T, D, GB>(acc, c, lev, ind, ldg, d, sx + t, prefetch, sv[t]);
            __syncthreads();
        }
    } else {
        for (u64 j = r0; j < r1; ++j) learn_mult_t_point<T, D, GB>(acc, c, lev, ind, ldg, d, x + j, ldx, v[j]);
    }
#pragma unroll
    for (int b = 0; b < GB; ++b) {
        const u64 col = first + (u64)b * blockDim.x;
        // The scaling of Eq. 7.9 is linear, so each split's partial sum may carry it.
        if (col < n) learn_put(out, col, acc[b] * scale[col]);
    }
}

// ---------------------------------------------------------------------------------------------
// (R + λI) v with R_ij = Π_k ∫ φ_ik φ_jk (Alg. 10, linear hats): a thread per row i, the grid
// points j of the block's slice streamed through shared memory. Per point and dimension the
// arrays hold 2^l, the index, the coordinate i·2^−l and the width 2^−l. Both branches of the
// 1-D integral are computed and selected (Eq. 8.7): testing support overlap costs more.

template <typename T, int D>
struct LearnMassRow {
    T l[D > 0 ? D : 1], i[D > 0 ? D : 1], x[D > 0 ? D : 1], h[D > 0 ? D : 1];
};

template <typename T, int D>
HK_DEVICE T learn_mass_pair(const LearnMassRow<T, D>& own, const T* lev, const T* ind, const T* crd,
                            const T* wid, u64 row, u64 ldg, u32 d, const T* lj, const T* ij, const T* xj, const T* hj,
                            u64 stride, T vj) {
    T r = vj;
#pragma unroll (kLearnUnroll)
    for (u32 k = 0; k < d; ++k) {
        const u32 kk = D > 0 ? k : 0;
        const T li = D > 0 ? own.l[kk] : lev[k * ldg + row];
        const T ii = D > 0 ? own.i[kk] : ind[k * ldg + row];
        const T xi = D > 0 ? own.x[kk] : crd[k * ldg + row];
        const T hi = D > 0 ? own.h[kk] : wid[k * ldg + row];
        const T xjk = xj[k * stride], hjk = hj[k * stride];
        const T r_eq = (T)2 / (T)3 * hi;
        const T r_else = hjk * learn_hat(li, ii, xjk) + hi * learn_hat(lj[k * stride], ij[k * stride], xi);
        r *= xi == xjk ? r_eq : r_else;
    }
    return r;
}

template <typename T, int D>
HK_DEVICE void learn_mass(const T* __restrict__ lev, const T* __restrict__ ind, const T* __restrict__ crd,
                          const T* __restrict__ wid, u64 n, u64 ldg, u32 d_rt, const T* __restrict__ v, T lambda,
                          u64 per, u32 prefetch, u32 use_shared, T* __restrict__ out) {
    const u32 d = D > 0 ? (u32)D : d_rt;
    const u64 row_raw = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    const u64 row = learn_min(row_raw, n - 1);
    LearnMassRow<T, D> own;
    if (D > 0) {
#pragma unroll
        for (int k = 0; k < (D > 0 ? D : 1); ++k) {
            own.l[k] = lev[(u64)k * ldg + row];
            own.i[k] = ind[(u64)k * ldg + row];
            own.x[k] = crd[(u64)k * ldg + row];
            own.h[k] = wid[(u64)k * ldg + row];
        }
    }
    T acc = (T)0;
    u64 g0, g1;
    learn_slice(n, per, &g0, &g1);
    if (use_shared) {
        extern __shared__ unsigned char sg_learn_smem[];
        T* sl = (T*)sg_learn_smem;
        T* si = sl + (u64)d * prefetch;
        T* sx = si + (u64)d * prefetch;
        T* sh = sx + (u64)d * prefetch;
        T* sv = sh + (u64)d * prefetch;
        for (u64 t0 = g0; t0 < g1; t0 += prefetch) {
            const u32 cnt = (u32)learn_min(prefetch, g1 - t0);
            for (u32 t = threadIdx.x; t < cnt; t += blockDim.x) {
                const u64 j = t0 + t;
                sv[t] = v[j];
                for (u32 k = 0; k < d; ++k) {
                    sl[k * prefetch + t] = lev[k * ldg + j];
                    si[k * prefetch + t] = ind[k * ldg + j];
                    sx[k * prefetch + t] = crd[k * ldg + j];
                    sh[k * prefetch + t] = wid[k * ldg + j];
                }
            }
            __syncthreads();
            for (u32 t = 0; t < cnt; ++t)
                acc += learn_mass_pair<T, D>(own, lev, ind, crd, wid, row, ldg, d, sl + t, si + t, sx + t, sh + t,
                                             prefetch, sv[t]);
            __syncthreads();
        }
    } else {
        for (u64 j = g0; j < g1; ++j)
            acc += learn_mass_pair<T, D>(own, lev, ind, crd, wid, row, ldg, d, lev + j, ind + j, crd + j, wid + j,
                                         ldg, v[j]);
    }
    if (blockIdx.y == 0) acc += lambda * v[row];
    if (row_raw < n) learn_put(out, row_raw, acc);
}

#define SG_LEARN(T, SUF)                                                                                        \
    extern "C" __global__ void sg_learn_mult_##SUF(const T* x, u64 m, u64 ldx, u32 d, const T* lev, const T* ind, \
                                                   const T* alpha, const T* scale, u64 n, u64 ldg, u64 per,      \
                                                   u32 prefetch, u32 use_shared, T* v) {                         \
        learn_mult<T, kLearnDim, kLearnDataBlock>(x, m, ldx, d, lev, ind, alpha, scale, n, ldg, per, prefetch,   \
                                                  use_shared, v);                                                \
    }                                                                                                           \
    extern "C" __global__ void sg_learn_mult_t_##SUF(const T* x, u64 m, u64 ldx, u32 d, const T* lev,             \
                                                     const T* ind, const T* scale, u64 n, u64 ldg, const T* v,   \
                                                     u64 per, u32 prefetch, u32 use_shared, T* out) {            \
        learn_mult_t<T, kLearnDim, kLearnGridBlock>(x, m, ldx, d, lev, ind, scale, n, ldg, v, per, prefetch,     \
                                                    use_shared, out);                                            \
    }                                                                                                           \
    extern "C" __global__ void sg_learn_mass_##SUF(const T* lev, const T* ind, const T* crd, const T* wid, u64 n, \
                                                   u64 ldg, u32 d, const T* v, T lambda, u64 per, u32 prefetch,  \
                                                   u32 use_shared, T* out) {                                     \
        learn_mass<T, kLearnDim>(lev, ind, crd, wid, n, ldg, d, v, lambda, per, prefetch, use_shared, out);      \
    }

SG_LEARN(float, f32)
SG_LEARN(double, f64)
