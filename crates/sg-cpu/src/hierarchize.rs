//! Hierarchization and dehierarchization along chains (thesis Listing 4.2, hopt1–hopt4).
//!
//! One sweep per dimension; inside a sweep the chains are independent, so rayon runs them in
//! parallel with one join per dimension. Parent offsets come from the chain (computed once per
//! grid), and parent positions from the child's by integer arithmetic, so the inner loop does no
//! bijection work at all: it is a vector update over the `2^s` contiguous values of `lo`.

use rayon::prelude::*;
use sg_core::basis::{Side, parent_1d};
use sg_core::{GridSpec, Real, SgError};

use crate::chains::{self, Chain};
use crate::error::{Error, Result};
use crate::shared_ptr::SharedMut;
pub use crate::tuning::{HIER_KERNEL as TUNING_KERNEL, HierTuning};
use hetero_sched::tune::dispatch::Tunable;

/// A hierarchization plan for one grid description: its chains in every dimension.
///
/// ```
/// use sg_core::{Grid, GridSpec};
/// let spec = GridSpec::regular(3, 5)?;
/// let plan = sg_cpu::Hierarchizer::new(&spec)?;
/// let mut g = Grid::<f64>::from_fn(spec, |x| x.iter().sum())?;
/// let mut reference = g.clone();
/// plan.hierarchize(g.values_mut(), 1)?;
/// reference.hierarchize();
/// assert!(g.values().iter().zip(reference.values()).all(|(a, b)| (a - b).abs() < 1e-12));
/// # Ok::<(), sg_cpu::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Hierarchizer {
    len: u64,
    chains: Vec<Vec<Chain>>,
}

#[derive(Clone, Copy, PartialEq)]
enum Direction {
    Hierarchize,
    Dehierarchize,
}

impl Hierarchizer {
    /// Builds the chains of `spec` (O(number of blocks x d)).
    ///
    /// # Errors
    /// [`Error::BlockTooLarge`]; [`SgError::Allocation`] when the plan does not fit in memory
    /// (sized from [`GridSpec::num_blocks`] before anything is built).
    pub fn new(spec: &GridSpec) -> Result<Self> {
        Ok(Hierarchizer { len: spec.len(), chains: chains::build(spec)? })
    }

    /// Nodal values to hierarchical surpluses, in place; `s` values per point (point-major).
    ///
    /// # Errors
    /// [`SgError::Zero`] for `s = 0`, [`Error::Shape`] when `values.len() != len · s`.
    pub fn hierarchize<T: Real>(&self, values: &mut [T], s: usize) -> Result<()> {
        let _span = tracing::debug_span!("sg_cpu::hierarchize", len = self.len, s).entered();
        self.sweep(values, s, Direction::Hierarchize, &HierTuning::tuned::<T>(values.len()))
    }

    /// [`hierarchize`](Self::hierarchize) under explicit parameters instead of the cached or
    /// default ones (what the tuner measures).
    ///
    /// # Errors
    /// As [`hierarchize`](Self::hierarchize).
    pub fn hierarchize_tuned<T: Real>(&self, values: &mut [T], s: usize, tuning: &HierTuning) -> Result<()> {
        self.sweep(values, s, Direction::Hierarchize, tuning)
    }

    /// Hierarchical surpluses to nodal values, in place; `s` values per point.
    ///
    /// # Errors
    /// As [`hierarchize`](Self::hierarchize).
    pub fn dehierarchize<T: Real>(&self, values: &mut [T], s: usize) -> Result<()> {
        let _span = tracing::debug_span!("sg_cpu::dehierarchize", len = self.len, s).entered();
        self.sweep(values, s, Direction::Dehierarchize, &HierTuning::tuned::<T>(values.len()))
    }

    fn sweep<T: Real>(&self, values: &mut [T], s: usize, dir: Direction, tuning: &HierTuning) -> Result<()> {
        if s == 0 {
            return Err(SgError::Zero { what: "values per point (s)" }.into());
        }
        let expected = usize::try_from(self.len).ok().and_then(|n| n.checked_mul(s));
        if expected != Some(values.len()) {
            return Err(Error::Shape(format!(
                "{} values for a grid of {} points with {s} values each",
                values.len(),
                self.len
            )));
        }
        let ptr = SharedMut::new(values);
        for chains in &self.chains {
            // SAFETY (for the tasks): each chain writes only its own blocks, and reads only its
            // own blocks; chains of one dimension share no block, so tasks never overlap.
            // Most chains are short: hand rayon tasks of a few thousand values, not single chains.
            let per_chain = (self.len as usize * s / chains.len().max(1)).max(1);
            let min_len = (tuning.task_values / per_chain).max(1);
            chains
                .par_iter()
                .with_min_len(min_len)
                .for_each(|chain| process_chain(chain, ptr, s, dir, tuning.pole_par_values));
        }
        Ok(())
    }
}

/// Updates every pole of `chain`: children after (hierarchize) or before (dehierarchize) their
/// parents, so each update reads parent values of the right kind.
fn process_chain<T: Real>(chain: &Chain, values: SharedMut<T>, s: usize, dir: Direction, par_values: usize) {
    let levels: Vec<u32> = match dir {
        Direction::Hierarchize => (1..=chain.top()).rev().collect(),
        Direction::Dehierarchize => (1..=chain.top()).collect(),
    };
    let run = (1usize << chain.s) * s;
    let half = T::from_f64(0.5);
    let his = 1u64 << chain.h;
    let update = |hi: u64, level: u32| {
        for p in 0..1u32 << (level - 1) {
            let index = 2 * p + 1;
            let child = chain.point_base(hi, level, index).expect("interior point") as usize * s;
            let left = parent_base(chain, hi, level, index, Side::Left, s);
            let right = parent_base(chain, hi, level, index, Side::Right, s);
            // SAFETY: the child and its parents are distinct points of this chain, each a run of
            // `run` values inside the grid; no other task touches this chain.
            unsafe {
                let c = values.slice_mut(child, run);
                let l = left.map(|o| values.slice(o, run));
                let r = right.map(|o| values.slice(o, run));
                apply(c, l, r, half, dir);
            }
        }
    };
    for level in levels {
        // Poles with different `hi` are independent: split them when there are many.
        if his >= 64 && run * (1 << (level - 1)) * (his as usize) >= par_values {
            (0..his as usize).into_par_iter().with_min_len(16).for_each(|hi| update(hi as u64, level));
        } else {
            (0..his).for_each(|hi| update(hi, level));
        }
    }
}

#[inline]
fn parent_base(chain: &Chain, hi: u64, level: u32, index: u32, side: Side, s: usize) -> Option<usize> {
    let (pl, pi) = parent_1d(level, index, side);
    chain.point_base(hi, pl, pi).map(|o| o as usize * s)
}

/// `c -= (l + r) / 2` or `c += (l + r) / 2`, a missing parent counting as zero.
#[inline]
fn apply<T: Real>(c: &mut [T], l: Option<&[T]>, r: Option<&[T]>, half: T, dir: Direction) {
    let sign = if dir == Direction::Hierarchize { -half } else { half };
    match (l, r) {
        (Some(l), Some(r)) => {
            for ((c, &l), &r) in c.iter_mut().zip(l).zip(r) {
                *c += sign * (l + r);
            }
        }
        (Some(p), None) | (None, Some(p)) => {
            for (c, &p) in c.iter_mut().zip(p) {
                *c += sign * p;
            }
        }
        (None, None) => {}
    }
}
