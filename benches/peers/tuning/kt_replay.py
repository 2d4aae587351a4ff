#!/usr/bin/env python3
"""Kernel Tuner's strategies in simulation mode over a cache file, with the metrics of
`hetkit tune replay --json` (one JSON object per strategy and budget on stdout).

The search space is restricted to exactly the configurations in the file's cache (as hetkit's
replay does); an entry whose time is not a number is a failed configuration. Each run seeds
Python's and NumPy's generators with seed + run index.

Strategies named in `--prefix-strategies` run once per seed at the largest budget, and each
smaller budget is scored on the first `budget` evaluations of that run. This is exact only for
strategies whose decisions do not depend on `max_fevals` (it only stops them): Kernel Tuner
1.5.0's `genetic_algorithm`, `pso` and `firefly_algorithm` evaluate the same first 100
configurations at `max_fevals` 100 and 400 (checked seed by seed on pnpoly and cpu_tridiagonal); its
`simulated_annealing`, `random_sample`, `dual_annealing` and `diff_evo` do not, and run per budget.
"""
import argparse
import copy
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


def memoize_run_independent_parts():
    """Build the search space and parse the cache file once per process instead of once per run.

    Every run of this script passes the same parameters, restrictions and cache file, and most
    of a run's time went to rebuilding those (for gemm, 83 000 restriction checks and an 18 000-
    entry JSON parse per run, against a second of search). Each run gets its own copy of the
    freshly built search space (its memos of neighbour queries change what some strategies do,
    so sharing one would not be the same run) that shares only the list of configurations and
    its index, which nothing changes after construction, and its own copy of the cache's
    entries. `--no-memo` runs without this; the two give the same evaluations seed by
    seed for every strategy of Kernel Tuner 1.5.0 that is deterministic under a seed (checked
    with `--trace` on pnpoly and gemm; `diff_evo` is not, with or without it)."""
    from kernel_tuner import interface, util

    spaces, caches = {}, {}
    build, read = interface.Searchspace, util.read_cache

    def searchspace(*args, **kwargs):
        key = repr(kwargs)
        if key not in spaces:
            spaces[key] = build(*args, **kwargs)
        space = spaces[key]
        frozen = [space.list, space._Searchspace__dict]
        return copy.deepcopy(space, {id(x): x for x in frozen})

    def read_cache(cachefile, open_cache=True):
        key = (cachefile, open_cache)
        if key not in caches:
            caches[key] = read(cachefile, open_cache)
        data = dict(caches[key])
        data["cache"] = {k: dict(v) for k, v in data["cache"].items()}
        return data

    interface.Searchspace = searchspace
    util.read_cache = read_cache


def num(t):
    return isinstance(t, (int, float)) and not isinstance(t, bool) and math.isfinite(t)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--strategies", default="random_sample,genetic_algorithm,simulated_annealing,diff_evo,greedy_ils,mls,pso,firefly_algorithm,dual_annealing,basinhopping")
    ap.add_argument("--budgets", default="100,400")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--prefix-strategies", default="genetic_algorithm,pso,firefly_algorithm")
    ap.add_argument("--no-memo", action="store_true", help="rebuild the search space and reread the cache in every run")
    ap.add_argument("--trace", action="store_true", help="print each run's evaluated times instead of the metrics")
    a = ap.parse_args()
    if not a.no_memo:
        memoize_run_independent_parts()

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

    def one_run(strat, budget, seed):
        random.seed(seed)
        np.random.seed(seed)
        results, _ = kernel_tuner.tune_kernel(
            plain["kernel_name"], "__global__ void k() {}", 1,
            [], tune_params, restrictions=restrict, strategy=strat,
            strategy_options={"max_fevals": budget}, cache=cachefile, simulation_mode=True,
            verbose=False, quiet=True, objective="time",
        )
        return [res.get("time") for res in results]

    def score(times, budget):
        found, first = math.inf, math.inf
        for i, t in enumerate(times[:budget]):
            if num(t):
                found = min(found, t)
                if first == math.inf and t <= best / 0.95:
                    first = i + 1
        return found / best, first

    budgets = [int(b) for b in a.budgets.split(",")]
    prefix = set(a.prefix_strategies.split(",")) if a.prefix_strategies else set()
    strategies = a.strategies.split(",")
    # runs[(strategy, budget)] = the evaluated times of each seeded run
    runs = {}
    for strat in strategies:
        if strat in prefix:
            shared = [one_run(strat, max(budgets), a.seed + r) for r in range(a.runs)]
            for budget in budgets:
                runs[strat, budget] = shared
        else:
            for budget in budgets:
                runs[strat, budget] = [one_run(strat, budget, a.seed + r) for r in range(a.runs)]
    if a.trace:
        for (strat, budget), rs in runs.items():
            for r, times in enumerate(rs):
                print(json.dumps({"strategy": strat, "budget": budget, "seed": a.seed + r, "times": times}))
        return 0
    for budget in budgets:
        for strat in strategies:
            scored = [score(t, budget) for t in runs[strat, budget]]
            ratios = [x for x, _ in scored]
            to95 = [y for _, y in scored]
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
