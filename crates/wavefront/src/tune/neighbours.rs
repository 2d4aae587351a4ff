//! A predictor that ranks whole CPU configurations instead of regressing each parameter (issue
//! 21): for a new instance, take the [`NEIGHBOURS`] training instances nearest in
//! (`log2 dim`, `log2 tsize`, `dsize`), score every legal (executor, tile) configuration on each
//! of them by its % of that instance's best, and pick the configuration whose worst
//! ([`Aggregate::Worst`]) or weighted mean ([`Aggregate::Mean`]) score is highest.
//!
//! Why: the chained regressions decide the executor and then the tile from separate models,
//! each fitted over all training instances, and the snapped result can be a configuration no
//! nearby training instance ranked well (the quiet Zen 5 run predicted sequential tiles of 16
//! for Smith-Waterman at side 150, where the sequential sweep's best was tiles of 128). Ranking
//! whole configurations on the nearest instances only ever picks one that was measured near
//! the best around the query, and the worst-case aggregate prefers the configuration that is
//! safe on every neighbour, which is what the "never below 80 %" goal asks for.
//!
//! A configuration is carried between grid sides as tiles per side, `log2(dim / tile)` (as the
//! tile regressions are): on a neighbour of side `d` it is the legal tile nearest to
//! `d / tiles per side` in `log2` space. The training rows hold each executor's best few
//! ([`crate::tune::training_set`]: the best five within 5 %), so a configuration missing from a
//! neighbour's rows is known only to be slower than those; it is scored as [`ABSENT_FACTOR`]
//! times slower than that executor's best there, i.e. at the goal's floor.

use std::collections::BTreeMap;

use crate::tune::features::Features;
use crate::tune::learn::{Kind, TrainRow, kind};
use crate::tune::space::{Candidate, snap_tile_log2};

/// How many nearest training instances vote: the four corners of the (`dim`, `tsize`) cell of
/// a query inside the regular training grid.
pub const NEIGHBOURS: usize = 4;

/// A configuration absent from a neighbour's best rows is taken to run this factor slower than
/// that executor's best there (80 % of it, the goal's minimum): it is more than 5 % slower
/// ([`crate::tune::BEST_WITHIN`]), and how much more is not known.
pub const ABSENT_FACTOR: f64 = 1.25;

/// How the neighbours' scores of one configuration are combined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Aggregate {
    /// The lowest score over the neighbours (ties: the weighted mean).
    Worst,
    /// The mean weighted by `1 / (distance + 0.1)` (ties: the lowest).
    Mean,
}

/// One training instance: where it lies and its best CPU times per (executor, tile).
#[derive(Debug, Clone)]
struct Known {
    features: Features,
    /// Its fastest CPU-only time (the 100 % of its scores).
    best: f64,
    /// The fastest time of each CPU executor.
    kind_best: BTreeMap<Kind, f64>,
    /// Every kept row's time, by (executor, tile).
    times: BTreeMap<(Kind, usize), f64>,
}

/// The fitted ranking predictor (CPU executors only; the GPU decision stays with the chain).
#[derive(Debug, Clone)]
pub struct Neighbours {
    known: Vec<Known>,
    tiles: Vec<usize>,
    aggregate: Aggregate,
}

/// Distance between two instances: one unit per factor of two in side, per factor of four in
/// tsize (the training grid's grain step) and per 8 bytes of payload.
fn distance(a: &Features, b: &Features) -> f64 {
    let (xa, xb) = (a.x(), b.x());
    let d = [xa[0] - xb[0], (xa[1] - xb[1]) / 2.0, xa[2] - xb[2]];
    d.iter().map(|v| v * v).sum::<f64>().sqrt()
}

impl Neighbours {
    /// Groups `rows` by instance; rows of GPU configurations and rows without a positive time
    /// are ignored. `tiles` are the legal CPU tile sides.
    pub fn fit(rows: &[TrainRow], tiles: &[usize], aggregate: Aggregate) -> Self {
        let mut known: Vec<Known> = Vec::new();
        let cpu = |r: &&TrainRow| kind(&r.candidate) != Kind::Gpu && r.time_ms.is_finite() && r.time_ms > 0.0;
        for r in rows.iter().filter(cpu) {
            let i = match known.iter().position(|k| k.features == r.features) {
                Some(i) => i,
                None => {
                    known.push(Known {
                        features: r.features,
                        best: f64::INFINITY,
                        kind_best: BTreeMap::new(),
                        times: BTreeMap::new(),
                    });
                    known.len() - 1
                }
            };
            let k = &mut known[i];
            let key = (kind(&r.candidate), r.candidate.tile);
            let t = k.times.entry(key).or_insert(f64::INFINITY);
            *t = t.min(r.time_ms);
            let b = k.kind_best.entry(key.0).or_insert(f64::INFINITY);
            *b = b.min(r.time_ms);
            k.best = k.best.min(r.time_ms);
        }
        Neighbours { known, tiles: tiles.to_vec(), aggregate }
    }

    /// `T_best / T` on `k` of the configuration with `tiles_per_side` (`log2`) on `executor`.
    fn score(&self, k: &Known, executor: Kind, tiles_per_side: f64) -> f64 {
        let Some(&exec_best) = k.kind_best.get(&executor) else { return 0.0 };
        let dim = k.features.dim.max(1);
        let tile = snap_tile_log2((dim as f64).log2() - tiles_per_side, &self.tiles, dim);
        let t = k.times.get(&(executor, tile)).copied().unwrap_or(exec_best * ABSENT_FACTOR);
        k.best / t
    }

    /// The nearest [`NEIGHBOURS`] training instances of `f` and their distances (ties by the
    /// order of the rows, which [`crate::tune::Predictor::fit`] makes canonical).
    fn nearest(&self, f: &Features) -> Vec<(&Known, f64)> {
        let mut by: Vec<(&Known, f64)> = self.known.iter().map(|k| (k, distance(f, &k.features))).collect();
        by.sort_by(|a, b| a.1.total_cmp(&b.1));
        by.truncate(NEIGHBOURS);
        by
    }

    /// The CPU configuration ranked best on the nearest training instances; `None` without
    /// training instances.
    pub fn predict(&self, f: &Features) -> Option<Candidate> {
        let near = self.nearest(f);
        if near.is_empty() {
            return None;
        }
        let dim = f.dim.max(1);
        let mut legal: Vec<usize> = self.tiles.iter().copied().filter(|&t| t >= 1 && t <= dim).collect();
        if legal.is_empty() {
            legal.push(dim);
        }
        let weights: Vec<f64> = near.iter().map(|(_, d)| 1.0 / (d + 0.1)).collect();
        let wsum: f64 = weights.iter().sum();
        let mut best: Option<((f64, f64), Candidate)> = None;
        for (executor, parallel) in [(Kind::Tiled, false), (Kind::Parallel, true)] {
            for &tile in &legal {
                let tps = (dim as f64 / tile as f64).log2();
                let scores: Vec<f64> = near.iter().map(|(k, _)| self.score(k, executor, tps)).collect();
                let worst = scores.iter().copied().fold(f64::INFINITY, f64::min);
                let mean = scores.iter().zip(&weights).map(|(s, w)| s * w).sum::<f64>() / wsum;
                let key = match self.aggregate {
                    Aggregate::Worst => (worst, mean),
                    Aggregate::Mean => (mean, worst),
                };
                // Strictly better only: ties keep the earlier (sequential, smaller tile).
                if best.is_none_or(|(b, _)| better(key, b)) {
                    best = Some((key, Candidate::cpu(parallel, tile)));
                }
            }
        }
        best.map(|b| b.1)
    }
}

/// Scores closer than this are a tie. Many scores are the absent floor `best / (exec_best *
/// ABSENT_FACTOR)`, which rounds to one ulp either side of the same value depending on the
/// times (and the log's JSON round trip moves times by an ulp): without a tolerance such ties
/// would be decided by rounding, not by the secondary key.
const TIE: f64 = 1e-9;

/// `a` ranks above `b`: a higher primary score, or a tied primary and a higher secondary.
fn better(a: (f64, f64), b: (f64, f64)) -> bool {
    if (a.0 - b.0).abs() > TIE { a.0 > b.0 } else { a.1 > b.1 + TIE }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tune::space::CPU_TILES;

    fn row(dim: usize, tsize: f64, parallel: bool, tile: usize, time_ms: f64) -> TrainRow {
        TrainRow {
            features: Features::new(dim, tsize, 0),
            candidate: Candidate::cpu(parallel, tile),
            time_ms,
        }
    }

    /// Four training instances around side 150: parallel wins narrowly on the two large ones
    /// and loses clearly on the two small ones; the sequential sweep's best is one tile over
    /// the grid on every one, while the parallel tiles differ. Both aggregates pick the
    /// sequential executor with one tile per side, the configuration every neighbour ranked
    /// (near) best.
    fn around_150() -> Vec<TrainRow> {
        let mut rows = Vec::new();
        for (dim, tsize, par_ms, par_tile) in
            [(128, 1.0, 1.3, 16), (128, 4.0, 1.4, 16), (256, 1.0, 0.95, 32), (256, 4.0, 0.97, 64)]
        {
            rows.push(row(dim, tsize, false, dim, 1.0));
            rows.push(row(dim, tsize, false, dim / 2, 1.04));
            rows.push(row(dim, tsize, true, par_tile, par_ms));
        }
        // Far away: a large grid where parallel tiles of 16 win by 2x. It must not vote.
        rows.push(row(2048, 2.0, true, 16, 0.5));
        rows.push(row(2048, 2.0, false, 128, 1.0));
        rows
    }

    #[test]
    fn picks_the_configuration_safe_on_every_neighbour() {
        let rows = around_150();
        for aggregate in [Aggregate::Worst, Aggregate::Mean] {
            let n = Neighbours::fit(&rows, &CPU_TILES, aggregate);
            assert_eq!(
                n.predict(&Features::new(150, 2.0, 0)),
                Some(Candidate::cpu(false, 128)),
                "{aggregate:?}"
            );
        }
    }

    /// The nearest four are the grid cell's corners; a far instance does not vote.
    #[test]
    fn nearest_are_the_cell_corners() {
        let n = Neighbours::fit(&around_150(), &CPU_TILES, Aggregate::Worst);
        let near: Vec<usize> =
            n.nearest(&Features::new(150, 2.0, 0)).iter().map(|(k, _)| k.features.dim).collect();
        assert_eq!(near.len(), NEIGHBOURS);
        assert!(near.iter().all(|&d| d == 128 || d == 256), "{near:?}");
        // Near the far instance, it is the nearest.
        assert_eq!(n.nearest(&Features::new(2000, 2.0, 0))[0].0.features.dim, 2048);
    }

    /// Scores: a kept row scores `best / time`; a configuration missing from the rows scores
    /// [`ABSENT_FACTOR`] below its executor's best; an executor never timed scores 0. Tiles
    /// carry over as tiles per side: 2 tiles per side at side 256 is tile 128.
    #[test]
    fn scores_follow_the_rows() {
        let n = Neighbours::fit(&around_150(), &CPU_TILES, Aggregate::Worst);
        let k = n.known.iter().find(|k| k.features == Features::new(256, 1.0, 0)).unwrap();
        assert_eq!(n.score(k, Kind::Parallel, 3.0), 1.0); // tile 32, the best
        assert!((n.score(k, Kind::Tiled, 0.0) - 0.95).abs() < 1e-12); // tile 256
        assert!((n.score(k, Kind::Tiled, 1.0) - 0.95 / 1.04).abs() < 1e-12); // tile 128
        assert!((n.score(k, Kind::Tiled, 4.0) - 0.95 / ABSENT_FACTOR).abs() < 1e-12); // tile 16
        assert_eq!(n.score(k, Kind::Gpu, 1.0), 0.0);
        assert!(
            Neighbours::fit(&[], &CPU_TILES, Aggregate::Mean).predict(&Features::new(9, 1.0, 0)).is_none()
        );
    }

    /// The two aggregates differ where one configuration is best on average but poor on one
    /// neighbour and another is fair everywhere: the worst case takes the fair one. Around
    /// side 160, parallel wins by 1.25x on three corners and loses by 1.5x on the fourth.
    #[test]
    fn worst_case_and_mean_differ_on_a_risky_choice() {
        let mut rows = Vec::new();
        for (dim, tsize, par_ms) in [(128, 1.0, 0.8), (128, 4.0, 0.8), (256, 1.0, 0.8), (256, 4.0, 1.5)] {
            // Parallel tiles of 16 and 32 at side 160 are 16 and 32 at 128, 32 and 64 at 256;
            // sequential tiles of 64 are 64 at 128 and 128 at 256.
            for tile in [dim / 8, dim / 4] {
                rows.push(row(dim, tsize, true, tile, par_ms));
            }
            for tile in [dim / 2, dim] {
                rows.push(row(dim, tsize, false, tile, 1.0));
            }
        }
        let q = Features::new(160, 2.0, 0);
        let worst = Neighbours::fit(&rows, &CPU_TILES, Aggregate::Worst).predict(&q).unwrap();
        let mean = Neighbours::fit(&rows, &CPU_TILES, Aggregate::Mean).predict(&q).unwrap();
        assert_eq!(worst, Candidate::cpu(false, 64), "worst 0.8 against parallel's 0.67");
        assert!(mean.parallel && [16, 32].contains(&mean.tile), "{mean}: mean 0.92 against 0.85");
    }

    /// Primary scores an ulp apart are a tie, decided by the secondary key.
    #[test]
    fn rounding_does_not_decide_a_tie() {
        let (x, y) = (0.8, 0.8 + f64::EPSILON);
        assert!(better((x, 0.9), (y, 0.5)));
        assert!(!better((y, 0.5), (x, 0.9)));
        assert!(better((0.81, 0.1), (0.8, 0.9)));
        assert!(!better((0.8, 0.9), (0.8, 0.9)), "equal keys: not better");
    }

    /// A grid narrower than every legal tile still gets one: a single tile over the grid.
    #[test]
    fn tiny_grids_get_a_legal_tile() {
        let n = Neighbours::fit(&around_150(), &[16, 32], Aggregate::Worst);
        let c = n.predict(&Features::new(5, 1.0, 0)).unwrap();
        assert_eq!(c.tile, 5);
    }
}
