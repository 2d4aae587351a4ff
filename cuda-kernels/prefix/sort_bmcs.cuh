// Sort kernels: batched rows and short segments by block-level BMCS (bitonic_network.cuh).
// Longer segments and whole arrays: sort_radix.cuh.
//
// Entry points, one module per key type (sort_bmcs_K.cu), K in {u32, i32, f32, u64, i64, f64},
// V in {u32, u64}:
//   sort_rows_K[_V](keys, [vals], base, total, row_len, nrows, log_n, rows_per_block, desc)
//     row r is keys[base + r*row_len .. min(base + (r+1)*row_len, base + total)), padded to
//     2^log_n with the order's maximum key.
//   sort_segs_K[_V](keys, [vals], plan, ids_at, nrows, log_n, rows_per_block, desc)
//     plan holds the segment offsets (plan[s] .. plan[s+1]) and, from plan[ids_at], the ids of
//     this launch's segments, each of at most 2^log_n keys: row r is segment plan[ids_at + r].
// Block shape: rows_per_block rows of np = blockDim.x / rows_per_block threads each (np = n/4
// for rows of n <= 128 keys, else a multiple of 32 up to 1024; a thread takes n/(4 np) groups of
// four keys in turn, so registers do not grow with the row). Dynamic shared memory:
// rows_per_block * 2^log_n * (sizeof(bits) + (KV ? 4 + sizeof(V) : 0)) bytes. Rows are loaded
// into and stored from shared memory by consecutive threads (coalesced), whatever the row's
// alignment.
#pragma once
#include "bitonic_network.cuh"

#define HK_SORT_BLOCK_BOUNDS __launch_bounds__(1024)

// One row of len <= 2^log_n keys at keys[begin ..], sorted by the np threads tp = 0..np-1 of
// row slot row_in_block of the block (every thread of the block calls it: barriers inside).
template <typename K, typename V, bool KV>
__device__ void sort_row_block(K* keys, V* vals, u64 begin, u32 len, u32 log_n, u32 rows_per_block,
                               u32 desc) {
    typedef typename SortKey<K>::Bits U;
    extern __shared__ __align__(16) unsigned char sort_smem[];
    const u32 n = 1u << log_n;
    const u32 np = blockDim.x / rows_per_block;
    const u32 row_in_block = threadIdx.x / np;
    const u32 tp = threadIdx.x % np;
    U* sk = (U*)sort_smem + (u64)row_in_block * n;
    u32* st = (u32*)((U*)sort_smem + (u64)rows_per_block * n) + (u64)row_in_block * n;
    V* sv = (V*)((u32*)((U*)sort_smem + (u64)rows_per_block * n) + (u64)rows_per_block * n) +
            (u64)row_in_block * n;
    const U flip = desc ? ~(U)0 : (U)0;
    for (u32 i = tp; i < n; i += np) {
        // The order's maximum pads the row: it sorts behind every real key (behind equal ones
        // too, through the tags).
        sk[i] = i < len ? SortKey<K>::to_bits(keys[begin + i]) ^ flip : ~(U)0;
        if (KV) {
            st[i] = i;
            if (i < len) sv[i] = vals[begin + i];
        }
    }
    __syncthreads();
    bmcs_sort_smem<KV>(sk, st, tp, np, log_n, len);
    for (u32 i = tp; i < len; i += np) {
        keys[begin + i] = SortKey<K>::from_bits(sk[i] ^ flip);
        if (KV) vals[begin + i] = sv[st[i]];
    }
}

template <typename K, typename V, bool KV>
__device__ void sort_rows(K* keys, V* vals, u64 base, u64 total, u64 row_len, u64 nrows, u32 log_n,
                          u32 rows_per_block, u32 desc) {
    const u32 np = blockDim.x / rows_per_block;
    const u64 row = (u64)blockIdx.x * rows_per_block + threadIdx.x / np;
    u64 begin = base, len = 0;
    if (row < nrows) {
        u64 first = row * row_len;
        u64 end = first + row_len < total ? first + row_len : total;
        begin = base + first;
        len = end - first;
    }
    sort_row_block<K, V, KV>(keys, vals, begin, (u32)len, log_n, rows_per_block, desc);
}

template <typename K, typename V, bool KV>
__device__ void sort_segs(K* keys, V* vals, const u64* plan, u64 ids_at, u64 nrows, u32 log_n,
                          u32 rows_per_block, u32 desc) {
    const u32 np = blockDim.x / rows_per_block;
    const u64 row = (u64)blockIdx.x * rows_per_block + threadIdx.x / np;
    u64 begin = 0, len = 0;
    if (row < nrows) {
        u64 s = plan[ids_at + row];
        begin = plan[s];
        len = plan[s + 1] - begin;
    }
    sort_row_block<K, V, KV>(keys, vals, begin, (u32)len, log_n, rows_per_block, desc);
}

#define HK_SORT_KEYS(K, NAME)                                                                         \
    extern "C" __global__ void HK_SORT_BLOCK_BOUNDS sort_rows_##NAME(K* keys, u64 base, u64 total,        \
                                                                     u64 row_len, u64 nrows, u32 log_n, \
                                                                     u32 rpb, u32 desc) {               \
        sort_rows<K, u32, false>(keys, (u32*)0, base, total, row_len, nrows, log_n, rpb, desc);       \
    }                                                                                                 \
    extern "C" __global__ void HK_SORT_BLOCK_BOUNDS sort_segs_##NAME(K* keys, const u64* plan,            \
                                                                     u64 ids_at, u64 nrows, u32 log_n,  \
                                                                     u32 rpb, u32 desc) {               \
        sort_segs<K, u32, false>(keys, (u32*)0, plan, ids_at, nrows, log_n, rpb, desc);               \
    }

#define HK_SORT_PAIRS(K, NAME, V, VNAME)                                                              \
    extern "C" __global__ void HK_SORT_BLOCK_BOUNDS sort_rows_##NAME##_##VNAME(                         \
        K* keys, V* vals, u64 base, u64 total, u64 row_len, u64 nrows, u32 log_n, u32 rpb, u32 desc) {  \
        sort_rows<K, V, true>(keys, vals, base, total, row_len, nrows, log_n, rpb, desc);             \
    }                                                                                                 \
    extern "C" __global__ void HK_SORT_BLOCK_BOUNDS sort_segs_##NAME##_##VNAME(                         \
        K* keys, V* vals, const u64* plan, u64 ids_at, u64 nrows, u32 log_n, u32 rpb, u32 desc) {       \
        sort_segs<K, V, true>(keys, vals, plan, ids_at, nrows, log_n, rpb, desc);                     \
    }

#define HK_SORT_TYPE(K, NAME)        \
    HK_SORT_KEYS(K, NAME)            \
    HK_SORT_PAIRS(K, NAME, u32, u32) \
    HK_SORT_PAIRS(K, NAME, u64, u64)
