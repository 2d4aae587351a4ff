#!/usr/bin/env python3
"""The Python peers of prefix-ops' CPU sorts and tridiagonal solvers, on the inputs that
`peers gen DIR` wrote (see examples/peers.rs). Run by run.sh.

    peers.py DIR REPS [CASE-PREFIX]

One line per run, as the Rust side prints them: case <TAB> who <TAB> milliseconds [<TAB> residual].
Peers:
  numpy          np.sort / sort(axis=1) (one thread; numpy's sort has no threads), and for
                 key-value sorts a stable argsort plus two gathers;
  gtsv_scipy     LAPACK dgtsv through scipy.linalg.lapack, looped over the systems (one thread);
  gtsv_threads   the same Fortran routine, dgtsv from scipy's cython_lapack, called through ctypes
                 (which releases the GIL) from THREADS Python threads, systems split between them.
"""
import ctypes
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from scipy.linalg import lapack, cython_lapack

N = 1 << 24
ROWS = (32, 256, 4096)
M = 1024
G_FEW = 4


def load(d, name, dtype):
    return np.fromfile(f"{d}/{name}", dtype=dtype)


def timed(case, who, f, reps, extra=None):
    for _ in range(reps):
        t = time.perf_counter()
        out = f()
        ms = (time.perf_counter() - t) * 1e3
        tail = f"\t{extra(out):.3e}" if extra else ""
        print(f"{case}\t{who}\t{ms:.3f}{tail}", flush=True)


def sorts(d, reps, wanted):
    keys = {"f32": load(d, "keys_f32.bin", np.float32), "u32": load(d, "keys_u32.bin", np.uint32)}
    vals = load(d, "vals_u32.bin", np.uint32)
    for t, k in keys.items():
        if wanted(f"sort_{t}_whole"):
            timed(f"sort_{t}_whole", "numpy", lambda: np.sort(k), reps)
        for row in ROWS:
            if wanted(f"sort_{t}_rows{row}"):
                k2 = k.reshape(-1, row)
                timed(f"sort_{t}_rows{row}", "numpy", lambda: np.sort(k2, axis=1), reps)
    k = keys["f32"]
    if wanted("kv_f32_whole"):
        def kv_whole():
            i = np.argsort(k, kind="stable")
            return k[i], vals[i]
        timed("kv_f32_whole", "numpy", kv_whole, reps)
    if wanted("kv_f32_rows4096"):
        k2, v2 = k.reshape(-1, 4096), vals.reshape(-1, 4096)

        def kv_rows():
            i = np.argsort(k2, axis=1, kind="stable")
            return np.take_along_axis(k2, i, 1), np.take_along_axis(v2, i, 1)
        timed("kv_f32_rows4096", "numpy", kv_rows, reps)


def residual(a, b, c, d, x):
    """Largest normwise residual over systems (rows of the 2-D arrays), as prefix-ops defines it."""
    ax = b * x
    ax[:, 1:] += a[:, 1:] * x[:, :-1]
    ax[:, :-1] += c[:, :-1] * x[:, 1:]
    r = np.abs(ax - d).max(axis=1)
    na = (np.abs(b) + np.pad(np.abs(a[:, 1:]), ((0, 0), (1, 0))) + np.pad(np.abs(c[:, :-1]), ((0, 0), (0, 1)))).max(axis=1)
    den = na * np.abs(x).max(axis=1) + np.abs(d).max(axis=1)
    return float((r / den).max())


def dgtsv_ctypes():
    """dgtsv's C entry point from scipy's cython_lapack capsule, as a ctypes function."""
    capsule = cython_lapack.__pyx_capi__["dgtsv"]
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    name = ctypes.pythonapi.PyCapsule_GetName
    name.restype, name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    ptr = get(capsule, name(capsule))
    p = ctypes.POINTER(ctypes.c_int)
    d = ctypes.POINTER(ctypes.c_double)
    return ctypes.CFUNCTYPE(None, p, p, d, d, d, d, p, p)(ptr)


def tridiagonal(d, reps, wanted, threads):
    a, c, rhs = (load(d, f"tri_{n}.f64", np.float64) for n in ("a", "c", "d"))
    fn = dgtsv_ctypes()
    for kind in ("dom", "gen"):
        b = load(d, f"tri_b_{kind}.f64", np.float64)
        for case, m in ((f"tri_{kind}_m{M}", M), (f"tri_{kind}_interleaved_g{G_FEW}", N // G_FEW)):
            if not wanted(case):
                continue
            # The interleaved case's systems are handed to gtsv contiguous (the de-interleaving
            # a caller would need is not timed: in gtsv's favour).
            A, B, C, D = (v.reshape(-1, m) for v in (a, b, c, rhs))

            def scipy_loop():
                x = np.empty_like(D)
                for s in range(D.shape[0]):
                    _, _, _, x[s], info = lapack.dgtsv(A[s, 1:], B[s], C[s, :-1], D[s])
                    assert info == 0, info
                return x

            def threaded():
                # gtsv overwrites its inputs: copies, as the scipy wrapper makes them.
                dl, dd, du, x = A[:, 1:].copy(), B.copy(), C[:, :-1].copy(), D.copy()
                n_, one = ctypes.c_int(m), ctypes.c_int(1)

                def part(rows):
                    info = ctypes.c_int(0)
                    cp = lambda arr, s: arr[s].ctypes.data_as(ctypes.POINTER(ctypes.c_double))
                    for s in rows:
                        fn(ctypes.byref(n_), ctypes.byref(one), cp(dl, s), cp(dd, s), cp(du, s), cp(x, s),
                           ctypes.byref(n_), ctypes.byref(info))
                        assert info.value == 0, info.value
                with ThreadPoolExecutor(threads) as ex:
                    list(ex.map(part, np.array_split(np.arange(D.shape[0]), threads)))
                return x

            res = lambda x: residual(A, B, C, D, x)
            timed(case, "gtsv_scipy", scipy_loop, reps, res)
            timed(case, "gtsv_threads", threaded, reps, res)


def main():
    d, reps = sys.argv[1], int(sys.argv[2])
    only = sys.argv[3] if len(sys.argv) > 3 else ""
    threads = int(__import__("os").environ.get("RAYON_NUM_THREADS", __import__("os").cpu_count()))
    wanted = lambda case: case.startswith(only)
    sorts(d, reps, wanted)
    tridiagonal(d, reps, wanted, threads)


if __name__ == "__main__":
    main()
