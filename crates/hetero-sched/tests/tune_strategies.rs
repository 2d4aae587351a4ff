//! Every strategy finds the optimum of synthetic landscapes (separable, plateaus, constraints,
//! failing configurations) within its budget, deterministically under a seed. The optimum is
//! found independently by enumerating the space.

use std::time::Duration;

use hetero_sched::tune::{
    Budget, Constraint, Domain, Outcome, Param, Point, Space, StopReason, TuneError, TuneResult, run,
    strategy,
};

/// A landscape: a space and a time function (`None` = the configuration fails).
struct Landscape {
    name: &'static str,
    space: Space,
    f: fn(&[i64]) -> Option<f64>,
}

fn values(space: &Space, p: &[u32]) -> Vec<i64> {
    space.params().iter().zip(p).map(|(q, &i)| q.values()[i as usize].as_i64().unwrap()).collect()
}

fn grid(n: i64, d: usize) -> hetero_sched::tune::SpaceBuilder {
    (0..d).fold(Space::builder(), |b, k| b.param(Param::range(format!("p{k}"), 0, n - 1, 1)))
}

fn landscapes(n: i64) -> Vec<Landscape> {
    vec![
        Landscape {
            name: "separable",
            space: grid(n, 4).build().unwrap(),
            f: |v| {
                Some(1.0 + v.iter().zip([3, 1, 4, 2]).map(|(&x, c)| ((x - c) as f64).powi(2)).sum::<f64>())
            },
        },
        Landscape {
            name: "plateaus",
            space: grid(n, 4).build().unwrap(),
            // Flat terraces of width 2 around the optimum at (4, 2, 5, 1): the best terrace is a
            // 2x2x2x2 block.
            f: |v| {
                Some(1.0 + v.iter().zip([4, 2, 5, 1]).map(|(&x, c)| ((x - c).abs() / 2) as f64).sum::<f64>())
            },
        },
        Landscape {
            name: "constrained",
            space: grid(n, 4)
                .constraint(Constraint::custom("p0 + p1 <= 5", |c| {
                    c.int("p0").unwrap() + c.int("p1").unwrap() <= 5
                }))
                .build()
                .unwrap(),
            // The unconstrained optimum (6, 6, 2, 3) is invalid; the constrained one is on the edge.
            f: |v| {
                Some(1.0 + v.iter().zip([6, 6, 2, 3]).map(|(&x, c)| ((x - c) as f64).powi(2)).sum::<f64>())
            },
        },
        Landscape {
            name: "failing",
            space: grid(n, 4).build().unwrap(),
            // Every configuration with p0 + p2 odd fails, including neighbours of the optimum.
            f: |v| {
                if (v[0] + v[2]) % 2 == 1 {
                    None
                } else {
                    Some(2.0 + v.iter().zip([2, 5, 4, 3]).map(|(&x, c)| (x - c).abs() as f64).sum::<f64>())
                }
            },
        },
    ]
}

/// The optimum by enumeration.
fn optimum(l: &Landscape) -> f64 {
    l.space.valid_points().filter_map(|p| (l.f)(&values(&l.space, &p))).fold(f64::INFINITY, f64::min)
}

fn search(name: &str, l: &Landscape, budget: u64, seed: u64) -> TuneResult {
    let mut s = strategy::by_name(name).unwrap();
    let mut obj = |p: &[u32]| match (l.f)(&values(&l.space, p)) {
        Some(t) => Outcome::Time(t),
        None => Outcome::Failed("synthetic failure".into()),
    };
    run(s.as_mut(), &l.space, &mut obj, Budget::evals(budget), seed).unwrap()
}

/// Exhaustive-style strategies on a small space (6^4 = 1296) with a budget of the whole space;
/// guided strategies on 8^4 = 4096 configurations with 10 % of it.
fn setting(name: &str) -> (i64, u64) {
    match name {
        "brute_force" | "random_sampling" | "monte_carlo" => (6, 1296),
        // One-parameter steps cannot leave the failing landscape's parity-coupled local optima;
        // only restarts can, so it gets a quarter of the space.
        "neighbourhood" => (8, 1024),
        _ => (8, 410),
    }
}

#[test]
fn every_strategy_finds_every_optimum() {
    for &name in strategy::NAMES {
        let (n, budget) = setting(name);
        for l in landscapes(n) {
            let best = optimum(&l);
            for seed in [1, 2] {
                let r = search(name, &l, budget, seed);
                assert!(r.evaluations <= budget, "{name} on {}: {} evaluations", l.name, r.evaluations);
                let (p, t) = r.best.clone().unwrap_or_else(|| panic!("{name} on {}: nothing found", l.name));
                assert_eq!(t, best, "{name} on {} (seed {seed}) found {t} at {p:?}, optimum {best}", l.name);
                assert!(l.space.is_valid(&p));
                assert!((l.f)(&values(&l.space, &p)).is_some());
            }
        }
    }
}

#[test]
fn strategies_are_deterministic_under_a_seed() {
    for &name in strategy::NAMES {
        let l = &landscapes(8)[3];
        let a = search(name, l, 150, 7);
        let b = search(name, l, 150, 7);
        assert_eq!(a, b, "{name}");
        if !matches!(name, "brute_force") {
            let c = search(name, l, 150, 8);
            let pts = |r: &TuneResult| r.history.iter().map(|h| h.point.clone()).collect::<Vec<Point>>();
            assert_ne!(pts(&a), pts(&c), "{name}: different seeds gave the same run");
        }
    }
}

#[test]
fn evaluation_budget_is_respected_and_failures_cost() {
    let l = &landscapes(8)[3];
    for &name in strategy::NAMES {
        let r = search(name, l, 37, 3);
        assert_eq!(r.evaluations, 37, "{name}");
        assert_eq!(r.stop, StopReason::Budget, "{name}");
        // Each evaluation is a distinct configuration; failed ones are included.
        let mut pts: Vec<&Point> = r.history.iter().map(|h| &h.point).collect();
        pts.sort();
        pts.dedup();
        assert_eq!(pts.len(), 37, "{name}");
        assert!(r.history.iter().any(|h| h.outcome.time().is_none()), "{name} met no failure");
        // The best is never a failed configuration.
        let (bp, _) = r.best.unwrap();
        assert!((l.f)(&values(&l.space, &bp)).is_some());
    }
}

#[test]
fn time_budget_stops_a_search() {
    let space = grid(50, 4).build().unwrap();
    let mut s = strategy::by_name("random_sampling").unwrap();
    let mut obj = |_: &[u32]| {
        std::thread::sleep(Duration::from_millis(2));
        Outcome::Time(1.0)
    };
    let r =
        run(s.as_mut(), &space, &mut obj, Budget::evals(1_000_000).with_time(Duration::from_millis(60)), 0)
            .unwrap();
    assert_eq!(r.stop, StopReason::Time);
    assert!(r.evaluations < 1_000_000);
}

#[test]
fn small_spaces_are_exhausted_not_spun() {
    let space = grid(3, 2).build().unwrap();
    for &name in strategy::NAMES {
        let mut s = strategy::by_name(name).unwrap();
        let mut obj = |p: &[u32]| Outcome::Time(f64::from(p[0] + p[1]));
        let r = run(s.as_mut(), &space, &mut obj, Budget::evals(100), 0).unwrap();
        assert!(r.evaluations <= 9, "{name}");
        assert!(matches!(r.stop, StopReason::Exhausted | StopReason::Finished), "{name}: {:?}", r.stop);
        assert_eq!(r.best.unwrap().1, 0.0, "{name}");
    }
}

#[test]
fn bad_requests_are_errors() {
    assert!(matches!(strategy::by_name("nope"), Err(TuneError::UnknownStrategy(_))));
    let space = grid(3, 2).build().unwrap();
    let mut s = strategy::default_strategy();
    let mut obj = |_: &[u32]| Outcome::Time(1.0);
    assert!(matches!(
        run(s.as_mut(), &space, &mut obj, Budget::evals(0), 0),
        Err(TuneError::InvalidBudget(_))
    ));
    // A space without valid configurations ends the search without evaluating anything.
    let empty = grid(3, 2).restrict("none", |_| false).build().unwrap();
    let r = run(s.as_mut(), &empty, &mut obj, Budget::evals(10), 0).unwrap();
    assert_eq!(r.evaluations, 0);
    assert!(r.best.is_none());
    // Sampling found the valid set empty by enumerating it.
    assert_eq!(empty.valid_count(), Some(0));
}

/// Input reduction: a reduced evaluation costs a tenth and has the same optimum; hill climbing
/// walks on reduced evaluations and confirms at full size, finding the optimum with far fewer
/// full evaluations than without reduction.
#[test]
fn hill_climbing_uses_input_reduction() {
    struct Reduced<'s> {
        space: &'s Space,
        full: u64,
    }
    fn f(v: &[i64]) -> f64 {
        1.0 + v.iter().zip([5, 2, 6]).map(|(&x, c)| ((x - c) as f64).powi(2)).sum::<f64>()
    }
    impl hetero_sched::tune::Objective for Reduced<'_> {
        fn evaluate(&mut self, p: &[u32]) -> Outcome {
            self.full += 1;
            Outcome::Time(10.0 * f(&values(self.space, p)))
        }
        fn evaluate_reduced(&mut self, p: &[u32]) -> Option<Outcome> {
            Some(Outcome::Time(f(&values(self.space, p))))
        }
        fn reduced_cost(&self) -> f64 {
            0.1
        }
    }
    let space = grid(10, 3).build().unwrap();
    let mut obj = Reduced { space: &space, full: 0 };
    let mut s = strategy::by_name("hill_climbing").unwrap();
    let r = run(s.as_mut(), &space, &mut obj, Budget::evals(12), 4).unwrap();
    let (p, t) = r.best.unwrap();
    assert_eq!(values(&space, &p), [5, 2, 6]);
    assert_eq!(t, 10.0);
    assert!(r.history.iter().filter(|h| h.reduced).count() > 20);
    assert_eq!(obj.full, r.evaluations);
    assert!(r.evaluations <= 12);
}
