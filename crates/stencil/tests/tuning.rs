//! The tuning space of thesis §4.4.1 (digest §10.3): its counts, the resource pruning example,
//! the published optima, and exhaustive search finding the global optimum past a local one.

use hetero_sched::tune::{Budget, Domain, Outcome, strategy};
use stencil::tuning::{gpu_config_of, gpu_params_of, gpu_space};
use stencil::{GpuParams, Stencil};

const UNLIMITED: (i64, u64) = (i64::MAX, u64::MAX);

#[test]
fn space_counts() {
    let s = gpu_space([1, 1, 1], false, 4, UNLIMITED.0, UNLIMITED.1).unwrap();
    assert_eq!(s.product(), 4 * 15 * 4 * 15 * 2);
    assert_eq!(s.count_valid(), 544);
    assert_eq!(gpu_space([1, 1, 1], false, 4, 512, UNLIMITED.1).unwrap().count_valid(), 516);
    // Without the read-only flag: 272 and 258; the (size) pairs alone are 4 x 15 = 60.
    let pairs: std::collections::BTreeSet<(i64, i64)> = s
        .valid_points()
        .map(|p| s.config(&p))
        .map(|c| (c.int("size_x").unwrap(), c.int("size_y").unwrap()))
        .collect();
    assert_eq!(pairs.len(), 60);
}

#[test]
fn shared_memory_pruning_example() {
    // f64, corner template, 64 x 16 tile, halo 1: 3 * 66 * 18 * 8 = 28,512 B.
    let p = GpuParams { size_x: 64, size_y: 16, dim_x: 32, dim_y: 4, read_only: false };
    assert_eq!(p.shared_bytes([1, 1, 1], true, 8), 28_512);
    assert!(p.check([1, 1, 1], true, 8, 1024, 16 * 1024).is_err());
    p.check([1, 1, 1], true, 8, 1024, 48 * 1024).unwrap();
    let c = gpu_config_of(&p);
    for (limit, valid) in [(16 * 1024, false), (48 * 1024, true)] {
        let space = gpu_space([1, 1, 1], true, 8, 1024, limit).unwrap();
        let point = space.point_of(&c).unwrap();
        assert_eq!(space.is_valid(&point), valid, "limit {limit}");
    }
    // The corner-free template keeps one plane: 66 * 18 * 8 = 9,504 B fits in 16 KiB.
    assert_eq!(p.shared_bytes([1, 1, 1], false, 8), 9_504);
    assert!(Stencil::<f64>::twenty_seven_point(1.0, 1.0, 1.0, 1.0).has_corners());
}

#[test]
fn table_4_3_optima_are_points_of_the_space() {
    // (size_x, size_y, dim_x, dim_y) for 7/13/19/27-point, per GPU and precision.
    let rows: [[[u32; 4]; 4]; 8] = [
        [[64, 8, 32, 8], [32, 8, 32, 2], [64, 3, 64, 3], [16, 6, 16, 2]],
        [[64, 8, 32, 8], [64, 6, 64, 2], [64, 6, 64, 3], [32, 8, 32, 2]],
        [[64, 8, 32, 8], [64, 6, 64, 3], [64, 3, 32, 3], [64, 4, 32, 4]],
        [[64, 3, 32, 3], [64, 3, 32, 3], [64, 3, 32, 3], [64, 8, 32, 4]],
        [[16, 16, 16, 4], [16, 16, 16, 8], [16, 6, 16, 3], [16, 6, 16, 3]],
        [[32, 6, 32, 2], [16, 16, 16, 8], [32, 4, 32, 2], [16, 6, 16, 3]],
        [[64, 8, 32, 4], [32, 6, 32, 2], [64, 3, 64, 3], [32, 6, 32, 2]],
        [[64, 6, 32, 3], [32, 6, 32, 2], [64, 3, 64, 3], [32, 4, 16, 4]],
    ];
    let space = gpu_space([1, 1, 1], true, 8, UNLIMITED.0, UNLIMITED.1).unwrap();
    for row in rows {
        for [sx, sy, dx, dy] in row {
            for read_only in [false, true] {
                let p = GpuParams { size_x: sx, size_y: sy, dim_x: dx, dim_y: dy, read_only };
                let c = gpu_config_of(&p);
                assert!(space.is_valid(&space.point_of(&c).unwrap()), "{p:?}");
                assert_eq!(gpu_params_of(&c), Some(p));
            }
        }
    }
}

#[test]
fn exhaustive_search_finds_the_global_optimum_past_a_local_one() {
    // Fig. 4.10(b)'s shape: a local optimum at BlockDim (64, 4), the global one elsewhere.
    let space = gpu_space([1, 1, 1], false, 4, 1024, 48 * 1024).unwrap();
    let cost = |p: &GpuParams| {
        let local = ((p.dim_x as f64 - 64.0).abs() + (p.dim_y as f64 - 4.0).abs() * 8.0) + 10.0;
        let global = (p.dim_x as f64 - 32.0).abs()
            + (p.dim_y as f64 - 8.0).abs() * 8.0
            + (p.size_x as f64 - 64.0).abs();
        local.min(global) + if p.read_only { 0.5 } else { 0.0 }
    };
    let mut objective = |pt: &[u32]| Outcome::Time(cost(&gpu_params_of(&space.config(pt)).unwrap()));
    let mut brute = strategy::by_name("brute_force").unwrap();
    let r =
        hetero_sched::tune::run(brute.as_mut(), &space, &mut objective, Budget::evals(u64::MAX), 1).unwrap();
    let (best, t) = r.best.unwrap();
    let p = gpu_params_of(&space.config(&best)).unwrap();
    assert_eq!((p.size_x, p.dim_x, p.dim_y, p.read_only, t), (64, 32, 8, false, 0.0));
    assert_eq!(r.evaluations, space.count_valid());
}

#[test]
fn cpu_tuning_times_every_point_of_its_space() {
    use stencil::tuning::{CPU_TUNING_SWEEPS, TuneOptions, cpu_space, tune_cpu};
    assert_eq!(cpu_space(true).unwrap().count_valid(), 60);
    assert_eq!(cpu_space(false).unwrap().count_valid(), 35);
    let constant = Stencil::<f32>::seven_point(0.25, 0.125);
    assert!(constant.has_constant_coefficients());
    let mut calls = 0;
    let opts = TuneOptions { runs: 1, ..TuneOptions::default() };
    let r = tune_cpu(&constant, [9, 10, 11], opts, &mut |_| calls += 1).unwrap();
    // Every configuration ran CPU_TUNING_SWEEPS sweeps and matched the reference of its order
    // bitwise (the field is not dyadic, so the two orders' references differ).
    assert_eq!((r.valid, r.evaluated, calls), (60, 60, 60));
    assert!(r.best.as_ref().and_then(stencil::tuning::cpu_order_of).is_some());
    assert!(r.best_ms.is_finite() && r.default_ms.is_finite() && CPU_TUNING_SWEEPS >= 6);
    let field = Stencil::<f64>::parse("out[i][j][k] = c[i][j][k] * u[i+1][j][k] + u[i][j][k-1]")
        .unwrap()
        .array("c", ndarray::Array3::from_elem((5, 6, 7), 0.5))
        .unwrap();
    assert!(!field.has_constant_coefficients());
    let opts = TuneOptions { runs: 1, budget: 4, ..TuneOptions::default() };
    let r = tune_cpu(&field, [5, 6, 7], opts, &mut |_| {}).unwrap();
    assert_eq!((r.valid, r.evaluated), (35, 4));
}
