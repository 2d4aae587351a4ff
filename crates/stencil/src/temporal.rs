//! Temporal blocking of constant-coefficient stencils: `depth` Jacobi sweeps per pass over
//! the grid, in place, with no second grid.
//!
//! The interior planes along axis 0 are cut into one chunk per task. A task streams through
//! its chunk plane by plane: at step `s` it computes sweep 1 of plane `s`, sweep 2 of plane
//! `s - h`, ..., sweep `depth` of plane `s - (depth - 1) h` (`h` the halo along axis 0). The
//! intermediate sweeps live in per-task rings of `2 h + 1` planes (small enough to stay in
//! the core's cache), and only the last sweep is written back into the grid, once per pass:
//! the grid is read once and written once per `depth` sweeps instead of once per sweep.
//!
//! Chunks overlap: a task recomputes the intermediate sweeps of the `(depth - t) h` planes
//! beyond each end of its chunk at sweep `t` (the trapezoid), reading the neighbouring
//! chunks' planes from copies taken before the pass, so tasks never wait for each other.
//! A plane of the grid is overwritten only once no later step of its task reads its old
//! values (for `depth == 1` through a ring with a delay of `h` planes), so the pass is
//! equivalent to `depth` separate sweeps, each point computed by the same kernel in the same
//! order: the result is bitwise that of the sequential reference.

use rayon::prelude::*;

use crate::element::Element;
use crate::taps::Taps;

/// `sweeps` sweeps of `taps` on `grid` (standard layout, the taps' shape) in place, `depth`
/// sweeps per pass, the interior planes cut into `tasks` chunks run by rayon.
pub(crate) fn iterate<T: Element>(taps: &Taps<T>, grid: &mut [T], sweeps: usize, depth: usize, tasks: usize) {
    let [n0, _, _] = taps.shape;
    let h = taps.halo[0];
    let interior = n0 - 2 * h;
    let tasks = tasks.clamp(1, interior);
    let depth = depth.clamp(1, sweeps.max(1));
    let bounds: Vec<usize> = (0..=tasks).map(|c| h + c * interior / tasks).collect();
    let mut work: Vec<Workspace<T>> = (0..tasks).map(|_| Workspace::default()).collect();
    let mut left = sweeps;
    while left > 0 {
        let d = depth.min(left);
        pass(taps, grid, d, &bounds, &mut work);
        left -= d;
    }
}

/// A task's buffers, kept across passes: its rings and the copies of its neighbours' planes.
#[derive(Debug, Default)]
struct Workspace<T> {
    rings: Vec<T>,
    below: Vec<T>,
    above: Vec<T>,
}

/// One pass of `depth` sweeps over every chunk `bounds[c]..bounds[c + 1]`.
fn pass<T: Element>(
    taps: &Taps<T>,
    grid: &mut [T],
    depth: usize,
    bounds: &[usize],
    work: &mut [Workspace<T>],
) {
    let [n0, _, _] = taps.shape;
    let ps = taps.plane_len();
    let reach = depth * taps.halo[0];
    // Copies of the planes each chunk reads beyond its ends, taken before any is overwritten.
    for (c, w) in work.iter_mut().enumerate() {
        let (a, b) = (bounds[c], bounds[c + 1]);
        let lo = a.saturating_sub(reach);
        let hi = (b + reach).min(n0);
        w.below.clear();
        w.below.extend_from_slice(&grid[lo * ps..a * ps]);
        w.above.clear();
        w.above.extend_from_slice(&grid[b * ps..hi * ps]);
    }
    // Each task gets its own chunk of the grid.
    let mut chunks: Vec<(&mut [T], usize, usize, &mut Workspace<T>)> = Vec::with_capacity(work.len());
    let (_, mut rest) = grid.split_at_mut(bounds[0] * ps);
    for (c, w) in work.iter_mut().enumerate() {
        let (a, b) = (bounds[c], bounds[c + 1]);
        let (mine, tail) = rest.split_at_mut((b - a) * ps);
        chunks.push((mine, a, b, w));
        rest = tail;
    }
    let run = |(own, a, b, w): (&mut [T], usize, usize, &mut Workspace<T>)| {
        Stream::new(taps, own, a, b, depth, w).run();
    };
    if chunks.len() == 1 {
        chunks.into_iter().for_each(run);
    } else {
        chunks.into_par_iter().for_each(run);
    }
}

/// One task's pass over its chunk `a..b`.
struct Stream<'a, T> {
    taps: &'a Taps<T>,
    own: &'a mut [T],
    a: usize,
    b: usize,
    depth: usize,
    /// Ring `t - 1` holds sweep `t`'s planes, `2 h + 1` of them, plane `p` in slot `p % (2h+1)`.
    rings: &'a mut [T],
    below: &'a [T],
    above: &'a [T],
    below_start: usize,
}

impl<'a, T: Element> Stream<'a, T> {
    fn new(
        taps: &'a Taps<T>,
        own: &'a mut [T],
        a: usize,
        b: usize,
        depth: usize,
        w: &'a mut Workspace<T>,
    ) -> Self {
        let slots = 2 * taps.halo[0] + 1;
        // Sweeps 1..depth live in rings; with depth 1 the single sweep does, to delay writes.
        let levels = depth.saturating_sub(1).max(1);
        let need = levels * slots * taps.plane_len();
        if w.rings.len() < need {
            w.rings.resize(need, T::ZERO);
        }
        let below_start = a - w.below.len() / taps.plane_len();
        Stream {
            taps,
            own,
            a,
            b,
            depth,
            rings: &mut w.rings[..need],
            below: &w.below,
            above: &w.above,
            below_start,
        }
    }

    fn slots(&self) -> usize {
        2 * self.taps.halo[0] + 1
    }

    fn is_interior(&self, p: usize) -> bool {
        let h = self.taps.halo[0];
        p >= h && p < self.taps.shape[0] - h
    }

    /// Plane `p` before the pass.
    fn initial(&self, p: usize) -> &[T] {
        let ps = self.taps.plane_len();
        if p < self.a {
            let at = (p - self.below_start) * ps;
            &self.below[at..at + ps]
        } else if p < self.b {
            &self.own[(p - self.a) * ps..(p - self.a + 1) * ps]
        } else {
            let at = (p - self.b) * ps;
            &self.above[at..at + ps]
        }
    }

    fn slot_range(&self, level: usize, p: usize) -> std::ops::Range<usize> {
        let ps = self.taps.plane_len();
        let at = ((level - 1) * self.slots() + p % self.slots()) * ps;
        at..at + ps
    }

    /// Plane `p` after sweep `level` (the boundary planes never change).
    fn at_level(&self, level: usize, p: usize) -> &[T] {
        if level == 0 || !self.is_interior(p) {
            return self.initial(p);
        }
        &self.rings[self.slot_range(level, p)]
    }

    /// Planes `level`'s sweep of the chunk computes: the chunk widened by the trapezoid.
    fn span(&self, level: usize) -> (isize, isize) {
        let h = self.taps.halo[0] as isize;
        let grow = (self.depth - level) as isize * h;
        let lo = (self.a as isize - grow).max(h);
        let hi = (self.b as isize + grow).min(self.taps.shape[0] as isize - h);
        (lo, hi)
    }

    fn run(mut self) {
        let h = self.taps.halo[0] as isize;
        let d = self.depth as isize;
        // With depth 1 the sweep's plane `p` is written back `h` steps later.
        let delay = if self.depth == 1 { h } else { 0 };
        let first = self.a as isize - (d - 1) * h;
        let last = self.b as isize + (d - 1) * h + delay;
        for s in first..last {
            for level in 1..=self.depth {
                let p = s - (level as isize - 1) * h;
                let (lo, hi) = self.span(level);
                if p < lo || p >= hi {
                    continue;
                }
                self.compute(level, p as usize);
            }
            if self.depth == 1 {
                let p = s - h;
                if p >= self.a as isize && p < self.b as isize {
                    self.write_back(p as usize);
                }
            }
        }
    }

    /// Sweep `level` of interior plane `p`, into its ring slot, or (the last sweep of a pass
    /// deeper than 1) straight into the grid.
    fn compute(&mut self, level: usize, p: usize) {
        let h = self.taps.halo[0];
        let [_, n1, _] = self.taps.shape;
        let rows = self.taps.halo[1]..n1 - self.taps.halo[1];
        let ps = self.taps.plane_len();
        let into_grid = level == self.depth && self.depth > 1;
        let out = if into_grid {
            std::mem::take(&mut self.own)
        } else {
            // The ring slot is taken out so the inputs (other slots) can be borrowed.
            std::mem::take(&mut self.rings)
        };
        let range =
            if into_grid { (p - self.a) * ps..(p - self.a + 1) * ps } else { self.slot_range(level, p) };
        {
            let (head, rest) = out.split_at_mut(range.start);
            let (dst, tail) = rest.split_at_mut(ps);
            let view = Parts { head, tail, split: range.start, len: ps };
            let inputs: Vec<&[T]> =
                (0..2 * h + 1).map(|m| self.input(&view, into_grid, level - 1, p + m - h)).collect();
            if !into_grid {
                copy_edges(self.taps, self.initial(p), dst);
            }
            self.taps.plane(&inputs, dst, rows);
        }
        if into_grid {
            self.own = out;
        } else {
            self.rings = out;
        }
    }

    /// Plane `p` after sweep `level` while the buffer being written (the grid chunk when
    /// `grid_taken`, else the rings) is split around the destination.
    fn input<'v>(&'v self, view: &'v Parts<'v, T>, grid_taken: bool, level: usize, p: usize) -> &'v [T] {
        let ps = self.taps.plane_len();
        let from_rings = level > 0 && self.is_interior(p);
        if from_rings && !grid_taken {
            return view.get(self.slot_range(level, p).start);
        }
        if !from_rings && grid_taken && (self.a..self.b).contains(&p) {
            return view.get((p - self.a) * ps);
        }
        self.at_level(level, p)
    }

    /// The depth-1 ring's plane `p` into the grid.
    fn write_back(&mut self, p: usize) {
        let ps = self.taps.plane_len();
        let src = self.slot_range(1, p);
        let at = (p - self.a) * ps;
        self.own[at..at + ps].copy_from_slice(&self.rings[src]);
    }
}

/// A buffer split around a destination plane: the parts before and after it.
struct Parts<'v, T> {
    head: &'v [T],
    tail: &'v [T],
    split: usize,
    len: usize,
}

impl<T> Parts<'_, T> {
    /// The plane starting at `at` (never the destination itself).
    fn get(&self, at: usize) -> &[T] {
        if at < self.split {
            &self.head[at..at + self.len]
        } else {
            let at = at - self.split - self.len;
            &self.tail[at..at + self.len]
        }
    }
}

/// The boundary rows and columns of a plane (held fixed) from `src` into `dst`.
pub(crate) fn copy_edges<T: Element>(taps: &Taps<T>, src: &[T], dst: &mut [T]) {
    let [_, n1, n2] = taps.shape;
    let [_, h1, h2] = taps.halo;
    dst[..h1 * n2].copy_from_slice(&src[..h1 * n2]);
    dst[(n1 - h1) * n2..].copy_from_slice(&src[(n1 - h1) * n2..]);
    if h2 > 0 {
        for j in h1..n1 - h1 {
            let r = j * n2;
            dst[r..r + h2].copy_from_slice(&src[r..r + h2]);
            dst[r + n2 - h2..r + n2].copy_from_slice(&src[r + n2 - h2..r + n2]);
        }
    }
}
