//! Simulated annealing over Hamming-distance-1 moves.

use rand::Rng;

use super::{Strategy, cost};
use crate::tune::search::{Search, Stop};
use crate::tune::space::Point;

/// Simulated annealing: random one-parameter moves, accepted when better, or when worse with
/// probability `exp(-(t_new / t_cur - 1) / T)`; the temperature falls geometrically from
/// `t_start` to `t_end` over the budget. After `patience` rejected moves in a row it restarts
/// from the best point so far (or, if already there, from a random one).
#[derive(Debug, Clone, Copy)]
pub struct SimulatedAnnealing {
    /// Initial temperature (relative slow-down accepted with probability 1/e).
    pub t_start: f64,
    /// Final temperature.
    pub t_end: f64,
    /// Rejections in a row before a restart.
    pub patience: u32,
}

impl Default for SimulatedAnnealing {
    fn default() -> Self {
        SimulatedAnnealing { t_start: 0.5, t_end: 0.002, patience: 40 }
    }
}

/// A random valid point at Hamming distance 1 from `p` (`None` after 100 invalid tries).
pub(crate) fn random_move(s: &mut Search<'_>, p: &[u32]) -> Option<Point> {
    let radices = s.domain().radices().to_vec();
    let movable: Vec<usize> = (0..p.len()).filter(|&k| radices[k] > 1).collect();
    if movable.is_empty() {
        return None;
    }
    for _ in 0..100 {
        let k = movable[s.rng().random_range(0..movable.len())];
        let mut q = p.to_vec();
        let v = s.rng().random_range(0..radices[k] - 1);
        q[k] = if v >= p[k] { v + 1 } else { v };
        if s.domain().is_valid(&q) {
            return Some(q);
        }
    }
    None
}

impl Strategy for SimulatedAnnealing {
    fn name(&self) -> &'static str {
        "simulated_annealing"
    }

    fn search(&mut self, s: &mut Search<'_>) -> Result<(), Stop> {
        let total = s.remaining().max(1.0);
        let mut cur = s.sample()?;
        let mut t_cur = cost(s.eval(&cur)?);
        let mut rejected = 0;
        loop {
            let progress = (1.0 - s.remaining() / total).clamp(0.0, 1.0);
            let temp = self.t_start * (self.t_end / self.t_start).powf(progress);
            let Some(q) = random_move(s, &cur) else {
                cur = s.sample()?;
                t_cur = cost(s.eval(&cur)?);
                continue;
            };
            let t = cost(s.eval(&q)?);
            let accept = t < t_cur
                || (t.is_finite()
                    && (!t_cur.is_finite() || s.rng().random::<f64>() < (-(t / t_cur - 1.0) / temp).exp()));
            if accept {
                (cur, t_cur, rejected) = (q, t, 0);
            } else {
                rejected += 1;
            }
            if rejected >= self.patience {
                rejected = 0;
                let best = s.best().cloned();
                match best {
                    Some((b, tb)) if b != cur => (cur, t_cur) = (b, tb),
                    _ => {
                        cur = s.sample()?;
                        t_cur = cost(s.eval(&cur)?);
                    }
                }
            }
        }
    }
}
