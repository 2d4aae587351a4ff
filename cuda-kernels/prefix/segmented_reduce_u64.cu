// The segmented reductions (segmented_reduce.cuh) for u64.
// One module per element type, so a first call compiles only its own type's entry points.
#include "segmented_reduce.cuh"

HK_SCAN_OPS_OF(HK_SEG_REDUCE, u64)
