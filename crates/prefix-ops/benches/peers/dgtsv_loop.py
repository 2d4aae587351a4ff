"""Peer for the CPU tridiagonal bench: a loop over LAPACK dgtsv (scipy), m = 512, G = 1024, f64.

Run: python3 crates/prefix-ops/benches/peers/dgtsv_loop.py   (prints the median time per batch)
Compare with criterion's tridiagonal_cpu_m512_g1024_f64 results on the same machine.
"""
import time

import numpy as np
from scipy.linalg import lapack

m, g = 512, 1024
i = np.arange(m * g, dtype=np.float64)
f = lambda s: np.sin(i * s) * 0.5 + 0.1
a, c, d = f(0.37), f(0.71), f(0.13)
b = np.abs(a) + np.abs(c) + 1.0
A, B, C, D = (v.reshape(g, m) for v in (a, b, c, d))


def run():
    for s in range(g):
        # dgtsv(dl, d, du, b): dl = sub-diagonal rows 1..m-1, du = super-diagonal rows 0..m-2.
        lapack.dgtsv(A[s, 1:], B[s], C[s, :-1], D[s], overwrite_d=0, overwrite_b=0)


run()
times = []
for _ in range(7):
    t = time.perf_counter()
    run()
    times.append(time.perf_counter() - t)
print(f"dgtsv loop m={m} G={g} f64: median {sorted(times)[len(times)//2]*1e3:.3f} ms, min {min(times)*1e3:.3f} ms")
