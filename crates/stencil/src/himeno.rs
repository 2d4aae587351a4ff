//! The Himeno benchmark: Jacobi iterations of a 19-point Poisson kernel with 12 coefficient
//! arrays, its standard initialisation, and the residual `gosa` fused into the sweep.

use std::time::Instant;

use ndarray::{Array3, Axis, s};
use rayon::prelude::*;

use crate::config::{Config, Target};
use crate::element::Element;
use crate::error::{Result, StencilError};

/// Flops per interior point and iteration, the official count (the thesis's 32 omit `gosa`).
pub const HIMENO_FLOPS_PER_POINT: u64 = 34;

/// One Himeno run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HimenoReport {
    /// The residual `sum ss^2` of the last iteration, as the official code reports it.
    pub gosa: f64,
    /// `34 * interior points * iterations / seconds / 1e6`.
    pub mflops: f64,
    /// Wall-clock seconds of the iterations (set-up excluded).
    pub seconds: f64,
}

/// The Himeno benchmark's problem with its standard initialisation: grid `imax = mimax - 1`
/// (and so on) as in the official code, `a = (1, 1, 1, 1/6)`, `b = 0`, `c = 1`, `wrk1 = 0`,
/// `bnd = 1`, `omega = 0.8` and `p[i][j][k] = i^2 / (imax - 1)^2`.
///
/// ```
/// use stencil::{Config, Himeno};
/// // Size XS, one iteration: gosa = (imax-2)(jmax-2)(kmax-2) / (9 (imax-1)^4).
/// let r = Himeno::<f64>::new(33, 33, 65)?.run(1, &Config::cpu())?;
/// assert!((r.gosa - 6.713436944e-03).abs() < 1e-11);
/// # Ok::<(), stencil::StencilError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Himeno<T: Element> {
    pub(crate) a: [Array3<T>; 4],
    pub(crate) b: [Array3<T>; 3],
    pub(crate) c: [Array3<T>; 3],
    pub(crate) wrk1: Array3<T>,
    pub(crate) bnd: Array3<T>,
    pub(crate) p: Array3<T>,
    pub(crate) omega: T,
}

impl<T: Element> Himeno<T> {
    /// The problem of the official sizes `(mimax, mjmax, mkmax)`: XS (33, 33, 65), S (65, 65,
    /// 129), M (129, 129, 257), L (257, 257, 513). Each must be at least 4 (one interior point),
    /// and the 14 arrays must fit in memory.
    pub fn new(mimax: usize, mjmax: usize, mkmax: usize) -> Result<Himeno<T>> {
        if mimax < 4 || mjmax < 4 || mkmax < 4 {
            return Err(StencilError::Shape(format!(
                "Himeno sizes ({mimax}, {mjmax}, {mkmax}): each must be at least 4 (one interior point)"
            )));
        }
        let dims = (mimax - 1, mjmax - 1, mkmax - 1);
        let bytes = dims
            .0
            .checked_mul(dims.1)
            .and_then(|n| n.checked_mul(dims.2))
            .and_then(|n| n.checked_mul(14 * std::mem::size_of::<T>()))
            .filter(|&b| b <= isize::MAX as usize / 2)
            .ok_or_else(|| {
                StencilError::Shape(format!("Himeno sizes ({mimax}, {mjmax}, {mkmax}) do not fit in memory"))
            })?;
        let _ = bytes;
        let full = |v: T| Array3::from_elem(dims, v);
        let d = T::from_f64(((dims.0 - 1) * (dims.0 - 1)) as f64);
        Ok(Himeno {
            a: [full(T::ONE), full(T::ONE), full(T::ONE), full(T::ONE / T::from_f64(6.0))],
            b: [full(T::ZERO), full(T::ZERO), full(T::ZERO)],
            c: [full(T::ONE), full(T::ONE), full(T::ONE)],
            wrk1: full(T::ZERO),
            bnd: full(T::ONE),
            p: Array3::from_shape_fn(dims, |(i, _, _)| T::from_f64((i * i) as f64) / d),
            omega: T::from_f64(0.8),
        })
    }

    /// The grid `(imax, jmax, kmax)`.
    pub fn dims(&self) -> [usize; 3] {
        let s = self.p.shape();
        [s[0], s[1], s[2]]
    }

    /// The initial pressure field.
    pub fn pressure(&self) -> &Array3<T> {
        &self.p
    }

    /// `iterations` Jacobi iterations from the standard initial state. `Config::sequential()`
    /// is the official loop; `cpu()` runs planes in parallel with `gosa` summed per plane and
    /// then in plane order; `gpu()` runs a generated kernel with per-block partial sums;
    /// `auto()` picks the GPU when there is one. `slabs` is not offered for Himeno.
    pub fn run(&self, iterations: usize, config: &Config) -> Result<HimenoReport> {
        self.run_with_field(iterations, config).map(|(r, _)| r)
    }

    /// [`run`](Self::run), also returning the final pressure field.
    pub fn run_with_field(&self, iterations: usize, config: &Config) -> Result<(HimenoReport, Array3<T>)> {
        if iterations == 0 {
            return Err(StencilError::Config("Himeno needs at least one iteration".into()));
        }
        let target = match config.target {
            Target::Auto => match crate::gpu::himeno(self, iterations, config.gpu) {
                Err(e) if e.is_no_gpu() => Target::Cpu,
                other => return other.map(|(gosa, secs, p)| (self.report(gosa, secs, iterations), p)),
            },
            t => t,
        };
        let (gosa, seconds, p) = match target {
            Target::Sequential => self.run_cpu(iterations, false),
            Target::Cpu => self.run_cpu(iterations, true),
            Target::Gpu => crate::gpu::himeno(self, iterations, config.gpu)?,
            Target::Slabs(_) | Target::Auto => {
                return Err(StencilError::Config(
                    "Himeno runs on sequential(), cpu(), gpu() or auto()".into(),
                ));
            }
        };
        Ok((self.report(gosa, seconds, iterations), p))
    }

    fn report(&self, gosa: f64, seconds: f64, iterations: usize) -> HimenoReport {
        let [i, j, k] = self.dims();
        let flops = HIMENO_FLOPS_PER_POINT as f64 * ((i - 2) * (j - 2) * (k - 2)) as f64 * iterations as f64;
        HimenoReport { gosa, mflops: flops / seconds.max(1e-12) / 1e6, seconds }
    }

    fn run_cpu(&self, iterations: usize, parallel: bool) -> (f64, f64, Array3<T>) {
        let mut p = self.p.clone();
        let mut wrk2 = self.p.clone();
        let t0 = Instant::now();
        let mut gosa = 0.0;
        for _ in 0..iterations {
            gosa = if parallel {
                self.sweep_parallel(&p, &mut wrk2)
            } else {
                self.sweep_sequential(&p, &mut wrk2)
            };
            std::mem::swap(&mut p, &mut wrk2);
        }
        (gosa, t0.elapsed().as_secs_f64(), p)
    }

    /// The official loop nest: `gosa` accumulated point by point.
    fn sweep_sequential(&self, p: &Array3<T>, wrk2: &mut Array3<T>) -> f64 {
        let [imax, jmax, kmax] = self.dims();
        let mut gosa = 0.0;
        for i in 1..imax - 1 {
            for j in 1..jmax - 1 {
                for k in 1..kmax - 1 {
                    let ss = self.point(p, i, j, k);
                    gosa += ss.to_f64() * ss.to_f64();
                    wrk2[[i, j, k]] = p[[i, j, k]] + self.omega * ss;
                }
            }
        }
        gosa
    }

    /// `ss` at one point, in the official order of operations.
    #[inline]
    fn point(&self, p: &Array3<T>, i: usize, j: usize, k: usize) -> T {
        let (a, b, c) = (&self.a, &self.b, &self.c);
        let at = [i, j, k];
        let s0 = a[0][at] * p[[i + 1, j, k]]
            + a[1][at] * p[[i, j + 1, k]]
            + a[2][at] * p[[i, j, k + 1]]
            + b[0][at]
                * (p[[i + 1, j + 1, k]] - p[[i + 1, j - 1, k]] - p[[i - 1, j + 1, k]] + p[[i - 1, j - 1, k]])
            + b[1][at]
                * (p[[i, j + 1, k + 1]] - p[[i, j - 1, k + 1]] - p[[i, j + 1, k - 1]] + p[[i, j - 1, k - 1]])
            + b[2][at]
                * (p[[i + 1, j, k + 1]] - p[[i - 1, j, k + 1]] - p[[i + 1, j, k - 1]] + p[[i - 1, j, k - 1]])
            + c[0][at] * p[[i - 1, j, k]]
            + c[1][at] * p[[i, j - 1, k]]
            + c[2][at] * p[[i, j, k - 1]]
            + self.wrk1[at];
        (s0 * a[3][at] - p[at]) * self.bnd[at]
    }

    /// Planes in parallel; each row computed over slices (vectorised), its `gosa` summed in
    /// order, rows and planes then in order.
    fn sweep_parallel(&self, p: &Array3<T>, wrk2: &mut Array3<T>) -> f64 {
        let [imax, _, _] = self.dims();
        let mut inner = wrk2.slice_mut(s![1..imax - 1, .., ..]);
        let partials: Vec<f64> = inner
            .axis_iter_mut(Axis(0))
            .enumerate()
            .par_bridge()
            .map(|(n, mut plane)| (n, self.plane(p, n + 1, &mut plane)))
            .collect::<Vec<_>>()
            .into_iter()
            .fold(vec![0.0; imax - 2], |mut acc, (n, g)| {
                acc[n] = g;
                acc
            });
        partials.iter().sum()
    }

    fn plane(&self, p: &Array3<T>, i: usize, out: &mut ndarray::ArrayViewMut2<'_, T>) -> f64 {
        let [_, jmax, kmax] = self.dims();
        let n = kmax - 2;
        let mut ss = vec![T::ZERO; n];
        let mut gosa = 0.0;
        for j in 1..jmax - 1 {
            let (a, b, c) = (&self.a, &self.b, &self.c);
            let pc = row(p, [i, j], 0, n);
            let terms = (
                (row(&a[0], [i, j], 0, n), row(p, [i + 1, j], 0, n)),
                (row(&a[1], [i, j], 0, n), row(p, [i, j + 1], 0, n)),
                (row(&a[2], [i, j], 0, n), row(p, [i, j], 1, n)),
            );
            let b0 = (
                row(&b[0], [i, j], 0, n),
                row(p, [i + 1, j + 1], 0, n),
                row(p, [i + 1, j - 1], 0, n),
                row(p, [i - 1, j + 1], 0, n),
                row(p, [i - 1, j - 1], 0, n),
            );
            let b1 = (
                row(&b[1], [i, j], 0, n),
                row(p, [i, j + 1], 1, n),
                row(p, [i, j - 1], 1, n),
                row(p, [i, j + 1], -1, n),
                row(p, [i, j - 1], -1, n),
            );
            let b2 = (
                row(&b[2], [i, j], 0, n),
                row(p, [i + 1, j], 1, n),
                row(p, [i - 1, j], 1, n),
                row(p, [i + 1, j], -1, n),
                row(p, [i - 1, j], -1, n),
            );
            let cs = (
                (row(&c[0], [i, j], 0, n), row(p, [i - 1, j], 0, n)),
                (row(&c[1], [i, j], 0, n), row(p, [i, j - 1], 0, n)),
                (row(&c[2], [i, j], 0, n), row(p, [i, j], -1, n)),
            );
            let (w1, a3, bnd) =
                (row(&self.wrk1, [i, j], 0, n), row(&a[3], [i, j], 0, n), row(&self.bnd, [i, j], 0, n));
            for q in 0..n {
                let s0 = terms.0.0[q] * terms.0.1[q]
                    + terms.1.0[q] * terms.1.1[q]
                    + terms.2.0[q] * terms.2.1[q]
                    + b0.0[q] * (b0.1[q] - b0.2[q] - b0.3[q] + b0.4[q])
                    + b1.0[q] * (b1.1[q] - b1.2[q] - b1.3[q] + b1.4[q])
                    + b2.0[q] * (b2.1[q] - b2.2[q] - b2.3[q] + b2.4[q])
                    + cs.0.0[q] * cs.0.1[q]
                    + cs.1.0[q] * cs.1.1[q]
                    + cs.2.0[q] * cs.2.1[q]
                    + w1[q];
                ss[q] = (s0 * a3[q] - pc[q]) * bnd[q];
            }
            let mut o = out.row_mut(j);
            let o = &mut o.as_slice_mut().expect("standard layout")[1..1 + n];
            for q in 0..n {
                o[q] = pc[q] + self.omega * ss[q];
            }
            gosa += ss.iter().map(|s| s.to_f64() * s.to_f64()).sum::<f64>();
        }
        gosa
    }
}

/// `n` elements of row `[i, j]` of `a` from axis-2 index `1 + dk`.
fn row<T>(a: &Array3<T>, [i, j]: [usize; 2], dk: isize, n: usize) -> &[T] {
    let s = a.shape();
    let start = ((i * s[1] + j) * s[2]) as isize + 1 + dk;
    &a.as_slice().expect("standard layout")[start as usize..start as usize + n]
}
