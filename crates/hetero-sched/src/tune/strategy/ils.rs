//! Iterated local search: first-improvement descent plus perturbation of the incumbent.

use rand::seq::SliceRandom;

use super::anneal::random_move;
use super::{Strategy, cost};
use crate::tune::search::{Search, Stop};
use crate::tune::space::{Point, adjacent, hamming};

/// Which points count as neighbours in the descent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Moves {
    /// One parameter one step up or down.
    Adjacent,
    /// One parameter to any other value (Hamming distance 1).
    Hamming,
}

/// Iterated local search: from a random point, descend by first improvement over the
/// neighbours in random order to a local optimum; then perturb the incumbent (the best local
/// optimum) by `strength` random one-parameter moves and descend again; after `patience`
/// perturbations without a new incumbent, restart from a random point.
#[derive(Debug, Clone, Copy)]
pub struct IteratedLocalSearch {
    /// The descent's neighbourhood.
    pub moves: Moves,
    /// Random moves per perturbation.
    pub strength: usize,
    /// Perturbations without improvement before a restart.
    pub patience: u32,
}

impl Default for IteratedLocalSearch {
    fn default() -> Self {
        IteratedLocalSearch { moves: Moves::Hamming, strength: 2, patience: 4 }
    }
}

impl IteratedLocalSearch {
    /// Descends from `p` to a local optimum (first improvement, random neighbour order).
    fn descend(&self, s: &mut Search<'_>, mut p: Point, mut t: f64) -> Result<(Point, f64), Stop> {
        loop {
            let mut nbs = match self.moves {
                Moves::Adjacent => adjacent(s.domain(), &p),
                Moves::Hamming => hamming(s.domain(), &p),
            };
            nbs.shuffle(s.rng());
            let mut moved = false;
            for q in nbs {
                let tq = cost(s.eval(&q)?);
                if tq < t {
                    (p, t, moved) = (q, tq, true);
                    break;
                }
            }
            if !moved {
                return Ok((p, t));
            }
        }
    }

    fn perturb(&self, s: &mut Search<'_>, p: &[u32]) -> Result<Point, Stop> {
        let mut q = p.to_vec();
        for _ in 0..self.strength {
            match random_move(s, &q) {
                Some(r) => q = r,
                None => return s.sample(),
            }
        }
        Ok(q)
    }
}

impl Strategy for IteratedLocalSearch {
    fn name(&self) -> &'static str {
        "ils"
    }

    fn search(&mut self, s: &mut Search<'_>) -> Result<(), Stop> {
        loop {
            let p = s.sample()?;
            let t = cost(s.eval(&p)?);
            let mut inc = self.descend(s, p, t)?;
            let mut quiet = 0;
            while quiet < self.patience {
                let q = self.perturb(s, &inc.0)?;
                let tq = cost(s.eval(&q)?);
                let lo = self.descend(s, q, tq)?;
                if lo.1 < inc.1 {
                    (inc, quiet) = (lo, 0);
                } else {
                    quiet += 1;
                }
            }
        }
    }
}
