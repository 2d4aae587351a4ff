// Single-pass decoupled look-back scans of one array (no heads), deterministic.
// Entry points: scan_lookback_<op>_<type>, and for the network study scan_lookback_add_f32_{ks,sk,lf}.
// One module per element type (scan_lookback_<type>.cu: HK_SCAN_OPS_OF(HK_LOOKBACK_PLAIN, <type>),
// 4 entry points); the network variants are in scan_networks.cu.
#pragma once
#include "scan_lookback.cuh"
#include "scan_instances.cuh"

#define HK_LOOKBACK_PLAIN(OPNAME, OPT, SFX, V, P)                                                          \
    extern "C" __global__ void __launch_bounds__(HK_SCAN_THREADS)                                         \
        scan_lookback_##OPNAME##_##SFX(const V* in, V* out, u64 n, u64 row_len, const u64* offsets,         \
                                       u64 n_offsets, u32* status, void* values, int exclusive) {          \
        scan_lookback_tile<V, OPT<V>, HK_SCAN_THREADS, P, KOGGE_STONE, HEADS_NONE>(                         \
            in, out, n, row_len, offsets, n_offsets, status, values, exclusive);                           \
    }

#define HK_LOOKBACK_NET(NAME, NET)                                                                         \
    extern "C" __global__ void __launch_bounds__(HK_SCAN_THREADS)                                         \
        scan_lookback_add_f32_##NAME(const float* in, float* out, u64 n, u64 row_len, const u64* offsets,   \
                                     u64 n_offsets, u32* status, void* values, int exclusive) {            \
        scan_lookback_tile<float, AddOp<float>, HK_SCAN_THREADS, 16, NET, HEADS_NONE>(                      \
            in, out, n, row_len, offsets, n_offsets, status, values, exclusive);                           \
    }
