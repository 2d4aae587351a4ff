// The look-back scans of rows of any length (scan_segmented.cuh) for i64.
// One module per element type, so a first call compiles only its own type's entry points.
#include "scan_segmented.cuh"

HK_SCAN_OPS_OF(HK_LOOKBACK_ROWS, i64)
