//! [`Real`]: the one scalar trait of the facade.

/// `f32` or `f64`: every floating-point operation of hetkit accepts a `T: Real`.
///
/// The inner crates each name the bounds they need (`sg_core::Real` for grids,
/// `prefix_ops::tridiagonal::Real` for solvers, `SortKey` for sorts, `DeviceReal` for the GPU);
/// this trait is all of them at once, so generic code written against the facade carries one
/// bound. (Scans are generic over any `Copy` element and an operator `M: Monoid<T>`; the
/// built-in `Add`, `Mul`, `Min`, `Max` implement it for every primitive number type.)
///
/// ```
/// use hetkit::Real;
/// use hetkit::sg::{Grid, GridSpec};
///
/// fn integral_of_bump<T: Real>(n: u32) -> hetkit::Result<T> {
///     let spec = GridSpec::regular(2, n)?;
///     let one = T::from_f64(1.0);
///     let four = T::from_f64(4.0);
///     let mut grid = Grid::from_fn(spec, |x: &[T]| x.iter().fold(one, |p, &v| p * four * v * (one - v)))?;
///     grid.hierarchize()?;
///     Ok(grid.integral())
/// }
/// let exact = (2.0f64 / 3.0).powi(2);
/// assert!((integral_of_bump::<f64>(8)? - exact).abs() < 1e-3);
/// assert!((integral_of_bump::<f32>(8)? as f64 - exact).abs() < 1e-3);
/// # Ok::<(), hetkit::Error>(())
/// ```
pub trait Real:
    sg_core::Real
    + prefix_ops::tridiagonal::Real
    + sg_cuda::DeviceReal
    + prefix_ops::sort::SortKey
    + sealed::Sealed
{
}

impl Real for f32 {}
impl Real for f64 {}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}
