#!/usr/bin/env python3
"""Collects and summarises the rounds of run.sh (issue 23's CPU targets).

    summary.py collect CRITERION_HOME LOG   append the last criterion run's medians to LOG
    summary.py report LOG [LOG2]            medians over all rounds, ratios against the targets
                                            (LOG2: 2^LOG2 elements, for the descriptor floor)

LOG holds one line per measurement: case <TAB> who <TAB> milliseconds, the format of
peers.py, so the Python peers' lines and the Rust side's land in one file. Criterion's
per-run median (its `median` estimate of one run) is one line per round; the report takes the
median over every line of a (case, who) pair, so every contender is summarised the same way.
"""
import glob
import json
import os
import statistics
import sys


def collect(home, log):
    with open(log, "a") as out:
        for bench in glob.glob(os.path.join(home, "segmented_*", "*", "*", "new", "benchmark.json")) + glob.glob(
            os.path.join(home, "segmented_*", "*", "new", "benchmark.json")
        ):
            meta = json.load(open(bench))
            est = json.load(open(os.path.join(os.path.dirname(bench), "estimates.json")))
            group = meta["group_id"]
            if group.startswith("segmented_reduce"):
                kind = "reduce"
            elif group.startswith("segmented_scan"):
                kind = "scan"
            elif group.startswith("segmented_spmv"):
                kind = "spmv"
            elif group.startswith("segmented_sort"):
                kind = "sort"
            else:
                continue
            case = f"{kind}/{meta['value_str'] or 'all'}"
            out.write(f"{case}\t{meta['function_id']}\t{est['median']['point_estimate'] / 1e6:.3f}\n")
        # A run's files stay until the next run of the same id: remove them so a filtered or
        # failed run is not counted twice.
        for d in glob.glob(os.path.join(home, "segmented_*")):
            for f in glob.glob(os.path.join(d, "**", "new", "benchmark.json"), recursive=True):
                os.remove(f)


def load(log):
    times = {}
    for line in open(log):
        parts = line.rstrip("\n").split("\t")
        if len(parts) != 3:
            continue
        case, who, ms = parts
        # The Python side names its cases like the Rust groups: normalise to kind/parameter.
        if case.startswith("reduce_f32"):
            case = "reduce/" + case.split("/", 1)[1].replace("floor", "all")
        elif case.startswith("spmv_f64"):
            case = "spmv/" + case.split("/", 1)[1].split(" ")[0]
        times.setdefault((case, who), []).append(float(ms))
    return {k: (statistics.median(v), len(v)) for k, v in times.items()}


def fmt(x):
    return "–" if x is None else (f"{x:.2f}" if x < 100 else f"{x:.0f}")


def ratio(a, b):
    if a is None or b is None:
        return "–"
    # A one-element inclusive scan is a no-op: nothing to compare.
    return "no-op" if b < 1e-3 else f"{a / b:.2f}x"


def report(log, log2=24):
    t = load(log)
    get = lambda case, who: t.get((case, who), (None, 0))[0]
    floor = get("reduce/all", "floor_unsegmented_sum")
    print(f"reduce (ms; read floor {fmt(floor)}, numpy sum {fmt(get('reduce/all', 'numpy_sum'))})")
    print("| segment length | hetkit offsets | hetkit regular | naive rayon | np.add.reduceat | vs numpy (offsets / regular) | floor / hetkit |")
    print("|---|---|---|---|---|---|---|")
    for length in ["1", "8", "64", "1024", "131072", "random"]:
        c = f"reduce/{length}"
        off, reg, npy = get(c, "hetkit_offsets"), get(c, "hetkit_regular"), get(c, "numpy_reduceat")
        best = min(x for x in (off, reg) if x is not None) if (off or reg) else None
        print(f"| {length} | {fmt(off)} | {fmt(reg)} | {fmt(get(c, 'naive_rayon_per_segment'))} | {fmt(npy)} "
              f"| {ratio(npy, off)} / {ratio(npy, reg)} | {ratio(floor, best)} |")
    copy = get("scan/all", "floor_copy")
    plain_inc, plain_exc = get("scan/all", "plain_scan_inclusive"), get("scan/all", "plain_scan_exclusive")
    print(f"\nscan, in place (ms; copy floor {fmt(copy)}; prefix-ops' unsegmented scan: inclusive {fmt(plain_inc)}, "
          f"exclusive {fmt(plain_exc)})")
    print("| segment length | inclusive offsets | inclusive regular | exclusive offsets | exclusive regular "
          "| copy floor / incl. offsets | / incl. regular | / excl. offsets | / excl. regular "
          "| descriptor floor / incl. offsets | / excl. offsets |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    n = 1 << log2
    # uneven1 / uneven8: lengths 1 or 8 but a last segment of twice that, so that the
    # descriptor holds no equal length and the kernels read the offsets.
    for length in ["1", "8", "uneven1", "uneven8", "64", "1024", "131072", "random"]:
        c = f"scan/{length}"
        off, reg = get(c, "inclusive_offsets"), get(c, "inclusive_regular")
        exo, exr = get(c, "exclusive_offsets"), get(c, "exclusive_regular")
        # The descriptor floor: the copy floor's bytes (read and write the data) plus one read
        # of the offsets (8 bytes per segment), at the copy's bandwidth.
        # Random lengths are uniform in 1..=2048: 1024.5 elements per segment on average.
        digits = length.removeprefix("uneven")
        nseg = (n // int(digits)) if digits.isdigit() else int(n / 1024.5)
        desc = None if copy is None else copy * (1 + 8 * (nseg + 1) / (2 * 4 * n))
        print(f"| {length} | {fmt(off)} | {fmt(reg)} | {fmt(exo)} | {fmt(exr)} | {ratio(copy, off)} | {ratio(copy, reg)} "
              f"| {ratio(copy, exo)} | {ratio(copy, exr)} | {ratio(desc, off)} | {ratio(desc, exo)} |")
    print("\nsegmented sort, u32 keys (ms; 2^(LOG2-2) keys, both sides copy the keys in first)")
    print("| segment length | hetkit sort | rayon + sort_unstable per segment | rayon / hetkit |")
    print("|---|---|---|---|")
    for length in ["8", "64", "1024", "131072", "random"]:
        c = f"sort/{length}"
        h, r = get(c, "hetkit_sort"), get(c, "rayon_sort_unstable_per_segment")
        print(f"| {length} | {fmt(h)} | {fmt(r)} | {ratio(r, h)} |")
    print("\nCSR y = A x, f64 (ms)")
    print("| matrix | hetkit | hetkit 1 thread | sprs | scipy | scipy / hetkit | sprs / hetkit |")
    print("|---|---|---|---|---|---|---|")
    for m in ["banded", "random", "power_law"]:
        c = f"spmv/{m}"
        h, h1, s, sc = get(c, "hetkit"), get(c, "hetkit_1_thread"), get(c, "sprs"), get(c, "scipy_csr")
        print(f"| {m} | {fmt(h)} | {fmt(h1)} | {fmt(s)} | {fmt(sc)} | {ratio(sc, h)} | {ratio(s, h)} |")
    rounds = max((n for _, n in t.values()), default=0)
    print(f"\n(medians over up to {rounds} measurements per entry)")


if __name__ == "__main__":
    if sys.argv[1] == "collect":
        collect(sys.argv[2], sys.argv[3])
    else:
        report(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 24)
