#!/usr/bin/env python3
"""Kernel Tuner's strategies in simulation mode over a cache file, with the metrics of
`hetkit tune replay --json` (one JSON object per strategy and budget on stdout).

The search space is restricted to exactly the configurations in the file's cache (as hetkit's
replay does); an entry whose time is not a number is a failed configuration. Each run seeds
Python's and NumPy's generators with seed + run index.
"""
import argparse
import gzip
import json
import math
import os
import random
import statistics
import sys
import tempfile
import warnings

import numpy as np

warnings.filterwarnings("ignore")
import kernel_tuner  # noqa: E402


def load(path):
    opener = gzip.open if open(path, "rb").read(2) == b"\x1f\x8b" else open
    with opener(path, "rt") as f:
        text = f.read().strip()
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return json.loads(text.rstrip(",") + "}}")


def num(t):
    return isinstance(t, (int, float)) and not isinstance(t, bool) and math.isfinite(t)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--strategies", default="random_sample,genetic_algorithm,simulated_annealing,diff_evo,greedy_ils,mls,pso,firefly_algorithm,dual_annealing,basinhopping")
    ap.add_argument("--budgets", default="100,400")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()

    data = load(a.file)
    keys = data["tune_params_keys"]
    tune_params = {k: data["tune_params"][k] for k in keys}
    cache = data["cache"]
    best = min(v["time"] for v in cache.values() if num(v.get("time")))

    # The valid configurations: exactly the cache's, by their Kernel Tuner keys.
    valid = set(cache.keys())

    def restrict(p):
        return ",".join(str(p[k]) for k in keys) in valid

    tmp = tempfile.mkdtemp()
    cachefile = os.path.join(tmp, "cache.json")
    # Kernel Tuner reads a file as closed only if `cache` is its last field.
    plain = {k: v for k, v in data.items() if k != "cache"}
    plain.setdefault("device_name", "device")
    plain.setdefault("kernel_name", "kernel")
    plain.setdefault("objective", "time")
    # Kernel Tuner checks problem_size against the call's; simulation does not use it.
    plain["problem_size"] = 1
    plain["cache"] = cache
    with open(cachefile, "w") as f:
        json.dump(plain, f)

    for budget in [int(b) for b in a.budgets.split(",")]:
        for strat in a.strategies.split(","):
            ratios, to95 = [], []
            for r in range(a.runs):
                random.seed(a.seed + r)
                np.random.seed(a.seed + r)
                results, _ = kernel_tuner.tune_kernel(
                    plain["kernel_name"], "__global__ void k() {}", 1,
                    [], tune_params, restrictions=restrict, strategy=strat,
                    strategy_options={"max_fevals": budget}, cache=cachefile, simulation_mode=True,
                    verbose=False, quiet=True, objective="time",
                )
                found, first = math.inf, math.inf
                for i, res in enumerate(results[:budget]):
                    t = res.get("time")
                    if num(t):
                        found = min(found, t)
                        if first == math.inf and t <= best / 0.95:
                            first = i + 1
                ratios.append(found / best)
                to95.append(first)
            med = statistics.median(ratios)
            m95 = statistics.median(to95)
            print(json.dumps({
                "strategy": strat, "budget": budget, "runs": a.runs,
                "within5": sum(x <= 1.05 + 1e-12 for x in ratios) / len(ratios),
                "within1": sum(x <= 1.01 + 1e-12 for x in ratios) / len(ratios),
                "median_ratio": med if math.isfinite(med) else None,
                "evals_to_95": m95 if math.isfinite(m95) else None,
            }), flush=True)


if __name__ == "__main__":
    sys.exit(main())
