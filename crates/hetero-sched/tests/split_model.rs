//! The affine models, their fit, and the static split solver.

use hetero_sched::split::{AffineModel, SplitError, proportional_split, solve_static};
use proptest::prelude::*;

fn makespan(models: &[AffineModel], shares: &[usize]) -> f64 {
    models.iter().zip(shares).filter(|(_, s)| **s > 0).map(|(m, &s)| m.time(s)).fold(0.0, f64::max)
}

#[test]
fn digest_worked_example() {
    let cpu = AffineModel::new(2e-6, 1e-3);
    let gpu = AffineModel::new(0.5e-6, 5e-3);
    let shares = solve_static(1_000_000, &[cpu, gpu], None).unwrap();
    assert_eq!(shares, vec![201_600, 798_400]);
    assert!((cpu.time(shares[0]) - 0.4042).abs() < 1e-9);
    assert!((gpu.time(shares[1]) - 0.4042).abs() < 1e-9);
    // Eq. 6.3, the proportional model: beta = 4 gives 200 000 / 800 000.
    assert_eq!(proportional_split(1_000_000, 4.0).unwrap(), 200_000);
    let prop =
        solve_static(1_000_000, &[AffineModel::new(4e-6, 0.0), AffineModel::new(1e-6, 0.0)], None).unwrap();
    assert_eq!(prop, vec![200_000, 800_000]);
    // Device order does not matter.
    assert_eq!(solve_static(1_000_000, &[gpu, cpu], None).unwrap(), vec![798_400, 201_600]);
}

#[test]
fn clamping_gives_everything_to_one_side() {
    let cpu = AffineModel::new(2e-6, 1e-3);
    // The GPU's fixed cost exceeds what the CPU needs for all of it: CPU only.
    let gpu_slow_start = AffineModel::new(0.5e-6, 10.0);
    assert_eq!(solve_static(1_000_000, &[cpu, gpu_slow_start], None).unwrap(), vec![1_000_000, 0]);
    // The CPU's fixed cost is too high: GPU only.
    let cpu_slow_start = AffineModel::new(2e-6, 10.0);
    let gpu = AffineModel::new(0.5e-6, 5e-3);
    assert_eq!(solve_static(1_000_000, &[cpu_slow_start, gpu], None).unwrap(), vec![0, 1_000_000]);
    // Small totals go to the device with the smaller fixed cost.
    assert_eq!(solve_static(100, &[cpu, gpu], None).unwrap(), vec![100, 0]);
    // A device with no per-item cost takes everything.
    assert_eq!(solve_static(77, &[cpu, AffineModel::new(0.0, 1.0)], None).unwrap(), vec![0, 77]);
    assert_eq!(solve_static(0, &[cpu, gpu], None).unwrap(), vec![0, 0]);
}

#[test]
fn k_devices_drop_the_ones_with_negative_shares() {
    let models = [
        AffineModel::new(1e-6, 0.0),
        AffineModel::new(2e-6, 0.0),
        AffineModel::new(0.5e-6, 0.0),
        AffineModel::new(1e-6, 100.0), // never worth starting
    ];
    let shares = solve_static(700_000, &models, None).unwrap();
    assert_eq!(shares, vec![200_000, 100_000, 400_000, 0]);
    let t = makespan(&models, &shares);
    assert!((t - 0.2).abs() < 1e-9, "{t}");
}

#[test]
fn granules_round_shares_to_multiples() {
    let cpu = AffineModel::new(2e-6, 1e-3);
    let gpu = AffineModel::new(0.5e-6, 5e-3);
    let shares = solve_static(1_000_000, &[cpu, gpu], Some(&[1, 1024])).unwrap();
    assert_eq!(shares[1] % 1024, 0);
    assert_eq!(shares[0] + shares[1], 1_000_000);
    assert!(shares[1].abs_diff(798_400) < 1024);
}

#[test]
fn bad_models_and_inputs_are_errors() {
    let ok = AffineModel::new(1e-6, 0.0);
    assert!(matches!(solve_static(10, &[], None), Err(SplitError::NoDevices)));
    for bad in [f64::NAN, f64::INFINITY, -1e-6] {
        assert!(matches!(
            solve_static(10, &[ok, AffineModel::new(bad, 0.0)], None),
            Err(SplitError::BadModel { device: 1, .. })
        ));
        assert!(matches!(
            solve_static(10, &[AffineModel::new(1e-6, bad), ok], None),
            Err(SplitError::BadModel { device: 0, .. })
        ));
    }
    assert!(solve_static(10, &[ok, ok], Some(&[1])).is_err());
    assert!(solve_static(10, &[ok, ok], Some(&[1, 0])).is_err());
    assert!(proportional_split(10, 0.0).is_err());
    assert!(proportional_split(10, f64::NAN).is_err());
}

#[test]
fn least_squares_fit() {
    // Exact line through three sizes.
    let m = AffineModel::fit(&[(100, 1.2e-3), (200, 1.4e-3), (400, 1.8e-3)]).unwrap();
    assert!((m.gamma - 2e-6).abs() < 1e-15 && (m.delta - 1e-3).abs() < 1e-12, "{m:?}");
    let two = AffineModel::from_two_runs(1000, 3e-3, 5e-3).unwrap();
    assert!((two.gamma - 2e-6).abs() < 1e-15 && (two.delta - 1e-3).abs() < 1e-12);
    // A falling line (noise) clamps to a flat model, a negative intercept to one through 0.
    let flat = AffineModel::fit(&[(1000, 3e-3), (2000, 2e-3)]).unwrap();
    assert_eq!(flat.gamma, 0.0);
    let origin = AffineModel::fit(&[(1000, 1e-3), (2000, 3e-3)]).unwrap();
    assert_eq!(origin.delta, 0.0);
    assert!(origin.gamma > 0.0);
    // Errors: one size, non-finite or negative times.
    assert!(AffineModel::fit(&[(10, 1.0)]).is_err());
    assert!(AffineModel::fit(&[(10, 1.0), (10, 2.0)]).is_err());
    assert!(AffineModel::fit(&[(10, f64::NAN), (20, 2.0)]).is_err());
    assert!(AffineModel::fit(&[(10, -1.0), (20, 2.0)]).is_err());
}

/// Brute force over every integer split of a small total among three devices.
fn brute_force(total: usize, models: &[AffineModel; 3]) -> f64 {
    let mut best = f64::INFINITY;
    for a in 0..=total {
        for b in 0..=total - a {
            best = best.min(makespan(models, &[a, b, total - a - b]));
        }
    }
    best
}

proptest! {
    #[test]
    fn solver_matches_brute_force(
        total in 0usize..80,
        g in prop::array::uniform3(1e-3f64..1.0),
        d in prop::array::uniform3(prop_oneof![Just(0.0f64), 0.0f64..5.0]),
    ) {
        let models = [0, 1, 2].map(|i| AffineModel::new(g[i], d[i]));
        let shares = solve_static(total, &models, None).unwrap();
        prop_assert_eq!(shares.iter().sum::<usize>(), total);
        let got = makespan(&models, &shares);
        let best = brute_force(total, &models);
        // Integer rounding costs at most one item on one device.
        let slack = g.iter().copied().fold(0.0, f64::max) + 1e-9;
        prop_assert!(got <= best + slack, "shares {:?}: {} vs best {}", shares, got, best);
    }
}
