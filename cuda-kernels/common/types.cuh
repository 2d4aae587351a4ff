// Small helpers shared by every kernel file. Only quoted project headers may be included by
// kernels: NVRTC has no C++ standard library, and build.rs inlines quoted includes.
#pragma once

#define HK_DEVICE __device__ __forceinline__

typedef unsigned int u32;
typedef unsigned long long u64;
typedef long long i64;

// Index of this thread across the grid, and the grid's thread count, as 64-bit values so that
// grid-stride loops over more than 2^31 elements stay correct.
HK_DEVICE u64 global_thread() { return (u64)blockIdx.x * blockDim.x + threadIdx.x; }
HK_DEVICE u64 grid_threads() { return (u64)gridDim.x * blockDim.x; }
