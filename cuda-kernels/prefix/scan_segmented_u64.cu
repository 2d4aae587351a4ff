// The look-back scans of CSR segments (scan_segmented.cuh) for u64.
// One module per element type, so a first call compiles only its own type's entry points.
#include "scan_segmented.cuh"

HK_SCAN_OPS_OF(HK_LOOKBACK_SEG, u64)
