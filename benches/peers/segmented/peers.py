#!/usr/bin/env python3
"""The Python peers of prefix-ops' segmented reduce and CSR product (issue 23), on the shapes
of crates/prefix-ops/benches/segmented.rs. Run by run.sh.

    peers.py LOG2 REPS

One line per run: case <TAB> who <TAB> milliseconds. Peers (one thread each: numpy's reduceat
and scipy.sparse's CSR product have no threads):
  numpy_reduceat   np.add.reduceat(x, starts) over 2^LOG2 f32, segment lengths 1, 8, 64, 1024,
                   2^17 and random 1..=2048 (reduceat cannot express empty segments; none here);
  numpy_sum        np.sum(x), the one-thread read floor;
  scipy_csr        A @ x, f64, on the banded, random and power-law matrices with 2^(LOG2-4) rows
                   built by the same rules as the Rust bench (random ones from another generator).
"""
import math
import sys
import time

import numpy as np
import scipy.sparse as sp


def timed(case, who, f, reps):
    for _ in range(reps):
        t = time.perf_counter()
        f()
        print(f"{case}\t{who}\t{(time.perf_counter() - t) * 1e3:.3f}", flush=True)


def shapes(n, rng):
    for length in (1, 8, 64, 1024, 1 << 17):
        yield str(length), np.arange(0, n, length)
    lens = []
    left = n
    while left > 0:
        l = min(int(rng.integers(1, 2049)), left)
        lens.append(l)
        left -= l
    yield "random", np.concatenate(([0], np.cumsum(lens)[:-1]))


def matrices(rows, rng):
    i = np.repeat(np.arange(rows), 5)
    j = i + np.tile(np.arange(-2, 3), rows)
    ok = (j >= 0) & (j < rows)
    yield "banded", i[ok], j[ok]
    yield "random", rng.integers(0, rows, rows * 8), rng.integers(0, rows, rows * 8)
    lens = np.ceil(math.sqrt(rows) * 4.0 / np.sqrt(np.arange(1, rows + 1))).astype(np.int64)
    lens = np.minimum(lens, rows)
    i = np.repeat(np.arange(rows), lens)
    k = np.concatenate([np.arange(l) for l in lens])
    yield "power_law", i, (k * 7919 + i) % rows


def main():
    log2, reps = int(sys.argv[1]), int(sys.argv[2])
    rng = np.random.default_rng(7)
    n = 1 << log2
    x = rng.uniform(-1, 1, n).astype(np.float32)
    timed(f"reduce_f32_2^{log2}/floor", "numpy_sum", lambda: np.sum(x), reps)
    for name, starts in shapes(n, rng):
        timed(f"reduce_f32_2^{log2}/{name}", "numpy_reduceat", lambda: np.add.reduceat(x, starts), reps)
    rows = 1 << (log2 - 4)
    v = rng.uniform(-1, 1, rows)
    for name, i, j in matrices(rows, rng):
        a = sp.csr_matrix((rng.uniform(-1, 1, len(i)), (i, j)), shape=(rows, rows))
        a.sum_duplicates()
        timed(f"spmv_f64_{rows}_rows/{name} nnz={a.nnz}", "scipy_csr", lambda: a @ v, reps)


if __name__ == "__main__":
    main()
