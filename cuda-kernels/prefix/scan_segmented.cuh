// Single-pass look-back scans with heads: rows of any length (scan_lookback_rows_<op>_<type>,
// heads at multiples of row_len) and CSR segments (scan_lookback_seg_<op>_<type>, heads at the
// offsets). Tiles have a fixed size whatever the segment lengths: load-balanced.
// Two modules per element type, 4 entry points each: scan_lookback_rows_<type>.cu
// (HK_SCAN_OPS_OF(HK_LOOKBACK_ROWS, <type>)) and scan_segmented_<type>.cu (HK_LOOKBACK_SEG).
#pragma once
#include "scan_lookback.cuh"
#include "scan_instances.cuh"

// Launch bounds of the CSR-segment kernels, by items per thread. 8-byte values (P = 8): at
// least 4 blocks per SM, which caps them at 64 registers, where they run anyway; left to its
// own heuristic ptxas also gives seg_add_i64/u64 64 registers but spills 4 bytes per thread,
// and told the target it fits them without a spill (sm_90, ptxas 12.9). 4-byte values
// (P = 16) keep the bare bound: at 64 registers they would spill 40 bytes, and an explicit
// minimum of 1 block lets ptxas take up to 124 registers (2 blocks per SM instead of 3).
#define HK_SEG_BOUNDS_8 __launch_bounds__(HK_SCAN_THREADS, 4)
#define HK_SEG_BOUNDS_16 __launch_bounds__(HK_SCAN_THREADS)

#define HK_LOOKBACK_ROWS(OPNAME, OPT, SFX, V, P)                                                           \
    extern "C" __global__ void __launch_bounds__(HK_SCAN_THREADS)                                         \
        scan_lookback_rows_##OPNAME##_##SFX(const V* in, V* out, u64 n, u64 row_len, const u64* offsets,    \
                                            u64 n_offsets, u32* status, void* values, int exclusive) {     \
        scan_lookback_tile<V, OPT<V>, HK_SCAN_THREADS, P, KOGGE_STONE, HEADS_ROWS>(                         \
            in, out, n, row_len, offsets, n_offsets, status, values, exclusive);                           \
    }

#define HK_LOOKBACK_SEG(OPNAME, OPT, SFX, V, P)                                                            \
    extern "C" __global__ void HK_SEG_BOUNDS_##P                                                          \
        scan_lookback_seg_##OPNAME##_##SFX(const V* in, V* out, u64 n, u64 row_len, const u64* offsets,     \
                                           u64 n_offsets, u32* status, void* values, int exclusive) {      \
        scan_lookback_tile<V, OPT<V>, HK_SCAN_THREADS, P, KOGGE_STONE, HEADS_OFFSETS>(                      \
            in, out, n, row_len, offsets, n_offsets, status, values, exclusive);                           \
    }
