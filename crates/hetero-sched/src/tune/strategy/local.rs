//! Local searches from AutoTuneTMP and the sparse-grid thesis: line search, neighbourhood and
//! full-neighbourhood search, hill climbing with input reduction. All restart from a random
//! point when they converge, so the whole budget is used.

use std::collections::{HashSet, VecDeque};

use rand::Rng;

use super::{Strategy, cost};
use crate::tune::search::{Search, Stop};
use crate::tune::space::Point;

/// A random valid starting point and its cost.
/// Walks parameter `k` from `cur` in direction `dir`, evaluating each valid point with `eval`,
/// until the end of the axis or until the last `window` times stop improving on the oldest of
/// them (a walk that only meets noise stops early); returns the best point seen.
pub(super) fn walk_axis(
    s: &mut Search<'_>,
    cur: &[u32],
    k: usize,
    dir: i64,
    window: usize,
    mut eval: impl FnMut(&mut Search<'_>, &[u32]) -> Result<f64, Stop>,
) -> Result<(Point, f64), Stop> {
    let r = i64::from(s.domain().radices()[k]);
    let mut recent: VecDeque<f64> = VecDeque::with_capacity(window);
    let mut best = (cur.to_vec(), f64::INFINITY);
    let mut v = i64::from(cur[k]) + dir;
    while (0..r).contains(&v) {
        let mut q = cur.to_vec();
        q[k] = v as u32;
        v += dir;
        if !s.domain().is_valid(&q) {
            continue;
        }
        let t = eval(s, &q)?;
        if t < best.1 {
            best = (q, t);
        }
        if recent.len() == window {
            recent.pop_front();
        }
        recent.push_back(t);
        if recent.len() == window && recent.iter().skip(1).all(|&x| x >= recent[0]) {
            break;
        }
    }
    Ok(best)
}

/// Best-improvement climbing from random starts until the budget stops it: `neighbours` gives
/// the evaluated moves from the current point; a climb ends when no move improves (after up to
/// `2d` sideways moves across a plateau), and the next starts afresh.
fn restart_climbing(
    s: &mut Search<'_>,
    mut neighbours: impl FnMut(&mut Search<'_>, &[u32]) -> Result<Vec<(Point, f64)>, Stop>,
) -> Result<(), Stop> {
    let d = s.domain().radices().len();
    loop {
        let (cur, t_cur) = start(s)?;
        let mut climb = Climb::new(cur, t_cur, 2 * d);
        loop {
            let nbs = neighbours(s, &climb.cur)?;
            if !climb.advance(s, nbs) {
                break;
            }
        }
    }
}

fn start(s: &mut Search<'_>) -> Result<(Point, f64), Stop> {
    let p = s.sample()?;
    let t = cost(s.eval(&p)?);
    Ok((p, t))
}

/// A best-improvement climb that may also cross plateaus: with no better neighbour it moves
/// to a random equally good one it has not stood on, at most `sideways` times in a row.
struct Climb {
    cur: Point,
    t_cur: f64,
    visited: HashSet<Point>,
    sideways: usize,
    left: usize,
}

impl Climb {
    fn new(cur: Point, t_cur: f64, sideways: usize) -> Self {
        let visited = HashSet::from([cur.clone()]);
        Climb { cur, t_cur, visited, sideways, left: sideways }
    }

    /// Moves to the best of `nbs` (or sideways); false at a local optimum.
    fn advance(&mut self, s: &mut Search<'_>, nbs: Vec<(Point, f64)>) -> bool {
        let best = nbs.iter().filter(|n| n.1 < self.t_cur).min_by(|a, b| a.1.total_cmp(&b.1)).cloned();
        let next = match best {
            Some(n) => {
                self.left = self.sideways;
                n
            }
            None => {
                let equal: Vec<&(Point, f64)> = nbs
                    .iter()
                    .filter(|n| n.1 == self.t_cur && n.1.is_finite() && !self.visited.contains(&n.0))
                    .collect();
                if self.left == 0 || equal.is_empty() {
                    return false;
                }
                self.left -= 1;
                equal[s.rng().random_range(0..equal.len())].clone()
            }
        };
        self.visited.insert(next.0.clone());
        (self.cur, self.t_cur) = next;
        true
    }
}

/// One parameter at a time, all its values with the others fixed; move to the best; sweep the
/// parameters round-robin until a full sweep brings no improvement (AutoTuneTMP's line search).
#[derive(Debug, Clone, Copy, Default)]
pub struct LineSearch;

impl Strategy for LineSearch {
    fn name(&self) -> &'static str {
        "line_search"
    }

    fn search(&mut self, s: &mut Search<'_>) -> Result<(), Stop> {
        let radices = s.domain().radices().to_vec();
        let d = radices.len();
        loop {
            let (mut cur, mut t_cur) = start(s)?;
            let mut quiet = 0;
            let mut k = 0;
            while quiet < d {
                let mut improved = false;
                for v in 0..radices[k] {
                    let mut q = cur.clone();
                    q[k] = v;
                    let t = cost(s.eval(&q)?);
                    if t < t_cur {
                        (cur, t_cur, improved) = (q, t, true);
                    }
                }
                quiet = if improved { 0 } else { quiet + 1 };
                k = (k + 1) % d;
            }
        }
    }
}

/// Best-improvement moves to the adjacent values (one parameter one step up or down) until no
/// neighbour is better (AutoTuneTMP's neighbourhood search). A step skips over invalid and
/// failed configurations to the nearest usable value in that direction, so a failing
/// neighbour does not wall the search in; with no better neighbour it crosses a plateau by up
/// to `2d` sideways moves to equally good, unvisited neighbours.
#[derive(Debug, Clone, Copy, Default)]
pub struct Neighbourhood;

impl Neighbourhood {
    /// The nearest valid, non-failing point from `p` along parameter `k` in direction `dir`.
    fn step(s: &mut Search<'_>, p: &[u32], k: usize, dir: i64) -> Result<Option<(Point, f64)>, Stop> {
        let r = i64::from(s.domain().radices()[k]);
        let mut v = i64::from(p[k]) + dir;
        while (0..r).contains(&v) {
            let mut q = p.to_vec();
            q[k] = v as u32;
            v += dir;
            if s.domain().is_valid(&q)
                && let Some(t) = s.eval(&q)?
            {
                return Ok(Some((q, t)));
            }
        }
        Ok(None)
    }
}

impl Strategy for Neighbourhood {
    fn name(&self) -> &'static str {
        "neighbourhood"
    }

    fn search(&mut self, s: &mut Search<'_>) -> Result<(), Stop> {
        let d = s.domain().radices().len();
        restart_climbing(s, |s, cur| {
            let mut nbs = Vec::new();
            for k in 0..d {
                for dir in [-1, 1] {
                    nbs.extend(Self::step(s, cur, k, dir)?);
                }
            }
            Ok(nbs)
        })
    }
}

/// Best-improvement moves over the full neighbourhood: every combination of {down, stay, up}
/// in every parameter (up to 3^d - 1 points; AutoTuneTMP's full neighbourhood search).
/// Like [`Neighbourhood`] it crosses plateaus by up to `2d` sideways moves.
#[derive(Debug, Clone, Copy, Default)]
pub struct FullNeighbourhood;

impl FullNeighbourhood {
    fn neighbours(s: &Search<'_>, p: &[u32]) -> Vec<Point> {
        let radices = s.domain().radices();
        let d = p.len();
        let mut out = Vec::new();
        let mut offs = vec![-1i64; d];
        loop {
            if offs.iter().any(|&o| o != 0) {
                let q: Option<Point> = (0..d)
                    .map(|k| {
                        let v = i64::from(p[k]) + offs[k];
                        (0..i64::from(radices[k])).contains(&v).then_some(v as u32)
                    })
                    .collect();
                if let Some(q) = q.filter(|q| s.domain().is_valid(q)) {
                    out.push(q);
                }
            }
            let mut k = d;
            loop {
                if k == 0 {
                    return out;
                }
                k -= 1;
                offs[k] += 1;
                if offs[k] <= 1 {
                    break;
                }
                offs[k] = -1;
            }
        }
    }
}

impl Strategy for FullNeighbourhood {
    fn name(&self) -> &'static str {
        "full_neighbourhood"
    }

    fn search(&mut self, s: &mut Search<'_>) -> Result<(), Stop> {
        restart_climbing(s, |s, cur| {
            let mut nbs = Vec::new();
            for q in Self::neighbours(s, cur) {
                let t = cost(s.eval(&q)?);
                nbs.push((q, t));
            }
            Ok(nbs)
        })
    }
}

/// Coordinate-wise hill climbing (sparse-grid thesis, Listings 5.2/5.3): per parameter, walk up
/// and down from the current value while it keeps improving, stopping when the last `window`
/// measurements are full and the oldest is still their best; sweep until nothing improves, then
/// restart from a random point.
///
/// With input reduction (the objective offers
/// [`evaluate_reduced`](crate::tune::Objective::evaluate_reduced)), the walks use reduced
/// evaluations and only each sweep's winner is measured at full size.
#[derive(Debug, Clone, Copy)]
pub struct HillClimbing {
    /// The circular buffer's capacity `k` (the thesis uses 2).
    pub window: usize,
}

impl Default for HillClimbing {
    fn default() -> Self {
        HillClimbing { window: 2 }
    }
}

impl Strategy for HillClimbing {
    fn name(&self) -> &'static str {
        "hill_climbing"
    }

    fn search(&mut self, s: &mut Search<'_>) -> Result<(), Stop> {
        let reduced = s.has_reduction();
        let d = s.domain().radices().len();
        loop {
            let mut cur = s.sample()?;
            let mut t_cur = cost(if reduced { s.eval_reduced(&cur)? } else { s.eval(&cur)? });
            loop {
                let mut improved = false;
                for k in 0..d {
                    for dir in [1, -1] {
                        let (q, t) = walk_axis(s, &cur, k, dir, self.window, |s, q| {
                            Ok(cost(if reduced { s.eval_reduced(q)? } else { s.eval(q)? }))
                        })?;
                        if t < t_cur {
                            (cur, t_cur, improved) = (q, t, true);
                        }
                    }
                }
                if !improved {
                    break;
                }
            }
            if reduced {
                // The reduced optimum is confirmed at full size; the budget counts it.
                s.eval(&cur)?;
            }
        }
    }
}
