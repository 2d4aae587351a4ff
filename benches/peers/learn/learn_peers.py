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

try:
    if os.environ.get("LEARN_PEERS_SKIP_SGPP"):
        raise RuntimeError("skipped (LEARN_PEERS_SKIP_SGPP)")
    import pysgpp as sg

    def dm(a):
        d = sg.DataMatrix(a.shape[0], a.shape[1])
        for i in range(a.shape[0]):
            for k in range(a.shape[1]):
                d.set(i, k, float(a[i, k]))
        return d

    def dv(v):
        r = sg.DataVector(len(v))
        for i, e in enumerate(v):
            r[i] = float(e)
        return r

    grid = sg.Grid.createModLinearGrid(10)
    grid.getGenerator().regular(REG_LEVEL)
    n = grid.getSize()
    X, Y = dm(x), dv(y)
    t0 = time.perf_counter()
    op = sg.createOperationMultipleEval(grid, X)
    rhs = sg.DataVector(n)
    op.multTranspose(Y, rhs)
    alpha = sg.DataVector(n); alpha.setAll(0.0)
    # CG on (B^T B + m lambda I) alpha = B^T y, the same system as hetkit's (scaled by m)
    r = np.array([rhs[i] for i in range(n)]); p = r.copy(); a = np.zeros(n)
    rs = r @ r; tmp_m = sg.DataVector(len(y)); tmp_n = sg.DataVector(n)
    t1 = time.perf_counter()
    for it in range(REG_ITER):
        op.mult(dv(p), tmp_m)
        op.multTranspose(tmp_m, tmp_n)
        ap = np.array([tmp_n[i] for i in range(n)]) + len(y) * REG_LAMBDA * p
        step = rs / (p @ ap); a += step * p; r -= step * ap
        rs_new = r @ r; p = r + (rs_new / rs) * p; rs = rs_new
    t2 = time.perf_counter()
    opt = sg.createOperationMultipleEval(grid, dm(xt))
    pred = sg.DataVector(len(yt)); opt.mult(dv(a), pred)
    mse = float(np.mean((np.array([pred[i] for i in range(len(yt))]) - yt) ** 2))
    print(f"regression who=sgpp level={REG_LEVEL} N={n} s_per_iteration={(t2 - t1) / REG_ITER:.6e} mse={mse:.6}")

    g2 = sg.Grid.createLinearGrid(BLOB_DIM)
    g2.getGenerator().regular(BLOB_LEVEL)
    n2 = g2.getSize()
    t0 = time.perf_counter()
    B = sg.createOperationMultipleEval(g2, dm(bx))
    b = sg.DataVector(n2); ones = sg.DataVector(len(bx)); ones.setAll(1.0 / len(bx))
    B.multTranspose(ones, b)
    L2 = sg.createOperationLTwoDotProduct(g2)
    bb = np.array([b[i] for i in range(n2)]); a = np.zeros(n2); r = bb.copy(); p = r.copy(); rs = r @ r
    it = 0; tmp = sg.DataVector(n2)
    while it < 100 and np.sqrt(rs) > 1e-3 * np.linalg.norm(bb):
        L2.mult(dv(p), tmp)
        ap = np.array([tmp[i] for i in range(n2)]) + BLOB_LAMBDA * p
        step = rs / (p @ ap); a += step * p; r -= step * ap
        rs_new = r @ r; p = r + (rs_new / rs) * p; rs = rs_new; it += 1
    secs = time.perf_counter() - t0
    E = sg.createOperationMultipleEval(g2, dm(probe)); f = sg.DataVector(len(probe)); E.mult(dv(a), f)
    f = np.array([f[i] for i in range(len(probe))])
    h = np.fromfile(f"{out}/blobs_density_hetkit.f64", dtype="<f8")
    rel = float(np.linalg.norm(f - h) / np.linalg.norm(h))
    print(f"density who=sgpp level={BLOB_LEVEL} N={n2} seconds={secs:.4} iterations={it} rel_diff_to_hetkit={rel:.2e}")
except Exception as e:  # report exactly why SG++ is missing
    print(f"# sgpp unavailable: {type(e).__name__}: {e}")

from sklearn.neighbors import KernelDensity
from sklearn.cluster import DBSCAN
from sklearn.metrics import adjusted_rand_score
h = np.fromfile(f"{out}/blobs_density_hetkit.f64", dtype="<f8")
for bw in (0.02, 0.05):
    t0 = time.perf_counter()
    kde = KernelDensity(bandwidth=bw).fit(bx)
    f = np.exp(kde.score_samples(probe))
    secs = time.perf_counter() - t0
    corr = float(np.corrcoef(f, h)[0, 1])
    print(f"density who=sklearn-kde bandwidth={bw} seconds={secs:.4} corr_with_hetkit={corr:.3f}")
for eps in (0.03, 0.05, 0.08):
    t0 = time.perf_counter()
    lab = DBSCAN(eps=eps, min_samples=6, n_jobs=threads).fit_predict(bx)
    print(f"clustering who=sklearn-dbscan eps={eps} seconds={time.perf_counter() - t0:.4} ari={adjusted_rand_score(labels, lab):.4}")
try:
    from sklearn.cluster import HDBSCAN
    t0 = time.perf_counter()
    lab = HDBSCAN(min_cluster_size=50).fit_predict(bx)
    print(f"clustering who=sklearn-hdbscan seconds={time.perf_counter() - t0:.4} ari={adjusted_rand_score(labels, lab):.4}")
except ImportError as e:
    print(f"# hdbscan unavailable: {e}")
