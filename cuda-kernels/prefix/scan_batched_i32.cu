// The batched row scans (scan_batched.cuh) for i32.
// One module per element type, so a first call compiles only its own type's entry points.
#include "scan_batched.cuh"

HK_SCAN_OPS_OF(HK_ROWS, i32)
