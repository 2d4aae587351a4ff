//! A stencil with every symbol bound, ready to run: one coefficient per input offset (a number,
//! or a field when it reads parameter arrays) and an optional bias.
//!
//! In the exact order every kernel evaluates a point as `((c_0 * x_0 + c_1 * x_1) + ...) + bias`,
//! without fused multiply-adds, so the CPU kernels agree bitwise with the sequential reference
//! on any input, and every configuration agrees bitwise on the dyadic inputs of the tests. The
//! fast order ([`crate::taps::Program`]) reassociates constant-coefficient stencils.

use ndarray::Array3;

use crate::config::Order;
use crate::element::Element;
use crate::symbolic::{Mono, Poly, Sym};

/// A coefficient: one number for the whole grid, or one per point.
#[derive(Debug, Clone)]
pub(crate) enum Coef<T> {
    Uniform(T),
    Field(Array3<T>),
}

impl<T: Element> Coef<T> {
    /// The coefficient at flat index `at` of the grid.
    #[inline]
    pub(crate) fn at(&self, at: usize) -> T {
        match self {
            Coef::Uniform(c) => *c,
            Coef::Field(f) => f.as_slice().expect("fields are built in standard layout")[at],
        }
    }
}

/// A bound stencil for a grid of one shape.
#[derive(Debug, Clone)]
pub(crate) struct Plan<T> {
    pub(crate) offsets: Vec<[isize; 3]>,
    pub(crate) coefs: Vec<Coef<T>>,
    pub(crate) bias: Option<Coef<T>>,
    pub(crate) halo: [usize; 3],
    pub(crate) shape: [usize; 3],
    /// `(flat offset, coefficient)` per term when every coefficient is uniform and there is no
    /// bias: the CPU's register-blocked fast path.
    pub(crate) uniform: Option<Vec<(isize, T)>>,
    /// The evaluation order of the CPU kernels (constant coefficients only).
    pub(crate) order: Order,
}

impl<T: Element> Plan<T> {
    /// The planes along axis 0 that get the formula (the others are copied).
    pub(crate) fn interior_planes(&self) -> std::ops::Range<usize> {
        self.halo[0]..self.shape[0] - self.halo[0]
    }

    /// Flat index offset of each term in a grid of the plan's shape.
    pub(crate) fn flat_offsets(&self, n1: usize, n2: usize) -> Vec<isize> {
        self.offsets.iter().map(|d| (d[0] * n1 as isize + d[1]) * n2 as isize + d[2]).collect()
    }
}

/// The value of `p` with scalars `scalars` and parameter values `param(id)` at one point.
pub(crate) fn eval_poly<T: Element>(p: &Poly, scalars: &[T], param: impl Fn(usize) -> T) -> T {
    let mut acc: Option<T> = None;
    for Mono { coef, syms } in &p.0 {
        let mut v = T::from_f64(*coef);
        for s in syms {
            v = v * match *s {
                Sym::Scalar(id) => scalars[id],
                Sym::Param(id) => param(id),
            };
        }
        acc = Some(acc.map_or(v, |a| a + v));
    }
    acc.unwrap_or(T::ZERO)
}

/// `p` as a coefficient: uniform when it reads no parameter array, else evaluated per point.
pub(crate) fn coef_of<T: Element>(
    p: &Poly,
    scalars: &[T],
    params: &[&Array3<T>],
    shape: [usize; 3],
) -> Coef<T> {
    if p.is_uniform() {
        return Coef::Uniform(eval_poly(p, scalars, |_| T::ZERO));
    }
    let slices: Vec<&[T]> =
        params.iter().map(|a| a.as_slice().expect("parameters are kept in standard layout")).collect();
    let len = shape.iter().product();
    let values: Vec<T> = (0..len).map(|at| eval_poly(p, scalars, |id| slices[id][at])).collect();
    Coef::Field(Array3::from_shape_vec(shape, values).expect("length is the product of the shape"))
}
