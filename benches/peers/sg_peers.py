#!/usr/bin/env python3
"""Times the sparse-grid peers on the cases of hetkit's sg-cpu comparison, on this machine.

Peers: Tasmanian (makeLocalPolynomialGrid(d, 1, n - 1, 1, "localp-zero")) and SG++
(createLinearGrid(d) + regular(n)); both are zero-boundary piecewise-linear grids with the same point
sets as hetkit's GridSpec::regular(d, n). f(x) = prod 4 x (1 - x); m uniform random points.

Prints one line per (peer, case): N, hierarchization seconds, evaluation points/s. Thread count is
whatever OMP_NUM_THREADS says (set it to the count hetkit uses). Run by benches/peers/run_sg.sh, which passes a folder of shared point files.
"""
import sys
import time

import numpy as np

CASES = [(4, 8), (10, 5), (10, 7)]


def f(x):
    return np.prod(4.0 * x * (1.0 - x), axis=1)


def best_of(reps, fn):
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def tasmanian(d, n, pts):
    import Tasmanian

    def make():
        g = Tasmanian.makeLocalPolynomialGrid(d, 1, n - 1, 1, "localp-zero")
        # Tasmanian's canonical domain is [-1, 1]^d; the comparison is on [0, 1]^d.
        g.setDomainTransform(np.column_stack([np.zeros(d), np.ones(d)]))
        return g

    grid = make()
    x = grid.getNeededPoints()
    vals = f(x).reshape(-1, 1)

    def load():
        g = make()
        g.getNeededPoints()
        g.loadNeededValues(vals)

    # loadNeededValues hierarchizes; time it minus the (small) grid construction.
    t_make = best_of(3, lambda: make().getNeededPoints())
    t_hier = max(best_of(3, load) - t_make, 0.0)
    grid.loadNeededValues(vals)
    t_eval = best_of(2, lambda: grid.evaluateBatch(pts))
    y = grid.evaluateBatch(pts)[:, 0]
    return grid.getNumPoints(), t_hier, len(pts) / t_eval, float(np.max(np.abs(y - f(pts))))


def sgpp(d, n, pts):
    import pysgpp

    grid = pysgpp.Grid.createLinearGrid(d)
    grid.getGenerator().regular(n)
    storage = grid.getStorage()
    N = storage.getSize()
    x = np.array([[storage.getPoint(i).getStandardCoordinate(t) for t in range(d)] for i in range(N)])
    vals = f(x)

    def hier():
        alpha = pysgpp.DataVector(vals)
        pysgpp.createOperationHierarchisation(grid).doHierarchisation(alpha)
        return alpha

    t_hier = best_of(3, hier)
    alpha = hier()
    m = len(pts)
    dm = pysgpp.DataMatrix(pts)
    res = pysgpp.DataVector(m)
    op = pysgpp.createOperationMultipleEval(grid, dm)
    t_eval = best_of(1, lambda: op.mult(alpha, res))
    y = np.array([res[i] for i in range(m)])
    return N, t_hier, m / t_eval, float(np.max(np.abs(y - f(pts))))


def main():
    peer = sys.argv[1]
    m = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
    points_dir = sys.argv[3] if len(sys.argv) > 3 else None
    rng = np.random.default_rng(12345)
    for d, n in CASES:
        if points_dir:
            pts = np.fromfile(f"{points_dir}/points_d{d}.f64", dtype="<f8").reshape(-1, d)[:m]
        else:
            pts = rng.random((m, d))
        # SG++ at (10, 7) evaluates ~100 points/s: time it on fewer points.
        if peer == "sgpp" and d * n >= 70:
            pts = pts[: max(m // 100, 200)]
        N, t_hier, pps, err = (tasmanian if peer == "tasmanian" else sgpp)(d, n, pts)
        print(f"{peer} d={d} n={n} N={N} m={len(pts)} hierarchize_s={t_hier:.6f} eval_points_per_s={pps:.4e} max_err={err:.15e}",
              flush=True)


if __name__ == "__main__":
    main()
