//! Data mining on sparse grids: least-squares regression, density estimation and
//! density-based clustering (the `sg-learn` crate). See the book, part "Learning with sparse
//! grids".
//!
//! Data are the rows of an `m × d` array in `[0, 1]^d`; points outside, NaN and infinities,
//! empty data and mismatched lengths are errors. Every call's error converts into
//! [`hetkit::Error`](crate::Error) with `?`.
//!
//! ```
//! use hetkit::sg_learn::{Basis, GridSpec, Regressor};
//! let (x, y) = hetkit::sg_learn::datasets::friedman1(1000, 1.0, 3);
//! let model = Regressor::new(GridSpec::regular(10, 2)?).basis(Basis::ModifiedLinear).lambda(1e-4).fit(x.view(), y.view())?;
//! assert!(model.mse(x.view(), y.view())? < 4.0);
//! # Ok::<(), hetkit::Error>(())
//! ```

pub use ::sg_learn::{
    AdaptiveGrid, Backend, Basis, Clustering, CpuAlgorithm, CpuAssembled, CpuStreaming, CpuSubspace,
    DataOperator, DensityEstimator, DensityModel, GpuStreaming, GridSpec, Knn, LearnError, MassOperator,
    RegressionModel, Regressor, Regularization, adjusted_rand_index, cg, datasets, graph,
};
/// The CPU operators and their tuning parameters (`sg_cpu::learn`).
pub use sg_cpu::learn as operators;
