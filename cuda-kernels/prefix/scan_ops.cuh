// Scan operators as device functors: `identity()` and `operator()(a, b)` with `a` the EARLIER
// operand (order matters for non-commutative operators). Integer Add/Mul wrap (computed in
// unsigned arithmetic, so there is no signed-overflow undefined behaviour); float Add uses -0.0,
// the exact additive identity. Also the segmented form of any operator on (head, value) pairs.
#pragma once
#include "../common/types.cuh"

// ---- limits without <climits> (NVRTC has no standard library) -------------------------------
template <typename T> struct Limits;
template <> struct Limits<int> {
    HK_DEVICE static int lowest() { return -0x7fffffff - 1; }
    HK_DEVICE static int highest() { return 0x7fffffff; }
};
template <> struct Limits<u32> {
    HK_DEVICE static u32 lowest() { return 0u; }
    HK_DEVICE static u32 highest() { return 0xffffffffu; }
};
template <> struct Limits<i64> {
    HK_DEVICE static i64 lowest() { return -0x7fffffffffffffffLL - 1; }
    HK_DEVICE static i64 highest() { return 0x7fffffffffffffffLL; }
};
template <> struct Limits<u64> {
    HK_DEVICE static u64 lowest() { return 0ull; }
    HK_DEVICE static u64 highest() { return 0xffffffffffffffffull; }
};
template <> struct Limits<float> {
    HK_DEVICE static float lowest() { return __int_as_float(0xff800000); }
    HK_DEVICE static float highest() { return __int_as_float(0x7f800000); }
};
template <> struct Limits<double> {
    HK_DEVICE static double lowest() { return __longlong_as_double(0xfff0000000000000LL); }
    HK_DEVICE static double highest() { return __longlong_as_double(0x7ff0000000000000LL); }
};

// ---- wrapping integer arithmetic ---------------------------------------------------------------
HK_DEVICE int wrap_add(int a, int b) { return (int)((u32)a + (u32)b); }
HK_DEVICE u32 wrap_add(u32 a, u32 b) { return a + b; }
HK_DEVICE i64 wrap_add(i64 a, i64 b) { return (i64)((u64)a + (u64)b); }
HK_DEVICE u64 wrap_add(u64 a, u64 b) { return a + b; }
HK_DEVICE float wrap_add(float a, float b) { return __fadd_rn(a, b); }
HK_DEVICE double wrap_add(double a, double b) { return __dadd_rn(a, b); }
HK_DEVICE int wrap_mul(int a, int b) { return (int)((u32)a * (u32)b); }
HK_DEVICE u32 wrap_mul(u32 a, u32 b) { return a * b; }
HK_DEVICE i64 wrap_mul(i64 a, i64 b) { return (i64)((u64)a * (u64)b); }
HK_DEVICE u64 wrap_mul(u64 a, u64 b) { return a * b; }
// _rn intrinsics are never contracted into FMAs, so results match the CPU emulation exactly.
HK_DEVICE float wrap_mul(float a, float b) { return __fmul_rn(a, b); }
HK_DEVICE double wrap_mul(double a, double b) { return __dmul_rn(a, b); }

template <typename T> HK_DEVICE T add_identity() { return (T)0; }
template <> HK_DEVICE float add_identity<float>() { return -0.0f; }
template <> HK_DEVICE double add_identity<double>() { return -0.0; }

HK_DEVICE float min2(float a, float b) { return fminf(a, b); }
HK_DEVICE double min2(double a, double b) { return fmin(a, b); }
HK_DEVICE float max2(float a, float b) { return fmaxf(a, b); }
HK_DEVICE double max2(double a, double b) { return fmax(a, b); }
template <typename T> HK_DEVICE T min2(T a, T b) { return b < a ? b : a; }
template <typename T> HK_DEVICE T max2(T a, T b) { return b > a ? b : a; }

// ---- the built-in operators --------------------------------------------------------------------
template <typename T> struct AddOp {
    typedef T value_type;
    HK_DEVICE T identity() const { return add_identity<T>(); }
    HK_DEVICE T operator()(T a, T b) const { return wrap_add(a, b); }
};
template <typename T> struct MulOp {
    typedef T value_type;
    HK_DEVICE T identity() const { return (T)1; }
    HK_DEVICE T operator()(T a, T b) const { return wrap_mul(a, b); }
};
template <typename T> struct MinOp {
    typedef T value_type;
    HK_DEVICE T identity() const { return Limits<T>::highest(); }
    HK_DEVICE T operator()(T a, T b) const { return min2(a, b); }
};
template <typename T> struct MaxOp {
    typedef T value_type;
    HK_DEVICE T identity() const { return Limits<T>::lowest(); }
    HK_DEVICE T operator()(T a, T b) const { return max2(a, b); }
};

// ---- segmented scans: (head, value) pairs ------------------------------------------------------
// (f1, v1) ⊕ (f2, v2) = (f1 | f2, f2 ? v2 : v1 ⊕ v2), associative whenever ⊕ is.
template <typename T> struct Flagged {
    T v;
    int f;
};

template <typename Op> struct SegOp {
    typedef typename Op::value_type V;
    typedef Flagged<V> value_type;
    Op op;
    HK_DEVICE Flagged<V> identity() const {
        Flagged<V> r;
        r.v = op.identity();
        r.f = 0;
        return r;
    }
    HK_DEVICE Flagged<V> operator()(Flagged<V> a, Flagged<V> b) const {
        Flagged<V> r;
        r.v = b.f ? b.v : op(a.v, b.v);
        r.f = a.f | b.f;
        return r;
    }
};

// Building a scan element from a value and its head flag, and reading the value back.
template <typename Op> struct Elem {
    typedef typename Op::value_type T;
    typedef T V;
    HK_DEVICE static T make(V v, bool) { return v; }
    HK_DEVICE static V value(T t) { return t; }
    HK_DEVICE static bool has_head(T) { return false; }
};
template <typename Op> struct Elem<SegOp<Op> > {
    typedef typename Op::value_type V;
    typedef Flagged<V> T;
    HK_DEVICE static T make(V v, bool head) {
        T t;
        t.v = v;
        t.f = head ? 1 : 0;
        return t;
    }
    HK_DEVICE static V value(T t) { return t.v; }
    HK_DEVICE static bool has_head(T t) { return t.f != 0; }
};
