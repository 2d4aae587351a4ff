// Single-pass look-back scans with heads: rows of any length (scan_lookback_rows_<op>_<type>,
// heads at multiples of row_len) and CSR segments (scan_lookback_seg_<op>_<type>, heads at the
// offsets). Tiles have a fixed size whatever the segment lengths: load-balanced.
#include "scan_lookback.cuh"
#include "scan_instances.cuh"

#define HK_LOOKBACK_HEADS(OPNAME, OPT, SFX, V, P)                                                          \
    extern "C" __global__ void __launch_bounds__(HK_SCAN_THREADS)                                         \
        scan_lookback_rows_##OPNAME##_##SFX(const V* in, V* out, u64 n, u64 row_len, const u64* offsets,    \
                                            u64 n_offsets, u32* status, void* values, int exclusive) {     \
        scan_lookback_tile<V, OPT<V>, HK_SCAN_THREADS, P, KOGGE_STONE, HEADS_ROWS>(                         \
            in, out, n, row_len, offsets, n_offsets, status, values, exclusive);                           \
    }                                                                                                      \
    extern "C" __global__ void __launch_bounds__(HK_SCAN_THREADS)                                         \
        scan_lookback_seg_##OPNAME##_##SFX(const V* in, V* out, u64 n, u64 row_len, const u64* offsets,     \
                                           u64 n_offsets, u32* status, void* values, int exclusive) {      \
        scan_lookback_tile<V, OPT<V>, HK_SCAN_THREADS, P, KOGGE_STONE, HEADS_OFFSETS>(                      \
            in, out, n, row_len, offsets, n_offsets, status, values, exclusive);                           \
    }
HK_SCAN_INSTANCES(HK_LOOKBACK_HEADS)
