//! The thesis's synthetic data sets (seeded) and CSV input.

use std::io::BufRead;

use ndarray::{Array1, Array2};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::error::{LearnError, Result};

/// A standard normal sample (Box–Muller).
fn normal(rng: &mut impl Rng) -> f64 {
    let u: f64 = 1.0 - rng.random::<f64>(); // (0, 1]: the logarithm stays finite
    let v: f64 = rng.random();
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

/// Friedman1 (thesis Eq. 7.16): `x ~ U[0,1]^10`,
/// `y = 10 sin(π x1 x2) + 20 (x3 − 0.5)² + 10 x4 + 5 x5 + ε`, `ε ~ N(0, noise²)` (the thesis
/// uses `noise = 1`); dimensions 6–10 are irrelevant.
///
/// ```
/// let (x, y) = sg_learn::datasets::friedman1(100, 1.0, 42);
/// assert_eq!((x.dim(), y.len()), ((100, 10), 100));
/// ```
pub fn friedman1(m: usize, noise: f64, seed: u64) -> (Array2<f64>, Array1<f64>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let x = Array2::from_shape_simple_fn((m, 10), || rng.random::<f64>());
    let y = x
        .rows()
        .into_iter()
        .map(|r| friedman1_target(r.as_slice().expect("row-major")) + noise * normal(&mut rng))
        .collect();
    (x, y)
}

/// The noise-free Friedman1 function of the first five coordinates.
pub fn friedman1_target(x: &[f64]) -> f64 {
    10.0 * (std::f64::consts::PI * x[0] * x[1]).sin() + 20.0 * (x[2] - 0.5).powi(2) + 10.0 * x[3] + 5.0 * x[4]
}

/// Gaussian blobs as in the thesis's Table 8.5: centres uniform in `[0.1, 0.9]^dim`, at least
/// `separation · sigma` apart, equal-sized clusters of standard deviation `sigma`, plus a
/// fraction `noise` of uniform points labelled `None`, in random order. Coordinates are
/// clamped to `[0, 1]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GaussianBlobs {
    /// Number of clusters.
    pub clusters: usize,
    /// Dimension.
    pub dim: usize,
    /// Standard deviation of every cluster.
    pub sigma: f64,
    /// Minimum centre distance in units of `sigma` (7 or 3 in the thesis).
    pub separation: f64,
    /// Fraction of uniform noise points (0.02 in the thesis's node-level sets).
    pub noise: f64,
}

impl GaussianBlobs {
    /// `m` points and their labels.
    ///
    /// # Errors
    /// Zero clusters or dimensions, a non-positive or non-finite `sigma`, a noise fraction
    /// outside `[0, 1)`, or centres that cannot be placed that far apart (10⁵ tries).
    pub fn generate(&self, m: usize, seed: u64) -> Result<(Array2<f64>, Vec<Option<usize>>)> {
        let bad = |name, reason: &str| Err(LearnError::InvalidParameter { name, reason: reason.into() });
        if self.clusters == 0 || self.dim == 0 {
            return bad("clusters", "clusters and dim must be at least 1");
        }
        if !(self.sigma.is_finite() && self.sigma > 0.0 && self.separation.is_finite()) {
            return bad("sigma", "sigma must be finite and positive, separation finite");
        }
        if !(0.0..1.0).contains(&self.noise) {
            return bad("noise", "the noise fraction must be in [0, 1)");
        }
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let centres = self.centres(&mut rng)?;
        let n_noise = (m as f64 * self.noise).round() as usize;
        let mut x = Array2::zeros((m, self.dim));
        let mut labels = Vec::with_capacity(m);
        // Shuffled so that a label does not follow from the row number (the binned kNN graph
        // assigns rows to bins by row number).
        let mut kind: Vec<usize> = (0..m).collect();
        for i in (1..m).rev() {
            kind.swap(i, rng.random_range(0..=i));
        }
        for (i, &k) in kind.iter().enumerate() {
            if k < m - n_noise {
                let c = k % self.clusters;
                for k in 0..self.dim {
                    x[[i, k]] = (centres[c * self.dim + k] + self.sigma * normal(&mut rng)).clamp(0.0, 1.0);
                }
                labels.push(Some(c));
            } else {
                x.row_mut(i).iter_mut().for_each(|v| *v = rng.random());
                labels.push(None);
            }
        }
        Ok((x, labels))
    }

    fn centres(&self, rng: &mut ChaCha8Rng) -> Result<Vec<f64>> {
        let min2 = (self.separation * self.sigma).powi(2);
        let mut centres: Vec<f64> = Vec::with_capacity(self.clusters * self.dim);
        for _ in 0..100_000 {
            if centres.len() == self.clusters * self.dim {
                break;
            }
            let c: Vec<f64> = (0..self.dim).map(|_| rng.random_range(0.1..=0.9)).collect();
            let far = centres
                .chunks_exact(self.dim)
                .all(|o| o.iter().zip(&c).map(|(a, b)| (a - b) * (a - b)).sum::<f64>() >= min2);
            if far {
                centres.extend(c);
            }
        }
        if centres.len() < self.clusters * self.dim {
            return Err(LearnError::InvalidParameter {
                name: "separation",
                reason: format!("cannot place {} centres {}σ apart", self.clusters, self.separation),
            });
        }
        Ok(centres)
    }
}

/// Reads numeric CSV (comma-separated, optional header line, blank lines skipped) into an
/// `m × c` array.
///
/// ```
/// let text = "a,b\n0.1,2\n0.5, 3.5\n";
/// let x = sg_learn::datasets::read_csv(text.as_bytes(), true)?;
/// assert_eq!(x, ndarray::array![[0.1, 2.0], [0.5, 3.5]]);
/// # Ok::<(), sg_learn::LearnError>(())
/// ```
///
/// # Errors
/// An I/O error, a field that is not a number, rows of different lengths, or no data row.
pub fn read_csv(reader: impl BufRead, header: bool) -> Result<Array2<f64>> {
    let mut values = Vec::new();
    let mut cols = None;
    for (n, line) in reader.lines().enumerate().skip(usize::from(header)) {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let row: Vec<f64> = line
            .split(',')
            .map(|f| {
                f.trim()
                    .parse::<f64>()
                    .map_err(|e| LearnError::Parse { line: n + 1, reason: format!("{f:?}: {e}") })
            })
            .collect::<Result<_>>()?;
        match cols {
            None => cols = Some(row.len()),
            Some(c) if c != row.len() => {
                return Err(LearnError::Parse {
                    line: n + 1,
                    reason: format!("{} fields, expected {c}", row.len()),
                });
            }
            Some(_) => {}
        }
        values.extend(row);
    }
    let c = cols.ok_or(LearnError::Empty { what: "the CSV input" })?;
    Ok(Array2::from_shape_vec((values.len() / c, c), values).expect("rows of equal length"))
}

/// Maps every column of `x` affinely onto `[0, 1]` (constant columns to 0.5); returns the
/// per-column `(min, max)` so that new data can be mapped the same way.
pub fn scale_to_unit_cube(x: &mut Array2<f64>) -> Vec<(f64, f64)> {
    x.columns_mut()
        .into_iter()
        .map(|mut c| {
            let lo = c.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = c.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            c.iter_mut().for_each(|v| *v = if hi > lo { (*v - lo) / (hi - lo) } else { 0.5 });
            (lo, hi)
        })
        .collect()
}
