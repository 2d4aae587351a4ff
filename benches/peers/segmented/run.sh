#!/usr/bin/env bash
# prefix-ops' segmented reduce, scans, sort and CSR product against their floors and peers
# (issue 23), in one job: numpy's np.add.reduceat, scipy.sparse's A @ x, the sprs crate,
# sort_unstable per segment under rayon, and the read and copy floors measured by the criterion
# bench `segmented`. Not part of CI. numpy and scipy go
# into a venv under target/ (shared with benches/peers/prefix).
#
#   benches/peers/segmented/run.sh [ROUNDS] [REPS] [LOG2]
#
# ROUNDS (default 3) alternate the Python side and the Rust side, so both see the same machine
# load; the report is the median of every contender over all rounds (summary.py). REPS (default
# 5) repeats each Python case per round. LOG2 (default 24) sets 2^LOG2 elements (2^(LOG2-4)
# matrix rows, 2^(LOG2-2) sort keys). The raw measurements stay in target/segmented-peers.tsv.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
rounds=${1:-3}
reps=${2:-5}
log2=${3:-24}
venv=${PEERS_VENV:-$root/target/peers-venv}
target=${CARGO_TARGET_DIR:-$root/target}
log=$target/segmented-peers.tsv
export CRITERION_HOME=$target/criterion-segmented-peers
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q numpy scipy
fi
mkdir -p "$CRITERION_HOME"
: > "$log"
for r in $(seq "$rounds"); do
    echo "== round $r: python peers (one thread)"
    "$venv/bin/python" "$here/peers.py" "$log2" "$reps" | tee -a "$log"
    echo "== round $r: hetkit, sprs and the floors (criterion)"
    (cd "$root" && HETKIT_SEG_BENCH_LOG2=$log2 cargo bench -q -p prefix-ops --bench segmented -- \
        'segmented_reduce|segmented_scan|segmented_sort|segmented_spmv' 2>&1 | grep -E '^segmented|time:' || true)
    python3 "$here/summary.py" collect "$CRITERION_HOME" "$log"
done
python3 "$here/summary.py" report "$log" "$log2"
