// The look-back scan of one array with its tuning parameters as compile-time defines, for the
// autotuner (prefix-ops' GpuScanTuning). The host prepends, per configuration,
//   #define HK_TUNE_T <C type>      #define HK_TUNE_OP <AddOp|MulOp|MinOp|MaxOp>
//   #define HK_TUNE_THREADS <block size>   #define HK_TUNE_P <items per thread>
//   #define HK_TUNE_NET <KOGGE_STONE|SKLANSKY|LADNER_FISCHER>
// and compiles it with NVRTC (one module per configuration, cached). Without them (the nvcc
// build) the default configuration for float sums is instantiated, which keeps the file compiled
// and checked on every build.
#include "scan_lookback.cuh"

#ifndef HK_TUNE_T
#define HK_TUNE_T float
#define HK_TUNE_OP AddOp
#define HK_TUNE_THREADS 256
#define HK_TUNE_P 16
#define HK_TUNE_NET KOGGE_STONE
#endif

extern "C" __global__ void __launch_bounds__(HK_TUNE_THREADS)
    scan_tuned_lookback(const HK_TUNE_T* in, HK_TUNE_T* out, u64 n, u64 row_len, const u64* offsets,
                        u64 n_offsets, u32* status, void* values, int exclusive) {
    scan_lookback_tile<HK_TUNE_T, HK_TUNE_OP<HK_TUNE_T>, HK_TUNE_THREADS, HK_TUNE_P, HK_TUNE_NET, HEADS_NONE>(
        in, out, n, row_len, offsets, n_offsets, status, values, exclusive);
}
