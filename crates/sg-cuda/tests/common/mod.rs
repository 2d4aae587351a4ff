//! Grids, values and points shared by the sg-cuda tests.
#![allow(dead_code)]

use hetkit_testkit::TestRng;
use rand::Rng;
use sg_core::{GridSpec, Real};

/// Grids of many shapes, d = 1..=max_d: regular (several levels), truncated, boundary.
pub(crate) fn specs(r: &mut TestRng, max_d: usize) -> Vec<GridSpec> {
    let mut out = Vec::new();
    for d in 1..=max_d {
        let max_n = match d {
            1 => 9,
            2 => 7,
            3 => 6,
            4..=5 => 5,
            6..=8 => 4,
            _ => 3,
        };
        for n in 1..=max_n {
            out.push(GridSpec::regular(d, n).unwrap());
        }
        let c: Vec<u32> = (0..d).map(|_| r.random_range(1..=max_n)).collect();
        out.push(GridSpec::truncated(d, max_n, &c).unwrap());
        if d <= 5 {
            out.push(GridSpec::regular(d, max_n - 1).unwrap().with_boundary().unwrap());
            out.push(GridSpec::truncated(d, max_n - 1, &c).unwrap().with_boundary().unwrap());
        } else if d <= 8 {
            out.push(GridSpec::regular(d, 2).unwrap().with_boundary().unwrap());
        }
    }
    out
}

/// The templated depths past [`specs`] (d = 13..=16: regular and truncated; with boundary such
/// grids would have at least 3^d points).
pub(crate) fn high_dim_specs(r: &mut TestRng) -> Vec<GridSpec> {
    let mut out = Vec::new();
    for d in 13..=16 {
        out.push(GridSpec::regular(d, 3).unwrap());
        let c: Vec<u32> = (0..d).map(|_| r.random_range(1..=3)).collect();
        out.push(GridSpec::truncated(d, 4, &c).unwrap());
    }
    out
}

/// Uniform values in [-1, 1).
pub(crate) fn random_values<T: Real>(r: &mut TestRng, n: usize) -> Vec<T> {
    (0..n).map(|_| T::from_f64(r.random_range(-1.0..1.0))).collect()
}

/// `m x d` points, row-major, hitting 0, 1, 1/2 and the grid lines now and then.
pub(crate) fn random_points<T: Real>(r: &mut TestRng, m: usize, d: usize) -> Vec<T> {
    (0..m * d)
        .map(|_| match r.random_range(0..20) {
            0 => T::zero(),
            1 => T::one(),
            2 => T::from_f64(0.5),
            3 => T::from_f64(r.random_range(0..16u32) as f64 / 16.0),
            _ => T::from_f64(r.random_range(0.0..1.0)),
        })
        .collect()
}

/// Batch sizes that catch tails: empty, one, around a warp, primes, around a block.
pub(crate) const AWKWARD_M: [usize; 9] = [0, 1, 2, 31, 32, 33, 97, 127, 257];

/// Largest relative difference with floor 1, through f64.
pub(crate) fn max_rel<T: Real>(got: &[T], want: &[T]) -> f64 {
    let g: Vec<f64> = got.iter().map(|&v| v.to_f64()).collect();
    let w: Vec<f64> = want.iter().map(|&v| v.to_f64()).collect();
    hetkit_testkit::max_rel_err(&g, &w, 1.0)
}

/// Largest error of an evaluation against the reference computed in f64 from the same inputs,
/// relative to `max(1, Σ_k |v_k| φ_k(x))` per output: the scale of the sum's rounding error, so
/// f32 sums over thousands of blocks are judged by their conditioning, not by luck.
pub(crate) fn eval_err<T: Real>(spec: &GridSpec, values: &[T], ncomp: usize, points: &[T], got: &[T]) -> f64 {
    let v64: Vec<f64> = values.iter().map(|&v| Real::to_f64(v)).collect();
    let abs64: Vec<f64> = v64.iter().map(|v| v.abs()).collect();
    let p64: Vec<f64> = points.iter().map(|&v| Real::to_f64(v)).collect();
    let m = p64.len() / spec.dim();
    let mut want = vec![0.0; m * ncomp];
    let mut scale = vec![0.0; m * ncomp];
    sg_core::reference::evaluate_batch_into(spec, &v64, ncomp, &p64, &mut want).unwrap();
    sg_core::reference::evaluate_batch_into(spec, &abs64, ncomp, &p64, &mut scale).unwrap();
    got.iter()
        .zip(want.iter().zip(&scale))
        .map(|(g, (w, s))| {
            let g = Real::to_f64(*g);
            if g.is_nan() { f64::INFINITY } else { (g - w).abs() / s.max(1.0) }
        })
        .fold(0.0, f64::max)
}
