// The segmented scans at every granularity (segmented_ops.cuh) for f64.
// One module per element type, so a first call compiles only its own type's entry points.
#include "segmented_ops.cuh"

HK_SCAN_OPS_OF(HK_SEG_SCAN, f64)
