// The radix sort kernels for u64 keys: one module per key type, so a sort compiles only
// its own key type's entry points on first use.
#include "sort_radix.cuh"

HK_RADIX_TYPE(u64, u64)
