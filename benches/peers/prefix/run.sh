#!/usr/bin/env bash
# prefix-ops' CPU sorts and tridiagonal solvers against their peers, on the same inputs, in one
# job (issue 16). Not part of CI. Installs nothing globally: numpy and scipy go into a venv under
# target/, the Rust peers (rdst, voracious_radix_sort) are dev-dependencies of this directory's
# own small workspace, built into its own target/.
#
#   benches/peers/prefix/run.sh [ROUNDS] [REPS] [CASE-PREFIX]
#
# ROUNDS (default 3) alternate the Rust side (hetkit, rdst, voracious, std) and the Python side
# (numpy, LAPACK dgtsv); each runs every case REPS (default 3) times, contenders interleaved.
# Prints each case's median per contender and the ratio hetkit / fastest peer (below 1: hetkit
# is faster). Threads: RAYON_NUM_THREADS (default: all cores) for hetkit, the Rust peers and the
# threaded gtsv loop; numpy's sort and the scipy gtsv loop run on one thread.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
rounds=${1:-3}
reps=${2:-3}
only=${3:-}
venv=${PEERS_VENV:-$root/target/peers-venv}
work=$root/target/peers-prefix
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q numpy scipy
fi
(cd "$here" && cargo build --release -q --example peers)
bin=$here/target/release/examples/peers
mkdir -p "$work"
[ -f "$work/tri_b_gen.f64" ] || "$bin" gen "$work"
out=$work/results.tsv
: > "$out"
for r in $(seq "$rounds"); do
    "$bin" run "$work" "$reps" "$only" | tee -a "$out"
    "$venv/bin/python" "$here/peers.py" "$work" "$reps" "$only" | tee -a "$out"
done
"$venv/bin/python" "$here/summarize.py" "$out"
