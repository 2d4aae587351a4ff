#!/usr/bin/env bash
# prefix-ops' segmented reduce and CSR product against numpy's np.add.reduceat and
# scipy.sparse's A @ x (issue 23), in one job. Not part of CI. numpy and scipy go into a venv
# under target/ (shared with benches/peers/prefix); the Rust side is the criterion bench
# `segmented` (its sprs peer is a dev-dependency), filtered to reduce and spmv.
#
#   benches/peers/segmented/run.sh [ROUNDS] [REPS] [LOG2]
#
# ROUNDS (default 2) alternate the Python side and the Rust side, so both see the same machine
# load. LOG2 (default 24) sets 2^LOG2 elements (2^(LOG2-4) matrix rows).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
rounds=${1:-2}
reps=${2:-5}
log2=${3:-24}
venv=${PEERS_VENV:-$root/target/peers-venv}
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q numpy scipy
fi
for r in $(seq "$rounds"); do
    echo "== round $r: python peers (one thread)"
    "$venv/bin/python" "$here/peers.py" "$log2" "$reps"
    echo "== round $r: hetkit and sprs (criterion)"
    (cd "$root" && HETKIT_SEG_BENCH_LOG2=$log2 cargo bench -q -p prefix-ops --bench segmented -- \
        'segmented_reduce|segmented_spmv' 2>&1 | grep -E '^segmented|time:')
done
