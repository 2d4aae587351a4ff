#!/usr/bin/env bash
# Learning peers (not part of CI): SG++ (pysgpp) regression and density estimation,
# scikit-learn KernelDensity, DBSCAN and HDBSCAN, against hetkit's sg-learn on the same data and
# thread count. The peers go into a venv under target/ (pysgpp needs numpy < 2).
#
#   benches/peers/learn/run.sh [THREADS] [M]
set -euo pipefail
cd "$(dirname "$0")/../../.."
threads=${1:-$(nproc)}
m=${2:-20000}
tdir=${CARGO_TARGET_DIR:-target}
venv=${LEARN_PEERS_VENV:-$tdir/learn-peers-venv}
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q "numpy<2" scikit-learn pysgpp
fi
work=$tdir/peers-learn
mkdir -p "$work"
cargo build --release -q -p sg-learn --example learn_compare
export OMP_NUM_THREADS=$threads RAYON_NUM_THREADS=$threads
{
    "$tdir"/release/examples/learn_compare "$work" "$m"
    "$venv/bin/python" -u benches/peers/learn/learn_peers.py "$work" "$m" "$threads"
} | tee "$work/results.txt"
