//! Strategies without a model: brute force, random sampling, Monte Carlo.

use std::ops::ControlFlow;

use rand::Rng;

use super::Strategy;
use crate::tune::search::{Search, Stop};
use crate::tune::space::Point;

/// Every valid configuration, in index order (AutoTuneTMP's brute force).
#[derive(Debug, Clone, Copy, Default)]
pub struct BruteForce;

impl Strategy for BruteForce {
    fn name(&self) -> &'static str {
        "brute_force"
    }

    fn search(&mut self, s: &mut Search<'_>) -> Result<(), Stop> {
        let domain = s.domain();
        let mut stop = None;
        domain.for_each_valid(&mut |p| match s.eval(p) {
            Ok(_) => ControlFlow::Continue(()),
            Err(e) => {
                stop = Some(e);
                ControlFlow::Break(())
            }
        });
        stop.map_or(Ok(()), Err)
    }
}

/// Uniform samples of the valid configurations, without replacement (Kernel Tuner's
/// `random_sample`).
#[derive(Debug, Clone, Copy, Default)]
pub struct RandomSampling;

impl Strategy for RandomSampling {
    fn name(&self) -> &'static str {
        "random_sampling"
    }

    fn search(&mut self, s: &mut Search<'_>) -> Result<(), Stop> {
        loop {
            let p = s.sample()?;
            // Known points are free, so re-drawing until an unseen one is "without replacement".
            s.eval(&p)?;
        }
    }
}

/// AutoTuneTMP's Monte Carlo: every parameter set to an independent random value; invalid
/// combinations are rejected for free. Unlike [`RandomSampling`] it draws uniformly from the
/// cross product, so regions with many valid neighbours are drawn more often.
#[derive(Debug, Clone, Copy, Default)]
pub struct MonteCarlo;

impl Strategy for MonteCarlo {
    fn name(&self) -> &'static str {
        "monte_carlo"
    }

    fn search(&mut self, s: &mut Search<'_>) -> Result<(), Stop> {
        let radices = s.domain().radices().to_vec();
        let mut rejected = 0u32;
        loop {
            let p: Point = radices.iter().map(|&r| s.rng().random_range(0..r)).collect();
            if s.domain().is_valid(&p) {
                rejected = 0;
                s.eval(&p)?;
            } else {
                rejected += 1;
                // Sparse spaces: fall back to a uniform valid draw rather than spinning.
                if rejected > 1000 {
                    let q = s.sample()?;
                    s.eval(&q)?;
                }
            }
        }
    }
}
