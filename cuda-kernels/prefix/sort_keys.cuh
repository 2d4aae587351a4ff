// Order-preserving maps from sort keys to unsigned bit patterns, shared by every sort kernel.
// The networks only ever sort unsigned integers ascending: a key goes in as to_bits(x) ^ flip
// (flip = all ones for a descending sort) and comes out through from_bits. The maps are
// bijections, so the kernels sort in place without losing any bit of the input, NaN payloads
// included. The Rust side (prefix_ops::sort::SortKey) defines the same maps; keep them equal.
//
// Floats: the IEEE total order (x ^ (sign ? all : sign bit)) puts -NaN first. Subtracting the
// number of negative-NaN codes K (wrapping) rotates them to the top, so the order is
//   -inf < ... < -0.0 < +0.0 < ... < +inf < +NaN < -NaN (each group in total_cmp order),
// NaNs last, and the rotation is still a bijection.
#pragma once
#include "../common/types.cuh"

template <typename T> struct SortKey;

template <> struct SortKey<u32> {
    typedef u32 Bits;
    static HK_DEVICE u32 to_bits(u32 x) { return x; }
    static HK_DEVICE u32 from_bits(u32 b) { return b; }
};

template <> struct SortKey<int> {
    typedef u32 Bits;
    static HK_DEVICE u32 to_bits(int x) { return (u32)x ^ 0x80000000u; }
    static HK_DEVICE int from_bits(u32 b) { return (int)(b ^ 0x80000000u); }
};

template <> struct SortKey<float> {
    typedef u32 Bits;
    static HK_DEVICE u32 to_bits(float x) {
        u32 b = __float_as_uint(x);
        u32 m = (b & 0x80000000u) ? ~b : (b | 0x80000000u);
        return m - 0x007FFFFFu;
    }
    static HK_DEVICE float from_bits(u32 r) {
        u32 m = r + 0x007FFFFFu;
        u32 b = (m & 0x80000000u) ? (m ^ 0x80000000u) : ~m;
        return __uint_as_float(b);
    }
};

template <> struct SortKey<u64> {
    typedef u64 Bits;
    static HK_DEVICE u64 to_bits(u64 x) { return x; }
    static HK_DEVICE u64 from_bits(u64 b) { return b; }
};

template <> struct SortKey<i64> {
    typedef u64 Bits;
    static HK_DEVICE u64 to_bits(i64 x) { return (u64)x ^ 0x8000000000000000ull; }
    static HK_DEVICE i64 from_bits(u64 b) { return (i64)(b ^ 0x8000000000000000ull); }
};

template <> struct SortKey<double> {
    typedef u64 Bits;
    static HK_DEVICE u64 to_bits(double x) {
        u64 b = (u64)__double_as_longlong(x);
        u64 m = (b & 0x8000000000000000ull) ? ~b : (b | 0x8000000000000000ull);
        return m - 0x000FFFFFFFFFFFFFull;
    }
    static HK_DEVICE double from_bits(u64 r) {
        u64 m = r + 0x000FFFFFFFFFFFFFull;
        u64 b = (m & 0x8000000000000000ull) ? (m ^ 0x8000000000000000ull) : ~m;
        return __longlong_as_double((long long)b);
    }
};
