//! A tree-structured Parzen estimator (Bergstra et al. 2011) for discrete parameters.

use rand::Rng;

use super::{Strategy, cost};
use crate::tune::search::{Search, Stop};
use crate::tune::space::Point;

/// Model-based search: after `initial` random evaluations, split the observations into the best
/// `gamma` fraction ("good") and the rest; model each parameter's value distribution in both
/// groups by smoothed histograms (a Parzen estimator over value indices: each observation adds
/// weight 1 to its value and `spread` to the adjacent ones, plus a uniform prior); draw
/// `candidates` points from the good model and evaluate the one maximising `l(x) / g(x)`.
#[derive(Debug, Clone, Copy)]
pub struct Tpe {
    /// Random evaluations before the model is used.
    pub initial: usize,
    /// Fraction of observations that count as good.
    pub gamma: f64,
    /// Candidates drawn per step.
    pub candidates: usize,
    /// Weight given to adjacent values by each observation.
    pub spread: f64,
}

impl Default for Tpe {
    fn default() -> Self {
        Tpe { initial: 12, gamma: 0.15, candidates: 48, spread: 0.5 }
    }
}

/// Per-parameter smoothed histograms.
pub(super) struct Model {
    dens: Vec<Vec<f64>>,
}

impl Model {
    pub(super) fn fit(radices: &[u32], obs: &[&Point], spread: f64) -> Model {
        let dens = radices
            .iter()
            .enumerate()
            .map(|(k, &r)| {
                let r = r as usize;
                let mut h = vec![1.0 / r as f64; r];
                for p in obs {
                    let v = p[k] as usize;
                    h[v] += 1.0;
                    if v > 0 {
                        h[v - 1] += spread;
                    }
                    if v + 1 < r {
                        h[v + 1] += spread;
                    }
                }
                let sum: f64 = h.iter().sum();
                h.iter_mut().for_each(|x| *x /= sum);
                h
            })
            .collect();
        Model { dens }
    }

    pub(super) fn draw(&self, s: &mut Search<'_>) -> Point {
        self.dens
            .iter()
            .map(|h| {
                let mut u = s.rng().random::<f64>();
                for (i, &w) in h.iter().enumerate() {
                    if u < w {
                        return i as u32;
                    }
                    u -= w;
                }
                (h.len() - 1) as u32
            })
            .collect()
    }

    pub(super) fn log_density(&self, p: &[u32]) -> f64 {
        self.dens.iter().zip(p).map(|(h, &v)| h[v as usize].ln()).sum()
    }
}

impl Strategy for Tpe {
    fn name(&self) -> &'static str {
        "tpe"
    }

    fn search(&mut self, s: &mut Search<'_>) -> Result<(), Stop> {
        let radices = s.domain().radices().to_vec();
        let mut obs: Vec<(Point, f64)> = Vec::new();
        for _ in 0..self.initial.max(2) {
            let p = s.sample()?;
            if !s.seen(&p) {
                let t = cost(s.eval(&p)?);
                obs.push((p, t));
            }
        }
        loop {
            obs.sort_by(|a, b| a.1.total_cmp(&b.1));
            let n_good = ((obs.len() as f64 * self.gamma).ceil() as usize).clamp(1, obs.len().max(1));
            let good: Vec<&Point> = obs[..n_good].iter().map(|o| &o.0).collect();
            let bad: Vec<&Point> = obs[n_good..].iter().map(|o| &o.0).collect();
            let (l, g) = (Model::fit(&radices, &good, self.spread), Model::fit(&radices, &bad, self.spread));
            let mut pick: Option<(Point, f64)> = None;
            for _ in 0..self.candidates {
                let c = l.draw(s);
                if s.seen(&c) || !s.domain().is_valid(&c) {
                    continue;
                }
                let score = l.log_density(&c) - g.log_density(&c);
                if pick.as_ref().is_none_or(|(_, b)| score > *b) {
                    pick = Some((c, score));
                }
            }
            let p = match pick {
                Some((p, _)) => p,
                None => s.sample()?,
            };
            if !s.seen(&p) {
                let t = cost(s.eval(&p)?);
                obs.push((p, t));
            } else {
                s.eval(&p)?;
            }
        }
    }
}
