// y <- a * x + y, the kernel that proves both build paths (nvcc PTX and NVRTC) end to end.
#include "../common/types.cuh"

template <typename T>
__device__ void axpy(u64 n, T a, const T* __restrict__ x, T* __restrict__ y) {
    for (u64 i = global_thread(); i < n; i += grid_threads()) {
        y[i] = a * x[i] + y[i];
    }
}

extern "C" __global__ void axpy_f32(u64 n, float a, const float* x, float* y) { axpy(n, a, x, y); }
extern "C" __global__ void axpy_f64(u64 n, double a, const double* x, double* y) { axpy(n, a, x, y); }
