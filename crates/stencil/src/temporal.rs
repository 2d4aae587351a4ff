//! Temporal blocking of constant-coefficient stencils: `depth` Jacobi sweeps per pass over
//! the grid, in place, with no second grid.
//!
//! The interior planes along axis 0 are cut into one chunk per task, and a chunk's interior
//! rows (axis 1) into bands of at least `depth * h1` rows. A task takes its bands one after
//! the other and streams each through the chunk's planes: at step `s` it computes sweep 1 of
//! plane `s`, sweep 2 of plane `s - h`, ..., sweep `depth` of plane `s - (depth - 1) h` (`h`
//! the halo along axis 0), each on the band's rows widened by the rows the later sweeps read.
//! The band's rows of the input planes are copied into a ring of `2 h + 1` planes as they
//! come into reach, the intermediate sweeps live in rings of `2 h + 1` planes, and only the
//! last sweep is written back, straight into the grid. A band of rows keeps its rings in the
//! core's cache at any plane size, and the grid is read and written once per `depth` sweeps.
//!
//! Neighbours' values that the pass overwrites are read from copies taken before: the planes
//! within `depth * h` of each chunk's ends (taken before the pass; tasks never wait for each
//! other) and the last `depth * h1` rows of each band (taken before the band runs). Chunks and
//! bands overlap: the intermediate sweeps of the trapezoid beyond their ends are recomputed.
//! Every point is computed by the same kernel in the same order as one sweep at a time, so the
//! result is bitwise that of the sequential reference.

use rayon::prelude::*;

use crate::element::Element;
use crate::taps::Taps;

/// `sweeps` sweeps of `taps` on `grid` (standard layout, the taps' shape) in place, `depth`
/// sweeps per pass, the interior planes cut into `tasks` chunks run by rayon, the rows into
/// bands of `band` rows (at least `depth * h1`).
pub(crate) fn iterate<T: Element>(
    taps: &Taps<T>,
    grid: &mut [T],
    sweeps: usize,
    depth: usize,
    tasks: usize,
    band: usize,
) {
    let [n0, _, _] = taps.shape;
    let h = taps.halo[0];
    let interior = n0 - 2 * h;
    let tasks = tasks.clamp(1, interior);
    let bounds: Vec<usize> = (0..=tasks).map(|c| h + c * interior / tasks).collect();
    let mut work: Vec<Workspace<T>> = (0..tasks).map(|_| Workspace::default()).collect();
    for d in pass_depths(sweeps, depth) {
        pass(taps, grid, d, &bounds, band, &mut work);
    }
}

/// The depths of the passes that make `sweeps` sweeps at most `depth` per pass: as few passes
/// as `depth` allows, their depths as even as possible (4 sweeps at depth 3 run as 2 + 2, not
/// 3 + 1). A pass costs one read and one write of the grid whatever its depth, while a deeper
/// pass recomputes more of the trapezoid at its chunks' and bands' ends and keeps more ring
/// planes in cache, so with the passes fixed, the shallowest depths are the cheapest.
pub(crate) fn pass_depths(sweeps: usize, depth: usize) -> Vec<usize> {
    let depth = depth.max(1);
    let passes = sweeps.div_ceil(depth);
    (0..passes).map(|p| sweeps / passes + usize::from(p < sweeps % passes)).collect()
}

/// A task's buffers, kept across passes.
#[derive(Debug, Default)]
struct Workspace<T> {
    /// Sweeps `1..depth`: `2 h + 1` planes each.
    rings: Vec<T>,
    /// The band's rows of the input planes in reach: `2 h + 1` planes.
    inputs: Vec<T>,
    /// The planes within reach below and above the chunk, as they were before the pass.
    below: Vec<T>,
    above: Vec<T>,
    /// The last rows of the band before the current one, as they were before it ran, and the
    /// current band's, for the next.
    strip: Vec<T>,
    next_strip: Vec<T>,
}

/// The first row of each band of the interior rows, and the end: bands of `band` rows, none
/// shorter than `min` (the last absorbs a short remainder).
fn band_bounds(n1: usize, h1: usize, band: usize, min: usize) -> Vec<usize> {
    let (lo, hi) = (h1, n1 - h1);
    let band = band.max(min).max(1);
    let mut v = vec![lo];
    while hi - v[v.len() - 1] >= band + min.max(1) {
        let next = v[v.len() - 1] + band;
        v.push(next);
    }
    v.push(hi);
    v
}

/// One pass of `depth` sweeps over every chunk `bounds[c]..bounds[c + 1]`.
fn pass<T: Element>(
    taps: &Taps<T>,
    grid: &mut [T],
    depth: usize,
    bounds: &[usize],
    band: usize,
    work: &mut [Workspace<T>],
) {
    let [n0, n1, _] = taps.shape;
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
    let bands = band_bounds(n1, taps.halo[1], band, depth * taps.halo[1]);
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
        for (n, rows) in bands.windows(2).enumerate() {
            let margin = depth * taps.halo[1];
            // The band's last rows, for the next band, before this one overwrites them.
            take_strip(taps, own, rows[1].saturating_sub(margin).max(rows[0])..rows[1], &mut w.next_strip);
            let band = Band { rows: rows[0]..rows[1], strip: if n == 0 { None } else { Some(margin) } };
            Stream::new(taps, &mut *own, a, b, depth, band, w).run();
            std::mem::swap(&mut w.strip, &mut w.next_strip);
        }
    };
    if chunks.len() == 1 {
        chunks.into_iter().for_each(run);
    } else {
        chunks.into_par_iter().for_each(run);
    }
}

/// Rows `rows` of every plane of `own` into `strip`, plane after plane.
fn take_strip<T: Element>(taps: &Taps<T>, own: &[T], rows: std::ops::Range<usize>, strip: &mut Vec<T>) {
    let [_, _, n2] = taps.shape;
    strip.clear();
    for plane in own.chunks_exact(taps.plane_len()) {
        strip.extend_from_slice(&plane[rows.start * n2..rows.end * n2]);
    }
}

/// The rows a task streams through its chunk, and how many rows above them the strip of the
/// previous band holds (`None` for the first band, whose rows above are the fixed boundary).
struct Band {
    rows: std::ops::Range<usize>,
    strip: Option<usize>,
}

/// One task's pass of one band over its chunk `a..b`.
struct Stream<'a, T> {
    taps: &'a Taps<T>,
    own: &'a mut [T],
    a: usize,
    b: usize,
    depth: usize,
    band: Band,
    /// Ring `t - 1` holds sweep `t`'s planes, plane `p` in slot `p % (2h+1)`.
    rings: &'a mut [T],
    /// The band's rows of the chunk's input planes in reach, plane `p` in slot `p % (2h+1)`.
    inputs: &'a mut [T],
    below: &'a [T],
    above: &'a [T],
    strip: &'a [T],
    below_start: usize,
}

impl<'a, T: Element> Stream<'a, T> {
    fn new(
        taps: &'a Taps<T>,
        own: &'a mut [T],
        a: usize,
        b: usize,
        depth: usize,
        band: Band,
        w: &'a mut Workspace<T>,
    ) -> Self {
        let ps = taps.plane_len();
        let slots = 2 * taps.halo[0] + 1;
        let need = (depth - 1) * slots * ps;
        if w.rings.len() < need {
            w.rings.resize(need, T::ZERO);
        }
        if w.inputs.len() < slots * ps {
            w.inputs.resize(slots * ps, T::ZERO);
        }
        let below_start = a - w.below.len() / ps;
        Stream {
            taps,
            own,
            a,
            b,
            depth,
            band,
            rings: &mut w.rings[..need],
            inputs: &mut w.inputs[..slots * ps],
            below: &w.below,
            above: &w.above,
            strip: &w.strip,
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

    fn is_own(&self, p: usize) -> bool {
        (self.a..self.b).contains(&p)
    }

    /// Plane `p` of the grid as it was before the pass where the pass never writes it: the
    /// boundary rows and columns of the chunk's planes, and the whole of the copied planes.
    fn fixed(&self, p: usize) -> &[T] {
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

    fn input_slot(&self, p: usize) -> std::ops::Range<usize> {
        let ps = self.taps.plane_len();
        let at = (p % self.slots()) * ps;
        at..at + ps
    }

    fn ring_slot(&self, level: usize, p: usize) -> std::ops::Range<usize> {
        let ps = self.taps.plane_len();
        let at = ((level - 1) * self.slots() + p % self.slots()) * ps;
        at..at + ps
    }

    /// Rows sweep `level` computes: the band widened by what the later sweeps read.
    fn rows(&self, level: usize) -> std::ops::Range<usize> {
        let [_, n1, _] = self.taps.shape;
        let h1 = self.taps.halo[1];
        let grow = (self.depth - level) * h1;
        self.band.rows.start.saturating_sub(grow).max(h1)..(self.band.rows.end + grow).min(n1 - h1)
    }

    /// Copies the rows in reach of the chunk's plane `p` into its input slot, as they were
    /// before the pass: the previous band's from its strip, the others from the grid (the band
    /// writes its plane `p` only after this copy; later bands have not run).
    fn load(&mut self, p: usize) {
        let [_, n1, n2] = self.taps.shape;
        let h1 = self.taps.halo[1];
        let margin = self.depth * h1;
        let (j0, j1) = (self.band.rows.start, self.band.rows.end);
        let lo = j0.saturating_sub(margin);
        let hi = (j1 + margin).min(n1);
        let slot = self.input_slot(p);
        let ps = self.taps.plane_len();
        let src = &self.own[(p - self.a) * ps..(p - self.a + 1) * ps];
        let dst = &mut self.inputs[slot];
        let from_strip = match self.band.strip {
            Some(rows) => j0.saturating_sub(rows).max(h1)..j0,
            None => j0..j0,
        };
        dst[lo * n2..from_strip.start * n2].copy_from_slice(&src[lo * n2..from_strip.start * n2]);
        if let Some(rows) = self.band.strip {
            let plane = (p - self.a) * rows * n2;
            let first = j0 - rows;
            for r in from_strip.clone() {
                let at = plane + (r - first) * n2;
                dst[r * n2..(r + 1) * n2].copy_from_slice(&self.strip[at..at + n2]);
            }
        }
        dst[j0 * n2..hi * n2].copy_from_slice(&src[j0 * n2..hi * n2]);
    }

    /// Plane `p` after sweep `level`, valid on the rows that sweep `level + 1` reads.
    fn at_level<'s>(&'s self, rings: &'s Parts<'s, T>, level: usize, p: usize) -> &'s [T] {
        if level > 0 && self.is_interior(p) {
            return rings.get(self.ring_slot(level, p).start);
        }
        if self.is_own(p) { &self.inputs[self.input_slot(p)] } else { self.fixed(p) }
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
        let first = self.a as isize - (d - 1) * h;
        let last = self.b as isize + (d - 1) * h;
        // Sweep 1 of plane `s` reads input planes up to `s + h`: load them as they come in reach.
        for p in first - h..first + h {
            if p >= 0 && self.is_own(p as usize) {
                self.load(p as usize);
            }
        }
        for s in first..last {
            let next = s + h;
            if next >= 0 && self.is_own(next as usize) {
                self.load(next as usize);
            }
            for level in 1..=self.depth {
                let p = s - (level as isize - 1) * h;
                let (lo, hi) = self.span(level);
                if p >= lo && p < hi {
                    self.compute(level, p as usize);
                }
            }
        }
    }

    /// Sweep `level` of interior plane `p`: into its ring slot, or the last sweep of the pass
    /// straight into the grid.
    fn compute(&mut self, level: usize, p: usize) {
        let h = self.taps.halo[0];
        let ps = self.taps.plane_len();
        let rows = self.rows(level);
        if level == self.depth {
            let own = std::mem::take(&mut self.own);
            {
                let dst = &mut own[(p - self.a) * ps..(p - self.a + 1) * ps];
                let rings = Parts { head: self.rings, tail: &[], split: usize::MAX, len: ps };
                let inputs: Vec<&[T]> =
                    (0..2 * h + 1).map(|m| self.at_level(&rings, level - 1, p + m - h)).collect();
                self.taps.plane(&inputs, dst, rows);
            }
            self.own = own;
            return;
        }
        let slot = self.ring_slot(level, p);
        let all = std::mem::take(&mut self.rings);
        {
            let (head, rest) = all.split_at_mut(slot.start);
            let (dst, tail) = rest.split_at_mut(ps);
            let rings = Parts { head, tail, split: slot.start, len: ps };
            let inputs: Vec<&[T]> =
                (0..2 * h + 1).map(|m| self.at_level(&rings, level - 1, p + m - h)).collect();
            self.copy_edges(level, p, dst);
            self.taps.plane(&inputs, dst, rows);
        }
        self.rings = all;
    }

    /// The fixed boundary rows and columns of sweep `level`'s plane `p` that sweep
    /// `level + 1` reads.
    fn copy_edges(&self, level: usize, p: usize, dst: &mut [T]) {
        let [_, n1, n2] = self.taps.shape;
        let [_, h1, h2] = self.taps.halo;
        let src = self.fixed(p);
        let rows = self.rows(level);
        let reach = rows.start.saturating_sub(h1)..(rows.end + h1).min(n1);
        for r in reach {
            let at = r * n2;
            if r < h1 || r >= n1 - h1 {
                dst[at..at + n2].copy_from_slice(&src[at..at + n2]);
            } else if h2 > 0 {
                dst[at..at + h2].copy_from_slice(&src[at..at + h2]);
                dst[at + n2 - h2..at + n2].copy_from_slice(&src[at + n2 - h2..at + n2]);
            }
        }
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

#[cfg(test)]
mod tests {
    use super::pass_depths;

    #[test]
    fn passes_are_few_and_even() {
        assert_eq!(pass_depths(4, 3), vec![2, 2]);
        assert_eq!(pass_depths(10, 3), vec![3, 3, 2, 2]);
        assert_eq!(pass_depths(5, 3), vec![3, 2]);
        assert_eq!(pass_depths(3, 3), vec![3]);
        assert_eq!(pass_depths(2, 8), vec![2]);
        assert_eq!(pass_depths(7, 1), vec![1; 7]);
        assert_eq!(pass_depths(0, 3), Vec::<usize>::new());
        assert_eq!(pass_depths(6, 0), vec![1; 6]);
        for sweeps in 0..40 {
            for depth in 1..10 {
                let d = pass_depths(sweeps, depth);
                assert_eq!(d.iter().sum::<usize>(), sweeps);
                assert_eq!(d.len(), sweeps.div_ceil(depth));
                assert!(d.iter().all(|&x| x >= 1 && x <= depth));
                assert!(d.iter().max().unwrap_or(&0) - d.iter().min().unwrap_or(&0) <= 1);
            }
        }
    }
}
