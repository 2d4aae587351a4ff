//! The features a predictor sees (digest §1.4, §4.7): grid side `dim`, task grain `tsize` in
//! units of one synthetic-kernel iteration on one core, and data grain `dsize` (8-byte values per
//! cell beyond the thesis's two integers). `tsize` of any kernel is measured the same way, so an
//! application the model never saw gets features comparable to the synthetic training ones.

use std::sync::OnceLock;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::apps::synthetic::synthetic_2d;
use crate::boundary::{Boundary2, Boundary3};
use crate::config::{Config2, Config3};
use crate::error::Result;
use crate::sweep2::run_2d;
use crate::sweep3::run_3d;

/// What the learners know about a problem.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Features {
    /// Grid side (the geometric mean of the sides of a non-square grid).
    pub dim: usize,
    /// Time per cell in units of one synthetic-kernel iteration over one double on one core.
    pub tsize: f64,
    /// 8-byte values per cell beyond two 4-byte integers ([`dsize_of`]).
    pub dsize: usize,
}

impl Features {
    /// Features from their values.
    pub fn new(dim: usize, tsize: f64, dsize: usize) -> Self {
        Features { dim, tsize, dsize }
    }

    /// The learners' inputs: `log2 dim`, `log2 tsize` (grains span four decades) and `dsize`.
    pub(crate) fn x(&self) -> Vec<f64> {
        vec![(self.dim.max(1) as f64).log2(), self.tsize.max(1e-3).log2(), self.dsize as f64]
    }
}

/// The thesis's `dsize` of a cell type: `(size - 8) / 8`, at least 0 (a synthetic cell of two
/// `i32` and `d` doubles gives `d`; sequence-comparison cells give 0).
pub fn dsize_of<T>() -> usize {
    std::mem::size_of::<T>().saturating_sub(8) / 8
}

/// Nanoseconds of one iteration of the synthetic kernel over one double, on one core; measured
/// once per process (the smallest of several timings, which contention only lengthens).
pub fn synthetic_unit_ns() -> f64 {
    static UNIT: OnceLock<f64> = OnceLock::new();
    *UNIT.get_or_init(measure_unit)
}

fn measure_unit() -> f64 {
    const SIDE: usize = 48;
    const ITERS: u32 = 256;
    let per_cell = |tsize: u32| {
        let t = Instant::now();
        let table = synthetic_2d::<1>(SIDE, SIDE, tsize, &Config2::sequential());
        std::hint::black_box(&table);
        t.elapsed().as_secs_f64() * 1e9 / (SIDE * SIDE) as f64
    };
    let (mut lo, mut hi) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..7 {
        lo = lo.min(per_cell(0));
        hi = hi.min(per_cell(ITERS));
    }
    ((hi - lo) / f64::from(ITERS)).max(1e-3)
}

/// Largest side of the sample block a grain is measured on.
const SAMPLE_SIDE: usize = 64;
/// A sample is grown until one sweep of it takes this long (or it reaches [`SAMPLE_SIDE`]).
const SAMPLE_NS: f64 = 1e6;

/// Times `sweep(side)` (a sequential sweep of `side^2` or `side^3` cells) on blocks growing from
/// side 8 until a sweep takes a millisecond, and returns the best time per cell in nanoseconds.
fn time_per_cell(
    max_side: usize,
    cells: impl Fn(usize) -> usize,
    sweep: impl Fn(usize) -> Result<()>,
) -> Result<f64> {
    let mut side = 8.min(max_side).max(1);
    loop {
        let mut best = f64::INFINITY;
        for _ in 0..3 {
            let t = Instant::now();
            sweep(side)?;
            best = best.min(t.elapsed().as_secs_f64() * 1e9);
        }
        if best >= SAMPLE_NS || side >= max_side.min(SAMPLE_SIDE) {
            return Ok(best / cells(side) as f64);
        }
        side = (side * 2).min(max_side).min(SAMPLE_SIDE);
    }
}

/// The features of a 2D kernel over a `rows x cols` table: `tsize` from sequential sweeps of a
/// block at the table's corner (at most 64 x 64 cells, the kernel is only called on cells of
/// the table) divided by [`synthetic_unit_ns`], and `dsize` from the cell type.
///
/// # Errors
/// Those of [`run_2d`] on the sample block (wrong boundary lengths, an empty table).
pub fn features_2d<T, K>(rows: usize, cols: usize, boundary: &Boundary2<T>, kernel: K) -> Result<Features>
where
    T: Copy + Send + Sync,
    K: Fn(usize, usize, &T, &T, &T) -> T + Sync,
{
    boundary.check(rows, cols)?;
    crate::sweep2::check_shape(rows, cols)?;
    let sub = |side: usize| {
        let (r, c) = (rows.min(side), cols.min(side));
        let cut = |v: &[T], n: usize| if v.is_empty() { Vec::new() } else { v[..n].to_vec() };
        (
            r,
            c,
            Boundary2 {
                north: cut(&boundary.north, c),
                west: cut(&boundary.west, r),
                corner: boundary.corner,
            },
        )
    };
    let per_cell = time_per_cell(
        rows.max(cols),
        |side| rows.min(side) * cols.min(side),
        |side| {
            let (r, c, b) = sub(side);
            std::hint::black_box(run_2d(r, c, &b, &Config2::sequential(), &kernel)?);
            Ok(())
        },
    )?;
    let dim = ((rows as f64) * (cols as f64)).sqrt().round() as usize;
    Ok(Features { dim, tsize: per_cell / synthetic_unit_ns(), dsize: dsize_of::<T>() })
}

/// The features of a 3D kernel over an `n0 x n1 x n2` box, as [`features_2d`] (sample blocks
/// of at most 16^3 cells; `dim` is the geometric mean of the sides).
///
/// # Errors
/// Those of [`run_3d`] on the sample block.
pub fn features_3d<T, K>(n: [usize; 3], boundary: &Boundary3<T>, kernel: K) -> Result<Features>
where
    T: Copy + Send + Sync,
    K: Fn(usize, usize, usize, &T, &T, &T) -> T + Sync,
{
    boundary.check(n[0], n[1], n[2])?;
    let side_of = |s: usize| [n[0].min(s), n[1].min(s), n[2].min(s)];
    let sub = |s: usize| {
        let m = side_of(s);
        let plane = |v: &[T], a: usize, b: usize, full_b: usize| {
            if v.is_empty() {
                Vec::new()
            } else {
                (0..a).flat_map(|x| v[x * full_b..x * full_b + b].iter().copied()).collect()
            }
        };
        Boundary3 {
            north: plane(&boundary.north, m[1], m[2], n[2]),
            west: plane(&boundary.west, m[0], m[2], n[2]),
            top: plane(&boundary.top, m[0], m[1], n[1]),
            fill: boundary.fill,
        }
    };
    let per_cell = time_per_cell(
        n.iter().copied().max().unwrap_or(1).min(16),
        |s| side_of(s).iter().product(),
        |s| {
            let m = side_of(s);
            std::hint::black_box(run_3d(m[0], m[1], m[2], &sub(s), &Config3::sequential(), &kernel)?);
            Ok(())
        },
    )?;
    let dim = (n.iter().map(|&x| x as f64).product::<f64>()).cbrt().round() as usize;
    Ok(Features { dim, tsize: per_cell / synthetic_unit_ns(), dsize: dsize_of::<T>() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apps::synthetic::{Synth, Synth3, synthetic_cell};

    #[test]
    fn dsize_follows_the_thesis_element_sizes() {
        assert_eq!(dsize_of::<Synth<1>>(), 1);
        assert_eq!(dsize_of::<Synth<5>>(), 5);
        assert_eq!(dsize_of::<Synth<0>>(), 0);
        assert_eq!(dsize_of::<u32>(), 0, "sequence comparison");
        assert_eq!(dsize_of::<[f64; 5]>(), 4, "Nash: 2 ints + 4 doubles = 40 bytes");
        assert_eq!(dsize_of::<Synth3>(), 2);
    }

    /// Grain is measured in synthetic iterations: a kernel doing 64 of them per cell measures
    /// near 64, far from one doing 4 (contention only blurs, so the bounds are loose).
    #[test]
    fn tsize_tracks_the_work_per_cell() {
        let b = Boundary2::constant(Synth::<1>::BOUNDARY);
        let f = |t: u32| features_2d(40, 50, &b, move |_, _, n, w, nw| synthetic_cell(t, n, w, nw)).unwrap();
        let (small, big) = (f(4), f(64));
        assert_eq!((small.dim, small.dsize), (45, 1));
        assert!(big.tsize > 4.0 * small.tsize, "{small:?} {big:?}");
        assert!(big.tsize > 16.0 && big.tsize < 400.0, "{big:?}");
    }

    #[test]
    fn features_check_the_boundary_and_handle_tiny_grids() {
        let bad = Boundary2 { north: vec![0u32; 3], west: vec![], corner: 0 };
        assert!(features_2d(5, 5, &bad, |_, _, n, w, _| n + w).is_err());
        let ok = Boundary2 { north: vec![1u32; 70], west: vec![1; 1], corner: 0 };
        let f = features_2d(1, 70, &ok, |_, _, n, w, _| n.wrapping_add(*w)).unwrap();
        assert_eq!((f.dim, f.dsize), (8, 0));
        assert!(f.tsize > 0.0);
        let b3 = Boundary3 { north: vec![0u8; 20 * 30], west: vec![], top: vec![0; 10 * 20], fill: 0 };
        let f3 =
            features_3d([10, 20, 30], &b3, |_, _, _, n, w, t| n.wrapping_add(*w).wrapping_add(*t)).unwrap();
        assert_eq!(f3.dim, 18);
    }
}
