//! The sequence applications' tiles: the first sequence cut into row strips (one per core), the
//! second into column chunks. Tile (strip, chunk) needs its strip's state after the chunk before
//! (west) and the strip above's bottom edge on the same columns (north): the wavefront pattern
//! at tile grain, kept as a pipeline. Each strip stays on one thread for the whole sweep (its
//! state, a few tens of KiB, stays in that core's cache) and follows the strip above one chunk
//! behind, waiting on that chunk's edge; the tiles keep only their state and edges (no full
//! table).

use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

/// Columns per chunk for `n` columns: the strip below idles for one chunk at the start and the
/// strip above for one at the end, so chunks are small (at least 32 columns keeps the per-tile
/// cost, an allocation and an edge hand-over, far below the tile's work).
pub(crate) fn pipeline_chunk(n: usize) -> usize {
    (n / 128).clamp(32, 256)
}

/// `n` split into `parts` nearly equal consecutive ranges (none empty when `n >= parts`).
pub(crate) fn split(n: usize, parts: usize) -> Vec<Range<usize>> {
    let parts = parts.clamp(1, n.max(1));
    (0..parts).map(|p| p * n / parts..(p + 1) * n / parts).collect()
}

/// Runs `tile(state, strip, chunk_columns, top_edge) -> bottom_edge` over every (strip, chunk)
/// in dependency order and returns the strips' states. `top_edge` is `None` on the first strip.
///
/// In parallel, every pool thread that joins claims the lowest strip not yet claimed and sweeps
/// it. A strip waits only on the strip above, which was claimed earlier by a thread that is
/// sweeping it (a sweep never yields to other pool work), so the lowest unfinished strip always
/// progresses: no deadlock even when the pool is busy with other calls and one thread ends up
/// sweeping every strip.
pub(crate) fn run_strips<S, E>(
    states: Vec<S>,
    cols: usize,
    chunk: usize,
    parallel: bool,
    tile: impl Fn(&mut S, usize, Range<usize>, Option<&E>) -> E + Sync,
) -> Vec<S>
where
    S: Send,
    E: Send + Sync,
{
    let strips = states.len();
    let chunk = chunk.max(1);
    let chunks = cols.div_ceil(chunk).max(1);
    let edges: Vec<OnceLock<E>> = (0..strips.saturating_sub(1) * chunks).map(|_| OnceLock::new()).collect();
    let failed = AtomicBool::new(false);
    let sweep = |s: usize, st: &mut S| {
        let _unwinding = FailOnUnwind(&failed);
        for k in 0..chunks {
            let top = (s > 0).then(|| wait(&edges[(s - 1) * chunks + k], &failed));
            let bottom = tile(st, s, k * chunk..((k + 1) * chunk).min(cols), top);
            if s + 1 < strips {
                // Each edge is set once, by its strip's only sweep.
                let _ = edges[s * chunks + k].set(bottom);
            }
        }
    };
    let states: Vec<Mutex<S>> = states.into_iter().map(Mutex::new).collect();
    let next = AtomicUsize::new(0);
    let claim_and_sweep = || {
        loop {
            let s = next.fetch_add(1, Ordering::Relaxed);
            if s >= strips {
                break;
            }
            sweep(s, &mut lock(&states[s]));
        }
    };
    if parallel && strips > 1 {
        rayon::scope(|sc| {
            for _ in 1..strips {
                sc.spawn(|_| claim_and_sweep());
            }
            claim_and_sweep();
        });
    } else {
        claim_and_sweep();
    }
    states.into_iter().map(|m| m.into_inner().unwrap_or_else(|p| p.into_inner())).collect()
}

/// Raises the flag if its sweep unwinds, so the strips below stop waiting for edges that will
/// never come (the panic then propagates from the scope).
struct FailOnUnwind<'a>(&'a AtomicBool);

impl Drop for FailOnUnwind<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(true, Ordering::Relaxed);
        }
    }
}

/// The edge once its producer has set it: a short spin (the producer is one chunk ahead on
/// another core), then yielding the core to the OS (on a loaded machine the producer may need
/// it).
fn wait<'a, E>(cell: &'a OnceLock<E>, failed: &AtomicBool) -> &'a E {
    let mut spins = 0u32;
    loop {
        if let Some(e) = cell.get() {
            return e;
        }
        if failed.load(Ordering::Relaxed) {
            panic!("a strip above panicked");
        }
        if spins < 200 {
            std::hint::spin_loop();
            spins += 1;
        } else {
            std::thread::yield_now();
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A poisoned lock means a tile panicked; the panic propagates from the scope anyway.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_covers() {
        for n in [0usize, 1, 2, 7, 100] {
            for p in [1usize, 2, 3, 8] {
                let r = split(n, p);
                assert_eq!(r.first().map(|x| x.start), Some(0));
                assert_eq!(r.last().map(|x| x.end), Some(n));
                assert!(r.windows(2).all(|w| w[0].end == w[1].start));
                if n >= p {
                    assert!(r.iter().all(|x| !x.is_empty()));
                }
            }
        }
    }

    /// Prefix sums down and across: each tile adds its edge, so order errors change the result.
    #[test]
    fn strips_see_their_edges() {
        for parallel in [false, true] {
            let states: Vec<u64> = vec![0; 3];
            let out = run_strips(states, 10, 3, parallel, |acc, s, cols, top: Option<&u64>| {
                *acc += top.copied().unwrap_or(1) + cols.len() as u64 + s as u64;
                *acc
            });
            // strip 0 after chunks of 3,3,3,1 columns: 4, 8, 12, 14
            assert_eq!(out[0], 14);
            // strip 1: acc += top + len + 1 with tops 4, 8, 12, 14
            assert_eq!(out[1], 8 + 12 + 16 + 16);
        }
    }

    /// An order-sensitive tile: the state's history and the edge above.
    fn mix(acc: &mut u64, _: usize, cols: Range<usize>, top: Option<&u64>) -> u64 {
        *acc = acc.wrapping_mul(31).wrapping_add(top.copied().unwrap_or(1) + cols.start as u64);
        *acc
    }

    /// Calls from inside a busy pool (every thread in a sweep of its own, more strips than
    /// threads) finish with the sequential answer.
    #[test]
    fn nested_calls_finish() {
        use rayon::prelude::*;
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let got: Vec<Vec<u64>> = pool.install(|| {
            (0..16u64).into_par_iter().map(|x| run_strips(vec![x; 5], 300, 7, true, mix)).collect()
        });
        let want: Vec<Vec<u64>> = (0..16u64).map(|x| run_strips(vec![x; 5], 300, 7, false, mix)).collect();
        assert_eq!(got, want);
    }
}
