// The bmcs sort kernels for u64 keys: one module per key type, so a sort compiles only
// its own key type's entry points on first use.
#include "sort_bmcs.cuh"

HK_SORT_TYPE(u64, u64)
