// The (operator, type) pairs every scan kernel is instantiated for, as an X-macro:
// X(op name, functor template, type suffix, C type, items per thread P for this type).
// 4-byte types use P = 16 (tiles of 4096 with 256 threads), 8-byte types P = 8 (2048).
#pragma once

#define HK_SCAN_OP_TYPES(X, OPNAME, OPT)                                                                  \
    X(OPNAME, OPT, i32, int, 16)                                                                          \
    X(OPNAME, OPT, u32, u32, 16)                                                                          \
    X(OPNAME, OPT, f32, float, 16)                                                                        \
    X(OPNAME, OPT, i64, i64, 8)                                                                           \
    X(OPNAME, OPT, u64, u64, 8)                                                                           \
    X(OPNAME, OPT, f64, double, 8)

#define HK_SCAN_INSTANCES(X)                                                                              \
    HK_SCAN_OP_TYPES(X, add, AddOp)                                                                       \
    HK_SCAN_OP_TYPES(X, mul, MulOp)                                                                       \
    HK_SCAN_OP_TYPES(X, min, MinOp)                                                                       \
    HK_SCAN_OP_TYPES(X, max, MaxOp)

// Threads per block of every scan kernel.
#define HK_SCAN_THREADS 256
