// Batched scans of G rows of N that need no inter-block communication:
//   scan_rows_warp   one warp per row (several rows per block), chunks of 32 * P with a carry;
//                    for short and medium rows (the thesis's small-size regime).
//   scan_rows_block  one block per row, tiles of THREADS * P with a carry; for long rows when
//                    there are enough rows to fill the GPU.
// Rows longer than that, or too few rows, go to the look-back kernel with row heads.
//
// Combination order: chunk prefix = carry ⊕ lane_excl (warp) or carry ⊕ (warp_prefix ⊕
// lane_excl) (block), out = prefix ⊕ s[i], carry = carry ⊕ chunk total.
#pragma once
#include "block_scan.cuh"

template <typename V, typename Op, int THREADS, int P, int NET>
__device__ void scan_rows_warp(const V* in, V* out, u64 rows, u64 row_len, int exclusive) {
    enum { WARPS = THREADS / 32, SLOTS = WarpExchange<P>::SLOTS, CHUNK = 32 * P };
    __shared__ V smem[WARPS * SLOTS];
    const Op op = Op();
    const int warp = threadIdx.x >> 5;
    V* wsm = smem + warp * SLOTS;
    bool no_head[P];
#pragma unroll
    for (int i = 0; i < P; ++i) no_head[i] = false;
    for (u64 row = (u64)blockIdx.x * WARPS + warp; row < rows; row += (u64)gridDim.x * WARPS) {
        const V* rin = in + row * row_len;
        V* rout = out + row * row_len;
        V carry = op.identity();
        for (u64 c = 0; c < row_len; c += CHUNK) {
            V s[P];
            warp_load_blocked<P>(rin, c, row_len, s, wsm, op.identity());
            const V total = thread_inclusive<P>(s, op);
            const V incl = warp_inclusive<NET>(total, op);
            const V lane_excl = warp_exclusive_from_inclusive(incl, op);
            const V chunk_total = warp_broadcast_last(incl);
            const V prefix = op(carry, lane_excl);
            V res[P];
            thread_outputs<P>(s, no_head, prefix, op, op.identity(), exclusive != 0, res);
            warp_store_blocked<P>(rout, c, row_len, res, wsm);
            carry = op(carry, chunk_total);
        }
    }
}

template <typename V, typename Op, int THREADS, int P, int NET>
__device__ void scan_rows_block(const V* in, V* out, u64 rows, u64 row_len, int exclusive) {
    typedef BlockScan<THREADS, NET, Op> BS;
    enum { WARPS = THREADS / 32, SLOTS = WarpExchange<P>::SLOTS, TILE = THREADS * P };
    __shared__ V smem[WARPS * SLOTS];
    __shared__ typename BS::Storage bs;
    const Op op = Op();
    const int warp = threadIdx.x >> 5;
    V* wsm = smem + warp * SLOTS;
    bool no_head[P];
#pragma unroll
    for (int i = 0; i < P; ++i) no_head[i] = false;
    for (u64 row = blockIdx.x; row < rows; row += gridDim.x) {
        const V* rin = in + row * row_len;
        V* rout = out + row * row_len;
        V carry = op.identity();
        for (u64 c = 0; c < row_len; c += TILE) {
            V s[P];
            const u64 wbase = c + (u64)warp * 32 * P;
            warp_load_blocked<P>(rin, wbase, row_len, s, wsm, op.identity());
            const V total = thread_inclusive<P>(s, op);
            V aggregate;
            const V prefix = op(carry, BS::exclusive_prefix(total, op, bs, aggregate));
            V res[P];
            thread_outputs<P>(s, no_head, prefix, op, op.identity(), exclusive != 0, res);
            warp_store_blocked<P>(rout, wbase, row_len, res, wsm);
            carry = op(carry, aggregate);
        }
    }
}
