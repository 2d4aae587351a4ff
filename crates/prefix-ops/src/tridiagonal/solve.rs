//! Choosing a CPU solver and running it over a batch.

use rayon::prelude::*;

use super::batch::{Layout, TridiagonalBatch};
use super::dominance::Dominance;
use super::equation::Equation;
use super::real::Real;
use super::rr::RrNetwork;
use super::thomas::{ThomasFactors, thomas_interleaved, thomas_strided_par, thomas_strided_seq};
use super::tuning::{FastSolver, TridiagonalTuning};
use super::{cyclic, pivoting, rr, tpr, wang_mou};
use crate::{Error, Result};
use hetero_sched::tune::dispatch::Tunable;

/// The tridiagonal algorithms, for the CPU ([`TridiagonalBatch::solve_with`]) and the GPU
/// ([`TridiagonalBatch::solve_gpu`], [`gpu::GpuBatch`](super::gpu::GpuBatch)).
///
/// **The default is safe.** [`Solver::Auto`] pivots (LAPACK `gtsv`) unless the batch is proven
/// safe for elimination without pivoting by its [diagonal dominance](TridiagonalBatch::dominance),
/// checked in one pass; then it runs the fast Thomas solvers. Every other variant is the named
/// algorithm as is: all but [`Solver::PivotingLu`] eliminate **without pivoting**, and are
/// meant for diagonally dominant (or otherwise safely factorable) systems. On other systems
/// they can return wrong values without an error (Thomas gives `x = [0, 1, 2]` for a system
/// whose answer is `[-1, 1, 2]` at a pivot of `1e-17`).
///
/// Failure behaviour on the CPU: `Thomas*` and `PivotingLu` return [`Error::ZeroPivot`] on an
/// exactly zero pivot (for `PivotingLu`, a singular matrix); the parallel algorithms (CR, PCR,
/// CR-PCR, RR, WM, TPR) never check and return NaN or infinity for the systems they cannot
/// solve. On the GPU no solver checks: a system that cannot be solved comes back as NaN or
/// infinity. A NaN or infinite coefficient or right-hand side can make any unknown of its
/// system NaN or infinite (not necessarily all of them, and infinities may stay infinities);
/// the other systems of the batch are unaffected, and [`TridiagonalBatch::residual`] of such a
/// solution is NaN. No solver loops on data, so none can hang.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Solver {
    /// The safe default. On the CPU: a strictly or weakly diagonally dominant batch
    /// ([`Dominance`](super::Dominance)) is solved with [`Solver::ThomasParallel`] (strided) or
    /// [`Solver::ThomasLanes`] (interleaved); any other batch with [`Solver::PivotingLu`]; a
    /// weakly dominant batch whose Thomas solve meets a zero pivot by rounding is solved again
    /// with `PivotingLu`. On the GPU, [`TridiagonalBatch::solve_gpu`] checks the host data the
    /// same way and then uses the dispatcher [`gpu::choose`](super::gpu::choose) or the pivoting
    /// kernel; a [`GpuBatch`](super::gpu::GpuBatch) cannot be checked on the host and pivots
    /// unless it was [declared dominant](super::gpu::GpuBatch::assume_diagonally_dominant).
    #[default]
    Auto,
    /// Thomas. On the CPU sequential, one system after another: the reference. On the GPU one
    /// thread per system (coalesced for the interleaved layout).
    Thomas,
    /// Thomas with systems spread over rayon's threads, two systems in step per thread (one
    /// reciprocal per row instead of two divisions). On the GPU the same as [`Solver::Thomas`].
    ThomasParallel,
    /// Thomas sweeping whole rows of column blocks of 64 to 1024 systems (vectorised across
    /// systems), blocks in parallel. Fastest for interleaved batches; strided batches go through
    /// a transposed copy. On the GPU the same as [`Solver::Thomas`].
    ThomasLanes,
    /// Gaussian elimination with partial pivoting (LAPACK `gtsv`): any non-singular system.
    PivotingLu,
    /// Cyclic reduction (reference for the GPU kernel).
    CyclicReduction,
    /// Parallel cyclic reduction (reference for the GPU kernel).
    ParallelCyclicReduction,
    /// CR until `pcr_size` equations remain, then PCR, then CR back substitution.
    CrPcr {
        /// System size at which CR hands over to PCR: any value, rounded up to a power of two
        /// and clamped to `1 ..= m` rounded up (so 0 and 1 are plain CR, `usize::MAX` plain PCR).
        pcr_size: usize,
    },
    /// Redundant Reduction, an RR scan over `network`. **Unstable by construction**, hence
    /// opt-in: every unknown comes from `x_0` through an equation spanning the whole prefix (the
    /// shooting method), so errors grow like `|λ|^m` with `λ` the larger root of
    /// `c λ² + b λ + a = 0`. On strictly diagonally dominant systems it loses all accuracy from
    /// `m ≈ 16-32`; a zero `a_k` or `c_k` inside a system gives NaN.
    RedundantReduction(RrNetwork),
    /// Wang & Mou block diagonalisation.
    WangMou,
    /// Tree-Partitioning Reduction with slices of `S` equations (larger is more accurate on
    /// Poisson-like systems, smaller exposes more parallelism).
    Tpr {
        /// Slice size `S`: at least 1 (0 is [`Error::Invalid`]); rounded up to a power of two
        /// (at least 2) and clamped to `m` rounded up to a power of two. The GPU accepts
        /// `2 ..= 2048`.
        slice: usize,
    },
}

impl<T: Real> TridiagonalBatch<'_, T> {
    /// Solves every system in place with [`Solver::Auto`], the safe default (partial pivoting
    /// unless the batch is proven diagonally dominant, then the fast Thomas solvers): `d` holds
    /// the right-hand sides on entry and the solutions on return, in the batch's layout.
    pub fn solve(&self, d: &mut [T]) -> Result<()> {
        self.solve_with(Solver::Auto, d)
    }

    /// Solves into `x`, leaving `d` untouched.
    pub fn solve_into(&self, d: &[T], x: &mut [T]) -> Result<()> {
        self.check_rhs("d (right-hand side)", d.len())?;
        self.check_rhs("x (solution)", x.len())?;
        x.copy_from_slice(d);
        self.solve(x)
    }

    /// Solves every system in place with `solver`. [`Solver::Auto`]'s choice among the Thomas
    /// solvers and the grain of [`Solver::ThomasParallel`] and [`Solver::ThomasLanes`] are the
    /// tuned parameters for this element type, layout and shape ([`TridiagonalTuning`]), or
    /// their defaults.
    pub fn solve_with(&self, solver: Solver, d: &mut [T]) -> Result<()> {
        self.check_rhs("d (right-hand side)", d.len())?;
        if self.is_empty() {
            return Ok(());
        }
        let tuning = TridiagonalTuning::tuned::<T>((self.layout, self.m, self.systems));
        self.solve_with_tuning(solver, &tuning, d)
    }

    /// [`solve`](Self::solve) ([`Solver::Auto`]) under explicit tuning parameters instead of the
    /// cached or default ones: what the tuner measures.
    pub fn solve_tuned(&self, tuning: &TridiagonalTuning, d: &mut [T]) -> Result<()> {
        self.check_rhs("d (right-hand side)", d.len())?;
        if self.is_empty() {
            return Ok(());
        }
        self.solve_with_tuning(Solver::Auto, tuning, d)
    }

    fn solve_with_tuning(&self, solver: Solver, tuning: &TridiagonalTuning, d: &mut [T]) -> Result<()> {
        let _span = tracing::debug_span!("tridiagonal_cpu", ?solver, m = self.m, g = self.systems).entered();
        let (a, b, c, m) = (self.a, self.b, self.c, self.m);
        match (solver, self.layout) {
            (Solver::Auto, _) => self.solve_auto(tuning, d),
            (Solver::ThomasParallel, Layout::Strided) => {
                thomas_strided_par(a, b, c, d, m, tuning.task_values)
            }
            (Solver::Thomas, Layout::Strided) => thomas_strided_seq(a, b, c, d, m),
            (Solver::ThomasLanes, Layout::Interleaved) => {
                thomas_interleaved(a, b, c, d, m, self.systems, tuning.lane_block_max)
            }
            (Solver::ThomasLanes, Layout::Strided) => self.via_transpose(d, tuning.lane_block_max),
            (Solver::Thomas | Solver::ThomasParallel, Layout::Interleaved) => {
                self.per_system(d, solver == Solver::ThomasParallel, |g, e| thomas_checked(g, e))
            }
            (Solver::PivotingLu, _) => pivoting::solve_pivoting(self, d),
            (Solver::CyclicReduction, _) => self.per_system(d, true, |_, e| Ok(cyclic::cr(e))),
            (Solver::ParallelCyclicReduction, _) => self.per_system(d, true, |_, e| Ok(cyclic::pcr(e))),
            (Solver::CrPcr { pcr_size }, _) => {
                self.per_system(d, true, |_, e| Ok(cyclic::cr_pcr(e, pcr_size)))
            }
            (Solver::RedundantReduction(net), _) => self.per_system(d, true, |_, e| Ok(rr::rr(e, net))),
            (Solver::WangMou, _) => self.per_system(d, true, |_, e| Ok(wang_mou::wang_mou(e))),
            (Solver::Tpr { slice }, _) => {
                if slice == 0 {
                    return Err(Error::Invalid("tridiagonal: TPR slice size must be at least 1".into()));
                }
                self.per_system(d, true, |_, e| Ok(tpr::tpr(e, slice)))
            }
        }
    }

    /// The LU factors of a single system (`G = 1`), for solving many right-hand sides.
    ///
    /// The factors are Thomas's, without pivoting, so the system must be diagonally dominant
    /// ([`Dominance::Weak`] or [`Dominance::Strict`], checked here): any other system is an
    /// [`Error::Invalid`] rather than factors that may give wrong answers; solve such a system
    /// with [`solve`](Self::solve), which pivots.
    pub fn factor(&self) -> Result<ThomasFactors<T>> {
        if self.systems != 1 {
            return Err(Error::Invalid(format!(
                "tridiagonal: factor() needs one system, the batch holds {}",
                self.systems
            )));
        }
        if self.dominance() == Dominance::None {
            return Err(Error::Invalid(
                "tridiagonal: factor() does not pivot and needs a diagonally dominant system; \
                 solve() pivots"
                    .into(),
            ));
        }
        ThomasFactors::new(self.a, self.b, self.c)
    }

    /// [`Solver::Auto`]: the tuned Thomas solver where dominance proves it safe, else pivoting.
    fn solve_auto(&self, tuning: &TridiagonalTuning, d: &mut [T]) -> Result<()> {
        let fast = |d: &mut [T]| {
            let solver = match tuning.solver {
                FastSolver::Sequential => Solver::Thomas,
                FastSolver::Parallel => Solver::ThomasParallel,
                FastSolver::Lanes => Solver::ThomasLanes,
            };
            self.solve_with_tuning(solver, tuning, d)
        };
        match self.dominance() {
            Dominance::Strict => fast(d),
            Dominance::Weak => {
                // Rounding can still produce a zero pivot here (see `dominance`): keep the
                // right-hand sides to solve again with pivoting.
                let saved = crate::alloc::try_copy(d, "tridiagonal: right-hand sides kept for the fallback")?;
                match fast(d) {
                    Err(Error::ZeroPivot { .. }) => {
                        d.copy_from_slice(&saved);
                        pivoting::solve_pivoting(self, d)
                    }
                    other => other,
                }
            }
            Dominance::None => pivoting::solve_pivoting(self, d),
        }
    }

    /// Gathers each system as equations, solves it with `f`, and scatters the solution back.
    fn per_system<F>(&self, d: &mut [T], parallel: bool, f: F) -> Result<()>
    where
        F: Fn(usize, &[Equation<T>]) -> Result<Vec<T>> + Sync,
    {
        let solve = |g: usize| f(g, &self.equations(g, d));
        let xs: Vec<Vec<T>> = if parallel {
            (0..self.systems).into_par_iter().map(solve).collect::<Result<_>>()?
        } else {
            (0..self.systems).map(solve).collect::<Result<_>>()?
        };
        for (g, x) in xs.iter().enumerate() {
            for (k, &v) in x.iter().enumerate() {
                d[self.at(g, k)] = v;
            }
        }
        Ok(())
    }

    /// Strided batch through the lane solver: transpose to interleaved, solve, transpose back.
    fn via_transpose(&self, d: &mut [T], block_max: usize) -> Result<()> {
        let (m, g) = (self.m, self.systems);
        let tr = |v: &[T]| -> Result<Vec<T>> {
            let mut out = crate::alloc::try_with_capacity(v.len(), "tridiagonal: transposed copy")?;
            out.resize(v.len(), T::zero());
            for s in 0..g {
                for k in 0..m {
                    out[k * g + s] = v[s * m + k];
                }
            }
            Ok(out)
        };
        let (a, b, c, mut x) = (tr(self.a)?, tr(self.b)?, tr(self.c)?, tr(d)?);
        thomas_interleaved(&a, &b, &c, &mut x, m, g, block_max)?;
        for s in 0..g {
            for k in 0..m {
                d[s * m + k] = x[k * g + s];
            }
        }
        Ok(())
    }
}

fn thomas_checked<T: Real>(g: usize, e: &[Equation<T>]) -> Result<Vec<T>> {
    let a: Vec<T> = e.iter().map(|q| q.a).collect();
    let b: Vec<T> = e.iter().map(|q| q.b).collect();
    let c: Vec<T> = e.iter().map(|q| q.c).collect();
    let mut x: Vec<T> = e.iter().map(|q| q.d).collect();
    let mut scratch = vec![T::zero(); e.len()];
    super::thomas::thomas_contiguous(&a, &b, &c, &mut x, &mut scratch, g)?;
    Ok(x)
}
