#!/usr/bin/env bash
# hetkit's CPU stencil sweeps against Devito (pip `devito`, OpenMP) and numpy slicing: same
# stencils (7-, 13-, 27-point), grid, element type and sweep count, THREADS threads each.
#   benches/peers/stencil/run.sh [N] [SWEEPS] [REPS] [THREADS]     (defaults 256 10 3 2)
# Devito and numpy go into a venv under the target directory. Prints JSON lines, then tables of
# wall and CPU time with hetkit's fraction of the copy floor and the peer/hetkit time ratios.
# Every tool times SWEEPS sweeps of temporal iteration per call (hetkit's `iterate`, Devito's
# `op.apply(time_M=SWEEPS-1)`) and reports the time per sweep. hetkit runs in its default evaluation
# order (the tuned one, else the built-in rule: fast for the 27-point, exact for the stars), and
# again in each order (`STENCIL_ORDER=exact`, `STENCIL_ORDER=fast`) beside it.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
n=${1:-256}; sweeps=${2:-10}; reps=${3:-3}; threads=${4:-2}
target=${CARGO_TARGET_DIR:-$root/target}
venv=$target/stencil-peers/venv
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q devito numpy
fi
(cd "$root" && cargo build -q --release -p stencil --example sweep_timing)
export RAYON_NUM_THREADS=$threads OMP_NUM_THREADS=$threads DEVITO_LANGUAGE=openmp DEVITO_LOGGING=ERROR
out=$(mktemp)
for p in f32 f64; do
    for s in 7 13 27; do
        # An untimed run first: the run right after the previous stencil's peers measured up to
        # 1.5x slow (7-point f32: 9.1-9.4 ms against 6.2-7.0 alone, the same order).
        "$target/release/examples/sweep_timing" "$s" "$p" "$n" 1 1 > /dev/null
        "$target/release/examples/sweep_timing" "$s" "$p" "$n" "$sweeps" "$reps" | tee -a "$out"
        STENCIL_ORDER=exact "$target/release/examples/sweep_timing" "$s" "$p" "$n" "$sweeps" "$reps" | tee -a "$out"
        STENCIL_ORDER=fast "$target/release/examples/sweep_timing" "$s" "$p" "$n" "$sweeps" "$reps" | tee -a "$out"
        "$venv/bin/python" "$root/benches/peers/stencil/peers.py" "$s" "$p" "$n" "$sweeps" "$reps" | tee -a "$out"
    done
done
for size in S M; do
    "$target/release/examples/sweep_timing" "himeno-$size" f32 0 20 1 | tee -a "$out"
done
"$venv/bin/python" - "$out" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
key = lambda r: (r["stencil"], r["precision"])
by = {}
for r in rows:
    by.setdefault(key(r), {})[r["tool"]] = r
print("\nWall time per sweep (copy floor: one parallel copy of the grid; ratios: peer / hetkit):")
print("\n| stencil | type | hetkit ms/sweep | copy ms | of copy floor | exact order ms | fast order ms | Devito ms | Devito/hetkit | numpy ms | numpy/hetkit |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
f = lambda x: "-" if x is None else f"{x:.1f}"
for (s, p), t in by.items():
    h = t.get("hetkit")
    if h is None or "ms_per_sweep" not in h:
        continue
    d, n = t.get("devito", {}).get("ms_per_sweep"), t.get("numpy", {}).get("ms_per_sweep")
    x = t.get("hetkit-exact", {}).get("ms_per_sweep")
    y = t.get("hetkit-fast", {}).get("ms_per_sweep")
    r = lambda x: "-" if x is None else f"{x / h['ms_per_sweep']:.2f}"
    print(f"| {s} | {p} | {h['ms_per_sweep']:.1f} | {h['copy_ms']:.1f} | {h['of_copy_floor']:.0%} | {f(x)} | {f(y)} | {f(d)} | {r(d)} | {f(n)} | {r(n)} |")
print("\nCPU time per sweep, all threads (on a loaded machine: work without the waits for a core):")
print("\n| stencil | type | hetkit CPU ms | copy CPU ms | of copy floor | exact order CPU ms | fast order CPU ms | Devito CPU ms | Devito/hetkit |")
print("|---|---|---|---|---|---|---|---|---|")
for (s, p), t in by.items():
    h = t.get("hetkit")
    if h is None or "cpu_ms_per_sweep" not in h:
        continue
    d = t.get("devito", {}).get("cpu_ms_per_sweep")
    x = t.get("hetkit-exact", {}).get("cpu_ms_per_sweep")
    y = t.get("hetkit-fast", {}).get("cpu_ms_per_sweep")
    r = "-" if d is None else f"{d / h['cpu_ms_per_sweep']:.2f}"
    print(f"| {s} | {p} | {h['cpu_ms_per_sweep']:.1f} | {h['copy_cpu_ms']:.1f} | {h['copy_cpu_ms'] / h['cpu_ms_per_sweep']:.0%} | {f(x)} | {f(y)} | {f(d)} | {r} |")
for (s, p), t in by.items():
    if "mflops" in t.get("hetkit", {}):
        print(f"Himeno {s[7:]} {p}: {t['hetkit']['mflops']:.0f} MFLOPS (gosa {t['hetkit']['gosa']:.6e})")
PY
rm -f "$out"
