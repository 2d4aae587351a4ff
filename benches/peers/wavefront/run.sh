#!/usr/bin/env bash
# Smith-Waterman and LCS: hetkit's wavefront fast paths against parasail on the same machine,
# inputs and run. parasail's `sw_striped_16` (BLOSUM62, open 11, extend 1) runs on one thread,
# as parasail does; hetkit on one thread and on all threads. LCS against parasail's
# `nw_striped_16` with match 1, mismatch 0 and free gaps (its score is the LCS length).
# Prints GCUPS, ratios to parasail, and whether the results agree. Each of ROUNDS rounds runs
# hetkit's binary (best of REPS per case) and parasail (best of REPS) back to back, the order
# swapped every round, so that both sides see the same state of a shared or noisy machine; the
# summary gives the median of the rounds' ratios and the ratio of the best times.
#
# usage: benches/peers/wavefront/run.sh [LEN] [REPS] [ROUNDS]
#        (default 4000 x 4000, best of 5, 5 rounds)
# parasail's Python package goes into a venv under the target directory.
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
len="${1:-4000}"
reps="${2:-5}"
rounds="${3:-5}"
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

"$py" - "$work" "$reps" "$rounds" "$target/release/examples/align_peer" <<'PY'
import json, statistics, subprocess, sys, time, parasail
work, reps, rounds, exe = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
a, b = (open(f"{work}/{n}.txt").read().strip() for n in "ab")
cells = len(a) * len(b)
def best(f):
    t, out = float("inf"), None
    for _ in range(reps):
        s = time.perf_counter(); out = f(); t = min(t, time.perf_counter() - s)
    return t, out
ident = parasail.matrix_create("ARNDCQEGHILKMFPSTWYV", 1, 0)
# The results are checked against the 32-bit scan: nw_striped_16 with free gaps comes out one
# short at 20000 x 20000 (parasail 1.3.4).
lcs_ref = parasail.nw_scan_32(a, b, 0, 0, ident).score
def peer():
    t_sw, r = best(lambda: parasail.sw_striped_16(a, b, 11, 1, parasail.blosum62))
    # parasail has no LCS entry point: a global alignment with match 1, mismatch 0 and free
    # gaps scores the LCS length, computed by the same striped 16-bit code.
    t_lcs, l = best(lambda: parasail.nw_striped_16(a, b, 0, 0, ident))
    return {"sw": (cells / t_sw / 1e9, r.score, (r.end_query, r.end_ref)), "lcs": (cells / t_lcs / 1e9, lcs_ref, None)}, l.score
def ours():
    out = subprocess.run([exe, f"{work}/a.txt", f"{work}/b.txt", str(reps)], check=True, capture_output=True, text=True)
    return [json.loads(line) for line in out.stdout.splitlines()]
print(f"{len(a)} x {len(b)}, best of {reps}, {rounds} rounds (hetkit and parasail alternate, the order swapped every round)")
ok, ratios, bests, peer_best = True, {}, {}, {}
for k in range(rounds):
    if k % 2 == 0:
        o = ours(); p, l16 = peer()
    else:
        p, l16 = peer(); o = ours()
    print(f"round {k + 1}: parasail sw_striped_16 (1 thread) {p['sw'][0]:6.2f} GCUPS  score {p['sw'][1]}  end {p['sw'][2]};"
          f" nw_striped_16 as LCS {p['lcs'][0]:6.2f} GCUPS  length {l16} (nw_scan_32: {lcs_ref})")
    for case in p:
        peer_best[case] = max(peer_best.get(case, 0), p[case][0])
    for x in o:
        key = (x["case"], x["threads"])
        bests[key] = max(bests.get(key, 0), x["gcups"])
        line = f"  hetkit {x['case']:11} {x['threads']} thread(s): {x['gcups']:7.2f} GCUPS"
        if x["case"] in p:
            g, score, ends = p[x["case"]]
            same = x["score"] == score and (ends is None or (x["end_a"], x["end_b"]) == ends)
            ok &= same
            ratios.setdefault(key, []).append(x["gcups"] / g)
            line += f"  ratio {x['gcups'] / g:5.2f}  same result: {same}"
        print(line)
print("summary: median of the rounds' ratios [min - max]; best hetkit over best parasail of all rounds")
for case, g in peer_best.items():
    print(f"  parasail {case}: best {g:6.2f} GCUPS")
for key, rs in ratios.items():
    print(f"  hetkit {key[0]:4} {key[1]} thread(s): median {statistics.median(rs):5.2f} [{min(rs):.2f} - {max(rs):.2f}]"
          f"  best {bests[key]:6.2f} GCUPS, ratio of bests {bests[key] / peer_best[key[0]]:5.2f}")
for key, g in bests.items():
    if key not in ratios:
        print(f"  hetkit {key[0]} {key[1]} thread(s): best {g:6.2f} GCUPS")
sys.exit(0 if ok else 1)
PY
