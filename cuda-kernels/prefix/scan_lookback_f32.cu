// The look-back scans of one array (scan_lookback_entries.cuh) for f32.
// One module per element type, so a first call compiles only its own type's entry points.
#include "scan_lookback_entries.cuh"

HK_SCAN_OPS_OF(HK_LOOKBACK_PLAIN, f32)
