//! Conjugate gradients for the symmetric positive (semi-)definite systems of the learners.

use crate::error::Result;

/// How a CG solve ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CgReport {
    /// Iterations done (matrix products, not counting none for a zero right-hand side).
    pub iterations: usize,
    /// Final `‖r‖ / ‖b‖` (0 for a zero right-hand side).
    pub relative_residual: f64,
    /// True when the relative residual reached the tolerance.
    pub converged: bool,
}

/// Solves `A x = b` from `x = 0` by conjugate gradients (Shewchuk's form) and returns `x`.
///
/// `apply(p, out)` writes `A p`. The loop stops at `‖r‖ <= tolerance·‖b‖`, after
/// `max_iterations` products, or when `pᵀAp <= 0` (a singular direction: `λ = 0` on a grid with
/// more functions than the data determine).
///
/// ```
/// use sg_learn::cg::conjugate_gradient;
/// let a = [[4.0, 1.0], [1.0, 3.0]];
/// let (x, report) = conjugate_gradient(
///     |p, out| { for i in 0..2 { out[i] = a[i][0] * p[0] + a[i][1] * p[1]; } Ok(()) },
///     &[1.0, 2.0], 10, 1e-12)?;
/// assert!((x[0] - 1.0 / 11.0).abs() < 1e-12 && (x[1] - 7.0 / 11.0).abs() < 1e-12);
/// assert!(report.converged && report.iterations <= 2);
/// # Ok::<(), sg_learn::LearnError>(())
/// ```
///
/// # Errors
/// Whatever `apply` returns.
pub fn conjugate_gradient(
    mut apply: impl FnMut(&[f64], &mut [f64]) -> Result<()>,
    b: &[f64],
    max_iterations: usize,
    tolerance: f64,
) -> Result<(Vec<f64>, CgReport)> {
    let n = b.len();
    let mut x = vec![0.0; n];
    let mut r = b.to_vec();
    let mut p = r.clone();
    let mut ap = vec![0.0; n];
    let b_norm = dot(b, b).sqrt();
    let mut rs = dot(&r, &r);
    let mut report = CgReport { iterations: 0, relative_residual: 0.0, converged: true };
    if b_norm == 0.0 {
        return Ok((x, report));
    }
    report.relative_residual = 1.0;
    report.converged = tolerance >= 1.0;
    while !report.converged && report.iterations < max_iterations {
        apply(&p, &mut ap)?;
        report.iterations += 1;
        let pap = dot(&p, &ap);
        if pap <= 0.0 || !pap.is_finite() {
            break;
        }
        let step = rs / pap;
        x.iter_mut().zip(&p).for_each(|(x, p)| *x += step * p);
        r.iter_mut().zip(&ap).for_each(|(r, a)| *r -= step * a);
        let rs_new = dot(&r, &r);
        report.relative_residual = rs_new.sqrt() / b_norm;
        report.converged = report.relative_residual <= tolerance;
        let beta = rs_new / rs;
        p.iter_mut().zip(&r).for_each(|(p, r)| *p = r + beta * *p);
        rs = rs_new;
    }
    Ok((x, report))
}

/// The dot product.
pub(crate) fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}
