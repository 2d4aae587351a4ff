#!/usr/bin/env bash
# Sparse-grid peer comparison (not part of CI): Tasmanian and SG++ against hetkit's sg-cpu on the
# same grids, points and thread count. Installs nothing globally: the peers go into a venv under
# target/ (Tasmanian builds from source with cmake, about 5 minutes; pysgpp needs numpy < 2).
#
#   benches/peers/run_sg.sh [THREADS] [M]
set -euo pipefail
cd "$(dirname "$0")/../.."
threads=${1:-$(nproc)}
m=${2:-100000}
venv=${PEERS_VENV:-target/peers-venv}
if [ ! -x "$venv/bin/python" ]; then
    command -v cmake >/dev/null || { apt-get update -qq && apt-get install -y -qq cmake; }
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q "numpy<2" pysgpp Tasmanian
fi
py=$venv/bin/python
work=target/peers-sg
mkdir -p "$work"
# The same uniform random points for everyone: raw little-endian f64, m x d.
"$py" - "$work" "$m" <<'PY'
import sys, numpy as np
out, m = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(12345)
for d in (4, 10):
    rng.random((m, d)).astype("<f8").tofile(f"{out}/points_d{d}.f64")
PY
cargo build --release -q -p sg-cpu --example sg_compare
export OMP_NUM_THREADS=$threads RAYON_NUM_THREADS=$threads
{
    target/release/examples/sg_compare "$work" "$m"
    "$py" benches/peers/sg_peers.py tasmanian "$m" "$work"
    "$py" benches/peers/sg_peers.py sgpp "$m" "$work"
} | tee "$work/results.txt"
"$py" - "$work/results.txt" <<'PY'
import sys, re
rows = {}
for line in open(sys.argv[1]):
    if line.startswith("#"):
        continue
    kv = dict(re.findall(r"(\w+)=([^\s]+)", line))
    rows[(line.split()[0], kv["d"], kv["n"])] = kv
def agree(h, peer):
    # Same interpolant: the max error against f must match (SG++ at (10, 7) sees fewer points).
    if "max_err" not in peer:
        return "-"
    if peer["m"] != h["m"]:
        return f"(m={peer['m']})"
    a, b = float(h["max_err"]), float(peer["max_err"])
    return "yes" if abs(a - b) <= 1e-12 * max(1.0, abs(a)) else f"NO ({b:.6e})"
print("\n| d | n | N | eval pts/s hetkit | vs Tasmanian | vs SG++ | hierarchize s hetkit (plan s) | vs Tasmanian | vs SG++ | max err hetkit | same as Tasmanian / SG++ |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for (who, d, n), h in sorted(rows.items()):
    if who != "hetkit":
        continue
    t = rows.get(("tasmanian", d, n), {})
    s = rows.get(("sgpp", d, n), {})
    ev = float(h["eval_points_per_s"])
    hs = float(h["hierarchize_s"])
    r = lambda peer, key, inv: (f"{(float(peer[key]) / hs) if inv else (ev / float(peer[key])):.1f}x" if key in peer else "-")
    print(f"| {d} | {n} | {h['N']} | {ev:.3e} | {r(t, 'eval_points_per_s', False)} | {r(s, 'eval_points_per_s', False)} "
          f"| {hs:.4f} ({float(h['plan_s']):.4f}) | {r(t, 'hierarchize_s', True)} | {r(s, 'hierarchize_s', True)} "
          f"| {float(h['max_err']):.4e} | {agree(h, t)} / {agree(h, s)} |")
PY
