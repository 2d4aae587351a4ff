//! The sequence applications' tiles: the first sequence cut into row strips (one per core), the
//! second into column chunks. Tile (strip, chunk) needs its strip's state after the chunk before
//! (west) and the strip above's bottom edge on the same columns (north): the wavefront pattern
//! at tile grain, run by the same dependency-counter executor as [`crate::run_2d`], while the
//! tiles keep only their state and edges (no full table).

use std::ops::Range;
use std::sync::Mutex;

use crate::dataflow::{TileGrid, sweep_parallel, sweep_sequential};

/// `n` split into `parts` nearly equal consecutive ranges (none empty when `n >= parts`).
pub(crate) fn split(n: usize, parts: usize) -> Vec<Range<usize>> {
    let parts = parts.clamp(1, n.max(1));
    (0..parts).map(|p| p * n / parts..(p + 1) * n / parts).collect()
}

/// Runs `tile(state, strip, chunk_columns, top_edge) -> bottom_edge` over every (strip, chunk)
/// in dependency order and returns the strips' states. `top_edge` is `None` on the first strip.
pub(crate) fn run_strips<S, E>(
    states: Vec<S>,
    cols: usize,
    chunk: usize,
    parallel: bool,
    tile: impl Fn(&mut S, usize, Range<usize>, Option<&E>) -> E + Sync,
) -> Vec<S>
where
    S: Send,
    E: Send,
{
    let strips = states.len();
    let chunks = cols.div_ceil(chunk.max(1)).max(1);
    let states: Vec<Mutex<S>> = states.into_iter().map(Mutex::new).collect();
    let edges: Vec<Mutex<Option<E>>> = (0..strips * chunks).map(|_| Mutex::new(None)).collect();
    let run = |c: [usize; 3]| {
        let (s, k) = (c[0], c[1]);
        let cols = k * chunk..((k + 1) * chunk).min(cols);
        // The edge above is consumed: each is read by exactly one tile.
        let top = if s == 0 { None } else { lock(&edges[(s - 1) * chunks + k]).take() };
        let bottom = tile(&mut lock(&states[s]), s, cols, top.as_ref());
        if s + 1 < strips {
            *lock(&edges[s * chunks + k]) = Some(bottom);
        }
    };
    let grid = TileGrid { dims: [strips, chunks, 1] };
    if parallel {
        sweep_parallel(grid, |_| true, run)
    } else {
        sweep_sequential(grid, |_| true, run)
    }
    states.into_iter().map(|m| m.into_inner().unwrap_or_else(|p| p.into_inner())).collect()
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
}
