//! Model-guided hill climbing: the default strategy.

use rand::Rng;
use rand::seq::SliceRandom;

use super::local::walk_axis;
use super::tpe::Model;
use super::{Strategy, cost};
use crate::tune::search::{Search, Stop};
use crate::tune::space::Point;

/// Hill climbing alternating with a model: `initial` evaluations (the first `corners` of them
/// random corners of the space, every parameter at one end of its range; the rest uniformly
/// random) and a climb from the best of them; then `model_steps` evaluations proposed by a
/// tree-structured Parzen estimator over everything measured so far (the unseen candidate with
/// the best `l(x)/g(x)`, see
/// [`Tpe`](super::Tpe)); the next climb starts from the new best point if the model found one,
/// else from the model's next proposal; and so on until the budget is spent. The first time the
/// model's proposals bring no new best, up to `pair_probes` two-axis moves from the best point
/// (both parameters set to ends of their ranges, random pairs and ends) are tried once, and the
/// next climb starts from the first that improves on it.
///
/// A climb sweeps the parameters in random order; per parameter it walks up and down from the
/// current value while the times keep improving (the sparse-grid thesis's rule with a window of
/// `window` measurements) and moves to the best value seen; in its first sweep it also tries
/// both ends of each parameter's range (`edges`); it ends when a sweep improves the time by less
/// than the fraction `min_gain`. Chosen as the default by replay over GPU and CPU landscapes
/// (see the book).
///
/// Why corners: optima of kernel parameters sit at an end of an axis surprisingly often
/// (largest tile, smallest chunk, one algorithm of a list), and where two parameters interact
/// (a tile size that pays only with one method) the good end of one axis is a local optimum a
/// coordinate climb cannot reach from the middle of the other. Random corners are a two-level
/// screening design: they measure every parameter's ends in combination. Why `min_gain`: on a
/// flat axis (31 block sizes within 1 % of each other) every sweep finds some value a little
/// faster, and a climb that follows such gains spends its budget on noise in one basin. Why
/// pair probes: when the corners miss the good combination, a climb ends in a basin that no
/// single-parameter move leaves (pnpoly: the best method pays only at the largest tile, and
/// either change alone is slower); moving both to ends at once leaves it. Once per run, at the
/// first stagnation, because each probe spent where no such trap exists is an evaluation lost
/// (probing after every climb halved the A100 convolution's within5 at 400 evaluations). Why
/// wall moves: where large tiles fail with large blocks, a climb can end at the largest block
/// beside the failures, where every single move is slower or fails and the way out is a
/// smaller block and a larger tile at once (pnpoly on an RTX 2080 Ti); only from the run's best
/// point, because each probe around a wall is an evaluation not spent elsewhere.
#[derive(Debug, Clone, Copy)]
pub struct Hybrid {
    /// Evaluations before the first climb (corners, then uniform samples).
    pub initial: usize,
    /// The walk's window (stop after `window - 1` values without improvement).
    pub window: usize,
    /// Fraction of observations the model counts as good.
    pub gamma: f64,
    /// Candidates the model rates per restart.
    pub candidates: usize,
    /// Model-proposed evaluations between climbs.
    pub model_steps: usize,
    /// Whether a climb's first sweep also tries both ends of each parameter's range.
    pub edges: bool,
    /// How many of the `initial` evaluations are random corners of the space.
    pub corners: usize,
    /// A climb sweeps again only after a sweep that cut the time by at least this fraction.
    pub min_gain: f64,
    /// The first time the model's proposals after a climb bring no new best, up to this many
    /// two-axis moves from the best point, both parameters to ends of their ranges (0: none).
    pub pair_probes: usize,
    /// When a climb ends at the run's best point beside a failing configuration (one step along
    /// some axis fails), the diagonal moves around that wall: from the failing neighbour, along
    /// each other axis in both directions, up to this many steps to the first configuration
    /// that runs; the climb goes on from the first that improves on its end (0: none).
    pub wall_steps: usize,
}

impl Default for Hybrid {
    fn default() -> Self {
        Hybrid {
            initial: 10,
            window: 2,
            gamma: 0.15,
            candidates: 64,
            model_steps: 10,
            edges: true,
            corners: 7,
            min_gain: 0.03,
            pair_probes: 12,
            wall_steps: 3,
        }
    }
}

impl Hybrid {
    fn eval(s: &mut Search<'_>, obs: &mut Vec<(Point, f64)>, p: &[u32]) -> Result<f64, Stop> {
        let seen = s.seen(p);
        let t = cost(s.eval(p)?);
        if !seen && s.domain().is_valid(p) {
            obs.push((p.to_vec(), t));
        }
        Ok(t)
    }

    fn climb(&self, s: &mut Search<'_>, obs: &mut Vec<(Point, f64)>, mut cur: Point) -> Result<(), Stop> {
        let mut t_cur = Self::eval(s, obs, &cur)?;
        let mut order: Vec<usize> = (0..cur.len()).collect();
        let mut first_sweep = true;
        loop {
            order.shuffle(s.rng());
            let mut improved = false;
            let t_sweep = t_cur;
            for &k in &order {
                if self.edges && first_sweep {
                    // Optima sit at an end of an axis surprisingly often (smallest chunk, largest
                    // block); a walk from the middle would stop on noise before reaching it.
                    let r = s.domain().radices()[k];
                    for e in [0, r - 1] {
                        let mut q = cur.clone();
                        q[k] = e;
                        if s.domain().is_valid(&q) {
                            let t = Self::eval(s, obs, &q)?;
                            if t < t_cur {
                                (cur, t_cur, improved) = (q, t, true);
                            }
                        }
                    }
                }
                for dir in [1, -1] {
                    let (q, t) = walk_axis(s, &cur, k, dir, self.window, |s, q| Self::eval(s, obs, q))?;
                    if t < t_cur {
                        (cur, t_cur, improved) = (q, t, true);
                    }
                }
            }
            first_sweep = false;
            // A climb from a failed point (infinite time) that found any time goes on.
            if !improved || t_cur > t_sweep * (1.0 - self.min_gain) {
                match self.around_wall(s, obs, &cur, t_cur)? {
                    Some((q, t)) => (cur, t_cur) = (q, t),
                    None => return Ok(()),
                }
            }
        }
    }

    /// The nearest valid point from `p` along axis `k` in direction `dir`.
    fn next_valid(s: &Search<'_>, p: &[u32], k: usize, dir: i64) -> Option<Point> {
        let r = i64::from(s.domain().radices()[k]);
        let mut q = p.to_vec();
        let mut v = i64::from(p[k]) + dir;
        while (0..r).contains(&v) {
            q[k] = v as u32;
            if s.domain().is_valid(&q) {
                return Some(q);
            }
            v += dir;
        }
        None
    }

    /// From the end of a climb at the run's best: for each neighbour already known to fail (a
    /// wall), walks every other axis from that neighbour, both directions, up to `wall_steps`
    /// valid points, to the first that runs; the first of those faster than `cur`, if any.
    fn around_wall(
        &self,
        s: &mut Search<'_>,
        obs: &mut Vec<(Point, f64)>,
        cur: &[u32],
        t_cur: f64,
    ) -> Result<Option<(Point, f64)>, Stop> {
        // Only from the run's best point: probes around every local optimum's walls cost more
        // runs elsewhere than they win.
        if self.wall_steps == 0 || s.best().is_none_or(|b| b.1 < t_cur) {
            return Ok(None);
        }
        let d = cur.len();
        let mut walls = Vec::new();
        for k in 0..d {
            for dir in [1, -1] {
                if let Some(q) = Self::next_valid(s, cur, k, dir)
                    && s.seen(&q)
                    && s.eval(&q)?.is_none()
                {
                    walls.push((k, q));
                }
            }
        }
        walls.shuffle(s.rng());
        for (k, wall) in walls {
            let mut rays: Vec<(usize, i64)> =
                (0..d).filter(|&j| j != k).flat_map(|j| [(j, 1), (j, -1)]).collect();
            rays.shuffle(s.rng());
            for (j, dir) in rays {
                let mut q = wall.clone();
                for _ in 0..self.wall_steps {
                    let Some(next) = Self::next_valid(s, &q, j, dir) else { break };
                    q = next;
                    let t = Self::eval(s, obs, &q)?;
                    if t.is_finite() {
                        if t < t_cur {
                            return Ok(Some((q, t)));
                        }
                        break;
                    }
                }
            }
        }
        Ok(None)
    }

    /// From a point no single-axis move improves: set two parameters at once to ends of their
    /// ranges (random pairs, random end combinations), up to `pair_probes` new evaluations;
    /// the first improvement, if any.
    fn pair_escape(
        &self,
        s: &mut Search<'_>,
        obs: &mut Vec<(Point, f64)>,
        cur: &[u32],
        t_cur: f64,
    ) -> Result<Option<(Point, f64)>, Stop> {
        if self.pair_probes == 0 {
            return Ok(None);
        }
        let radices = s.domain().radices().to_vec();
        let mut moves: Vec<(usize, u32, usize, u32)> = Vec::new();
        for (i, &ri) in radices.iter().enumerate() {
            for (j, &rj) in radices.iter().enumerate().skip(i + 1) {
                for ei in [0, ri - 1] {
                    for ej in [0, rj - 1] {
                        if ei != cur[i] && ej != cur[j] {
                            moves.push((i, ei, j, ej));
                        }
                    }
                }
            }
        }
        moves.shuffle(s.rng());
        let start = s.evaluations();
        for (i, ei, j, ej) in moves {
            if s.evaluations() - start >= self.pair_probes as u64 {
                break;
            }
            let mut q = cur.to_vec();
            (q[i], q[j]) = (ei, ej);
            if !s.domain().is_valid(&q) || s.seen(&q) {
                continue;
            }
            let t = Self::eval(s, obs, &q)?;
            if t < t_cur {
                return Ok(Some((q, t)));
            }
        }
        Ok(None)
    }

    /// A random valid corner not yet seen (every parameter at the low or the high end of its
    /// range); a uniform sample if 20 draws find none (constraints may exclude most corners).
    fn corner(s: &mut Search<'_>) -> Result<Point, Stop> {
        let radices = s.domain().radices().to_vec();
        for _ in 0..20 {
            let q: Point =
                radices.iter().map(|&r| if s.rng().random::<bool>() { r - 1 } else { 0 }).collect();
            if s.domain().is_valid(&q) && !s.seen(&q) {
                return Ok(q);
            }
        }
        s.sample()
    }

    /// The unseen valid candidate the model rates best, if any.
    fn propose(&self, s: &mut Search<'_>, obs: &mut [(Point, f64)]) -> Option<Point> {
        obs.sort_by(|a, b| a.1.total_cmp(&b.1));
        let n_good = ((obs.len() as f64 * self.gamma).ceil() as usize).clamp(1, obs.len());
        let radices = s.domain().radices().to_vec();
        let good: Vec<&Point> = obs[..n_good].iter().map(|o| &o.0).collect();
        let bad: Vec<&Point> = obs[n_good..].iter().map(|o| &o.0).collect();
        let (l, g) = (Model::fit(&radices, &good, 0.5), Model::fit(&radices, &bad, 0.5));
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
        pick.map(|(p, _)| p)
    }
}

impl Strategy for Hybrid {
    fn name(&self) -> &'static str {
        "hybrid"
    }

    fn search(&mut self, s: &mut Search<'_>) -> Result<(), Stop> {
        let mut obs: Vec<(Point, f64)> = Vec::new();
        for i in 0..self.initial.max(1) {
            let p = if i < self.corners { Self::corner(s)? } else { s.sample()? };
            Self::eval(s, &mut obs, &p)?;
        }
        let mut start = s.best().map(|b| b.0.clone());
        let mut escaped = false;
        loop {
            let p = match start.take() {
                Some(p) => p,
                None => s.sample()?,
            };
            self.climb(s, &mut obs, p)?;
            let before = s.best().map_or(f64::INFINITY, |b| b.1);
            for _ in 0..self.model_steps {
                match self.propose(s, &mut obs) {
                    Some(q) => {
                        Self::eval(s, &mut obs, &q)?;
                    }
                    None => break,
                }
            }
            let after = s.best().cloned();
            if !escaped
                && let Some((b, t)) = after.clone()
                && t >= before
            {
                escaped = true;
                if let Some((q, _)) = self.pair_escape(s, &mut obs, &b, t)? {
                    start = Some(q);
                    continue;
                }
            }
            start = match after {
                Some((b, t)) if t < before => Some(b),
                _ if obs.is_empty() => None,
                _ => self.propose(s, &mut obs),
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tune::search::{Budget, Outcome, run};
    use crate::tune::space::{Domain, Space};
    use crate::tune::{Param, Point};

    fn grid(radices: &[i64]) -> Space {
        radices
            .iter()
            .enumerate()
            .fold(Space::builder(), |b, (k, &r)| b.param(Param::range(format!("p{k}"), 0, r - 1, 1)))
            .build()
            .unwrap()
    }

    /// pnpoly's trap in miniature (times taken from its RTX 3090 landscape): method 0 pays
    /// only at the largest tiles (with a bump before them), method 2 has an interior optimum
    /// 15 % slower; the 31 block sizes are flat within 1 %, and the largest tiles fail with
    /// the largest blocks.
    fn trap(p: &[u32]) -> Option<f64> {
        const M0: [f64; 11] = [5.0, 2.8, 1.81, 1.49, 1.45, 1.37, 1.33, 1.32, 1.34, 1.03, 1.0];
        const M1: [f64; 11] = [4.9, 3.0, 1.9, 1.5, 1.4, 1.3, 1.27, 1.26, 1.26, 1.25, 1.25];
        const M2: [f64; 11] = [3.7, 2.2, 1.6, 1.3, 1.26, 1.2, 1.157, 1.19, 1.19, 1.21, 1.21];
        let (m, t, b) = (p[0] as usize, p[1] as usize, p[2]);
        if t >= 7 && b >= 28 {
            return None;
        }
        let base = [M0, M1, M2][m][t];
        Some(base * (1.0 + 0.01 * f64::from((b * 7) % 5) / 4.0))
    }

    fn search(
        h: Hybrid,
        space: &Space,
        f: fn(&[u32]) -> Option<f64>,
        budget: u64,
        seed: u64,
    ) -> Option<(Point, f64)> {
        let mut obj = |p: &[u32]| f(p).map_or_else(|| Outcome::Failed("fails".into()), Outcome::Time);
        run(&mut { h }, space, &mut obj, Budget::evals(budget), seed).unwrap().best
    }

    #[test]
    fn the_initial_design_starts_with_distinct_corners() {
        let space = grid(&[9, 5, 7, 2]);
        let h = Hybrid::default();
        let mut obj = |p: &[u32]| Outcome::Time(p.iter().map(|&v| f64::from(v)).sum::<f64>() + 1.0);
        let r = run(&mut { h }, &space, &mut obj, Budget::evals(h.corners as u64), 3).unwrap();
        let pts: Vec<&Point> = r.history.iter().map(|x| &x.point).collect();
        assert_eq!(pts.len(), h.corners);
        for p in &pts {
            assert!(p.iter().zip(space.radices()).all(|(&v, &r)| v == 0 || v == r - 1), "{p:?}");
        }
        let mut sorted = pts.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), pts.len());
    }

    #[test]
    fn corners_excluded_by_constraints_fall_back_to_valid_points() {
        // Only points with p0 + p1 in 3..=9 are valid: the corners (0, 0) and (9, 9) are not.
        let space = Space::builder()
            .param(Param::range("p0", 0, 9, 1))
            .param(Param::range("p1", 0, 9, 1))
            .restrict("band", |c| (3..=9).contains(&(c.int("p0").unwrap() + c.int("p1").unwrap())))
            .build()
            .unwrap();
        let mut obj = |p: &[u32]| Outcome::Time(f64::from(p[0] * 10 + p[1]) + 1.0);
        let r = run(&mut Hybrid::default(), &space, &mut obj, Budget::evals(12), 5).unwrap();
        assert_eq!(r.evaluations, 12);
        assert!(r.history.iter().all(|x| space.is_valid(&x.point)));
    }

    #[test]
    fn escapes_the_interaction_trap_more_often_than_a_plain_climb() {
        let space = grid(&[3, 11, 31]);
        // The optimum by enumeration.
        let best = space.valid_points().filter_map(|p| trap(&p)).fold(f64::INFINITY, f64::min);
        let found = |h: Hybrid| {
            (0..40)
                .filter(|&seed| search(h, &space, trap, 60, seed).is_some_and(|(_, t)| t <= best * 1.05))
                .count()
        };
        let plain = Hybrid { corners: 0, min_gain: 0.0, pair_probes: 0, ..Hybrid::default() };
        let (ours, theirs) = (found(Hybrid::default()), found(plain));
        assert!(ours >= 35, "the default found the optimum in {ours} of 40 runs");
        assert!(theirs < ours, "without corners and min_gain: {theirs} of 40, with: {ours}");
    }

    /// Runs of 50 seeded replays at 100 evaluations that get within 5 % of a landscape's best.
    fn replay_within5(file: &str) -> impl Fn(Hybrid) -> usize {
        use crate::tune::{KtFile, ReplayDomain, ReplayObjective};
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../benches/peers/tuning/landscapes")
            .join(file);
        let domain = ReplayDomain::new(&KtFile::read(&path).unwrap()).unwrap();
        let best = domain.best_time().unwrap();
        move |h: Hybrid| {
            (0..50)
                .filter(|&seed| {
                    let mut obj = ReplayObjective(&domain);
                    let r = run(&mut { h }, &domain, &mut obj, Budget::evals(100), seed).unwrap();
                    r.best.is_some_and(|(_, t)| t <= best * 1.05)
                })
                .count()
        }
    }

    /// The real landscape the trap comes from (Kernel Tuner's pnpoly on an RTX 3090, 4092
    /// configurations, 318 failing): 50 seeded replays at 100 evaluations.
    #[test]
    fn pnpoly_replay_beats_the_plain_climb() {
        let within5 = replay_within5("heldout/pnpoly_RTX3090.json.gz");
        let plain = Hybrid { corners: 0, min_gain: 0.0, pair_probes: 0, ..Hybrid::default() };
        let no_pairs = Hybrid { pair_probes: 0, ..Hybrid::default() };
        let (ours, theirs, without) = (within5(Hybrid::default()), within5(plain), within5(no_pairs));
        assert!(ours >= 48, "the default reached 5 % in {ours} of 50 runs");
        assert!(
            theirs + 8 <= ours,
            "without corners, min_gain and pair probes: {theirs} of 50, with: {ours}"
        );
        assert!(without < ours, "without pair probes: {without} of 50, with: {ours}");
    }

    #[test]
    fn pair_probes_leave_a_basin_no_single_move_leaves() {
        // From (1, 1) every one-parameter move is slower; (3, 3), two ends at once, is faster.
        let space = grid(&[4, 4]);
        let f = |p: &[u32]| match (p[0], p[1]) {
            (3, 3) => 0.5,
            (1, 1) => 1.0,
            _ => 2.0,
        };
        let mut obs = Vec::new();
        let mut obj = |p: &[u32]| Outcome::Time(f(p));
        let mut found = None;
        run(&mut Probe(&mut found, &mut obs), &space, &mut obj, Budget::evals(20), 1).unwrap();
        assert_eq!(found, Some((vec![3, 3], 0.5)));
        assert!(obs.len() <= Hybrid::default().pair_probes, "{} probes", obs.len());
    }

    /// Runs the pair probes alone from (1, 1).
    #[derive(Debug)]
    struct Probe<'a>(&'a mut Option<(Point, f64)>, &'a mut Vec<(Point, f64)>);

    impl Strategy for Probe<'_> {
        fn name(&self) -> &'static str {
            "probe"
        }

        fn search(&mut self, s: &mut Search<'_>) -> Result<(), Stop> {
            let t = cost(s.eval(&[1, 1])?);
            *self.0 = Hybrid::default().pair_escape(s, self.1, &[1, 1], t)?;
            Ok(())
        }
    }

    #[test]
    fn wall_moves_go_diagonally_around_a_failing_neighbour() {
        // A trap beside failing configurations: from (3, 1) the step to (3, 2) fails and every
        // other one-parameter move is slower; the optimum (2, 2) is one diagonal move away.
        let space = grid(&[4, 4]);
        let f = |p: &[u32]| match (p[0], p[1]) {
            (3, y) if y >= 2 => None,
            (3, 1) => Some(1.0),
            (2, 2) => Some(0.5),
            _ => Some(2.0),
        };
        let mut obj = |p: &[u32]| f(p).map_or_else(|| Outcome::Failed("wall".into()), Outcome::Time);
        let mut found = None;
        let r = run(&mut Wall(&mut found), &space, &mut obj, Budget::evals(20), 1).unwrap();
        assert_eq!(found, Some((vec![2, 2], 0.5)));
        assert!(r.evaluations <= 2 + 3 * 2, "{} evaluations", r.evaluations);
    }

    /// Runs the wall moves alone from (3, 1), its failing neighbour (3, 2) known.
    #[derive(Debug)]
    struct Wall<'a>(&'a mut Option<(Point, f64)>);

    impl Strategy for Wall<'_> {
        fn name(&self) -> &'static str {
            "wall"
        }

        fn search(&mut self, s: &mut Search<'_>) -> Result<(), Stop> {
            let t = cost(s.eval(&[3, 1])?);
            s.eval(&[3, 2])?;
            *self.0 = Hybrid::default().around_wall(s, &mut Vec::new(), &[3, 1], t)?;
            Ok(())
        }
    }

    /// The landscape the wall trap comes from (Kernel Tuner's pnpoly on an RTX 2080 Ti, 4092
    /// configurations, 358 failing): 50 seeded replays at 100 evaluations.
    #[test]
    fn pnpoly_2080_ti_replay_gains_from_wall_moves() {
        let within5 = replay_within5("validation/pnpoly_RTX_2080_Ti.json.gz");
        let (ours, without) =
            (within5(Hybrid::default()), within5(Hybrid { wall_steps: 0, ..Hybrid::default() }));
        assert!(ours > without, "with wall moves {ours} of 50, without {without}");
    }

    #[test]
    fn same_seed_same_run() {
        let space = grid(&[3, 11, 31]);
        let a = search(Hybrid::default(), &space, trap, 80, 11);
        let b = search(Hybrid::default(), &space, trap, 80, 11);
        assert_eq!(a, b);
    }
}
