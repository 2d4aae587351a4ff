// The (operator, type) pairs every built-in scan kernel is instantiated for, as X-macros:
// X(op name, functor template, type suffix, C type, items per thread P for this type).
// 4-byte types use P = 16 (tiles of 4096 with 256 threads), 8-byte types P = 8 (2048).
// Modules are per element type (a first call compiles one type's kernels only): a per-type
// file instantiates HK_SCAN_OPS_OF(X, SFX), the four operators on type SFX.
#pragma once

// One type's row: X for operator OPNAME/OPT on that type.
#define HK_SCAN_TYPE_i32(X, OPNAME, OPT) X(OPNAME, OPT, i32, int, 16)
#define HK_SCAN_TYPE_u32(X, OPNAME, OPT) X(OPNAME, OPT, u32, u32, 16)
#define HK_SCAN_TYPE_f32(X, OPNAME, OPT) X(OPNAME, OPT, f32, float, 16)
#define HK_SCAN_TYPE_i64(X, OPNAME, OPT) X(OPNAME, OPT, i64, i64, 8)
#define HK_SCAN_TYPE_u64(X, OPNAME, OPT) X(OPNAME, OPT, u64, u64, 8)
#define HK_SCAN_TYPE_f64(X, OPNAME, OPT) X(OPNAME, OPT, f64, double, 8)

// Every operator on the type with suffix SFX (i32, u32, f32, i64, u64, f64).
#define HK_SCAN_OPS_OF(X, SFX)                                                                            \
    HK_SCAN_TYPE_##SFX(X, add, AddOp)                                                                     \
    HK_SCAN_TYPE_##SFX(X, mul, MulOp)                                                                     \
    HK_SCAN_TYPE_##SFX(X, min, MinOp)                                                                     \
    HK_SCAN_TYPE_##SFX(X, max, MaxOp)

// Threads per block of every scan kernel.
#define HK_SCAN_THREADS 256
