//! 3D Jacobi stencils from a one-formula specification (thesis Eq. 4.1, seed 002 ch. 4) to a
//! sequential reference, a blocked and vectorised multi-core sweep, generated 2.5D-blocked CUDA
//! kernels tuned per device, and sub-domains exchanging halos as separate devices would.
//!
//! - [`Stencil`]: built from points ([`Stencil::from_points`], [`Stencil::seven_point`], ...)
//!   or parsed ([`Stencil::parse`]), lowered to one intermediate form (an affine combination of
//!   input offsets); its features ([`Stencil::halo`], [`Stencil::has_corners`], ...); one sweep
//!   ([`Stencil::apply`]) or many ([`Stencil::iterate`]).
//! - [`Config`]: sequential, all cores, GPU, slabs, or the fastest available.
//! - [`Himeno`]: the Himeno benchmark with its residual fused into the sweep.
//! - [`tuning`]: the GPU and CPU tuning spaces and searches (through hetero-sched), persisted.
//! - [`Transport`], [`ChannelTransport`], [`proportional_split`]: the multi-device pieces.
//!
//! ```
//! use ndarray::Array3;
//! use stencil::{Config, Stencil};
//!
//! // Dyadic weights and small integers: every configuration agrees bitwise.
//! let s = Stencil::<f64>::seven_point(0.25, 0.125);
//! let mut a = Array3::from_shape_fn((9, 10, 11), |(i, j, k)| ((i * 7 + j * 5 + k * 3) % 16) as f64);
//! let mut b = a.clone();
//! s.iterate(&mut a, 4, &Config::sequential())?;
//! s.iterate(&mut b, 4, &Config::slabs(3))?;
//! assert_eq!(a, b);
//! # Ok::<(), stencil::StencilError>(())
//! ```

mod columns;
mod config;
mod cpu;
mod element;
mod error;
mod gpu;
mod himeno;
mod parse;
mod plan;
mod simd;
mod slabs;
mod stencil;
mod symbolic;
mod taps;
mod temporal;
pub mod tuning;

pub use config::{Config, Order};
pub use cpu::CpuBlocks;
pub use element::Element;
pub use error::{Result, StencilError};
pub use gpu::{GpuParams, STATIC_SHARED_LIMIT, generated_source};
pub use himeno::{HIMENO_FLOPS_PER_POINT, Himeno, HimenoReport};
pub use slabs::{ChannelTransport, Transport, proportional_split};
pub use stencil::{MAX_OFFSET, Stencil};
