// Sort kernels: batched rows and short segments by block-level BMCS (bitonic_network.cuh),
// and the merge-path merge that joins sorted runs across blocks (whole arrays, long segments).
//
// Entry points, K in {u32, i32, f32, u64, i64, f64}, V in {u32, u64}, VT in {1, 8}:
//   sort_rows_vtVT_K[_V](keys, [vals], base, total, row_len, nrows, log_n, rows_per_block, desc)
//     row r is keys[base + r*row_len .. min(base + (r+1)*row_len, base + total)), padded to
//     2^log_n with the order's maximum key.
//   sort_segs_vtVT_K[_V](keys, [vals], offsets, seg_ids, nrows, log_n, rows_per_block, desc)
//     row r is segment seg_ids[r] = keys[offsets[s] .. offsets[s+1]), of at most 2^log_n keys.
//   sort_merge_K[_V](src, [src_vals], dst, [dst_vals], base, n, width, desc)
//     merges the sorted runs [base + 2i*width, +width) and [+width, +2width) of src into dst;
//     stable (ties taken from the left run).
// Block shape: rows_per_block * 2^log_n / (4*VT) threads (at most 1024: the block kernels are
// compiled with __launch_bounds__(1024), which caps them at 64 registers per thread; without it
// the VT = 8 kernels take 72..168 registers and a block of 512 or 1024 threads cannot launch);
// dynamic shared memory
// rows_per_block * 2^log_n * (sizeof(bits) + (KV ? 4 + sizeof(V) : 0)) bytes, needed when
// 2^log_n >= 256 or for key-value rows.
#include "bitonic_network.cuh"

#define HK_SORT_BLOCK_BOUNDS __launch_bounds__(1024)

template <typename K, typename V, bool KV, int VT>
__device__ void sort_row_block(K* keys, V* vals, u64 begin, u32 len, bool live, u32 log_n,
                               u32 rows_per_block, u32 desc) {
    typedef typename SortKey<K>::Bits U;
    extern __shared__ __align__(16) unsigned char sort_smem[];
    const u32 n = 1u << log_n;
    const u32 np = (n >> 2) / VT;  // physical threads per row
    const u32 row_in_block = threadIdx.x / np;
    const u32 tp = threadIdx.x % np;
    U* sk = (U*)sort_smem + (u64)row_in_block * n;
    u32* st = (u32*)((U*)sort_smem + (u64)rows_per_block * n) + (u64)row_in_block * n;
    V* sv = (V*)((u32*)((U*)sort_smem + (u64)rows_per_block * n) + (u64)rows_per_block * n) +
            (u64)row_in_block * n;
    const U flip = desc ? ~(U)0 : (U)0;
    if (!live) len = 0;

    U k[4 * VT];
    u32 t[4 * VT];
#pragma unroll
    for (int c = 0; c < VT; ++c) {
#pragma unroll
        for (int q = 0; q < 4; ++q) {
            u32 i = 4u * (tp + c * np) + q;
            t[4 * c + q] = i;
            if (i < len) {
                k[4 * c + q] = SortKey<K>::to_bits(keys[begin + i]) ^ flip;
                if (KV) sv[i] = vals[begin + i];
            } else {
                k[4 * c + q] = ~(U)0;  // the order's maximum: padding sorts to the end
            }
        }
    }
    bmcs_sort_row<KV, VT>(k, t, sk, st, tp, np, log_n);
    if (KV) __syncthreads();  // every value is in sv before any is gathered
#pragma unroll
    for (int c = 0; c < VT; ++c) {
#pragma unroll
        for (int q = 0; q < 4; ++q) {
            u32 i = 4u * (tp + c * np) + q;
            if (i < len) {
                keys[begin + i] = SortKey<K>::from_bits(k[4 * c + q] ^ flip);
                if (KV) vals[begin + i] = sv[t[4 * c + q]];
            }
        }
    }
}

template <typename K, typename V, bool KV, int VT>
__device__ void sort_rows(K* keys, V* vals, u64 base, u64 total, u64 row_len, u64 nrows, u32 log_n,
                          u32 rows_per_block, u32 desc) {
    const u32 np = ((1u << log_n) >> 2) / VT;
    const u64 row = (u64)blockIdx.x * rows_per_block + threadIdx.x / np;
    const bool live = row < nrows;
    u64 begin = base, len = 0;
    if (live) {
        u64 first = row * row_len;
        u64 end = first + row_len < total ? first + row_len : total;
        begin = base + first;
        len = end - first;
    }
    sort_row_block<K, V, KV, VT>(keys, vals, begin, (u32)len, live, log_n, rows_per_block, desc);
}

template <typename K, typename V, bool KV, int VT>
__device__ void sort_segs(K* keys, V* vals, const u64* offsets, const u32* seg_ids, u64 nrows, u32 log_n,
                          u32 rows_per_block, u32 desc) {
    const u32 np = ((1u << log_n) >> 2) / VT;
    const u64 row = (u64)blockIdx.x * rows_per_block + threadIdx.x / np;
    const bool live = row < nrows;
    u64 begin = 0, len = 0;
    if (live) {
        u32 s = seg_ids[row];
        begin = offsets[s];
        len = offsets[s + 1] - begin;
    }
    sort_row_block<K, V, KV, VT>(keys, vals, begin, (u32)len, live, log_n, rows_per_block, desc);
}

// Merge path: each thread finds where its 8 outputs start on the merge path of its pair of runs
// (binary search along the cross diagonal), then merges them sequentially.
template <typename K, typename V, bool KV>
__device__ void sort_merge(const K* sk, const V* sv, K* dk, V* dv, u64 base, u64 n, u64 width, u32 desc) {
    typedef typename SortKey<K>::Bits U;
    const U flip = desc ? ~(U)0 : (U)0;
    const u64 ipt = 8;
    sk += base;
    dk += base;
    if (KV) {
        sv += base;
        dv += base;
    }
    for (u64 k0 = global_thread() * ipt; k0 < n; k0 += grid_threads() * ipt) {
        const u64 a0 = (k0 / (2 * width)) * (2 * width);
        const u64 a1 = a0 + width < n ? a0 + width : n;
        const u64 b1 = a0 + 2 * width < n ? a0 + 2 * width : n;
        const u64 na = a1 - a0, nb = b1 - a1, diag = k0 - a0;
        u64 lo = diag > nb ? diag - nb : 0;
        u64 hi = diag < na ? diag : na;
        while (lo < hi) {
            u64 mid = (lo + hi) >> 1;
            U bv = SortKey<K>::to_bits(sk[a1 + diag - 1 - mid]) ^ flip;
            U av = SortKey<K>::to_bits(sk[a0 + mid]) ^ flip;
            if (!(bv < av)) lo = mid + 1;
            else hi = mid;
        }
        u64 i = lo, j = diag - lo;
        const u64 end = k0 + ipt < b1 ? k0 + ipt : b1;
        for (u64 o = k0; o < end; ++o) {
            bool take_a;
            if (j >= nb) take_a = true;
            else if (i >= na) take_a = false;
            else take_a = !((SortKey<K>::to_bits(sk[a1 + j]) ^ flip) < (SortKey<K>::to_bits(sk[a0 + i]) ^ flip));
            u64 src = take_a ? a0 + i : a1 + j;
            dk[o] = sk[src];
            if (KV) dv[o] = sv[src];
            if (take_a) ++i;
            else ++j;
        }
    }
}

#define HK_SORT_KEYS(K, NAME)                                                                             \
    extern "C" __global__ void HK_SORT_BLOCK_BOUNDS sort_rows_vt1_##NAME(K* keys, u64 base, u64 total, u64 row_len, u64 nrows,   \
                                                    u32 log_n, u32 rpb, u32 desc) {                         \
        sort_rows<K, u32, false, 1>(keys, (u32*)0, base, total, row_len, nrows, log_n, rpb, desc);        \
    }                                                                                                     \
    extern "C" __global__ void HK_SORT_BLOCK_BOUNDS sort_rows_vt8_##NAME(K* keys, u64 base, u64 total, u64 row_len, u64 nrows,   \
                                                    u32 log_n, u32 rpb, u32 desc) {                         \
        sort_rows<K, u32, false, 8>(keys, (u32*)0, base, total, row_len, nrows, log_n, rpb, desc);        \
    }                                                                                                     \
    extern "C" __global__ void HK_SORT_BLOCK_BOUNDS sort_segs_vt1_##NAME(K* keys, const u64* offsets, const u32* ids, u64 nrows, \
                                                    u32 log_n, u32 rpb, u32 desc) {                         \
        sort_segs<K, u32, false, 1>(keys, (u32*)0, offsets, ids, nrows, log_n, rpb, desc);                \
    }                                                                                                     \
    extern "C" __global__ void HK_SORT_BLOCK_BOUNDS sort_segs_vt8_##NAME(K* keys, const u64* offsets, const u32* ids, u64 nrows, \
                                                    u32 log_n, u32 rpb, u32 desc) {                         \
        sort_segs<K, u32, false, 8>(keys, (u32*)0, offsets, ids, nrows, log_n, rpb, desc);                \
    }                                                                                                     \
    extern "C" __global__ void sort_merge_##NAME(const K* src, K* dst, u64 base, u64 n, u64 width, u32 desc) { \
        sort_merge<K, u32, false>(src, (const u32*)0, dst, (u32*)0, base, n, width, desc);                \
    }

#define HK_SORT_PAIRS(K, NAME, V, VNAME)                                                                  \
    extern "C" __global__ void HK_SORT_BLOCK_BOUNDS sort_rows_vt1_##NAME##_##VNAME(K* keys, V* vals, u64 base, u64 total,        \
                                                              u64 row_len, u64 nrows, u32 log_n, u32 rpb,   \
                                                              u32 desc) {                                   \
        sort_rows<K, V, true, 1>(keys, vals, base, total, row_len, nrows, log_n, rpb, desc);              \
    }                                                                                                     \
    extern "C" __global__ void HK_SORT_BLOCK_BOUNDS sort_rows_vt8_##NAME##_##VNAME(K* keys, V* vals, u64 base, u64 total,        \
                                                              u64 row_len, u64 nrows, u32 log_n, u32 rpb,   \
                                                              u32 desc) {                                   \
        sort_rows<K, V, true, 8>(keys, vals, base, total, row_len, nrows, log_n, rpb, desc);              \
    }                                                                                                     \
    extern "C" __global__ void HK_SORT_BLOCK_BOUNDS sort_segs_vt1_##NAME##_##VNAME(K* keys, V* vals, const u64* offsets,         \
                                                              const u32* ids, u64 nrows, u32 log_n,         \
                                                              u32 rpb, u32 desc) {                          \
        sort_segs<K, V, true, 1>(keys, vals, offsets, ids, nrows, log_n, rpb, desc);                      \
    }                                                                                                     \
    extern "C" __global__ void HK_SORT_BLOCK_BOUNDS sort_segs_vt8_##NAME##_##VNAME(K* keys, V* vals, const u64* offsets,         \
                                                              const u32* ids, u64 nrows, u32 log_n,         \
                                                              u32 rpb, u32 desc) {                          \
        sort_segs<K, V, true, 8>(keys, vals, offsets, ids, nrows, log_n, rpb, desc);                      \
    }                                                                                                     \
    extern "C" __global__ void sort_merge_##NAME##_##VNAME(const K* src, const V* src_vals, K* dst,         \
                                                           V* dst_vals, u64 base, u64 n, u64 width,         \
                                                           u32 desc) {                                      \
        sort_merge<K, V, true>(src, src_vals, dst, dst_vals, base, n, width, desc);                       \
    }

#define HK_SORT_TYPE(K, NAME)            \
    HK_SORT_KEYS(K, NAME)                \
    HK_SORT_PAIRS(K, NAME, u32, u32)     \
    HK_SORT_PAIRS(K, NAME, u64, u64)

HK_SORT_TYPE(u32, u32)
HK_SORT_TYPE(int, i32)
HK_SORT_TYPE(float, f32)
HK_SORT_TYPE(u64, u64)
HK_SORT_TYPE(i64, i64)
HK_SORT_TYPE(double, f64)
