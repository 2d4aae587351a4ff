//! The specialised kernel of constant-coefficient stencils: one output plane's rows from the
//! `2 h + 1` input planes around it, the terms' plane, in-plane offset and weight hoisted
//! into arrays whose length is a compile-time constant for the common shapes (7, 13, 19, 25
//! and 27 points), so the term loop unrolls and every weight and row pointer stays in a
//! register or on the stack next to it.
//!
//! A row segment is computed `W` points at a time (four vector registers of accumulators),
//! each point in the plan's order `((w_0 x_0 + w_1 x_1) + ...)` without fused multiply-adds,
//! so the result is bitwise the sequential reference's. The last, partial group of a row is
//! recomputed as the row's final `W` points (overlapping the previous group) instead of
//! falling back to scalar code; the output is never an input, so recomputing is harmless.

use crate::element::Element;
use crate::plan::Plan;

/// Where the terms read: per term, the input plane (`di + h0`), the flat offset inside a
/// plane (`dj * n2 + dk`) and the weight, in evaluation order.
#[derive(Debug, Clone)]
pub(crate) struct Taps<T> {
    pub(crate) plane: Vec<usize>,
    pub(crate) offset: Vec<isize>,
    pub(crate) weight: Vec<T>,
    /// Grid shape and halo of the plan.
    pub(crate) shape: [usize; 3],
    pub(crate) halo: [usize; 3],
}

impl<T: Element> Taps<T> {
    /// The taps of a plan whose coefficients are all uniform and that has no bias; `None`
    /// otherwise (those run the generic row-pass kernel).
    pub(crate) fn of(plan: &Plan<T>) -> Option<Taps<T>> {
        let uniform = plan.uniform.as_ref()?;
        let [_, n1, n2] = plan.shape;
        let h0 = plan.halo[0] as isize;
        Some(Taps {
            plane: plan.offsets.iter().map(|d| (d[0] + h0) as usize).collect(),
            offset: plan.offsets.iter().map(|d| d[1] * n2 as isize + d[2]).collect(),
            weight: uniform.iter().map(|(_, w)| *w).collect(),
            shape: [plan.shape[0], n1, n2],
            halo: plan.halo,
        })
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

/// Picks the instruction set at run time: the same source compiled for AVX-512 and for AVX2
/// (neither contracts `a * b + c` into a fused multiply-add, so all agree bitwise).
fn dispatch<T: Element>(taps: &Taps<T>, inputs: &[&[T]], out: &mut [T], rows: std::ops::Range<usize>) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F, the feature the function is compiled for; the
            // bounds were checked by `Taps::plane`.
            return unsafe { by_terms_avx512(taps, inputs, out, rows) };
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: as above, for AVX2.
            return unsafe { by_terms_avx2(taps, inputs, out, rows) };
        }
    }
    // SAFETY: the bounds were checked by `Taps::plane`.
    unsafe { by_terms(taps, inputs, out, rows) }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn by_terms_avx512<T: Element>(
    taps: &Taps<T>,
    inputs: &[&[T]],
    out: &mut [T],
    rows: std::ops::Range<usize>,
) {
    // SAFETY: forwarded from the caller.
    unsafe { by_terms(taps, inputs, out, rows) }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn by_terms_avx2<T: Element>(
    taps: &Taps<T>,
    inputs: &[&[T]],
    out: &mut [T],
    rows: std::ops::Range<usize>,
) {
    // SAFETY: forwarded from the caller.
    unsafe { by_terms(taps, inputs, out, rows) }
}

/// Bytes of accumulators per group of points: four 512-bit registers.
const GROUP_BYTES: usize = 256;

/// Monomorphises on the number of terms for the common shapes.
#[inline(always)]
unsafe fn by_terms<T: Element>(taps: &Taps<T>, inputs: &[&[T]], out: &mut [T], rows: std::ops::Range<usize>) {
    // SAFETY: forwarded from the caller (every arm).
    unsafe {
        match taps.weight.len() {
            7 => by_width::<T, 7>(taps, inputs, out, rows),
            13 => by_width::<T, 13>(taps, inputs, out, rows),
            19 => by_width::<T, 19>(taps, inputs, out, rows),
            25 => by_width::<T, 25>(taps, inputs, out, rows),
            27 => by_width::<T, 27>(taps, inputs, out, rows),
            _ => rows_dyn(taps, inputs, out, rows),
        }
    }
}

#[inline(always)]
unsafe fn by_width<T: Element, const N: usize>(
    taps: &Taps<T>,
    inputs: &[&[T]],
    out: &mut [T],
    rows: std::ops::Range<usize>,
) {
    // SAFETY: forwarded from the caller.
    unsafe {
        match std::mem::size_of::<T>() {
            4 => rows_const::<T, N, { GROUP_BYTES / 4 }>(taps, inputs, out, rows),
            _ => rows_const::<T, N, { GROUP_BYTES / 8 }>(taps, inputs, out, rows),
        }
    }
}

/// `N` terms, `W` points per group. Safety: every tap of every interior point of `rows` lies
/// inside its input plane (the halo guarantees it for whole planes).
#[inline(always)]
unsafe fn rows_const<T: Element, const N: usize, const W: usize>(
    taps: &Taps<T>,
    inputs: &[&[T]],
    out: &mut [T],
    rows: std::ops::Range<usize>,
) {
    let [_, _, n2] = taps.shape;
    let h2 = taps.halo[2];
    let len = n2 - 2 * h2;
    let weight: [T; N] = std::array::from_fn(|m| taps.weight[m]);
    let base: [*const T; N] =
        std::array::from_fn(|m| inputs[taps.plane[m]].as_ptr().wrapping_offset(taps.offset[m]));
    for j in rows {
        let row = j * n2 + h2;
        let src: [*const T; N] = std::array::from_fn(|m| base[m].wrapping_add(row));
        // SAFETY: the row's interior lies inside `out`; the taps inside their planes.
        unsafe {
            let dst = out.as_mut_ptr().add(row);
            if len < W {
                for q in 0..len {
                    group::<T, N, 1>(&src, &weight, q, dst);
                }
                continue;
            }
            let mut q = 0;
            while q + W <= len {
                group::<T, N, W>(&src, &weight, q, dst);
                q += W;
            }
            if q < len {
                group::<T, N, W>(&src, &weight, len - W, dst);
            }
        }
    }
}

/// Points `q..q + W` of a row: term by term in the plan's order, stored once.
#[inline(always)]
unsafe fn group<T: Element, const N: usize, const W: usize>(
    src: &[*const T; N],
    weight: &[T; N],
    q: usize,
    dst: *mut T,
) {
    let mut acc = [T::ZERO; W];
    // SAFETY: the caller guarantees `q..q + W` is inside the row for every tap.
    unsafe {
        let x = std::slice::from_raw_parts(src[0].add(q), W);
        for w in 0..W {
            acc[w] = weight[0] * x[w];
        }
        for m in 1..N {
            let x = std::slice::from_raw_parts(src[m].add(q), W);
            for w in 0..W {
                acc[w] += weight[m] * x[w];
            }
        }
        std::ptr::copy_nonoverlapping(acc.as_ptr(), dst.add(q), W);
    }
}

/// Any other number of terms: the same groups with the term count read at run time.
#[inline(always)]
unsafe fn rows_dyn<T: Element>(taps: &Taps<T>, inputs: &[&[T]], out: &mut [T], rows: std::ops::Range<usize>) {
    const W: usize = 16;
    let [_, _, n2] = taps.shape;
    let h2 = taps.halo[2];
    let len = n2 - 2 * h2;
    let base: Vec<*const T> = (0..taps.weight.len())
        .map(|m| inputs[taps.plane[m]].as_ptr().wrapping_offset(taps.offset[m]))
        .collect();
    let mut src = base.clone();
    for j in rows {
        let row = j * n2 + h2;
        for (s, b) in src.iter_mut().zip(&base) {
            *s = b.wrapping_add(row);
        }
        let mut q = 0;
        while q < len {
            let width = W.min(len - q);
            let mut acc = [T::ZERO; W];
            for (m, (s, &c)) in src.iter().zip(&taps.weight).enumerate() {
                // SAFETY: the caller guarantees the row's taps are inside their planes.
                let x = unsafe { std::slice::from_raw_parts(s.add(q), width) };
                for (a, &v) in acc.iter_mut().zip(x) {
                    *a = if m == 0 { c * v } else { *a + c * v };
                }
            }
            // SAFETY: `q..q + width` is inside the row's interior, inside `out`.
            unsafe { std::ptr::copy_nonoverlapping(acc.as_ptr(), out.as_mut_ptr().add(row + q), width) };
            q += width;
        }
    }
}
