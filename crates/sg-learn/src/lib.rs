//! Data mining on sparse grids (Pfander 2019, Ch. 7–8): least-squares regression
//! ([`Regressor`]), density estimation ([`DensityEstimator`]) and density-based clustering
//! ([`Clustering`]), on regular grids ([`GridSpec`]) and spatially adaptive ones
//! ([`AdaptiveGrid`]), with the linear and the modified linear [`Basis`].
//!
//! Data are the rows of an `m × d` array in `[0, 1]^d`; points outside, NaN and infinities,
//! empty data and mismatched lengths are errors ([`LearnError`]). The learners are written
//! against the operator interface of [`operator`] ([`Backend`], [`DataOperator`],
//! [`MassOperator`]); the CPU implementations are `sg-cpu`'s unified streaming
//! ([`CpuStreaming`]) and subspace ([`CpuSubspace`]) algorithms, and `B` assembled once as a
//! sparse matrix ([`CpuAssembled`], the default; the subspace walk where it would not fit).
//!
//! ```
//! use sg_learn::{Basis, GridSpec, Regressor};
//! let (x, y) = sg_learn::datasets::friedman1(2000, 1.0, 1);
//! let (xt, yt) = sg_learn::datasets::friedman1(500, 0.0, 2);
//! let model = Regressor::new(GridSpec::regular(10, 2)?).basis(Basis::ModifiedLinear).lambda(1e-4).fit(x.view(), y.view())?;
//! assert!(model.mse(xt.view(), yt.view())? < 3.0); // the target's variance is about 24
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod ari;
pub mod cg;
pub mod clustering;
pub mod datasets;
pub mod density;
pub mod error;
pub mod gpu;
pub mod graph;
mod input;
pub mod operator;
pub mod regression;
mod solver;

pub use ari::adjusted_rand_index;
pub use clustering::{Clustering, Knn, SearchResult};
pub use density::{DensityEstimator, DensityModel, Regularization};
pub use error::{LearnError, Result};
pub use gpu::GpuStreaming;
pub use operator::{
    Backend, CpuAlgorithm, CpuAssembled, CpuStreaming, CpuSubspace, DataOperator, MassOperator,
};
pub use regression::{RegressionModel, Regressor};
pub use sg_core::{AdaptiveGrid, Basis, GridSpec};
