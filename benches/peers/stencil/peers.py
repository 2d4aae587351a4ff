"""Devito (OpenMP) and numpy slicing on the same stencils, grid, type and sweep count as hetkit's
sweep_timing: prints one JSON line per measurement, with the wall time per sweep and the CPU
time of all the process's threads per sweep (which separates work from waiting for a core on a
loaded machine; OpenMP and rayon threads that spin while waiting count as working).

usage: peers.py STENCIL PRECISION N SWEEPS REPS    (STENCIL: 7, 13 or 27)
"""
import json
import sys
import time

import numpy as np


def weights(name):
    # The dyadic weights hetkit's timing uses (only the operation count matters for time).
    return {"7": (0.25, 0.125), "13": (0.5, 0.0625, 0.015625), "27": (0.5, 1 / 32, 1 / 64, 1 / 64)}[name]


def offsets(name):
    if name == "7":
        return [[(0, 0, 0)], [d for r in (1,) for d in axis(r)]]
    if name == "13":
        return [[(0, 0, 0)], axis(1), axis(2)]
    groups = [[], [], [], []]
    for a in (-1, 0, 1):
        for b in (-1, 0, 1):
            for c in (-1, 0, 1):
                groups[sum(x != 0 for x in (a, b, c))].append((a, b, c))
    return groups


def axis(r):
    return [(r, 0, 0), (-r, 0, 0), (0, r, 0), (0, -r, 0), (0, 0, r), (0, 0, -r)]


def field(n, dtype):
    i, j, k = np.meshgrid(np.arange(n), np.arange(n), np.arange(n), indexing="ij")
    return ((i * 5 + j * 11 + k * 3) % 16).astype(dtype)


def numpy_sweeps(name, u, sweeps):
    h = 2 if name == "13" else 1
    n = u.shape[0]
    v = u.copy()
    groups, w = offsets(name), weights(name)
    inner = slice(h, n - h)
    for _ in range(sweeps):
        acc = None
        for wt, group in zip(w, groups):
            s = None
            for a, b, c in group:
                t = u[h + a:n - h + a, h + b:n - h + b, h + c:n - h + c]
                s = t.copy() if s is None else s.__iadd__(t)
            s *= u.dtype.type(wt)
            acc = s if acc is None else acc.__iadd__(s)
        v[inner, inner, inner] = acc
        u, v = v, u
    return u


def devito_operator(name, n, dtype):
    from devito import Eq, Grid, Operator, TimeFunction

    h = 2 if name == "13" else 1
    grid = Grid(shape=(n, n, n), dtype=dtype)
    u = TimeFunction(name="u", grid=grid, space_order=2 * h)
    t = grid.stepping_dim
    x, y, z = grid.dimensions
    expr = 0
    for wt, group in zip(weights(name), offsets(name)):
        expr += dtype(wt) * sum(u[t, x + a, y + b, z + c] for a, b, c in group)
    op = Operator([Eq(u[t + 1, x, y, z], expr)], opt=("advanced", {"openmp": True}))
    return op, u


def median(v):
    return sorted(v)[len(v) // 2]


def main():
    name, precision, n, sweeps, reps = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    dtype = np.float32 if precision == "f32" else np.float64
    u0 = field(n, dtype)
    times, cpu = [], []
    for _ in range(reps):
        t0, c0 = time.perf_counter(), time.process_time()
        numpy_sweeps(name, u0, sweeps)
        times.append((time.perf_counter() - t0) / sweeps)
        cpu.append((time.process_time() - c0) / sweeps)
    print(json.dumps({"tool": "numpy", "stencil": name, "precision": precision, "n": n, "ms_per_sweep": 1e3 * median(times), "cpu_ms_per_sweep": 1e3 * median(cpu)}))
    sys.stdout.flush()
    op, u = devito_operator(name, n, dtype)
    u.data[0, :] = u0
    op.apply(time_M=0)  # JIT compile outside the timing
    times, cpu = [], []
    for _ in range(reps):
        u.data[0, :] = u0
        t0, c0 = time.perf_counter(), time.process_time()
        op.apply(time_M=sweeps - 1)
        times.append((time.perf_counter() - t0) / sweeps)
        cpu.append((time.process_time() - c0) / sweeps)
    print(json.dumps({"tool": "devito", "stencil": name, "precision": precision, "n": n, "ms_per_sweep": 1e3 * median(times), "cpu_ms_per_sweep": 1e3 * median(cpu)}))


if __name__ == "__main__":
    main()
