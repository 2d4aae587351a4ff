// The device quicksort's and split3's per-type kernels (segmented_ops.cuh) for u64: pivots,
// 3-way classes, the count of unordered keys. One module per element type.
#include "segmented_ops.cuh"

HK_SEG_TYPED(u64)
