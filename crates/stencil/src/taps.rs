//! The specialised kernel of constant-coefficient stencils: one output plane's rows from the
//! `2 h + 1` input planes around it, in one of two evaluation orders ([`Order`]).
//!
//! - **Exact**: every point as `((w_0 x_0 + w_1 x_1) + ...)`, the plan's order, bitwise the
//!   sequential reference.
//! - **Fast**: the terms reassociated by a [`Program`]: rows of the neighbourhood that carry the
//!   same weights along axis 2 are first summed into a scratch row (the 27-point stencil's four
//!   edge rows and four corner rows), then the terms that share a weight are summed and
//!   multiplied once. The isotropic 27-point stencil drops from 27 multiplies, 26 adds and 27
//!   loads per point to 4 multiplies, 14 adds and 17 loads. Rounding differs from the exact
//!   order (see `Order`), but the program fixes one order per point, so the result does not
//!   depend on blocks, threads, slabs or instruction set. The isotropic 27-point stencil
//!   (one weight per number of non-zero offsets) has its own fast order instead, computed a
//!   column at a time with partial sums shared across planes and rows ([`crate::columns`]: 9
//!   loads and 18 flops per point).
//!
//! A row is computed `U` vectors at a time (independent accumulators, so the add chains of
//! neighbouring vectors overlap), in AVX-512, AVX2 or scalar lanes picked at run time; no
//! multiply is fused with an add, so all of them round alike. The last, partial group of a
//! row is recomputed as the row's final group (overlapping the previous one) instead of
//! falling back to scalar code; the output is never an input, so recomputing is harmless.

use crate::columns::Cube;
use crate::config::Order;
use crate::element::Element;
use crate::plan::Plan;
use crate::simd::{Lanes, Scalar};

/// Where the terms read: per term, the input plane (`di + h0`), the flat offset inside a
/// plane (`dj * n2 + dk`) and the weight, in evaluation order; and the reassociated program
/// when the fast order was asked for.
#[derive(Debug, Clone)]
pub(crate) struct Taps<T> {
    pub(crate) plane: Vec<usize>,
    pub(crate) offset: Vec<isize>,
    pub(crate) weight: Vec<T>,
    /// Grid shape and halo of the plan.
    pub(crate) shape: [usize; 3],
    pub(crate) halo: [usize; 3],
    pub(crate) fast: Option<Fast<T>>,
}

/// The fast order of a stencil: the column kernel of the isotropic 27-point stencil
/// ([`crate::columns`]), or the general reassociated program.
#[derive(Debug, Clone)]
pub(crate) enum Fast<T> {
    Cube(Cube<T>),
    Program(Program<T>),
}

impl<T: Element> Fast<T> {
    /// The fast order at in-plane index `at` of the output plane whose input planes are
    /// `inputs` (rows of `n2` points), one point at a time: the reference the vector kernels
    /// equal bitwise.
    pub(crate) fn point(&self, inputs: &[&[T]], n2: usize, at: usize) -> T {
        match self {
            Fast::Cube(cube) => cube.point(inputs, n2, at),
            Fast::Program(p) => p.point(inputs, at),
        }
    }
}

/// What a summand of the fast order reads at a point: an input row, or a scratch row of
/// summed input rows, at an offset along axis 2.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Read {
    /// Input plane `plane` at in-plane offset `offset` (`dj * n2 + dk`).
    Input { plane: usize, offset: isize },
    /// Scratch row `row` at offset `dk`.
    Scratch { row: usize, dk: isize },
}

/// The terms of one row `(di, dj)` of the neighbourhood: `(dk, weight)`, sorted by `dk`.
type Profile<T> = Vec<(isize, T)>;

/// The fast order of a constant-coefficient stencil. At each point: every scratch row is the
/// left-to-right sum of its input rows; each class is the left-to-right sum of its summands
/// times its weight; the result is the left-to-right sum of the classes.
#[derive(Debug, Clone)]
pub(crate) struct Program<T> {
    /// Per scratch row, the input rows it sums: (input plane, in-plane offset `dj * n2`).
    scratch: Vec<Vec<(usize, isize)>>,
    /// The summands, class after class.
    reads: Vec<Read>,
    /// Per class, the end of its summands in `reads` and its weight.
    classes: Vec<(usize, T)>,
}

impl<T: Element> Program<T> {
    /// Groups the terms: rows `(di, dj)` with the same weights at the same `dk` become one
    /// scratch row when that saves work (two or more rows, two or more terms each); then the
    /// summands are grouped by weight, in order of first appearance.
    fn of(offsets: &[[isize; 3]], weights: &[T], h0: usize, n2: usize) -> Program<T> {
        // Rows in order of first appearance, each with its (dk, weight) profile.
        let mut rows: Vec<([isize; 2], Profile<T>)> = Vec::new();
        for (d, &w) in offsets.iter().zip(weights) {
            match rows.iter_mut().find(|(r, _)| *r == [d[0], d[1]]) {
                Some((_, p)) => p.push((d[2], w)),
                None => rows.push(([d[0], d[1]], vec![(d[2], w)])),
            }
        }
        for (_, p) in &mut rows {
            p.sort_by_key(|(dk, _)| *dk);
        }
        let same = |a: &[(isize, T)], b: &[(isize, T)]| {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|(x, y)| x.0 == y.0 && x.1.to_f64().to_bits() == y.1.to_f64().to_bits())
        };
        let at = |r: [isize; 2]| ((r[0] + h0 as isize) as usize, r[1] * n2 as isize);
        let mut scratch = Vec::new();
        let mut summands: Vec<(Read, T)> = Vec::new();
        let mut done = vec![false; rows.len()];
        for a in 0..rows.len() {
            if done[a] {
                continue;
            }
            let group: Vec<usize> =
                (a..rows.len()).filter(|&b| !done[b] && same(&rows[a].1, &rows[b].1)).collect();
            group.iter().for_each(|&b| done[b] = true);
            let profile = &rows[a].1;
            if group.len() >= 2 && profile.len() >= 2 {
                let row = scratch.len();
                scratch.push(group.iter().map(|&b| at(rows[b].0)).collect());
                summands.extend(profile.iter().map(|&(dk, w)| (Read::Scratch { row, dk }, w)));
            } else {
                for &b in &group {
                    let (plane, off) = at(rows[b].0);
                    summands.extend(
                        rows[b].1.iter().map(|&(dk, w)| (Read::Input { plane, offset: off + dk }, w)),
                    );
                }
            }
        }
        let mut weights_seen: Vec<T> = Vec::new();
        for (_, w) in &summands {
            if !weights_seen.iter().any(|v| v.to_f64().to_bits() == w.to_f64().to_bits()) {
                weights_seen.push(*w);
            }
        }
        let mut reads = Vec::with_capacity(summands.len());
        let mut classes = Vec::with_capacity(weights_seen.len());
        for w in weights_seen {
            reads.extend(
                summands
                    .iter()
                    .filter(|(_, v)| v.to_f64().to_bits() == w.to_f64().to_bits())
                    .map(|(r, _)| *r),
            );
            classes.push((reads.len(), w));
        }
        Program { scratch, reads, classes }
    }

    /// The fast order at in-plane index `at` of the output plane whose input planes are
    /// `inputs`, one point at a time: the reference the vector kernel must equal bitwise.
    pub(crate) fn point(&self, inputs: &[&[T]], at: usize) -> T {
        let read = |r: &Read| match *r {
            Read::Input { plane, offset } => inputs[plane][(at as isize + offset) as usize],
            Read::Scratch { row, dk } => {
                let rows = &self.scratch[row];
                let v = |(plane, off): (usize, isize)| inputs[plane][(at as isize + off + dk) as usize];
                rows[1..].iter().fold(v(rows[0]), |s, &r| s + v(r))
            }
        };
        let mut start = 0;
        let mut acc = T::ZERO;
        for (c, &(end, w)) in self.classes.iter().enumerate() {
            let s = self.reads[start + 1..end].iter().fold(read(&self.reads[start]), |s, r| s + read(r));
            acc = if c == 0 { s * w } else { acc + s * w };
            start = end;
        }
        acc
    }
}

impl<T: Element> Taps<T> {
    /// The taps of a plan whose coefficients are all uniform and that has no bias; `None`
    /// otherwise (those run the generic row-pass kernel). With the fast order, the
    /// reassociated program too.
    pub(crate) fn of(plan: &Plan<T>) -> Option<Taps<T>> {
        let uniform = plan.uniform.as_ref()?;
        let [_, n1, n2] = plan.shape;
        let h0 = plan.halo[0] as isize;
        let weight: Vec<T> = uniform.iter().map(|(_, w)| *w).collect();
        let fast = (plan.order == Order::Fast).then(|| match Cube::of(&plan.offsets, &weight) {
            Some(cube) => Fast::Cube(cube),
            None => Fast::Program(Program::of(&plan.offsets, &weight, plan.halo[0], n2)),
        });
        Some(Taps {
            plane: plan.offsets.iter().map(|d| (d[0] + h0) as usize).collect(),
            offset: plan.offsets.iter().map(|d| d[1] * n2 as isize + d[2]).collect(),
            weight,
            shape: [plan.shape[0], n1, n2],
            halo: plan.halo,
            fast,
        })
    }

    /// True when the fast order of `plan` loads fewer values per point than the exact one: the
    /// isotropic 27-point stencil's column kernel, or a program with scratch rows. The stars
    /// (7-, 13-point) keep every load and only save multiplies there.
    pub(crate) fn fast_saves_loads(plan: &Plan<T>) -> bool {
        let Some(uniform) = plan.uniform.as_ref() else { return false };
        let weight: Vec<T> = uniform.iter().map(|(_, w)| *w).collect();
        Cube::of(&plan.offsets, &weight).is_some()
            || !Program::of(&plan.offsets, &weight, plan.halo[0], plan.shape[2]).scratch.is_empty()
    }

    /// Elements in one plane.
    pub(crate) fn plane_len(&self) -> usize {
        self.shape[1] * self.shape[2]
    }

    /// Rows `rows` (each restricted to the interior columns) of one output plane from
    /// `inputs[m]` = input plane `i - h0 + m`; `rows` must lie inside the interior rows and
    /// every input must hold a whole plane.
    pub(crate) fn plane(&self, inputs: &[&[T]], out: &mut [T], rows: std::ops::Range<usize>) {
        let [_, n1, _] = self.shape;
        let h1 = self.halo[1];
        assert!(rows.start >= h1 && rows.end <= n1 - h1, "rows outside the interior");
        assert!(inputs.len() == 2 * self.halo[0] + 1, "one input per plane of the halo");
        assert!(
            inputs.iter().all(|p| p.len() == self.plane_len()) && out.len() == self.plane_len(),
            "whole planes"
        );
        dispatch(self, inputs, out, rows);
    }
}

/// Picks the instruction set at run time (all round alike: no fused multiply-adds).
fn dispatch<T: Element>(taps: &Taps<T>, inputs: &[&[T]], out: &mut [T], rows: std::ops::Range<usize>) {
    #[cfg(target_arch = "x86_64")]
    {
        if isa_allowed("avx512") && std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F; the bounds were checked by `Taps::plane`.
            return unsafe { run_avx512(taps, inputs, out, rows) };
        }
        if isa_allowed("avx2") && std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: as above, for AVX2.
            return unsafe { run_avx2(taps, inputs, out, rows) };
        }
    }
    // SAFETY: the bounds were checked by `Taps::plane`; scalar lanes need no feature, and
    // `T` is the lanes' element (f32 exactly when 4 bytes: `Element` is sealed).
    unsafe {
        if std::mem::size_of::<T>() == 4 {
            by_order::<T, Scalar<f32>, 4>(taps, inputs, out, rows)
        } else {
            by_order::<T, Scalar<f64>, 4>(taps, inputs, out, rows)
        }
    }
}

/// The kernels compiled for AVX-512F (the lanes' methods inline only into code compiled for
/// their instruction set). Safety: the CPU has AVX-512F and the bounds hold.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn run_avx512<T: Element>(
    taps: &Taps<T>,
    inputs: &[&[T]],
    out: &mut [T],
    rows: std::ops::Range<usize>,
) {
    use crate::simd::{Avx512F32, Avx512F64};
    // SAFETY: forwarded; `T` is f32 exactly when 4 bytes.
    unsafe {
        if std::mem::size_of::<T>() == 4 {
            by_order::<T, Avx512F32, 4>(taps, inputs, out, rows)
        } else {
            by_order::<T, Avx512F64, 4>(taps, inputs, out, rows)
        }
    }
}

/// As [`run_avx512`], for AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn run_avx2<T: Element>(taps: &Taps<T>, inputs: &[&[T]], out: &mut [T], rows: std::ops::Range<usize>) {
    use crate::simd::{Avx2F32, Avx2F64};
    // SAFETY: forwarded; `T` is f32 exactly when 4 bytes.
    unsafe {
        if std::mem::size_of::<T>() == 4 {
            by_order::<T, Avx2F32, 4>(taps, inputs, out, rows)
        } else {
            by_order::<T, Avx2F64, 4>(taps, inputs, out, rows)
        }
    }
}

/// Environment variable naming the widest instruction set the stencil kernels may use:
/// `avx512` (the default), `avx2` or `scalar`, to test the narrower paths on a wide machine.
pub(crate) const ISA_ENV: &str = "HETKIT_STENCIL_ISA";

/// True when [`ISA_ENV`] allows `isa`.
fn isa_allowed(isa: &str) -> bool {
    static CAP: std::sync::OnceLock<u8> = std::sync::OnceLock::new();
    let rank = |s: &str| match s {
        "scalar" => 0,
        "avx2" => 1,
        _ => 2,
    };
    *CAP.get_or_init(|| std::env::var(ISA_ENV).map_or(2, |v| rank(v.trim()))) >= rank(isa)
}

/// The kernel of the taps' order in lanes `V` (element `V::E`, which is `T`), `U` vectors per
/// group.
///
/// Safety: `V`'s instruction set is available, `V::E` is `T`, and every tap of every interior
/// point of `rows` lies inside its input plane (the halo guarantees it for whole planes).
#[inline(always)]
unsafe fn by_order<T: Element, V: Lanes, const U: usize>(
    taps: &Taps<T>,
    inputs: &[&[T]],
    out: &mut [T],
    rows: std::ops::Range<usize>,
) {
    let cast = |v: T| V::E::from_f64(v.to_f64());
    let planes: Vec<*const V::E> = inputs.iter().map(|p| p.as_ptr().cast::<V::E>()).collect();
    let dst = out.as_mut_ptr().cast::<V::E>();
    // SAFETY: forwarded from the caller.
    unsafe {
        match &taps.fast {
            None => {
                let weights: Vec<V::E> = taps.weight.iter().map(|&w| cast(w)).collect();
                let base: Vec<*const V::E> = taps
                    .plane
                    .iter()
                    .zip(&taps.offset)
                    .map(|(&p, &o)| planes[p].wrapping_offset(o))
                    .collect();
                let [_, _, n2] = taps.shape;
                let window = centre_row_window(taps, V::WINDOW);
                let e = Exact {
                    base: &base,
                    weights: &weights,
                    window: &window,
                    centre: planes[taps.halo[0]],
                    dst,
                    n2,
                    h2: taps.halo[2],
                };
                match base.len() {
                    7 => exact_plane_n::<V, U, 7>(&e, rows),
                    13 => exact_plane_n::<V, U, 13>(&e, rows),
                    _ => exact_plane::<V, U>(&e, rows),
                }
            }
            Some(Fast::Cube(cube)) => {
                let frame = crate::columns::Frame { planes, dst, n2: taps.shape[2], rows };
                crate::columns::run::<V, U>(&cube.cast(), &frame)
            }
            Some(Fast::Program(p)) => {
                let classes: Vec<(usize, V::E)> = p.classes.iter().map(|&(e, w)| (e, cast(w))).collect();
                fast_plane::<T, V, U>(taps, p, &planes, &classes, dst, rows)
            }
        }
    }
}

/// What the exact-order kernels read and write: `base[m]` is term `m`'s input plane shifted by
/// its offset, `centre` the centre input plane (for the groups' alignment), rows of `n2`
/// points with `h2` boundary points at each end.
struct Exact<'a, V: Lanes> {
    base: &'a [*const V::E],
    weights: &'a [V::E],
    /// Per term, its shift `dk` along the centre row when [`exact_group_window`] builds it
    /// from the row's aligned vectors, else [`MEMORY`] (loaded).
    window: &'a [isize],
    centre: *const V::E,
    dst: *mut V::E,
    n2: usize,
    h2: usize,
}

/// A term [`exact_group_window`] loads from memory.
const MEMORY: isize = isize::MIN;

/// Per term, its shift `dk` when it reads the centre row (input plane `h0`, `dj = 0`) at
/// `|dk| <= max` (those [`exact_group_window`] builds from the row's aligned vectors), else
/// [`MEMORY`]; all [`MEMORY`] when `max` is 0 (lanes without shifts).
fn centre_row_window<T: Element>(taps: &Taps<T>, max: isize) -> Vec<isize> {
    let h2 = taps.halo[2] as isize;
    taps.plane
        .iter()
        .zip(&taps.offset)
        .map(|(&p, &o)| {
            let centre_row = p == taps.halo[0] && o.abs() <= h2;
            if centre_row && max > 0 && o.abs() <= max { o } else { MEMORY }
        })
        .collect()
}

/// The centre-row shifts of the built-in 7- and 13-point stars
/// ([`Stencil::seven_point`](crate::Stencil::seven_point),
/// [`Stencil::thirteen_point`](crate::Stencil::thirteen_point)) in their term order: centre,
/// then `+-1` along axes 0, 1, 2, then (13 points) `+-2` along axes 0, 1, 2.
const fn star_window<const N: usize>() -> [isize; N] {
    let mut k = [MEMORY; N];
    if N == 7 || N == 13 {
        k[0] = 0;
        k[5] = 1;
        k[6] = -1;
    }
    if N == 13 {
        k[11] = 2;
        k[12] = -2;
    }
    k
}

/// The exact order on rows `rows`.
#[inline(always)]
unsafe fn exact_plane<V: Lanes, const U: usize>(e: &Exact<'_, V>, rows: std::ops::Range<usize>) {
    let (base, weights, centre, dst, n2, h2) = (e.base, e.weights, e.centre, e.dst, e.n2, e.h2);
    let len = n2 - 2 * h2;
    let mut src = base.to_vec();
    for j in rows {
        let row = j * n2 + h2;
        for (s, b) in src.iter_mut().zip(base) {
            *s = b.wrapping_add(row);
        }
        // SAFETY: the row's interior lies inside the output, its taps inside their planes.
        unsafe {
            let out = dst.add(row);
            for (q, width) in Groups::new(len, V::N * U, V::N, skew::<V>(centre.wrapping_add(row))) {
                match width {
                    Width::Big => exact_group::<V, U>(&src, weights, q, out),
                    Width::One => exact_group::<V, 1>(&src, weights, q, out),
                    Width::Point => exact_group::<Scalar<V::E>, 1>(&src, weights, q, out),
                }
            }
        }
    }
}

/// [`exact_plane`] for a stencil of `N` terms: the term loop unrolled, the weights splat once
/// per call and the row's term pointers in an array, so that neither is reloaded per term and
/// group (for the 7-point stencil they fit in registers).
#[inline(always)]
unsafe fn exact_plane_n<V: Lanes, const U: usize, const N: usize>(
    e: &Exact<'_, V>,
    rows: std::ops::Range<usize>,
) {
    let (base, weights, centre, dst, n2) = (e.base, e.weights, e.centre, e.dst, e.n2);
    let len = n2 - 2 * e.h2;
    // SAFETY: forwarded from the caller (the instruction set of `V`).
    let mut w = [unsafe { V::splat(weights[0]) }; N];
    for m in 1..N {
        // SAFETY: as above.
        w[m] = unsafe { V::splat(weights[m]) };
    }
    let mut src = [std::ptr::null::<V::E>(); N];
    // The window kernel is compiled for the built-in stars' term order only, so that every
    // term's source is known at compile time (a run-time choice per term and vector was
    // measured slower than the loads it saves).
    let window = const { star_window::<N>() };
    let shifts = V::WINDOW >= 2 && e.window == window.as_slice();
    for j in rows {
        let row = j * n2 + e.h2;
        for m in 0..N {
            src[m] = base[m].wrapping_add(row);
        }
        // SAFETY: the row's interior lies inside the output, its taps inside their planes;
        // the window's vectors one before and one after a group lie inside the centre plane
        // (an interior row has a row before and after it, each longer than a vector when a
        // row holds a group).
        unsafe {
            let out = dst.add(row);
            let c = centre.add(row);
            for (q, width) in Groups::new(len, V::N * U, V::N, skew::<V>(centre.wrapping_add(row))) {
                match width {
                    Width::Big if shifts => exact_group_window::<V, U, N>(&src, &w, c, q, out),
                    Width::Big => exact_group_n::<V, U, N>(&src, &w, q, out),
                    Width::One => exact_group_n::<V, 1, N>(&src, &w, q, out),
                    Width::Point => exact_group::<Scalar<V::E>, 1>(&src, weights, q, out),
                }
            }
        }
    }
}

/// [`exact_group`] with `N` terms known at compile time and the weights already splat.
#[inline(always)]
unsafe fn exact_group_n<V: Lanes, const U: usize, const N: usize>(
    src: &[*const V::E; N],
    w: &[V; N],
    q: usize,
    dst: *mut V::E,
) {
    // SAFETY: the caller guarantees `q..q + U * V::N` is inside the row for every tap.
    unsafe {
        let mut acc = [w[0]; U];
        for u in 0..U {
            acc[u] = V::load(src[0].add(q + u * V::N)).mul(w[0]);
        }
        for m in 1..N {
            for u in 0..U {
                acc[u] = acc[u].add(V::load(src[m].add(q + u * V::N)).mul(w[m]));
            }
        }
        for u in 0..U {
            acc[u].store(dst.add(q + u * V::N));
        }
    }
}

/// The `U` centre-row vectors of a group starting at `c`, with the vector before and the one
/// after it, from which the star kernels build the shifted centre-row terms.
///
/// # Safety
/// `c - V::N .. c + (U + 1) * V::N` must lie inside the centre plane.
#[inline(always)]
unsafe fn centre_window<V: Lanes, const U: usize>(c: *const V::E) -> (V, [V; U], V) {
    // SAFETY: the caller guarantees the window above.
    unsafe {
        let prev = V::load(c.sub(V::N));
        let next = V::load(c.add(U * V::N));
        let mut row = [prev; U];
        for (u, r) in row.iter_mut().enumerate() {
            *r = V::load(c.add(u * V::N));
        }
        (prev, row, next)
    }
}

/// [`exact_group_n`] with the centre row's shifted terms (`window[m] != MEMORY`) built from
/// the `U + 2` vectors of the centre row around the group (`c` is the row's first interior
/// point) by lane shifts rather than loaded: in a group aligned to the centre row those loads
/// are the ones that split across cache lines. The same values in the same order, so bitwise
/// the result of [`exact_group_n`].
#[inline(always)]
unsafe fn exact_group_window<V: Lanes, const U: usize, const N: usize>(
    src: &[*const V::E; N],
    w: &[V; N],
    c: *const V::E,
    q: usize,
    dst: *mut V::E,
) {
    // SAFETY: the caller guarantees `q..q + U * V::N` inside the row for every tap, and the
    // vectors before and after it inside the centre plane.
    unsafe {
        let c = c.add(q);
        let (prev, row, next) = centre_window::<V, U>(c);
        // The stars' order (see `star_window`), written out so that each term's source and
        // shift is fixed at compile time.
        let mut acc = [w[0]; U];
        for u in 0..U {
            let before = if u == 0 { prev } else { row[u - 1] };
            let after = if u + 1 == U { next } else { row[u + 1] };
            let mut a = row[u].mul(w[0]);
            for m in 1..5 {
                a = a.add(V::load(src[m].add(q + u * V::N)).mul(w[m]));
            }
            a = a.add(V::shifted(before, row[u], after, 1).mul(w[5]));
            a = a.add(V::shifted(before, row[u], after, -1).mul(w[6]));
            if N == 13 {
                for m in 7..11 {
                    a = a.add(V::load(src[m].add(q + u * V::N)).mul(w[m]));
                }
                a = a.add(V::shifted(before, row[u], after, 2).mul(w[11]));
                a = a.add(V::shifted(before, row[u], after, -2).mul(w[12]));
            }
            acc[u] = a;
        }
        for u in 0..U {
            acc[u].store(dst.add(q + u * V::N));
        }
    }
}

/// Points from `p` to the next address aligned to a whole vector of `V` (0 when `p` is).
#[inline(always)]
pub(crate) fn skew<V: Lanes>(p: *const V::E) -> usize {
    let size = std::mem::size_of::<V::E>();
    let lanes = (p as usize / size) % V::N;
    (V::N - lanes) % V::N
}

/// The width of a group of points: `U` vectors, one vector, or one point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Width {
    Big,
    One,
    Point,
}

/// Groups covering `0..len`: a one-vector head when the row's first `skew` points stand before
/// a vector boundary, then groups of `big` points from the boundary on, then single vectors,
/// and a last vector recomputed over its predecessor when the row ends inside one (the output
/// is never an input, so recomputing is harmless). Rows shorter than a vector go point by
/// point. The aligned groups keep the unshifted loads (offset 0 along axis 2), the scratch
/// rows and, where the output shares the input's alignment, the stores on whole cache lines:
/// an unaligned vector access splits across two lines. An iterator rather than a closure
/// taking each group: closures are not compiled for the kernels' instruction set, so the
/// vector methods would not inline into them.
pub(crate) struct Groups {
    q: usize,
    len: usize,
    big: usize,
    one: usize,
    head: bool,
}

impl Groups {
    #[inline(always)]
    pub(crate) fn new(len: usize, big: usize, one: usize, skew: usize) -> Groups {
        if len < one {
            return Groups { q: 0, len, big: 1, one: 1, head: false };
        }
        Groups { q: skew, len, big, one, head: skew > 0 }
    }
}

impl Iterator for Groups {
    type Item = (usize, Width);
    #[inline(always)]
    fn next(&mut self) -> Option<(usize, Width)> {
        let q = self.q;
        if self.one == 1 {
            self.q += 1;
            return (q < self.len).then_some((q, Width::Point));
        }
        if self.head {
            self.head = false;
            return Some((0, Width::One));
        }
        if q >= self.len {
            return None;
        }
        if q + self.big <= self.len {
            self.q += self.big;
            return Some((q, Width::Big));
        }
        self.q = (q + self.one).min(self.len);
        Some((if q + self.one <= self.len { q } else { self.len - self.one }, Width::One))
    }
}

/// Points `q..q + U * V::N` of a row in the exact order, stored once.
#[inline(always)]
unsafe fn exact_group<V: Lanes, const U: usize>(
    src: &[*const V::E],
    weights: &[V::E],
    q: usize,
    dst: *mut V::E,
) {
    // SAFETY: the caller guarantees `q..q + U * V::N` is inside the row for every tap.
    unsafe {
        let w0 = V::splat(weights[0]);
        let p = src[0].add(q);
        let mut acc = [w0; U];
        for u in 0..U {
            acc[u] = V::load(p.add(u * V::N)).mul(w0);
        }
        for m in 1..src.len() {
            let w = V::splat(weights[m]);
            let p = src[m].add(q);
            for u in 0..U {
                acc[u] = acc[u].add(V::load(p.add(u * V::N)).mul(w));
            }
        }
        for u in 0..U {
            acc[u].store(dst.add(q + u * V::N));
        }
    }
}

/// The fast order on rows `rows`: per row, the scratch rows summed over the whole row, then
/// the classes over its interior.
#[inline(always)]
unsafe fn fast_plane<T: Element, V: Lanes, const U: usize>(
    taps: &Taps<T>,
    p: &Program<T>,
    planes: &[*const V::E],
    classes: &[(usize, V::E)],
    dst: *mut V::E,
    rows: std::ops::Range<usize>,
) {
    let [_, _, n2] = taps.shape;
    let h2 = taps.halo[2];
    let len = n2 - 2 * h2;
    let mut scratch: Vec<V::E> = vec![V::E::ZERO; p.scratch.len() * n2];
    let sp = scratch.as_mut_ptr();
    let mut terms: Vec<*const V::E> = Vec::with_capacity(8);
    let mut src: Vec<*const V::E> = vec![std::ptr::null(); p.reads.len()];
    // The built-in stars' program runs the kernel with the centre row's shifts built in
    // registers and the weights splat once (7 or 13; 0 for any other program).
    let star = if V::WINDOW >= 2 { star_program(taps, p) } else { 0 };
    // SAFETY: the caller guarantees the lanes' instruction set.
    let (w, one) = unsafe {
        let mut w = [V::splat(V::E::ZERO); 3];
        for (w, &(_, c)) in w.iter_mut().zip(classes) {
            *w = V::splat(c);
        }
        (w, V::splat(std::hint::black_box(V::E::ONE)))
    };
    for j in rows {
        let row = j * n2;
        // SAFETY: rows `j + dj` of the inputs exist (j is interior); scratch row `r` is
        // `sp[r * n2..(r + 1) * n2]`; the interior reads stay inside rows of `n2` points.
        unsafe {
            for (r, parts) in p.scratch.iter().enumerate() {
                terms.clear();
                terms.extend(parts.iter().map(|&(plane, off)| planes[plane].offset(off).add(row)));
                sum_rows::<V>(&terms, n2, sp.add(r * n2));
            }
            for (s, read) in src.iter_mut().zip(&p.reads) {
                *s = match *read {
                    Read::Input { plane, offset } => planes[plane].offset(offset).add(row + h2),
                    Read::Scratch { row: r, dk } => sp.add(r * n2 + h2).offset(dk),
                };
            }
            let out = dst.add(row + h2);
            let c = planes[taps.halo[0]].wrapping_add(row + h2);
            for (q, width) in Groups::new(len, V::N * U, V::N, skew::<V>(c)) {
                match width {
                    Width::Big if star == 13 => fast_group_star::<V, U, 13>(&src, &w, one, c, q, out),
                    Width::Big if star == 7 => fast_group_star::<V, U, 7>(&src, &w, one, c, q, out),
                    Width::Big => fast_group::<V, U>(&src, classes, q, out),
                    Width::One => fast_group::<V, 1>(&src, classes, q, out),
                    Width::Point => fast_group::<Scalar<V::E>, 1>(&src, classes, q, out),
                }
            }
        }
    }
    drop(scratch);
}

/// The fast program of the built-in 7- and 13-point stars, as term indices of their taps in
/// the order [`Program::of`] reads them, and the end of each class: the class of the `+-2`
/// weight (the centre row's `k - 2`, `k + 2`, then the other four), of the `+-1` weight (the
/// same pattern) and of the centre.
const STAR13_READS: [usize; 13] = [12, 11, 7, 8, 9, 10, 6, 5, 1, 2, 3, 4, 0];
const STAR13_ENDS: [usize; 3] = [6, 12, 13];
const STAR7_READS: [usize; 7] = [6, 5, 1, 2, 3, 4, 0];
const STAR7_ENDS: [usize; 2] = [6, 7];

/// 13 or 7 when `p` is the fast program of the built-in 13- or 7-point star (their term order,
/// three or two distinct weights), the programs [`fast_group_star`] is compiled for; else 0.
fn star_program<T: Element>(taps: &Taps<T>, p: &Program<T>) -> usize {
    let is = |reads: &[usize], ends: &[usize], window: &[isize]| {
        p.scratch.is_empty()
            && centre_row_window(taps, 4) == window
            && p.classes.iter().map(|c| c.0).eq(ends.iter().copied())
            && p.reads.len() == reads.len()
            && p.reads
                .iter()
                .zip(reads)
                .all(|(r, &t)| *r == Read::Input { plane: taps.plane[t], offset: taps.offset[t] })
    };
    if is(&STAR13_READS, &STAR13_ENDS, &star_window::<13>()) {
        13
    } else if is(&STAR7_READS, &STAR7_ENDS, &star_window::<7>()) {
        7
    } else {
        0
    }
}

/// [`fast_group`] for the built-in stars' program ([`STAR13_READS`], [`STAR7_READS`]): the
/// centre row's `k +- 1`, `k +- 2` built from its aligned vectors around the group (`c` is the
/// row's first interior point) by lane shifts, the class weights `w` splat once, and the
/// `+-1` class's adds issued as multiply-adds by `one` so that the add and multiply pipes
/// share the work (3 multiplies and 12 adds per vector for the 13-point stencil). The same
/// values in the same order: bitwise [`fast_group`].
#[inline(always)]
unsafe fn fast_group_star<V: Lanes, const U: usize, const N: usize>(
    src: &[*const V::E],
    w: &[V; 3],
    one: V,
    c: *const V::E,
    q: usize,
    dst: *mut V::E,
) {
    // SAFETY: the caller guarantees `q..q + U * V::N` inside the row for every read, and the
    // vectors before and after it inside the centre plane.
    unsafe {
        let c = c.add(q);
        let (prev, row, next) = centre_window::<V, U>(c);
        let at = |r: usize, u: usize| src[r].add(q + u * V::N);
        let mut acc = [prev; U];
        for u in 0..U {
            let before = if u == 0 { prev } else { row[u - 1] };
            let after = if u + 1 == U { next } else { row[u + 1] };
            // The `+-1` class: `k - 1`, `k + 1`, then four loads (reads `first..first + 4`).
            let first = if N == 13 { 8 } else { 2 };
            let mut s1 = V::shifted(before, row[u], after, -1).add(V::shifted(before, row[u], after, 1));
            for r in first..first + 4 {
                s1 = s1.add_on_fma(V::load(at(r, u)), one);
            }
            let mut a = if N == 13 {
                let mut s2 = V::shifted(before, row[u], after, -2).add(V::shifted(before, row[u], after, 2));
                for r in 2..6 {
                    s2 = s2.add(V::load(at(r, u)));
                }
                s2.mul(w[0]).add(s1.mul(w[1]))
            } else {
                s1.mul(w[0])
            };
            a = a.add(row[u].mul(w[if N == 13 { 2 } else { 1 }]));
            acc[u] = a;
        }
        for u in 0..U {
            acc[u].store(dst.add(q + u * V::N));
        }
    }
}

/// `out[k] = terms[0][k] + terms[1][k] + ...` for `k` in `0..n`, left to right.
#[inline(always)]
unsafe fn sum_rows<V: Lanes>(terms: &[*const V::E], n: usize, out: *mut V::E) {
    // SAFETY: the caller guarantees `n` valid elements at every term and at `out`.
    unsafe {
        for (k, width) in Groups::new(n, V::N, V::N, skew::<V>(terms[0])) {
            if width == Width::Point {
                sum_at::<Scalar<V::E>>(terms, k, out);
            } else {
                sum_at::<V>(terms, k, out);
            }
        }
    }
}

#[inline(always)]
unsafe fn sum_at<V: Lanes>(terms: &[*const V::E], k: usize, out: *mut V::E) {
    // SAFETY: forwarded from `sum_rows`.
    unsafe {
        let mut s = V::load(terms[0].add(k));
        for t in &terms[1..] {
            s = s.add(V::load(t.add(k)));
        }
        s.store(out.add(k));
    }
}

/// Points `q..q + U * V::N` of a row in the fast order: each class's summands added left to
/// right, times its weight, the classes added left to right.
#[inline(always)]
unsafe fn fast_group<V: Lanes, const U: usize>(
    src: &[*const V::E],
    classes: &[(usize, V::E)],
    q: usize,
    dst: *mut V::E,
) {
    // SAFETY: the caller guarantees `q..q + U * V::N` is inside the row for every summand.
    unsafe {
        let (end0, w0) = classes[0];
        let mut acc = class_sum::<V, U>(&src[..end0], q);
        let w = V::splat(w0);
        for u in 0..U {
            acc[u] = acc[u].mul(w);
        }
        let mut start = end0;
        for &(end, wc) in &classes[1..] {
            let w = V::splat(wc);
            let s = class_sum::<V, U>(&src[start..end], q);
            for u in 0..U {
                acc[u] = acc[u].add(s[u].mul(w));
            }
            start = end;
        }
        for u in 0..U {
            acc[u].store(dst.add(q + u * V::N));
        }
    }
}

/// One class's summands at points `q..q + U * V::N`, added left to right.
#[inline(always)]
unsafe fn class_sum<V: Lanes, const U: usize>(src: &[*const V::E], q: usize) -> [V; U] {
    // SAFETY: forwarded from `fast_group`.
    unsafe {
        let p = src[0].add(q);
        let mut s = [V::load(p); U];
        for u in 1..U {
            s[u] = V::load(p.add(u * V::N));
        }
        for t in &src[1..] {
            let p = t.add(q);
            for u in 0..U {
                s[u] = s[u].add(V::load(p.add(u * V::N)));
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::{Fast, MEMORY, Taps, centre_row_window, star_program, star_window};
    use crate::Stencil;
    use crate::config::Order;

    /// What [`star_program`] makes of a stencil's fast program on a small grid.
    fn star_of<T: crate::Element>(s: &Stencil<T>) -> usize {
        let mut plan = s.plan(&[5, 5, 80]).unwrap();
        plan.order = Order::Fast;
        let taps = Taps::of(&plan).unwrap();
        match &taps.fast {
            Some(Fast::Program(p)) => star_program(&taps, p),
            _ => usize::MAX,
        }
    }

    #[test]
    fn the_star_kernels_take_exactly_the_built_in_stars_programs() {
        assert_eq!(star_of(&Stencil::<f32>::thirteen_point(0.3, 0.1, -0.07)), 13);
        assert_eq!(star_of(&Stencil::<f64>::seven_point(0.3, 0.1)), 7);
        // Equal weights merge classes: another program, the general kernel.
        assert_eq!(star_of(&Stencil::<f64>::thirteen_point(0.3, 0.1, 0.1)), 0);
        assert_eq!(star_of(&Stencil::<f32>::thirteen_point(0.1, 0.1, -0.07)), 0);
        assert_eq!(star_of(&Stencil::<f32>::seven_point(0.1, 0.1)), 0);
        // The same points in another order read in another order.
        let mut points: Vec<([i32; 3], f32)> = vec![([0, 0, 0], 0.5)];
        for d in [[0, 0, 1], [0, 0, -1], [1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0]] {
            points.push((d, 0.25));
        }
        assert_eq!(star_of(&Stencil::from_points(&points).unwrap()), 0);
    }

    #[test]
    fn the_built_in_stars_match_the_window_kernels_order() {
        // The window kernel is compiled for one term order; the builders must produce it, or
        // the stars silently fall back to the loads.
        let seven = Stencil::<f32>::seven_point(0.3, 0.1).plan(&[5, 5, 80]).unwrap();
        let thirteen = Stencil::<f64>::thirteen_point(0.3, 0.1, -0.07).plan(&[5, 5, 80]).unwrap();
        assert_eq!(centre_row_window(&Taps::of(&seven).unwrap(), 4), star_window::<7>());
        assert_eq!(centre_row_window(&Taps::of(&thirteen).unwrap(), 4), star_window::<13>());
        // A shift beyond the window, and lanes without shifts, load from memory.
        assert_eq!(centre_row_window(&Taps::of(&thirteen).unwrap(), 1)[11..], [MEMORY, MEMORY]);
        assert!(centre_row_window(&Taps::of(&seven).unwrap(), 0).iter().all(|&d| d == MEMORY));
        // Another order of the same points is not the stars' order.
        let points: Vec<([i32; 3], f32)> =
            [[0, 0, 1], [0, 0, 0], [1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, -1]]
                .iter()
                .map(|&d| (d, 0.25))
                .collect();
        let other = Stencil::from_points(&points).unwrap().plan(&[5, 5, 80]).unwrap();
        assert_ne!(centre_row_window(&Taps::of(&other).unwrap(), 4), star_window::<7>());
    }
}
