// The radix sort kernels for f64 keys: one module per key type, so a sort compiles only
// its own key type's entry points on first use.
#include "sort_radix.cuh"

HK_RADIX_TYPE(double, f64)
