// The device quicksort's and split3's per-type kernels (segmented_ops.cuh) for i32: pivots,
// 3-way classes, the count of unordered keys. One module per element type.
#include "segmented_ops.cuh"

HK_SEG_TYPED(i32)
