// Batched scans of G rows of N without inter-block communication:
//   scan_rows_warp_s_<op>_<type>   one warp per row, chunks of 32 * P/4 (128 for 4-byte types)
//   scan_rows_warp_l_<op>_<type>   one warp per row, chunks of 32 * P (512 for 4-byte types)
//   scan_rows_block_<op>_<type>    one block per row, tiles of 256 * P
// and the network study variants scan_rows_warp_l_add_f32_{ks,sk,lf}.
// One module per element type (scan_batched_<type>.cu: HK_SCAN_OPS_OF(HK_ROWS, <type>), 12 entry
// points); the network variants are in scan_networks.cu.
#pragma once
#include "scan_rows.cuh"
#include "scan_instances.cuh"

#define HK_ROWS(OPNAME, OPT, SFX, V, P)                                                                     \
    extern "C" __global__ void __launch_bounds__(HK_SCAN_THREADS)                                         \
        scan_rows_warp_s_##OPNAME##_##SFX(const V* in, V* out, u64 rows, u64 row_len, int exclusive) {     \
        scan_rows_warp<V, OPT<V>, HK_SCAN_THREADS, P / 4, KOGGE_STONE>(in, out, rows, row_len, exclusive);  \
    }                                                                                                      \
    extern "C" __global__ void __launch_bounds__(HK_SCAN_THREADS)                                         \
        scan_rows_warp_l_##OPNAME##_##SFX(const V* in, V* out, u64 rows, u64 row_len, int exclusive) {     \
        scan_rows_warp<V, OPT<V>, HK_SCAN_THREADS, P, KOGGE_STONE>(in, out, rows, row_len, exclusive);      \
    }                                                                                                      \
    extern "C" __global__ void __launch_bounds__(HK_SCAN_THREADS)                                         \
        scan_rows_block_##OPNAME##_##SFX(const V* in, V* out, u64 rows, u64 row_len, int exclusive) {      \
        scan_rows_block<V, OPT<V>, HK_SCAN_THREADS, P, KOGGE_STONE>(in, out, rows, row_len, exclusive);     \
    }

#define HK_ROWS_NET(NAME, NET)                                                                             \
    extern "C" __global__ void __launch_bounds__(HK_SCAN_THREADS)                                         \
        scan_rows_warp_l_add_f32_##NAME(const float* in, float* out, u64 rows, u64 row_len, int exclusive) { \
        scan_rows_warp<float, AddOp<float>, HK_SCAN_THREADS, 16, NET>(in, out, rows, row_len, exclusive);   \
    }
