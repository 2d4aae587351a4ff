// spvm: y[j] = sum_i x[i] * a[ix[i] * lda + j] (thesis Listing 3.8, §4.4.3 and the pt parameter
// of §5.5.3), over a 2D grid: blockIdx.x picks the outputs, blockIdx.y a chunk of the selected rows.
// Each thread owns PT outputs j = bx * blockDim.x * PT + q * blockDim.x + threadIdx.x, so for every
// selected row a warp reads 32 consecutive matrix values (coalesced) and every thread of the block
// reads the same x[i], ix[i] (staged in shared memory, broadcast). Block (x, y) sums the selected
// rows y * rows_per_chunk .. (y + 1) * rows_per_chunk, in sub-chunks of blockDim.x, into row y of
// `out` (p values per row): `y` itself when there is one chunk, else a partial that
// sg_spvm_reduce adds up in chunk order, so the result never depends on the order blocks run in.
// A row index at or past `nrows` reads no memory: its coefficient becomes NaN (applied to row 0),
// so every output says the input was bad.
#include "../common/types.cuh"

template <typename T, int PT>
__device__ void sg_spvm(u64 p, u64 lda, u64 nrows, u32 nsel, u32 rows_per_chunk, const T* __restrict__ x,
                        const u64* __restrict__ ix, const T* __restrict__ a, T* __restrict__ out) {
    extern __shared__ unsigned char sg_spvm_smem[];
    T* xs = (T*)sg_spvm_smem;
    u64* rows = (u64*)(sg_spvm_smem + sizeof(T) * blockDim.x + (8 - (sizeof(T) * blockDim.x) % 8) % 8);
    const u64 first = (u64)blockIdx.x * blockDim.x * PT + threadIdx.x;
    const u32 begin = blockIdx.y * rows_per_chunk;
    const u32 end = begin >= nsel ? begin : (nsel - begin < rows_per_chunk ? nsel : begin + rows_per_chunk);
    T acc[PT];
#pragma unroll
    for (int q = 0; q < PT; ++q) acc[q] = (T)0;
    for (u32 i0 = begin; i0 < end; i0 += blockDim.x) {
        const u32 chunk = end - i0 < blockDim.x ? end - i0 : blockDim.x;
        if (threadIdx.x < chunk) {
            const u64 r = ix[i0 + threadIdx.x];
            const bool ok = r < nrows;
            xs[threadIdx.x] = ok ? x[i0 + threadIdx.x] : (T)__int_as_float(0x7fc00000);  // quiet NaN
            rows[threadIdx.x] = ok ? r : 0;
        }
        __syncthreads();
        for (u32 i = 0; i < chunk; ++i) {
            const T xi = xs[i];
            const T* row = a + rows[i] * lda;
#pragma unroll
            for (int q = 0; q < PT; ++q) {
                const u64 j = first + (u64)q * blockDim.x;
                if (j < p) acc[q] += xi * row[j];
            }
        }
        // The next sub-chunk overwrites xs and rows.
        __syncthreads();
    }
    T* y = out + (u64)blockIdx.y * p;
#pragma unroll
    for (int q = 0; q < PT; ++q) {
        const u64 j = first + (u64)q * blockDim.x;
        if (j < p) y[j] = acc[q];
    }
}

// y[j] = sum over c = 0, 1, ..., chunks - 1 of partial[c * p + j], in that order (grid-stride).
template <typename T>
__device__ void sg_spvm_reduce(u64 p, u32 chunks, const T* __restrict__ partial, T* __restrict__ y) {
    for (u64 j = (u64)blockIdx.x * blockDim.x + threadIdx.x; j < p; j += (u64)gridDim.x * blockDim.x) {
        T s = (T)0;
        for (u32 c = 0; c < chunks; ++c) s += partial[(u64)c * p + j];
        y[j] = s;
    }
}

#define SG_SPVM(T, SUF, PT)                                                                         \
    extern "C" __global__ void sg_spvm_##SUF##_p##PT(u64 p, u64 lda, u64 nrows, u32 nsel,           \
                                                     u32 rows_per_chunk, const T* x, const u64* ix, \
                                                     const T* a, T* y) {                            \
        sg_spvm<T, PT>(p, lda, nrows, nsel, rows_per_chunk, x, ix, a, y);                           \
    }

#define SG_SPVM_REDUCE(T, SUF)                                                                      \
    extern "C" __global__ void sg_spvm_reduce_##SUF(u64 p, u32 chunks, const T* partial, T* y) {    \
        sg_spvm_reduce<T>(p, chunks, partial, y);                                                   \
    }

SG_SPVM(float, f32, 1)
SG_SPVM(float, f32, 2)
SG_SPVM(float, f32, 4)
SG_SPVM(double, f64, 1)
SG_SPVM(double, f64, 2)
SG_SPVM(double, f64, 4)
SG_SPVM_REDUCE(float, f32)
SG_SPVM_REDUCE(double, f64)
