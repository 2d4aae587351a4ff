//! [`Stencil`]: a Jacobi stencil in its intermediate form, its features, symbol binding, and the
//! dispatch of sweeps to the configured target.

use std::sync::Arc;

use ndarray::{Array3, ArrayView3, s};

use crate::config::{Config, Target};
use crate::cpu::{CpuBlocks, Source, sweep_blocked, sweep_reference};
use crate::element::Element;
use crate::error::{Result, StencilError};
use crate::plan::{Plan, coef_of};
use crate::symbolic::{Affine, Poly, Symbol, lower};
use crate::taps::Taps;

/// The largest offset along any axis a stencil may read.
pub const MAX_OFFSET: i32 = 64;

/// A 3D Jacobi stencil `out[p] = sum_m c_m * in[p + d_m] + bias`, where the coefficients are
/// numbers, scalars bound by name, or parameter arrays read at `p` (thesis Eq. 4.1).
///
/// Grids are `ndarray` arrays with axis 2 contiguous; offsets `[di, dj, dk]` are along axes 0,
/// 1, 2. Points at least `halo()` away from every face get the formula; the others are copied.
///
/// ```
/// use ndarray::Array3;
/// use stencil::{Config, Stencil};
///
/// // The 7-point Laplacian of x^2 + y^2 + z^2 is 6 everywhere.
/// let lap = Stencil::<f64>::seven_point(-6.0, 1.0);
/// let u = Array3::from_shape_fn((5, 6, 7), |(i, j, k)| (i * i + j * j + k * k) as f64);
/// let out = lap.apply(u.view(), &Config::cpu())?;
/// assert_eq!(out[[2, 3, 3]], 6.0);
/// assert_eq!(out[[0, 3, 3]], u[[0, 3, 3]]); // the boundary layer is copied
/// # Ok::<(), stencil::StencilError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Stencil<T: Element> {
    form: Affine,
    scalars: Vec<Symbol>,
    params: Vec<Symbol>,
    scalar_values: Vec<Option<T>>,
    param_values: Vec<Option<Arc<Array3<T>>>>,
    flops: usize,
}

impl<T: Element> Stencil<T> {
    fn of_form(form: Affine, flops: usize) -> Stencil<T> {
        Stencil {
            form,
            scalars: Vec::new(),
            params: Vec::new(),
            scalar_values: Vec::new(),
            param_values: Vec::new(),
            flops,
        }
    }

    /// The linear stencil `out[i,j,k] = sum of w * in[i+di, j+dj, k+dk]`, terms summed in the
    /// order given. An error for an empty list, a repeated offset, or an offset beyond
    /// [`MAX_OFFSET`]. Its flop count is the factored form's: one add per extra point and one
    /// multiply per distinct weight.
    pub fn from_points(points: &[([i32; 3], T)]) -> Result<Stencil<T>> {
        if points.is_empty() {
            return Err(StencilError::Invalid("a stencil needs at least one point".into()));
        }
        let mut terms: Vec<([i32; 3], Poly)> = Vec::with_capacity(points.len());
        for (n, (d, w)) in points.iter().enumerate() {
            if d.iter().any(|x| x.abs() > MAX_OFFSET) {
                return Err(StencilError::Invalid(format!(
                    "point {n}: offset {d:?} is beyond the limit of {MAX_OFFSET}"
                )));
            }
            if let Some(m) = terms.iter().position(|(o, _)| o == d) {
                return Err(StencilError::Invalid(format!("point {n}: offset {d:?} repeats point {m}")));
            }
            terms.push((*d, Poly::constant(w.to_f64())));
        }
        let mut distinct: Vec<T> = Vec::new();
        for (_, w) in points {
            if !distinct.contains(w) {
                distinct.push(*w);
            }
        }
        let flops = points.len() - 1 + distinct.len();
        Ok(Stencil::of_form(Affine { terms, bias: Poly::default() }, flops))
    }

    /// Points grouped by weight, the flop count of the factored form (one multiply per group).
    fn grouped(groups: &[(T, Vec<[i32; 3]>)]) -> Stencil<T> {
        let terms: Vec<_> =
            groups.iter().flat_map(|(w, ds)| ds.iter().map(|d| (*d, Poly::constant(w.to_f64())))).collect();
        let flops = terms.len() - 1 + groups.len();
        Stencil::of_form(Affine { terms, bias: Poly::default() }, flops)
    }

    /// `alpha * centre + beta * (6 face neighbours)` (order 1, corner-free, 8 flops).
    pub fn seven_point(alpha: T, beta: T) -> Stencil<T> {
        Stencil::grouped(&[(alpha, vec![[0, 0, 0]]), (beta, axis_points(1))])
    }

    /// `c0 * centre + c1 * (6 face neighbours) + c2 * (6 axis neighbours at distance 2)`
    /// (order 2, corner-free, 15 flops). `(-90, 16, -1)` is 12 times the fourth-order Laplacian.
    pub fn thirteen_point(c0: T, c1: T, c2: T) -> Stencil<T> {
        Stencil::grouped(&[(c0, vec![[0, 0, 0]]), (c1, axis_points(1)), (c2, axis_points(2))])
    }

    /// `p0 * centre + p1 * (6 faces) + p2 * (12 edges) + p3 * (8 corners)` (order 1, with
    /// corners, 30 flops).
    pub fn twenty_seven_point(p0: T, p1: T, p2: T, p3: T) -> Stencil<T> {
        let mut by_kind: [Vec<[i32; 3]>; 4] = Default::default();
        for di in -1..=1 {
            for dj in -1..=1 {
                for dk in -1..=1 {
                    let d = [di, dj, dk];
                    by_kind[d.iter().filter(|x| **x != 0).count()].push(d);
                }
            }
        }
        let [c, f, e, k] = by_kind;
        Stencil::grouped(&[(p0, c), (p1, f), (p2, e), (p3, k)])
    }

    /// A stencil in the thesis's specification language: statements separated by `;`, each
    /// `name = expr` (or `name += expr`; an intermediate scalar) or, last and exactly once,
    /// `out[i][j][k] = expr`. Expressions have `+`, `-`, `*`, parentheses, numbers, scalar
    /// names and array references `a[i+1][j][k-2]`; `#` starts a comment. The one array read at
    /// a non-zero offset is the input; other arrays are parameters, read only at `[i][j][k]`.
    /// Errors name the problem and its position.
    ///
    /// ```
    /// use stencil::Stencil;
    /// let s = Stencil::<f32>::parse(
    ///     "tmp = (u[i+1][j][k] + u[i-1][j][k] + u[i][j+1][k] + u[i][j-1][k] + u[i][j][k+1] + u[i][j][k-1]) * beta;
    ///      u1[i][j][k] = tmp + alpha * u[i][j][k]",
    /// )?
    /// .scalar("alpha", -6.0)?
    /// .scalar("beta", 1.0)?;
    /// assert_eq!((s.num_points(), s.flops_per_point(), s.halo()), (7, 8, [1, 1, 1]));
    /// let e = Stencil::<f32>::parse("out[i][j][k] = u[i+1][j][k] + v[i][j-1][k]").unwrap_err();
    /// assert!(e.to_string().contains("position 30"));
    /// # Ok::<(), stencil::StencilError>(())
    /// ```
    pub fn parse(spec: &str) -> Result<Stencil<T>> {
        let l = lower(spec)?;
        if let Some((d, _)) = l.form.terms.iter().find(|(d, _)| d.iter().any(|x| x.abs() > MAX_OFFSET)) {
            return Err(StencilError::Invalid(format!("offset {d:?} is beyond the limit of {MAX_OFFSET}")));
        }
        Ok(Stencil {
            scalar_values: vec![None; l.scalars.len()],
            param_values: vec![None; l.params.len()],
            form: l.form,
            scalars: l.scalars,
            params: l.params,
            flops: l.flops,
        })
    }

    /// Binds scalar `name` of the specification to `value`; an error when there is no such
    /// scalar.
    pub fn scalar(mut self, name: &str, value: T) -> Result<Stencil<T>> {
        let Some(id) = self.scalars.iter().position(|s| s.name == name) else {
            return Err(StencilError::Invalid(format!(
                "`{name}` is not a scalar of this stencil{}",
                list(&self.scalars)
            )));
        };
        self.scalar_values[id] = Some(value);
        Ok(self)
    }

    /// Binds parameter array `name` to `values` (the grid's shape, checked when applied); an
    /// error when there is no such parameter.
    pub fn array(mut self, name: &str, values: Array3<T>) -> Result<Stencil<T>> {
        let Some(id) = self.params.iter().position(|s| s.name == name) else {
            return Err(StencilError::Invalid(format!(
                "`{name}` is not a parameter array of this stencil{}",
                list(&self.params)
            )));
        };
        let values =
            if values.is_standard_layout() { values } else { values.as_standard_layout().into_owned() };
        self.param_values[id] = Some(Arc::new(values));
        Ok(self)
    }

    /// The largest offset per axis.
    pub fn halo(&self) -> [usize; 3] {
        let mut h = [0usize; 3];
        for (d, _) in &self.form.terms {
            for a in 0..3 {
                h[a] = h[a].max(d[a].unsigned_abs() as usize);
            }
        }
        h
    }

    /// The number of input points per output point.
    pub fn num_points(&self) -> usize {
        self.form.terms.len()
    }

    /// True when some offset is non-zero on more than one axis (the GPU kernel then keeps
    /// `2 h + 1` planes in shared memory instead of one).
    pub fn has_corners(&self) -> bool {
        self.form.terms.iter().any(|(d, _)| d.iter().filter(|x| **x != 0).count() > 1)
    }

    /// Floating-point operations per point as the formula is written (thesis Table 4.1: 8, 15
    /// and 30 for the 7-, 13- and 27-point stencils).
    pub fn flops_per_point(&self) -> usize {
        self.flops
    }

    /// True when every coefficient is a number or bound scalar (no parameter array) and
    /// there is no bias term: such stencils run the specialised, temporally blocked CPU kernel.
    pub fn has_constant_coefficients(&self) -> bool {
        self.form.terms.iter().all(|(_, p)| p.is_uniform()) && self.form.bias.is_zero()
    }

    /// The input offsets, in evaluation order.
    pub fn offsets(&self) -> Vec<[i32; 3]> {
        self.form.terms.iter().map(|(d, _)| *d).collect()
    }

    /// One sweep: a new grid whose points at least `halo()` from every face get the formula,
    /// the others copied from `input`.
    pub fn apply(&self, input: ArrayView3<'_, T>, config: &Config) -> Result<Array3<T>> {
        if !matches!(config.target, Target::Sequential | Target::Cpu) {
            let mut field = input.as_standard_layout().into_owned();
            self.iterate(&mut field, 1, config)?;
            return Ok(field);
        }
        // One pass: read the input where it is, write only the output.
        let mut plan = self.plan(input.shape())?;
        let blocks;
        (blocks, plan.order) = crate::tuning::cpu_choice_for(self, &plan, config);
        let src = input.as_standard_layout();
        let mut out = with_boundary_of(src.view(), plan.halo);
        let planes = plan.interior_planes();
        let data = Source { data: src.as_slice().expect("standard layout"), first: 0 };
        let mut view = out.slice_mut(s![planes.clone(), .., ..]);
        if config.target == Target::Sequential {
            sweep_reference(&plan, data, planes, &mut view);
        } else {
            sweep_blocked(&plan, data, planes, &mut view, blocks, true);
        }
        Ok(out)
    }

    /// `sweeps` Jacobi sweeps in place (each reads the previous sweep's values), the boundary
    /// layer held fixed. A grid smaller than `2 * halo + 1` on an axis is an error.
    pub fn iterate(&self, field: &mut Array3<T>, sweeps: usize, config: &Config) -> Result<()> {
        let mut plan = self.plan(field.shape())?;
        if sweeps == 0 {
            return Ok(());
        }
        let blocks;
        (blocks, plan.order) = crate::tuning::cpu_choice_for(self, &plan, config);
        if !field.is_standard_layout() {
            *field = field.as_standard_layout().into_owned();
        }
        match config.target {
            Target::Sequential => {
                ping_pong(&plan, field, sweeps, |p, src, planes, out| sweep_reference(p, src, planes, out))
            }
            Target::Cpu => iterate_cpu(&plan, field, sweeps, blocks),
            Target::Slabs(parts) => {
                if parts == 0 {
                    return Err(StencilError::Config("slabs(0): at least one part is needed".into()));
                }
                let sizes = crate::slabs::proportional_split(plan.shape[0], &vec![1.0; parts], plan.halo[0].max(1))
                    .map_err(|_| {
                        StencilError::Config(format!(
                            "slabs({parts}): {} planes along axis 0 cannot give {parts} parts of at least {} planes",
                            plan.shape[0],
                            plan.halo[0].max(1)
                        ))
                    })?;
                crate::slabs::iterate_slabs(&plan, field, sweeps, &sizes, blocks)
            }
            Target::Gpu => crate::gpu::iterate(self, &plan, field, sweeps, config.gpu),
            Target::Auto => match crate::gpu::iterate(self, &plan, field, sweeps, config.gpu) {
                Err(e) if e.is_no_gpu() => iterate_cpu(&plan, field, sweeps, blocks),
                other => other,
            },
        }
    }

    /// The stencil bound for a grid of `shape`: checks the shape, that every symbol has a value
    /// and every parameter the grid's shape.
    pub(crate) fn plan(&self, shape: &[usize]) -> Result<Plan<T>> {
        let halo = self.halo();
        let shape: [usize; 3] = shape.try_into().map_err(|_| StencilError::Shape("grids are 3D".into()))?;
        for a in 0..3 {
            if shape[a] < 2 * halo[a] + 1 {
                return Err(StencilError::Shape(format!(
                    "the grid {shape:?} has {} points along axis {a}, fewer than 2 * halo + 1 = {}",
                    shape[a],
                    2 * halo[a] + 1
                )));
            }
        }
        let mut scalars = Vec::with_capacity(self.scalars.len());
        for (s, v) in self.scalars.iter().zip(&self.scalar_values) {
            scalars.push(v.ok_or_else(|| unbound("scalar", s))?);
        }
        let mut params = Vec::with_capacity(self.params.len());
        for (s, v) in self.params.iter().zip(&self.param_values) {
            let a = v.as_deref().ok_or_else(|| unbound("parameter array", s))?;
            if a.shape() != shape {
                return Err(StencilError::Shape(format!(
                    "parameter array `{}` has shape {:?}, the grid {shape:?}",
                    s.name,
                    a.shape()
                )));
            }
            params.push(a);
        }
        let coefs = self.form.terms.iter().map(|(_, p)| coef_of(p, &scalars, &params, shape)).collect();
        let bias = (!self.form.bias.is_zero()).then(|| coef_of(&self.form.bias, &scalars, &params, shape));
        let offsets = self.form.terms.iter().map(|(d, _)| d.map(|x| x as isize)).collect();
        let mut plan =
            Plan { offsets, coefs, bias, halo, shape, uniform: None, order: crate::config::Order::Exact };
        if plan.bias.is_none() {
            let flat = plan.flat_offsets(shape[1], shape[2]);
            plan.uniform = plan
                .coefs
                .iter()
                .zip(flat)
                .map(|(c, d)| match c {
                    crate::plan::Coef::Uniform(c) => Some((d, *c)),
                    crate::plan::Coef::Field(_) => None,
                })
                .collect();
        }
        Ok(plan)
    }
}

fn axis_points(r: i32) -> Vec<[i32; 3]> {
    vec![[r, 0, 0], [-r, 0, 0], [0, r, 0], [0, -r, 0], [0, 0, r], [0, 0, -r]]
}

fn unbound(kind: &'static str, s: &Symbol) -> StencilError {
    StencilError::Unbound { kind, name: s.name.clone(), position: s.pos }
}

fn list(symbols: &[Symbol]) -> String {
    if symbols.is_empty() {
        " (it has none)".into()
    } else {
        format!(
            " (it has {})",
            symbols.iter().map(|s| format!("`{}`", s.name)).collect::<Vec<_>>().join(", ")
        )
    }
}

/// `sweeps` sweeps on all cores: temporally blocked in place for constant coefficients, else
/// blocked sweeps between two buffers.
fn iterate_cpu<T: Element>(
    plan: &Plan<T>,
    field: &mut Array3<T>,
    sweeps: usize,
    blocks: CpuBlocks,
) -> Result<()> {
    match Taps::of(plan) {
        Some(taps) => {
            let grid = field.as_slice_mut().expect("standard layout");
            crate::temporal::iterate(&taps, grid, sweeps, blocks.depth, blocks.chunks(), blocks.j_block);
            Ok(())
        }
        None => ping_pong(plan, field, sweeps, |p, src, planes, out| {
            sweep_blocked(p, src, planes, out, blocks, true)
        }),
    }
}

/// `sweeps` sweeps of `sweep` between `field` and a second buffer that starts as its copy (so
/// both hold the fixed boundary layer); the result ends in `field`.
fn ping_pong<T: Element>(
    plan: &Plan<T>,
    field: &mut Array3<T>,
    sweeps: usize,
    sweep: impl Fn(&Plan<T>, Source<'_, T>, std::ops::Range<usize>, &mut ndarray::ArrayViewMut3<'_, T>),
) -> Result<()> {
    let mut other = with_boundary_of(field.view(), plan.halo);
    let planes = plan.interior_planes();
    for _ in 0..sweeps {
        {
            let src = Source { data: field.as_slice().expect("standard layout"), first: 0 };
            let mut out = other.slice_mut(s![planes.clone(), .., ..]);
            sweep(plan, src, planes.clone(), &mut out);
        }
        std::mem::swap(field, &mut other);
    }
    Ok(())
}

/// A grid holding `src`'s boundary layer of width `halo` and zeros inside (fresh zeroed pages
/// cost less than copying the interior that the sweep overwrites anyway).
fn with_boundary_of<T: Element>(src: ArrayView3<'_, T>, halo: [usize; 3]) -> Array3<T> {
    let (n0, n1, n2) = src.dim();
    let [h0, h1, h2] = halo;
    let mut out = Array3::zeros((n0, n1, n2));
    for i in 0..n0 {
        if i < h0 || i >= n0 - h0 {
            out.slice_mut(s![i, .., ..]).assign(&src.slice(s![i, .., ..]));
            continue;
        }
        for j in 0..n1 {
            if j < h1 || j >= n1 - h1 {
                out.slice_mut(s![i, j, ..]).assign(&src.slice(s![i, j, ..]));
            } else if h2 > 0 {
                out.slice_mut(s![i, j, ..h2]).assign(&src.slice(s![i, j, ..h2]));
                out.slice_mut(s![i, j, n2 - h2..]).assign(&src.slice(s![i, j, n2 - h2..]));
            }
        }
    }
    out
}
