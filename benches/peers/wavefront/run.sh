#!/usr/bin/env bash
# Smith-Waterman and LCS: hetkit's wavefront fast paths against parasail on the same machine,
# inputs and run. parasail's `sw_striped_16` (BLOSUM62, open 11, extend 1) runs on one thread,
# as parasail does; hetkit on one thread and on all threads. LCS against parasail's
# `nw_striped_16` with match 1, mismatch 0 and free gaps (its score is the LCS length).
# Prints GCUPS, ratios to parasail, and whether the results agree.
#
# usage: benches/peers/wavefront/run.sh [LEN] [REPS]     (default 4000 x 4000, best of 5)
# parasail's Python package goes into a venv under the target directory.
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
len="${1:-4000}"
reps="${2:-5}"
work="$target/wavefront-peers"
mkdir -p "$work"
if [ ! -x "$work/venv/bin/python" ]; then
    python3 -m venv "$work/venv"
    "$work/venv/bin/pip" install -q parasail numpy
fi
py="$work/venv/bin/python"

# Random proteins over the 20 standard residues, fixed seed.
"$py" - "$len" "$work" <<'PY'
import random, sys
n, work = int(sys.argv[1]), sys.argv[2]
rng = random.Random(20251125)
for name in "ab":
    with open(f"{work}/{name}.txt", "w") as f:
        f.write("".join(rng.choice("ARNDCQEGHILKMFPSTWYV") for _ in range(n)))
PY

(cd "$root" && cargo build -q --release -p wavefront --example align_peer)
ours="$("$target/release/examples/align_peer" "$work/a.txt" "$work/b.txt" "$reps")"

"$py" - "$work" "$reps" "$ours" <<'PY'
import json, sys, time, parasail
work, reps, ours = sys.argv[1], int(sys.argv[2]), [json.loads(l) for l in sys.argv[3].splitlines()]
a, b = (open(f"{work}/{n}.txt").read().strip() for n in "ab")
cells = len(a) * len(b)
def best(f):
    t, out = float("inf"), None
    for _ in range(reps):
        s = time.perf_counter(); out = f(); t = min(t, time.perf_counter() - s)
    return t, out
t_sw, r = best(lambda: parasail.sw_striped_16(a, b, 11, 1, parasail.blosum62))
# parasail has no LCS entry point: a global alignment with match 1, mismatch 0 and free gaps
# scores the LCS length, computed by the same striped 16-bit code.
ident = parasail.matrix_create("ARNDCQEGHILKMFPSTWYV", 1, 0)
t_lcs, l = best(lambda: parasail.nw_striped_16(a, b, 0, 0, ident))
# The results are checked against the 32-bit scan: nw_striped_16 with free gaps comes out one
# short at 20000 x 20000 (parasail 1.3.4).
lcs_ref = parasail.nw_scan_32(a, b, 0, 0, ident).score
peer = {"sw": (cells / t_sw / 1e9, r.score, (r.end_query, r.end_ref)), "lcs": (cells / t_lcs / 1e9, lcs_ref, None)}
print(f"{len(a)} x {len(b)}, best of {reps}")
print(f"parasail sw_striped_16 (1 thread): {peer['sw'][0]:7.2f} GCUPS  score {r.score}  end ({r.end_query}, {r.end_ref})")
print(f"parasail nw_striped_16 as LCS (1 thread): {peer['lcs'][0]:6.2f} GCUPS  length {l.score} (nw_scan_32: {lcs_ref})")
ok = True
for o in ours:
    if o["case"] in peer:
        g, score, ends = peer[o["case"]]
        same = o["score"] == score and (ends is None or (o["end_a"], o["end_b"]) == ends)
        ok &= same
        print(f"hetkit {o['case']:4} {o['threads']} thread(s): {o['gcups']:7.2f} GCUPS  ratio {o['gcups'] / g:5.2f}  same result: {same}")
    else:
        print(f"hetkit {o['case']} {o['threads']} thread(s): {o['gcups']:7.2f} GCUPS")
sys.exit(0 if ok else 1)
PY
