#!/usr/bin/env python3
"""Medians and ratios from run.sh's results: one table row per (case, contender).

    summarize.py RESULTS.tsv

Input lines: case <TAB> who <TAB> ms [<TAB> scaled residual]. For every case, the ratio of each
hetkit contender's median to the fastest peer's median (hetkit_* names are ours, the rest peers).
"""
import statistics
import sys
from collections import defaultdict

times = defaultdict(list)
resid = {}
for line in open(sys.argv[1]):
    f = line.rstrip("\n").split("\t")
    if len(f) < 3:
        continue
    times[(f[0], f[1])].append(float(f[2]))
    if len(f) > 3:
        resid[(f[0], f[1])] = float(f[3])

cases = sorted({c for c, _ in times})
print("| case | contender | median ms | runs | residual | ratio to fastest peer |")
print("|---|---|---|---|---|---|")
for case in cases:
    rows = {w: statistics.median(t) for (c, w), t in times.items() if c == case}
    peers = {w: t for w, t in rows.items() if not w.startswith("hetkit")}
    best = min(peers, key=peers.get) if peers else None
    for who, t in sorted(rows.items(), key=lambda kv: kv[1]):
        ratio = f"{t / peers[best]:.2f} (vs {best})" if best and who.startswith("hetkit") else ""
        r = resid.get((case, who))
        print(f"| {case} | {who} | {t:.1f} | {len(times[(case, who)])} | {'' if r is None else f'{r:.1e}'} | {ratio} |")
