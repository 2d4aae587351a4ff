//! A genetic algorithm over the discrete parameters.

use rand::Rng;

use super::{Strategy, cost};
use crate::tune::search::{Search, Stop};
use crate::tune::space::Point;

/// Generational GA: tournament selection, uniform crossover, per-gene mutation to a random
/// value with probability `1/d`, `elite` survivors. Invalid children are re-drawn (up to 20
/// tries) and otherwise replaced by a random valid point; failed configurations rank last.
#[derive(Debug, Clone, Copy)]
pub struct Genetic {
    /// Population size.
    pub population: usize,
    /// Tournament size.
    pub tournament: usize,
    /// Best individuals copied unchanged into the next generation.
    pub elite: usize,
}

impl Default for Genetic {
    fn default() -> Self {
        Genetic { population: 20, tournament: 3, elite: 2 }
    }
}

impl Genetic {
    fn pick<'p>(&self, s: &mut Search<'_>, pop: &'p [(Point, f64)]) -> &'p Point {
        let mut best = &pop[s.rng().random_range(0..pop.len())];
        for _ in 1..self.tournament {
            let c = &pop[s.rng().random_range(0..pop.len())];
            if c.1 < best.1 {
                best = c;
            }
        }
        &best.0
    }

    fn child(&self, s: &mut Search<'_>, pop: &[(Point, f64)]) -> Result<Point, Stop> {
        let radices = s.domain().radices().to_vec();
        let d = radices.len();
        for _ in 0..20 {
            let a = self.pick(s, pop).clone();
            let b = self.pick(s, pop).clone();
            let mut c: Point = (0..d).map(|k| if s.rng().random::<bool>() { a[k] } else { b[k] }).collect();
            for k in 0..d {
                if s.rng().random::<f64>() < 1.0 / d as f64 {
                    c[k] = s.rng().random_range(0..radices[k]);
                }
            }
            if s.domain().is_valid(&c) {
                return Ok(c);
            }
        }
        s.sample()
    }
}

impl Strategy for Genetic {
    fn name(&self) -> &'static str {
        "genetic"
    }

    fn search(&mut self, s: &mut Search<'_>) -> Result<(), Stop> {
        let n = self.population.max(2);
        let mut pop = Vec::with_capacity(n);
        for _ in 0..n {
            let p = s.sample()?;
            let t = cost(s.eval(&p)?);
            pop.push((p, t));
        }
        loop {
            pop.sort_by(|a, b| a.1.total_cmp(&b.1));
            let mut next: Vec<(Point, f64)> = pop.iter().take(self.elite.min(n)).cloned().collect();
            while next.len() < n {
                let c = self.child(s, &pop)?;
                let t = cost(s.eval(&c)?);
                next.push((c, t));
            }
            pop = next;
        }
    }
}
