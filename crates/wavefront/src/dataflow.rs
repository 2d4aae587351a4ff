//! Sweeping a grid of tiles in dependency order: sequentially, or as rayon tasks that start when
//! their dependency counters reach zero (Dios et al.'s scheme, the thesis's Fig. 3.2).
//!
//! Tile `(a, b, c)` depends on `(a-1, b, c)`, `(a, b-1, c)` and `(a, b, c-1)`; a 2D grid has
//! `c` extent 1. Only *active* tiles run (a CPU phase of the hybrid executor clips the table to
//! some diagonals); a predecessor that is not active is taken as done.

use std::sync::atomic::{AtomicU32, Ordering};

/// Extents of a tile grid, row-major with the last axis fastest.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TileGrid {
    pub(crate) dims: [usize; 3],
}

impl TileGrid {
    fn len(&self) -> usize {
        self.dims.iter().product()
    }

    fn coords(&self, idx: usize) -> [usize; 3] {
        let [_, d1, d2] = self.dims;
        [idx / (d1 * d2), (idx / d2) % d1, idx % d2]
    }

    fn index(&self, c: [usize; 3]) -> usize {
        (c[0] * self.dims[1] + c[1]) * self.dims[2] + c[2]
    }

    /// The neighbours one step back (`back`) or forward along each axis that exist.
    fn neighbours(&self, c: [usize; 3], back: bool) -> impl Iterator<Item = [usize; 3]> + '_ {
        (0..3).filter_map(move |axis| {
            let mut n = c;
            if back {
                n[axis] = c[axis].checked_sub(1)?;
            } else {
                n[axis] = c[axis] + 1;
                if n[axis] >= self.dims[axis] {
                    return None;
                }
            }
            Some(n)
        })
    }
}

/// Runs every active tile once, in lexicographic order (a valid dependency order), on this thread.
pub(crate) fn sweep_sequential(
    grid: TileGrid,
    active: impl Fn([usize; 3]) -> bool,
    run: impl Fn([usize; 3]),
) {
    for idx in 0..grid.len() {
        let c = grid.coords(idx);
        if active(c) {
            run(c);
        }
    }
}

/// Runs every active tile once as rayon tasks on the current pool: a tile starts when all its
/// active predecessors are done. The tile that finishes last among a successor's predecessors
/// starts it; one ready successor continues on the same thread and the others are spawned.
pub(crate) fn sweep_parallel(
    grid: TileGrid,
    active: impl Fn([usize; 3]) -> bool + Sync,
    run: impl Fn([usize; 3]) + Sync,
) {
    let counters: Vec<AtomicU32> = (0..grid.len())
        .map(|idx| {
            let c = grid.coords(idx);
            let n = if active(c) { grid.neighbours(c, true).filter(|&p| active(p)).count() } else { 0 };
            AtomicU32::new(n as u32)
        })
        .collect();
    let roots: Vec<[usize; 3]> = (0..grid.len())
        .map(|idx| grid.coords(idx))
        .filter(|&c| active(c) && counters[grid.index(c)].load(Ordering::Relaxed) == 0)
        .collect();
    let ctx = Ctx { grid, counters: &counters, active: &active, run: &run };
    rayon::scope(|s| {
        for root in roots {
            let ctx = &ctx;
            s.spawn(move |s| ctx.task(s, root));
        }
    });
}

struct Ctx<'a, A, R> {
    grid: TileGrid,
    counters: &'a [AtomicU32],
    active: &'a A,
    run: &'a R,
}

impl<'a, A, R> Ctx<'a, A, R>
where
    A: Fn([usize; 3]) -> bool + Sync,
    R: Fn([usize; 3]) + Sync,
{
    fn task<'s>(&'s self, s: &rayon::Scope<'s>, first: [usize; 3]) {
        let mut next = Some(first);
        while let Some(c) = next.take() {
            (self.run)(c);
            for succ in self.grid.neighbours(c, false) {
                // AcqRel: the last predecessor to finish sees every other predecessor's writes,
                // and the successor it starts sees them too.
                if (self.active)(succ)
                    && self.counters[self.grid.index(succ)].fetch_sub(1, Ordering::AcqRel) == 1
                {
                    if next.is_none() {
                        next = Some(succ);
                    } else {
                        s.spawn(move |s| self.task(s, succ));
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// Every active tile runs exactly once and after its active predecessors.
    #[test]
    fn parallel_respects_dependencies() {
        for dims in [[1, 1, 1], [3, 5, 1], [7, 2, 1], [3, 4, 5], [1, 9, 1]] {
            let grid = TileGrid { dims };
            let active = |c: [usize; 3]| (c[0] + c[1] + c[2]) % 7 != 3 || c == [0, 0, 0];
            let order = Mutex::new(Vec::new());
            sweep_parallel(grid, active, |c| order.lock().unwrap().push(c));
            let order = order.into_inner().unwrap();
            let expected = (0..grid.len()).map(|i| grid.coords(i)).filter(|&c| active(c)).count();
            assert_eq!(order.len(), expected, "{dims:?}");
            for (pos, c) in order.iter().enumerate() {
                for p in grid.neighbours(*c, true).filter(|&p| active(p)) {
                    let at = order.iter().position(|&x| x == p).expect("predecessor ran");
                    assert!(at < pos, "{p:?} after {c:?}");
                }
            }
        }
    }
}
