//! The operator interface the learners are written against, and its CPU implementations.
//!
//! Regression needs `B α` and `Bᵀ v` for the `m × N` matrix `B_ij = φ_j(x_i)` of one data set
//! and one grid; density estimation needs the mass-matrix product `R v` with
//! `R_ij = (φ_i, φ_j)_{L2}` (linear hats). A [`Backend`] builds both once per fit (so that a
//! device can keep data and grid resident across the CG iterations) as boxed
//! [`DataOperator`] and [`MassOperator`] objects.
//!
//! The CPU backends are [`CpuStreaming`] (the unified streaming algorithm: every basis function
//! against every point, vectorised over points) and [`CpuSubspace`] (the subspace algorithm:
//! one candidate function per subspace and point, found by index arithmetic). Both are
//! [`CpuAlgorithm`]s: unless given explicit parameters, they run with the ones tuned on this
//! machine for the problem's size (`hetkit tune kernel sg_learn_stream`, `sg_learn_subspace`).
//! On a regular grid of linear hats [`CpuStreaming`] takes `B α` from `sg-cpu`'s evaluation
//! trie ([`TrieOperator`]), which is 4–17x faster there (measured loaded); the subspace walk
//! (and the assembled `B`) stay faster than the trie, so the other backends do not use it
//! (docs: learn/measured, `learn_trie`).

use std::fmt::Debug;

use hetero_sched::tune::dispatch::Tunable;
use ndarray::ArrayView2;
use sg_core::{AdaptiveGrid, Basis};
use sg_cpu::learn::{
    AssembledOperator, MassMatrix, StreamTuning, StreamingOperator, SubspaceOperator, SubspaceTuning,
    TrieOperator, UpDown,
};

use crate::error::Result;

/// `B` and `Bᵀ` of one data set (`m` rows) on one grid (`N` functions).
pub trait DataOperator: Send + Sync {
    /// `N`, the number of grid points (columns of `B`).
    fn grid_len(&self) -> usize;
    /// `m`, the number of data points (rows of `B`).
    fn data_len(&self) -> usize;
    /// `out = B α` (`alpha.len() == N`, `out.len() == m`); the learner checks lengths.
    ///
    /// # Errors
    /// Whatever the backend reports (a device failure, say).
    fn mult(&self, alpha: &[f64], out: &mut [f64]) -> Result<()>;
    /// `out = Bᵀ v` (`v.len() == m`, `out.len() == N`).
    ///
    /// # Errors
    /// As [`mult`](Self::mult).
    fn mult_transpose(&self, v: &[f64], out: &mut [f64]) -> Result<()>;
}

/// The L2 mass matrix `R` of a grid of linear hats.
pub trait MassOperator: Send + Sync {
    /// `N`.
    fn grid_len(&self) -> usize;
    /// `out = R v` (both of length `N`).
    ///
    /// # Errors
    /// Whatever the backend reports.
    fn mult(&self, v: &[f64], out: &mut [f64]) -> Result<()>;
}

/// A maker of operators: the CPU algorithms here, a GPU elsewhere.
pub trait Backend: Send + Sync + Debug {
    /// A short name for logs and errors.
    fn name(&self) -> &'static str;
    /// The operators `B`, `Bᵀ` for `x` (rows in `[0, 1]^d`, already checked) on `grid`.
    ///
    /// # Errors
    /// When the backend cannot hold the problem (memory, a missing device).
    fn data_operator<'a>(
        &'a self,
        grid: &'a AdaptiveGrid,
        basis: Basis,
        x: ArrayView2<'a, f64>,
    ) -> Result<Box<dyn DataOperator + 'a>>;
    /// `out = B α` once, for a fitted model's values at `x`: by default one product of
    /// [`data_operator`](Self::data_operator)'s operator.
    ///
    /// # Errors
    /// As [`data_operator`](Self::data_operator).
    fn evaluate(
        &self,
        grid: &AdaptiveGrid,
        basis: Basis,
        alpha: &[f64],
        x: ArrayView2<'_, f64>,
        out: &mut [f64],
    ) -> Result<()> {
        self.data_operator(grid, basis, x)?.mult(alpha, out)
    }

    /// The mass matrix of `grid` (linear hats); by default `sg-cpu`'s up-down product
    /// ([`UpDown`], `O(2^d·N)`) on a consistent grid, else its pairwise one ([`MassMatrix`],
    /// `O(N²·d)`, which needs no ancestors).
    ///
    /// # Errors
    /// As [`data_operator`](Self::data_operator).
    fn mass_operator<'a>(&'a self, grid: &'a AdaptiveGrid) -> Result<Box<dyn MassOperator + 'a>> {
        if grid.is_consistent() {
            Ok(Box::new(UpDown::<f64>::new(grid)?))
        } else {
            Ok(Box::new(MassMatrix::new(grid)?))
        }
    }
}

/// A CPU algorithm for `B` and `Bᵀ` (`sg_cpu::learn`): its operator and its parameters. Every
/// implementation is a [`Backend`] that runs with the explicit parameters if it has any, else
/// with the ones tuned on this machine for the problem's `(N, m)` bucket (the defaults where
/// nothing is tuned), looked up through [`Tunable::tuned`] when the operator is built.
pub trait CpuAlgorithm: Send + Sync + Debug {
    /// The backend's name.
    const NAME: &'static str;
    /// The parameters, tuned per bucket of `(N, m)`.
    type Tuning: Tunable<Shape = (usize, usize)> + Copy;
    /// The operator.
    type Operator: DataOperator + 'static;

    /// The explicit parameters (`None`: tuned at dispatch).
    fn explicit(&self) -> Option<Self::Tuning>;

    /// The operator with parameters `tuning`.
    ///
    /// # Errors
    /// As `sg-cpu`'s constructors: bad input or unusable parameters.
    fn build(
        grid: &AdaptiveGrid,
        basis: Basis,
        x: ArrayView2<'_, f64>,
        t: Self::Tuning,
    ) -> Result<Self::Operator>;

    /// The parameters a problem of `grid_points` functions and `data_points` rows runs with.
    fn tuning_for(&self, grid_points: usize, data_points: usize) -> Self::Tuning {
        self.explicit().unwrap_or_else(|| Self::Tuning::tuned::<f64>((grid_points, data_points)))
    }

    /// The operator the learners get: [`build`](Self::build)'s unless the algorithm has a
    /// faster product for some grids.
    ///
    /// # Errors
    /// As [`build`](Self::build).
    fn boxed(
        grid: &AdaptiveGrid,
        basis: Basis,
        x: ArrayView2<'_, f64>,
        t: Self::Tuning,
    ) -> Result<Box<dyn DataOperator>> {
        Ok(Box::new(Self::build(grid, basis, x, t)?))
    }
}

impl<A: CpuAlgorithm> Backend for A {
    fn name(&self) -> &'static str {
        A::NAME
    }

    fn data_operator<'a>(
        &'a self,
        grid: &'a AdaptiveGrid,
        basis: Basis,
        x: ArrayView2<'a, f64>,
    ) -> Result<Box<dyn DataOperator + 'a>> {
        A::boxed(grid, basis, x, self.tuning_for(grid.len(), x.nrows()))
    }
}

/// The unified streaming algorithm on the CPU (rayon, vectorised over data points).
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuStreaming {
    /// Its tuning parameters; `None` (the default): tuned at dispatch (`hetkit tune kernel
    /// sg_learn_stream`), else [`StreamTuning::DEFAULT`].
    pub tuning: Option<StreamTuning>,
}

/// The subspace algorithm on the CPU (rayon over chunks of data points).
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuSubspace {
    /// Its tuning parameters; `None` (the default): tuned at dispatch (`hetkit tune kernel
    /// sg_learn_subspace`), else [`SubspaceTuning::DEFAULT`].
    pub tuning: Option<SubspaceTuning>,
}

impl CpuAlgorithm for CpuStreaming {
    const NAME: &'static str = "cpu-streaming";
    type Tuning = StreamTuning;
    type Operator = StreamingOperator;

    fn explicit(&self) -> Option<StreamTuning> {
        self.tuning
    }

    fn build(
        grid: &AdaptiveGrid,
        basis: Basis,
        x: ArrayView2<'_, f64>,
        t: StreamTuning,
    ) -> Result<StreamingOperator> {
        Ok(StreamingOperator::new(grid, basis, x, t)?)
    }

    /// `B α` by the evaluation trie where it applies (see the module documentation), `Bᵀ v`
    /// by streaming.
    fn boxed(
        grid: &AdaptiveGrid,
        basis: Basis,
        x: ArrayView2<'_, f64>,
        t: StreamTuning,
    ) -> Result<Box<dyn DataOperator>> {
        let streaming = Self::build(grid, basis, x, t)?;
        if !TrieOperator::supports(grid, basis) {
            return Ok(Box::new(streaming));
        }
        // The input is checked by now, so a trie that cannot be built (its plan does not fit
        // in memory) leaves the product to streaming, which works without one.
        match TrieOperator::new(grid, basis, x) {
            Ok(trie) => Ok(Box::new(TrieMult { trie, transpose: streaming })),
            Err(_) => Ok(Box::new(streaming)),
        }
    }
}

/// `B α` by the evaluation trie, `Bᵀ v` (not an evaluation) by another operator.
struct TrieMult<O> {
    trie: TrieOperator,
    transpose: O,
}

impl<O: DataOperator> DataOperator for TrieMult<O> {
    fn grid_len(&self) -> usize {
        self.trie.grid_len()
    }
    fn data_len(&self) -> usize {
        self.trie.data_len()
    }
    fn mult(&self, alpha: &[f64], out: &mut [f64]) -> Result<()> {
        Ok(self.trie.mult(alpha, out)?)
    }
    fn mult_transpose(&self, v: &[f64], out: &mut [f64]) -> Result<()> {
        self.transpose.mult_transpose(v, out)
    }
}

impl CpuAlgorithm for CpuSubspace {
    const NAME: &'static str = "cpu-subspace";
    type Tuning = SubspaceTuning;
    type Operator = SubspaceOperator;

    fn explicit(&self) -> Option<SubspaceTuning> {
        self.tuning
    }

    fn build(
        grid: &AdaptiveGrid,
        basis: Basis,
        x: ArrayView2<'_, f64>,
        t: SubspaceTuning,
    ) -> Result<SubspaceOperator> {
        Ok(SubspaceOperator::new(grid, basis, x, t)?)
    }
}

/// `B` assembled once per operator as a sparse matrix by one subspace walk
/// ([`AssembledOperator`]), so that each of a solve's products is a sparse matrix product;
/// where the matrix would exceed [`max_bytes`](Self::max_bytes), the matrix-free subspace
/// walk ([`CpuSubspace`]) instead. With [`single`](Self::single) the stored values and the
/// products are `f32` (half the memory traffic), and so is the up-down mass product; vectors
/// cross the interface, and CG runs, in `f64`.
#[derive(Debug, Clone, Copy)]
pub struct CpuAssembled {
    /// The most bytes the matrix may take (default 1 GiB).
    pub max_bytes: usize,
    /// `f32` values and arithmetic instead of `f64`.
    pub single: bool,
    /// The subspace walk's parameters (assembly and fallback); `None`: tuned at dispatch.
    pub tuning: Option<SubspaceTuning>,
}

impl Default for CpuAssembled {
    fn default() -> Self {
        CpuAssembled { max_bytes: 1 << 30, single: false, tuning: None }
    }
}

impl CpuAssembled {
    /// The `f32` variant with the default memory limit.
    pub fn f32() -> Self {
        CpuAssembled { single: true, ..Self::default() }
    }
}

impl Backend for CpuAssembled {
    fn name(&self) -> &'static str {
        if self.single { "cpu-assembled-f32" } else { "cpu-assembled" }
    }

    fn data_operator<'a>(
        &'a self,
        grid: &'a AdaptiveGrid,
        basis: Basis,
        x: ArrayView2<'a, f64>,
    ) -> Result<Box<dyn DataOperator + 'a>> {
        let subspace = CpuSubspace { tuning: self.tuning };
        let walker = CpuSubspace::build(grid, basis, x, subspace.tuning_for(grid.len(), x.nrows()))?;
        let fits = |bytes: u128| bytes <= self.max_bytes as u128;
        let (m, s) = (x.nrows(), walker.subspaces());
        let op: Box<dyn DataOperator + 'a> =
            if self.single && fits(AssembledOperator::<f32>::bytes_needed(m, s)) {
                Box::new(AssembledOperator::<f32>::from_walker(&walker, self.max_bytes)?)
            } else if !self.single && fits(AssembledOperator::<f64>::bytes_needed(m, s)) {
                Box::new(AssembledOperator::<f64>::from_walker(&walker, self.max_bytes)?)
            } else {
                Box::new(walker)
            };
        Ok(op)
    }

    /// By the subspace walk: assembling `B` takes as long as 4–15 of the walk's products
    /// (docs: learn/measured, `learn_trie`'s set-ups), which a single product never pays back.
    fn evaluate(
        &self,
        grid: &AdaptiveGrid,
        basis: Basis,
        alpha: &[f64],
        x: ArrayView2<'_, f64>,
        out: &mut [f64],
    ) -> Result<()> {
        CpuSubspace { tuning: self.tuning }.evaluate(grid, basis, alpha, x, out)
    }

    fn mass_operator<'a>(&'a self, grid: &'a AdaptiveGrid) -> Result<Box<dyn MassOperator + 'a>> {
        let op: Box<dyn MassOperator + 'a> = match (self.single, grid.is_consistent()) {
            (true, true) => Box::new(SingleUpDown(UpDown::<f32>::new(grid)?)),
            (false, true) => Box::new(UpDown::<f64>::new(grid)?),
            (_, false) => Box::new(MassMatrix::new(grid)?),
        };
        Ok(op)
    }
}

/// The `f32` up-down mass product behind the `f64` interface.
struct SingleUpDown(UpDown<f32>);

impl MassOperator for SingleUpDown {
    fn grid_len(&self) -> usize {
        self.0.grid_len()
    }
    fn mult(&self, v: &[f64], out: &mut [f64]) -> Result<()> {
        let v32: Vec<f32> = v.iter().map(|&x| x as f32).collect();
        let mut o32 = vec![0.0f32; out.len()];
        self.0.mass(&v32, &mut o32)?;
        out.iter_mut().zip(&o32).for_each(|(o, &r)| *o = r as f64);
        Ok(())
    }
}

/// `sg-cpu`'s operators have the [`DataOperator`] methods as inherent ones, with `sg-cpu`'s
/// error; this forwards them.
macro_rules! forward_data_operator {
    ($($op:ty),+) => {$(
        impl DataOperator for $op {
            fn grid_len(&self) -> usize {
                <$op>::grid_len(self)
            }
            fn data_len(&self) -> usize {
                <$op>::data_len(self)
            }
            fn mult(&self, alpha: &[f64], out: &mut [f64]) -> Result<()> {
                Ok(<$op>::mult(self, alpha, out)?)
            }
            fn mult_transpose(&self, v: &[f64], out: &mut [f64]) -> Result<()> {
                Ok(<$op>::mult_transpose(self, v, out)?)
            }
        }
    )+};
}

forward_data_operator!(StreamingOperator, SubspaceOperator, AssembledOperator<f64>, AssembledOperator<f32>);

impl MassOperator for MassMatrix {
    fn grid_len(&self) -> usize {
        MassMatrix::grid_len(self)
    }
    fn mult(&self, v: &[f64], out: &mut [f64]) -> Result<()> {
        Ok(MassMatrix::mult(self, v, out)?)
    }
}

impl MassOperator for UpDown<f64> {
    fn grid_len(&self) -> usize {
        UpDown::grid_len(self)
    }
    fn mult(&self, v: &[f64], out: &mut [f64]) -> Result<()> {
        Ok(self.mass(v, out)?)
    }
}
