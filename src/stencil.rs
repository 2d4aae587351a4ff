//! 3D Jacobi stencils: a one-formula specification to a sequential reference, a blocked and
//! vectorised multi-core sweep, generated and tuned 2.5D GPU kernels, and sub-domains that
//! exchange halos as separate devices would (the `stencil` crate).
//!
//! Grids are [`ndarray`] 3D arrays in standard layout (axis 2 contiguous); an offset
//! `[di, dj, dk]` is along axes 0, 1, 2. Every [`Config`] gives the sequential result: bitwise in
//! the [`Order::Exact`] evaluation order (on the GPU too: the generated kernels round each product
//! and sum as the CPU does), and within the documented bound of [`Order::Fast`], the
//! reassociated default of the multi-core CPU sweeps.
//!
//! ```
//! use hetkit::ndarray::Array3;
//! use hetkit::stencil::{Config, Himeno, Stencil};
//!
//! // The thesis's specification language (Eq. 4.1), here the 7-point stencil of Table 4.1.
//! let heat = Stencil::<f64>::parse(
//!     "lap = u[i+1][j][k] + u[i-1][j][k] + u[i][j+1][k] + u[i][j-1][k] + u[i][j][k+1] + u[i][j][k-1] - 6 * u[i][j][k];
//!      v[i][j][k] = u[i][j][k] + nu * lap",
//! )?
//! .scalar("nu", 0.125)?;
//! assert_eq!((heat.halo(), heat.num_points(), heat.has_corners()), ([1, 1, 1], 7, false));
//! let mut u = Array3::<f64>::zeros((16, 16, 16));
//! u[[8, 8, 8]] = 1.0;
//! heat.iterate(&mut u, 5, &Config::auto())?; // the pulse spreads one cell a sweep: 5 stay inside
//! assert!((u.sum() - 1.0).abs() < 1e-12); // heat is conserved while it stays inside
//!
//! let report = Himeno::<f32>::new(33, 33, 65)?.run(2, &Config::cpu())?;
//! assert!((report.gosa - 6.438837856e-03).abs() < 1e-6);
//! # Ok::<(), hetkit::Error>(())
//! ```

pub use ::stencil::{
    ChannelTransport, Config, CpuBlocks, Element, GpuParams, HIMENO_FLOPS_PER_POINT, Himeno, HimenoReport,
    MAX_OFFSET, Order, STATIC_SHARED_LIMIT, Stencil, StencilError, Transport, generated_source,
    proportional_split, tuning,
};
