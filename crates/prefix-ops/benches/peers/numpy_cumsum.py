"""Peer for the CPU scan bench: numpy.cumsum of 2^24 f32 (into a preallocated output, and
allocating), the same input as `benches/scan.rs` in distribution (uniform in [-1, 1)).

Run: python3 crates/prefix-ops/benches/peers/numpy_cumsum.py   (prints best and median of 15 runs)
Compare with criterion's scan_cpu_f32_2^24 results taken on the same machine, at the same time.
"""
import time

import numpy as np

x = np.random.default_rng(7).uniform(-1.0, 1.0, 1 << 24).astype(np.float32)
y = np.empty_like(x)


def timed(fn, reps=15):
    fn()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    times.sort()
    return times[0] * 1e3, times[len(times) // 2] * 1e3


for name, fn in [("cumsum(out=)", lambda: np.cumsum(x, out=y)), ("cumsum", lambda: np.cumsum(x))]:
    best, median = timed(fn)
    print(f"numpy {np.__version__} {name} 2^24 f32: best {best:.2f} ms, median {median:.2f} ms")
