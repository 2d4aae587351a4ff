//! The learning operators on the device against dense oracles assembled here from the basis
//! definitions (Eq. 6.5, 6.13 and the mass-matrix integral), on awkward sizes, both bases and
//! both precisions. GPU tests skip without a device (fail under `HETKIT_REQUIRE_GPU=1`); on a
//! machine without one they run on the emulator: `scripts/cuda-emu.sh -p sg-cuda -- learn`.

use cuda_kernels::Gpu;
use hetkit_testkit::{TestRng, gpu_or_skip, rng};
use ndarray::Array2;
use rand::Rng;
use sg_core::GridSpec;
use sg_cuda::DeviceReal;
use sg_cuda::learn::{
    Basis, GridPoints, LearnConfig, LearnKernel, MassOperator, StreamConfig, StreamingOperator,
};

const BASES: [Basis; 2] = [Basis::Linear, Basis::ModifiedLinear];

/// The 1-D function of point `(l, i)` at `x`, straight from Eq. 6.5 and Eq. 6.13.
fn phi_1d(basis: Basis, l: u32, i: u32, x: f64) -> f64 {
    let s = (1u64 << l) as f64;
    let hat = (1.0 - (s * x - f64::from(i)).abs()).max(0.0);
    match basis {
        Basis::Linear => hat,
        Basis::ModifiedLinear if l == 1 => 1.0,
        Basis::ModifiedLinear if i == 1 => {
            if x <= 2.0 / s {
                2.0 - s * x
            } else {
                0.0
            }
        }
        Basis::ModifiedLinear if f64::from(i) == s - 1.0 => {
            if x >= 1.0 - 2.0 / s {
                s * x + 1.0 - f64::from(i)
            } else {
                0.0
            }
        }
        Basis::ModifiedLinear => hat,
    }
}

/// `B_ij = Π_t φ_{l_jt, i_jt}(x_it)`, row-major `m x N`.
fn dense_b(basis: Basis, grid: &GridPoints, x: &Array2<f64>) -> Array2<f64> {
    Array2::from_shape_fn((x.nrows(), grid.len()), |(r, j)| {
        let (ls, is) = grid.point(j);
        (0..grid.dim()).map(|t| phi_1d(basis, ls[t], is[t], x[[r, t]])).product()
    })
}

/// `Σ_j |a_j| |b_j|` per output, the scale that rounding errors of `Σ_j a_j b_j` are relative to.
fn check_products<T: DeviceReal>(what: &str, got: &[T], want: &[f64], scale: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (k, ((&g, &w), &s)) in got.iter().zip(want).zip(scale).enumerate() {
        let err = (g.to_f64() - w).abs() / (s + f64::MIN_POSITIVE);
        assert!(
            err <= tol || (g.to_f64() - w).abs() <= tol,
            "{what}: entry {k}: got {g:?}, want {w} (scale {s}, rel {err:e})"
        );
    }
}

/// Random points: level vectors with `|l|_1 − d < n` and random odd indices (duplicates and
/// inconsistent sets included: the streaming operators take any set).
fn random_grid(g: &mut TestRng, d: usize, n_points: usize, n: u32) -> GridPoints {
    let mut levels = Vec::with_capacity(n_points * d);
    let mut indices = Vec::with_capacity(n_points * d);
    for _ in 0..n_points {
        let mut budget = n - 1;
        for _ in 0..d {
            let extra = g.random_range(0..=budget.min(3));
            budget -= extra;
            let l = 1 + extra;
            levels.push(l);
            indices.push(2 * g.random_range(0..1u32 << (l - 1)) + 1);
        }
    }
    GridPoints::new(d, levels, indices).unwrap()
}

/// `m x d` points in `[0, 1]`: uniform, with a share at 0, 1 and dyadic `k / 2^L` (where basis
/// functions have kinks and supports end).
fn random_data(g: &mut TestRng, m: usize, d: usize) -> Array2<f64> {
    Array2::from_shape_fn((m, d), |_| match g.random_range(0..10) {
        0 => 0.0,
        1 => 1.0,
        2 => f64::from(g.random_range(0..=16u32)) / 16.0,
        _ => g.random::<f64>(),
    })
}

fn to_t<T: DeviceReal>(v: &[f64]) -> Vec<T> {
    v.iter().map(|&x| T::from_f64(x)).collect()
}

/// Checks `B α` and `Bᵀ v` of one problem against the dense oracle, in `T`.
fn check_operator<T: DeviceReal>(
    gpu: &Gpu,
    g: &mut TestRng,
    basis: Basis,
    grid: &GridPoints,
    x: &Array2<f64>,
    config: LearnConfig,
    tol: f64,
) {
    let (m, n) = (x.nrows(), grid.len());
    let b = dense_b(basis, grid, x);
    let alpha: Vec<f64> = (0..n).map(|_| g.random_range(-1.0..1.0)).collect();
    let v: Vec<f64> = (0..m).map(|_| g.random_range(-1.0..1.0)).collect();
    let want_bv: Vec<f64> =
        b.rows().into_iter().map(|r| r.iter().zip(&alpha).map(|(a, c)| a * c).sum()).collect();
    let scale_bv: Vec<f64> =
        b.rows().into_iter().map(|r| r.iter().zip(&alpha).map(|(a, c)| (a * c).abs()).sum()).collect();
    let want_btv: Vec<f64> =
        b.columns().into_iter().map(|c| c.iter().zip(&v).map(|(a, w)| a * w).sum()).collect();
    let scale_btv: Vec<f64> =
        b.columns().into_iter().map(|c| c.iter().zip(&v).map(|(a, w)| (a * w).abs()).sum()).collect();

    let xt = x.mapv(T::from_f64);
    let op = StreamingOperator::<T>::with_config(gpu, grid, basis, xt.view(), config).unwrap();
    let what = format!(
        "{basis:?} {} m {m} N {n} d {} [{} | {}]",
        std::any::type_name::<T>(),
        grid.dim(),
        config.mult,
        config.transposed
    );
    let got = op.mult(&to_t::<T>(&alpha)).unwrap();
    check_products(&format!("B alpha, {what}"), &got, &want_bv, &scale_bv, tol);
    let got = op.mult_transpose(&to_t::<T>(&v)).unwrap();
    check_products(&format!("B^T v, {what}"), &got, &want_btv, &scale_btv, tol);
}

#[test]
fn learn_operators_match_the_dense_oracle_for_every_dimension() {
    let Some(gpu) = gpu_or_skip("learn_operators_match_the_dense_oracle_for_every_dimension") else { return };
    let mut g = rng("learn_operators_match_the_dense_oracle_for_every_dimension");
    for d in 1..=10 {
        for basis in BASES {
            let m = [1, 2, 13, 131][g.random_range(0..4)];
            let n_points = [1, 3, 37, 101][g.random_range(0..4)];
            let grid = random_grid(&mut g, d, n_points, 5);
            let x = random_data(&mut g, m, d);
            check_operator::<f64>(&gpu, &mut g, basis, &grid, &x, LearnConfig::GENERIC, 1e-12);
            check_operator::<f32>(&gpu, &mut g, basis, &grid, &x, LearnConfig::GENERIC, 2e-5);
        }
    }
}

#[test]
fn learn_operators_on_regular_grids_match_the_dense_oracle() {
    let Some(gpu) = gpu_or_skip("learn_operators_on_regular_grids_match_the_dense_oracle") else { return };
    let mut g = rng("learn_operators_on_regular_grids_match_the_dense_oracle");
    for (d, n) in [(1, 5), (2, 4), (3, 3), (5, 2)] {
        let grid = GridPoints::regular(&GridSpec::regular(d, n).unwrap()).unwrap();
        let x = random_data(&mut g, 257, d);
        for basis in BASES {
            check_operator::<f64>(&gpu, &mut g, basis, &grid, &x, LearnConfig::GENERIC, 1e-12);
        }
    }
}

/// Configurations of the tuning space (a few compiled ones: each costs an NVRTC compile) and
/// awkward launch parameters (odd prefetch, splits that do not divide) all give the oracle's
/// products.
#[test]
fn learn_tuning_space_configurations_agree_with_the_oracle() {
    let Some(gpu) = gpu_or_skip("learn_tuning_space_configurations_agree_with_the_oracle") else { return };
    let mut g = rng("learn_tuning_space_configurations_agree_with_the_oracle");
    let generic_m = StreamConfig::generic(LearnKernel::Mult);
    let generic_t = StreamConfig::generic(LearnKernel::Transposed);
    let runtime_only = [
        (
            StreamConfig { block_size: 32, split: 3, prefetch: 5, ..generic_m },
            StreamConfig { block_size: 64, split: 7, prefetch: 3, ..generic_t },
        ),
        (
            StreamConfig { use_shared: false, split: 2, ..generic_m },
            StreamConfig { use_shared: false, split: 1, ..generic_t },
        ),
        (
            StreamConfig { split: 64, prefetch: 1, ..generic_m },
            StreamConfig { split: 0, prefetch: 128, ..generic_t },
        ),
    ];
    let compiled = [
        (StreamConfig::MULT, StreamConfig::TRANSPOSED),
        (
            StreamConfig { block: 1, unroll: 2, split: 8, use_shared: false, ..StreamConfig::MULT },
            StreamConfig { block: 8, unroll: 1, split: 4, prefetch: 16, ..StreamConfig::TRANSPOSED },
        ),
    ];
    for d in [3, 5] {
        let grid = random_grid(&mut g, d, 53, 4);
        let x = random_data(&mut g, 97, d);
        for (mult, transposed) in runtime_only.iter().chain(&compiled) {
            let cfg = LearnConfig { mult: *mult, transposed: *transposed };
            for basis in BASES {
                check_operator::<f64>(&gpu, &mut g, basis, &grid, &x, cfg, 1e-12);
                check_operator::<f32>(&gpu, &mut g, basis, &grid, &x, cfg, 2e-5);
            }
        }
    }
}

/// `<B α, v> = <α, Bᵀ v>` (both products on the device).
#[test]
fn learn_operators_are_adjoint() {
    let Some(gpu) = gpu_or_skip("learn_operators_are_adjoint") else { return };
    let mut g = rng("learn_operators_are_adjoint");
    for (d, m, n_points) in [(1, 1, 1), (4, 211, 89), (10, 31, 61)] {
        for basis in BASES {
            let grid = random_grid(&mut g, d, n_points, 4);
            let x = random_data(&mut g, m, d);
            let op =
                StreamingOperator::<f64>::with_config(&gpu, &grid, basis, x.view(), LearnConfig::GENERIC)
                    .unwrap();
            let alpha: Vec<f64> = (0..n_points).map(|_| g.random_range(-1.0..1.0)).collect();
            let v: Vec<f64> = (0..m).map(|_| g.random_range(-1.0..1.0)).collect();
            let ba = op.mult(&alpha).unwrap();
            let btv = op.mult_transpose(&v).unwrap();
            let lhs: f64 = ba.iter().zip(&v).map(|(a, b)| a * b).sum();
            let rhs: f64 = alpha.iter().zip(&btv).map(|(a, b)| a * b).sum();
            let scale: f64 = ba.iter().zip(&v).map(|(a, b)| (a * b).abs()).sum::<f64>() + 1e-300;
            assert!((lhs - rhs).abs() <= 1e-12 * scale, "{basis:?} d {d}: {lhs} vs {rhs}");
            // Bᵀ B α through the device-resident intermediate equals the two products.
            let normal = op.normal(&alpha).unwrap();
            let two_step = op.mult_transpose(&ba).unwrap();
            for (a, b) in normal.iter().zip(&two_step) {
                assert!((a - b).abs() <= 1e-12 * (1.0 + b.abs()), "normal {a} vs {b}");
            }
        }
    }
}

/// The digest's reference values (§12.2): d = 2, n = 2, α ≡ 1.
#[test]
fn learn_known_values_of_the_thesis_grids() {
    let Some(gpu) = gpu_or_skip("learn_known_values_of_the_thesis_grids") else { return };
    let grid = GridPoints::regular(&GridSpec::regular(2, 2).unwrap()).unwrap();
    let x = ndarray::array![[0.5, 0.5], [0.25, 0.5], [0.3, 0.7], [0.1, 0.9]];
    let lin = StreamingOperator::<f64>::new(&gpu, &grid, Basis::Linear, x.view()).unwrap();
    let v = lin.mult(&[1.0; 5]).unwrap();
    for (got, want) in v.iter().zip([1.0, 1.5, 1.32]) {
        assert!((got - want).abs() < 1e-14, "linear: {v:?}");
    }
    let modl = StreamingOperator::<f64>::new(&gpu, &grid, Basis::ModifiedLinear, x.view()).unwrap();
    let v = modl.mult(&[1.0; 5]).unwrap();
    assert!((v[2] - 2.6).abs() < 1e-14 && (v[3] - 4.2).abs() < 1e-14, "modified linear: {v:?}");
    // The density right-hand side: b_i = (1/m) Σ_j φ_i(x_j).
    let b = lin.mean_basis().unwrap();
    let dense = dense_b(Basis::Linear, &grid, &x);
    for (j, bj) in b.iter().enumerate() {
        let want = dense.column(j).sum() / 4.0;
        assert!((bj - want).abs() < 1e-14, "b[{j}] = {bj}, want {want}");
    }
}

/// `∫_0^1 φ_a φ_b` of two 1-D hats by Simpson's rule on the cells of the finer level, exact
/// because the product is quadratic on each.
fn hat_integral(la: u32, ia: u32, lb: u32, ib: u32) -> f64 {
    let cells = 1u64 << la.max(lb);
    let h = 1.0 / cells as f64;
    let f = |x: f64| phi_1d(Basis::Linear, la, ia, x) * phi_1d(Basis::Linear, lb, ib, x);
    (0..cells)
        .map(|c| {
            let x0 = c as f64 * h;
            h / 6.0 * (f(x0) + 4.0 * f(x0 + h / 2.0) + f(x0 + h))
        })
        .sum()
}

fn dense_mass(grid: &GridPoints) -> Array2<f64> {
    Array2::from_shape_fn((grid.len(), grid.len()), |(a, b)| {
        let ((la, ia), (lb, ib)) = (grid.point(a), grid.point(b));
        (0..grid.dim()).map(|t| hat_integral(la[t], ia[t], lb[t], ib[t])).product()
    })
}

fn check_mass<T: DeviceReal>(gpu: &Gpu, g: &mut TestRng, grid: &GridPoints, cfg: StreamConfig, tol: f64) {
    let r = dense_mass(grid);
    let n = grid.len();
    let v: Vec<f64> = (0..n).map(|_| g.random_range(-1.0..1.0)).collect();
    let lambda = [0.0, 1e-3, 0.5][g.random_range(0..3)];
    let want: Vec<f64> = r
        .rows()
        .into_iter()
        .zip(&v)
        .map(|(row, vi)| row.iter().zip(&v).map(|(a, b)| a * b).sum::<f64>() + lambda * vi)
        .collect();
    let scale: Vec<f64> = r
        .rows()
        .into_iter()
        .zip(&v)
        .map(|(row, vi)| row.iter().zip(&v).map(|(a, b)| (a * b).abs()).sum::<f64>() + (lambda * vi).abs())
        .collect();
    let op = MassOperator::<T>::with_config(gpu, grid, cfg).unwrap();
    let got = op.apply(&to_t::<T>(&v), T::from_f64(lambda)).unwrap();
    let what = format!("mass {} d {} N {n} lambda {lambda} [{cfg}]", std::any::type_name::<T>(), grid.dim());
    check_products(&what, &got, &want, &scale, tol);
}

#[test]
fn learn_mass_matrix_matches_the_integrals() {
    let Some(gpu) = gpu_or_skip("learn_mass_matrix_matches_the_integrals") else { return };
    let mut g = rng("learn_mass_matrix_matches_the_integrals");
    // The digest's level-2 matrix (§12.5): [[1/3, 1/8, 1/8], [1/8, 1/6, 0], [1/8, 0, 1/6]].
    let grid = GridPoints::new(1, vec![1, 2, 2], vec![1, 1, 3]).unwrap();
    let op = MassOperator::<f64>::with_config(&gpu, &grid, StreamConfig::generic(LearnKernel::Mass)).unwrap();
    let want = [[1.0 / 3.0, 0.125, 0.125], [0.125, 1.0 / 6.0, 0.0], [0.125, 0.0, 1.0 / 6.0]];
    for (c, col) in want.iter().enumerate() {
        let mut e = [0.0; 3];
        e[c] = 1.0;
        let got = op.apply(&e, 0.0).unwrap();
        for (a, b) in got.iter().zip(col) {
            assert!((a - b).abs() < 1e-15, "column {c}: {got:?}");
        }
    }
    let generic = StreamConfig::generic(LearnKernel::Mass);
    for d in 1..=10 {
        let n_points = [1, 2, 29, 83][g.random_range(0..4)];
        let grid = random_grid(&mut g, d, n_points, 4);
        check_mass::<f64>(&gpu, &mut g, &grid, generic, 1e-12);
        check_mass::<f32>(&gpu, &mut g, &grid, generic, 2e-5);
    }
    let grid = GridPoints::regular(&GridSpec::regular(3, 3).unwrap()).unwrap();
    for cfg in [
        StreamConfig { split: 3, prefetch: 7, block_size: 32, ..generic },
        StreamConfig { use_shared: false, ..generic },
        StreamConfig::MASS,
    ] {
        check_mass::<f64>(&gpu, &mut g, &grid, cfg, 1e-12);
        check_mass::<f32>(&gpu, &mut g, &grid, cfg, 2e-5);
    }
}

#[test]
fn learn_bad_input_is_an_error() {
    // Grid descriptions need no device.
    assert!(GridPoints::new(0, vec![], vec![]).is_err());
    assert!(GridPoints::new(2, vec![1, 1], vec![1]).is_err());
    assert!(GridPoints::new(2, vec![1, 1, 1], vec![1, 1, 1]).is_err());
    assert!(GridPoints::new(1, vec![], vec![]).is_err());
    assert!(GridPoints::new(1, vec![0], vec![1]).is_err(), "boundary level");
    assert!(GridPoints::new(1, vec![2], vec![2]).is_err(), "even index");
    assert!(GridPoints::new(1, vec![2], vec![5]).is_err(), "index past 2^l");
    assert!(GridPoints::new(1, vec![32], vec![1]).is_err(), "level past MAX_LEVEL");
    assert!(GridPoints::regular(&GridSpec::regular(2, 2).unwrap().with_boundary().unwrap()).is_err());
    let bad = |k: LearnKernel, c: StreamConfig| assert!(c.validate(k).is_err(), "{k:?} {c:?}");
    bad(LearnKernel::Mult, StreamConfig { block_size: 48, ..StreamConfig::MULT });
    bad(LearnKernel::Mass, StreamConfig { block: 4, ..StreamConfig::MASS });

    let Some(gpu) = gpu_or_skip("learn_bad_input_is_an_error") else { return };
    let grid = GridPoints::regular(&GridSpec::regular(2, 2).unwrap()).unwrap();
    let lin = Basis::Linear;
    for x in [
        ndarray::array![[0.5, 1.5]],
        ndarray::array![[-0.1, 0.5]],
        ndarray::array![[f64::NAN, 0.5]],
        ndarray::array![[f64::INFINITY, 0.5]],
        Array2::zeros((0, 2)),
        Array2::zeros((3, 3)),
    ] {
        assert!(StreamingOperator::<f64>::new(&gpu, &grid, lin, x.view()).is_err(), "{x:?}");
    }
    let x = ndarray::array![[0.5, 0.5], [0.1, 0.2]];
    let op = StreamingOperator::<f64>::new(&gpu, &grid, lin, x.view()).unwrap();
    assert!(op.mult(&[1.0; 4]).is_err());
    assert!(op.mult_transpose(&[1.0; 3]).is_err());
    assert!(op.normal(&[]).is_err());
    let cfg =
        LearnConfig { mult: StreamConfig { block_size: 0, ..StreamConfig::MULT }, ..LearnConfig::default() };
    assert!(matches!(
        StreamingOperator::<f64>::with_config(&gpu, &grid, lin, x.view(), cfg),
        Err(sg_cuda::Error::Config(_))
    ));
    // Staging more than the device's shared memory is a configuration error, not a launch failure.
    let huge = LearnConfig {
        mult: StreamConfig { prefetch: 4096, ..StreamConfig::generic(LearnKernel::Mult) },
        ..LearnConfig::GENERIC
    };
    let wide = GridPoints::regular(&GridSpec::regular(8, 1).unwrap()).unwrap();
    let xw = Array2::from_elem((3, 8), 0.5);
    let op = StreamingOperator::<f64>::with_config(&gpu, &wide, lin, xw.view(), huge).unwrap();
    assert!(matches!(op.mult(&[1.0]), Err(sg_cuda::Error::Config(_))));
    let mass = MassOperator::<f64>::new(&gpu, &grid).unwrap();
    assert!(mass.apply(&[1.0; 4], 0.0).is_err());
}

/// Opening a device that is not there is a clear "no GPU" error, which is what every learning
/// entry point reports on a machine without one (they all start from a [`Gpu`]).
#[test]
fn learn_without_a_device_reports_no_gpu() {
    let ordinal = match Gpu::new(0) {
        Ok(_) => 4096, // a device exists: ask for one that does not
        Err(_) => 0,
    };
    let err = sg_cuda::Error::from(Gpu::new(ordinal).unwrap_err());
    assert!(err.is_no_gpu(), "{err}");
    let msg = err.to_string();
    assert!(msg.contains("no CUDA"), "{msg}");
}

/// A short search (random sampling, a few configurations) through `hetero_sched`: every
/// measured configuration is verified against the embedded kernel, the best is in the space,
/// and the stored log is what a cache lookup under this GPU returns.
#[test]
fn learn_tuner_measures_verifies_and_stores() {
    use hetero_sched::tune::{CacheKey, TuningCache, size_bucket};
    use sg_cuda::learn::{DeviceData, TuneSettings, fingerprint, tune_mass, tune_streaming};
    let Some(gpu) = gpu_or_skip("learn_tuner_measures_verifies_and_stores") else { return };
    let mut g = rng("learn_tuner_measures_verifies_and_stores");
    let grid = random_grid(&mut g, 3, 41, 4);
    let x = random_data(&mut g, 67, 3);
    let data = std::sync::Arc::new(DeviceData::upload(&gpu, x.view()).unwrap());
    let settings = TuneSettings { strategy: "random_sampling".into(), budget: 3, runs: 1, seed: g.random() };
    for kernel in [LearnKernel::Mult, LearnKernel::Transposed] {
        let out = tune_streaming(&data, &grid, Basis::ModifiedLinear, kernel, &settings).unwrap();
        assert_eq!((out.log.len(), out.failures()), (3, 0), "{kernel:?}: {:?}", out.log);
        let (best, ms) = out.best.unwrap();
        assert!(ms >= 0.0 && best.validate(kernel).is_ok());
        assert_eq!(out.work, 67 * 41);
        let dir = std::env::temp_dir().join(format!("hetkit-learn-tune-{}-{kernel:?}", std::process::id()));
        let cache = TuningCache::at(&dir);
        out.store(&gpu, &cache).unwrap();
        let key = CacheKey::new(kernel.cache_name(), &fingerprint(&gpu), "f64", &size_bucket(out.work));
        let stored = cache.lookup(&key, StreamConfig::space(kernel)).unwrap();
        assert_eq!(StreamConfig::from_config(kernel, &stored), Some(best));
        std::fs::remove_dir_all(&dir).ok();
    }
    let out = tune_mass::<f32>(&gpu, &grid, &settings).unwrap();
    assert_eq!((out.log.len(), out.failures()), (3, 0), "mass: {:?}", out.log);
    assert!(tune_streaming(&data, &grid, Basis::Linear, LearnKernel::Mass, &settings).is_err());
    let bad = TuneSettings { strategy: "no such strategy".into(), ..settings };
    assert!(tune_streaming(&data, &grid, Basis::Linear, LearnKernel::Mult, &bad).is_err());
}

/// Adaptive grids of sg-core convert in their order; an empty one is an error.
#[test]
fn learn_grid_points_from_adaptive_grids() {
    let spec = GridSpec::regular(3, 3).unwrap();
    let adaptive = sg_core::AdaptiveGrid::from_spec(&spec).unwrap();
    let pts = GridPoints::try_from(&adaptive).unwrap();
    assert_eq!((pts.dim(), pts.len()), (3, adaptive.len()));
    for j in 0..pts.len() {
        assert_eq!(pts.point(j), (adaptive.levels_of(j), adaptive.indices_of(j)));
    }
    assert!(GridPoints::try_from(&sg_core::AdaptiveGrid::new(2).unwrap()).is_err());
}
