// The device side of hetkit's CUDA emulator: what a kernel file sees of CUDA when the emulator
// compiles it with g++ as C++ (see README.md beside this file). Every CUDA thread of a block is a
// fiber of one OS thread; barriers, warp collectives and spin waits switch fibers, so the kernels
// run unmodified with their real synchronisation. The runtime behind `emu_rt` lives in driver.cpp.
#pragma once
#include <cmath>
#include <math.h>
#include <cstring>
#include <cstdint>

struct uint3 { unsigned x, y, z; };
struct dim3 { unsigned x, y, z; };

// The warp collectives the runtime implements; the result is computed once all lanes of the mask
// have arrived.
enum EmuWarpOp { EMU_SYNCWARP, EMU_SHFL_IDX, EMU_SHFL_UP, EMU_SHFL_DOWN, EMU_SHFL_XOR, EMU_BALLOT, EMU_ANY, EMU_ALL };

struct EmuRuntime {
    const uint3* thread_idx;
    const uint3* block_idx;
    const uint3* block_dim;
    const uint3* grid_dim;
    void (*syncthreads)();
    unsigned long long (*warp_op)(int op, unsigned mask, unsigned long long value, int arg, int width);
    void (*yield)();
    void* (*dynamic_smem)();
    void* (*shared_slot)(const void* tag, unsigned long long bytes, unsigned long long align);
    void (*trap)(const char* what);
};

#ifndef EMU_DRIVER_SIDE
// Set by the runtime when it loads the module (emu_module_init, appended to every compiled file).
static const EmuRuntime* emu_rt;

#define threadIdx (*emu_rt->thread_idx)
#define blockIdx (*emu_rt->block_idx)
#define blockDim (*emu_rt->block_dim)
#define gridDim (*emu_rt->grid_dim)
#define warpSize 32

#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __restrict__ __restrict
#define __align__(n) __attribute__((aligned(n)))
#define __constant__ static

inline void __syncthreads() { emu_rt->syncthreads(); }
inline void __syncwarp(unsigned mask = 0xffffffffu) { emu_rt->warp_op(EMU_SYNCWARP, mask, 0, 0, 32); }
inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
// A spinning thread gives the other fibers of its block their turn.
inline void __nanosleep(unsigned) { emu_rt->yield(); }
inline void __trap() { emu_rt->trap("__trap() called"); }

template <typename T> inline unsigned long long emu_bits(T v) {
    static_assert(sizeof(T) <= 8, "shuffles move at most 8 bytes");
    unsigned long long b = 0;
    std::memcpy(&b, &v, sizeof(T));
    return b;
}
template <typename T> inline T emu_from_bits(unsigned long long b) {
    T v;
    std::memcpy(&v, &b, sizeof(T));
    return v;
}
template <typename T> inline T __shfl_sync(unsigned mask, T v, int src, int width = 32) {
    return emu_from_bits<T>(emu_rt->warp_op(EMU_SHFL_IDX, mask, emu_bits(v), src, width));
}
template <typename T> inline T __shfl_up_sync(unsigned mask, T v, unsigned d, int width = 32) {
    return emu_from_bits<T>(emu_rt->warp_op(EMU_SHFL_UP, mask, emu_bits(v), (int)d, width));
}
template <typename T> inline T __shfl_down_sync(unsigned mask, T v, unsigned d, int width = 32) {
    return emu_from_bits<T>(emu_rt->warp_op(EMU_SHFL_DOWN, mask, emu_bits(v), (int)d, width));
}
template <typename T> inline T __shfl_xor_sync(unsigned mask, T v, int m, int width = 32) {
    return emu_from_bits<T>(emu_rt->warp_op(EMU_SHFL_XOR, mask, emu_bits(v), m, width));
}
inline unsigned __ballot_sync(unsigned mask, int p) { return (unsigned)emu_rt->warp_op(EMU_BALLOT, mask, p != 0, 0, 32); }
inline int __any_sync(unsigned mask, int p) { return (int)emu_rt->warp_op(EMU_ANY, mask, p != 0, 0, 32); }
inline int __all_sync(unsigned mask, int p) { return (int)emu_rt->warp_op(EMU_ALL, mask, p != 0, 0, 32); }

// One OS thread runs all fibers, and fibers only switch at the calls above, so plain
// read-modify-writes are atomic here.
template <typename T> inline T atomicAdd(T* p, T v) { T old = *p; *p = old + v; return old; }
template <typename T> inline T atomicSub(T* p, T v) { T old = *p; *p = old - v; return old; }
template <typename T> inline T atomicExch(T* p, T v) { T old = *p; *p = v; return old; }
template <typename T> inline T atomicMin(T* p, T v) { T old = *p; *p = v < old ? v : old; return old; }
template <typename T> inline T atomicMax(T* p, T v) { T old = *p; *p = v > old ? v : old; return old; }
template <typename T> inline T atomicCAS(T* p, T cmp, T v) { T old = *p; if (old == cmp) *p = v; return old; }
template <typename T> inline T atomicOr(T* p, T v) { T old = *p; *p = old | v; return old; }
template <typename T> inline T atomicAnd(T* p, T v) { T old = *p; *p = old & v; return old; }
inline unsigned atomicInc(unsigned* p, unsigned lim) { unsigned old = *p; *p = old >= lim ? 0 : old + 1; return old; }

template <typename T> inline T __ldcg(const T* p) { return *(const volatile T*)p; }
template <typename T> inline T __ldg(const T* p) { return *p; }
template <typename T> inline void __stcg(T* p, T v) { *(volatile T*)p = v; }

inline float __int_as_float(int i) { return emu_from_bits<float>((unsigned)i); }
inline int __float_as_int(float f) { return (int)(unsigned)emu_bits(f); }
inline float __uint_as_float(unsigned i) { return emu_from_bits<float>(i); }
inline unsigned __float_as_uint(float f) { return (unsigned)emu_bits(f); }
inline double __longlong_as_double(long long i) { return emu_from_bits<double>((unsigned long long)i); }
inline long long __double_as_longlong(double d) { return (long long)emu_bits(d); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned)x); }
inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline unsigned __brev(unsigned x) {
    unsigned r = 0;
    for (int i = 0; i < 32; ++i) r |= ((x >> i) & 1u) << (31 - i);
    return r;
}
// Compiled with -ffp-contract=off, so these round once, as on the device.
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline float __fdividef(float a, float b) { return a / b; }
using std::fabs; using std::floor; using std::ceil; using std::sqrt; using std::fma; using std::fmin; using std::fmax;
// fminf, fabsf, sqrtf and the other float functions come from <math.h> through <cmath>.
using std::exp; using std::log; using std::pow;
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
#endif  // EMU_DRIVER_SIDE

// ---- module registration (the emulator appends a call per kernel to every compiled file) --------
#include <utility>
typedef void (*EmuThunkFn)(void* fn, void** params);
typedef void (*EmuAddKernel)(void* registry, const char* name, EmuThunkFn thunk, void* fn, unsigned maxntid);
template <typename F> struct EmuThunk;
template <typename... A> struct EmuThunk<void (*)(A...)> {
    template <std::size_t... I> static void go(void (*f)(A...), void** p, std::index_sequence<I...>) {
        f(*static_cast<A*>(p[I])...);
    }
    // cuLaunchKernel's kernelParams: one pointer per parameter, to a value of the parameter's type.
    static void call(void* fn, void** params) {
        go(reinterpret_cast<void (*)(A...)>(fn), params, std::index_sequence_for<A...>{});
    }
};
