"""Peers of hetkit's sg-learn on the data written by `learn_compare` (same points, same grids).

SG++ (pysgpp): regression with its multiple-evaluation operators and its CG on
(B^T B + m*lambda*I) alpha = B^T y (the same system), and density estimation with its L2
operator. scikit-learn: KernelDensity on the density data, DBSCAN and HDBSCAN on the clustering
data (ARI against the generator's labels, noise as its own label).
"""
import os, sys, time
import numpy as np

out, m, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
REG_LEVEL, REG_ITER, REG_LAMBDA = 4, 50, 1e-5
BLOB_DIM, BLOB_LEVEL, BLOB_LAMBDA = 5, 5, 1e-4

def load(name, cols):
    return np.fromfile(f"{out}/{name}", dtype="<f8").reshape(-1, cols) if cols else np.fromfile(f"{out}/{name}", dtype="<f8")

x, y, xt, yt = load("fried_x.f64", 10), load("fried_y.f64", 0), load("fried_xt.f64", 10), load("fried_yt.f64", 0)
bx, labels, probe = load("blobs_x.f64", BLOB_DIM), load("blobs_labels.f64", 0).astype(int), load("blobs_probe.f64", BLOB_DIM)

def sgpp_peers():
    """SG++'s regression and density estimation on hetkit's grids, data and iteration counts.

    Two traps of pysgpp 3.3.1 decide whether this runs at all: an operation keeps a reference
    to the DataMatrix it was created with but does not own it, so a temporary matrix
    (`createOperationMultipleEval(grid, DataMatrix(x))`) is freed while the operation lives and
    the next `mult` aborts the interpreter in C++ with `DataMatrix::getRow : Dimensions do not
    match`; and the default multiple evaluation is SG++'s per-point recursive one (about 20x
    slower than its streaming kernel here), so the streaming type is asked for by name, with
    the default one timed over a single operator pair for reference.
    """
    import pysgpp as sg

    def streaming(grid, matrix):
        cfg = sg.OperationMultipleEvalConfiguration(
            sg.OperationMultipleEvalType_STREAMING, sg.OperationMultipleEvalSubType_DEFAULT)
        return sg.createOperationMultipleEval(grid, matrix, cfg)

    grid = sg.Grid.createModLinearGrid(10)
    grid.getGenerator().regular(REG_LEVEL)
    n = grid.getSize()
    X, Y = sg.DataMatrix(x), sg.DataVector(y)  # named: the operations below refer to them
    t0, c0 = time.perf_counter(), time.process_time()
    op = streaming(grid, X)
    rhs = sg.DataVector(n)
    op.multTranspose(Y, rhs)
    # CG on (B^T B + m lambda I) alpha = B^T y, hetkit's system times m, from alpha = 0
    r = rhs.array().copy(); p = r.copy(); a = np.zeros(n); rs = r @ r
    P, tmp_m, tmp_n = sg.DataVector(n), sg.DataVector(len(y)), sg.DataVector(n)
    t1 = time.perf_counter()
    for _ in range(REG_ITER):
        P.array()[:] = p
        op.mult(P, tmp_m)
        op.multTranspose(tmp_m, tmp_n)
        ap = tmp_n.array() + len(y) * REG_LAMBDA * p
        step = rs / (p @ ap); a += step * p; r -= step * ap
        rs_new = r @ r; p = r + (rs_new / rs) * p; rs = rs_new
    t2, c2 = time.perf_counter(), time.process_time()
    XT = sg.DataMatrix(xt)
    opt = streaming(grid, XT)
    pred = sg.DataVector(len(yt)); opt.mult(sg.DataVector(a), pred)
    mse = float(np.mean((pred.array() - yt) ** 2))
    print(f"regression who=sgpp-streaming level={REG_LEVEL} N={n} s_per_iteration={(t2 - t0) / REG_ITER:.6e} "
          f"cpu_s_per_iteration={(c2 - c0) / REG_ITER:.6e} s_per_iteration_without_setup={(t2 - t1) / REG_ITER:.6e} mse={mse:.6}")
    naive = sg.createOperationMultipleEval(grid, X)
    t3 = time.perf_counter()
    naive.mult(P, tmp_m)
    naive.multTranspose(tmp_m, tmp_n)
    print(f"regression who=sgpp-default level={REG_LEVEL} N={n} s_per_iteration={time.perf_counter() - t3:.6e} (one iteration)")

    g2 = sg.Grid.createLinearGrid(BLOB_DIM)
    g2.getGenerator().regular(BLOB_LEVEL)
    n2 = g2.getSize()
    BX, PR = sg.DataMatrix(bx), sg.DataMatrix(probe)
    t0, c0 = time.perf_counter(), time.process_time()
    B = streaming(g2, BX)
    b = sg.DataVector(n2); ones = sg.DataVector(len(bx)); ones.setAll(1.0 / len(bx))
    B.multTranspose(ones, b)
    L2 = sg.createOperationLTwoDotProduct(g2)
    bb = b.array().copy(); a = np.zeros(n2); r = bb.copy(); p = r.copy(); rs = r @ r
    it = 0; P, tmp = sg.DataVector(n2), sg.DataVector(n2)
    while it < 100 and np.sqrt(rs) > 1e-3 * np.linalg.norm(bb):
        P.array()[:] = p
        L2.mult(P, tmp)
        ap = tmp.array() + BLOB_LAMBDA * p
        step = rs / (p @ ap); a += step * p; r -= step * ap
        rs_new = r @ r; p = r + (rs_new / rs) * p; rs = rs_new; it += 1
    secs, cpu = time.perf_counter() - t0, time.process_time() - c0
    E = streaming(g2, PR); f = sg.DataVector(len(probe)); E.mult(sg.DataVector(a), f)
    h = np.fromfile(f"{out}/blobs_density_hetkit.f64", dtype="<f8")
    rel = float(np.linalg.norm(f.array() - h) / np.linalg.norm(h))
    print(f"density who=sgpp level={BLOB_LEVEL} N={n2} seconds={secs:.4} cpu_seconds={cpu:.4} iterations={it} rel_diff_to_hetkit={rel:.2e}")


if os.environ.get("LEARN_PEERS_SKIP_SGPP"):
    print("# sgpp skipped (LEARN_PEERS_SKIP_SGPP)")
else:
    try:
        sgpp_peers()
    except Exception as e:  # report exactly why SG++ is missing
        print(f"# sgpp unavailable: {type(e).__name__}: {e}")

from sklearn.neighbors import KernelDensity
from sklearn.cluster import DBSCAN
from sklearn.metrics import adjusted_rand_score
h = np.fromfile(f"{out}/blobs_density_hetkit.f64", dtype="<f8")
for bw in (0.02, 0.05):
    t0, c0 = time.perf_counter(), time.process_time()
    kde = KernelDensity(bandwidth=bw).fit(bx)
    f = np.exp(kde.score_samples(probe))
    secs, cpu = time.perf_counter() - t0, time.process_time() - c0
    corr = float(np.corrcoef(f, h)[0, 1])
    print(f"density who=sklearn-kde bandwidth={bw} seconds={secs:.4} cpu_seconds={cpu:.4} corr_with_hetkit={corr:.3f}")
for eps in (0.03, 0.05, 0.08):
    t0, c0 = time.perf_counter(), time.process_time()
    lab = DBSCAN(eps=eps, min_samples=6, n_jobs=threads).fit_predict(bx)
    print(f"clustering who=sklearn-dbscan eps={eps} seconds={time.perf_counter() - t0:.4} "
          f"cpu_seconds={time.process_time() - c0:.4} ari={adjusted_rand_score(labels, lab):.4}")
try:
    from sklearn.cluster import HDBSCAN
    t0, c0 = time.perf_counter(), time.process_time()
    lab = HDBSCAN(min_cluster_size=50).fit_predict(bx)
    print(f"clustering who=sklearn-hdbscan seconds={time.perf_counter() - t0:.4} "
          f"cpu_seconds={time.process_time() - c0:.4} ari={adjusted_rand_score(labels, lab):.4}")
except ImportError as e:
    print(f"# hdbscan unavailable: {e}")
