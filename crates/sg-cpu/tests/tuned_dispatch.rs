//! Dispatch consults the tuning cache: a stored evaluation configuration changes the variant
//! chosen, a stored hierarchization configuration is what the sweeps use, and a stored
//! configuration outside the space is ignored for the default. Results stay equal to the
//! reference implementations of sg-core.
//!
//! Its own test binary: the process-wide memo reads `HETKIT_CACHE_DIR` on first use, so the
//! variable is set (to a fresh directory) before any lookup, once, by `setup`.

use std::sync::OnceLock;

use hetero_sched::tune::dispatch::Tunable;
use hetero_sched::tune::{
    CacheKey, Config, Fingerprint, Measured, Outcome, Param, Space, TuningCache, size_bucket,
};
use ndarray::Array2;
use sg_core::{GridSpec, VectorGrid};
use sg_cpu::{EvalTuning, EvalVariant, Evaluator, HierTuning, Hierarchizer};

fn setup() {
    static CACHE: OnceLock<tempfile::TempDir> = OnceLock::new();
    CACHE.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        // SAFETY: runs once, before any lookup; every test calls `setup` first, under the
        // OnceLock, so no other thread of this binary reads the environment meanwhile.
        unsafe {
            std::env::set_var(hetero_sched::tune::CACHE_DIR_ENV, dir.path());
            std::env::remove_var(hetero_sched::tune::dispatch::NO_CACHE_ENV);
        }
        store_all(&TuningCache::at(dir.path()));
        dir
    });
}

fn store(cache: &TuningCache, kernel: &str, ty: &str, n: usize, space: &Space, config: Config) {
    let key = CacheKey::new(kernel, &Fingerprint::cpu(), ty, &size_bucket(n as u64));
    let m = Measured { config, times: vec![1.0], outcome: Outcome::Time(1.0), failure: None };
    cache.store(&key, space, &[m]).unwrap();
}

/// A smaller tile and no `BlocksParallel` for 33..=64 points of f64.
const TUNED_EVAL: EvalTuning =
    EvalTuning { tile: 32, blocks_parallel_tiles_per_thread: 0, subtrees_per_thread: 4 };
const TUNED_HIER: HierTuning = HierTuning { task_values: 256, pole_par_values: 1 << 10 };

fn store_all(cache: &TuningCache) {
    store(cache, sg_cpu::evaluate::TUNING_KERNEL, "f64", 63, EvalTuning::space(), TUNED_EVAL.to_config());
    // A tile of 1024 is past MAX_TILE: a wider space stores it, the evaluator's space rejects it.
    let wide = Space::builder()
        .param(Param::pow2("tile", 8, 1024))
        .param(Param::ints("blocks_parallel_tiles_per_thread", &[0]))
        .param(Param::pow2("subtrees_per_thread", 1, 32))
        .build()
        .unwrap();
    let bad = EvalTuning { tile: 1024, ..TUNED_EVAL };
    store(cache, sg_cpu::evaluate::TUNING_KERNEL, "f32", 63, &wide, bad.to_config());
    let n = GridSpec::regular(4, 6).unwrap().len() as usize;
    store(cache, sg_cpu::hierarchize::TUNING_KERNEL, "f64", n, HierTuning::space(), TUNED_HIER.to_config());
}

/// 63 points with a constant leading column, in four dimensions.
fn shared_points<T: sg_core::Real>() -> Array2<T> {
    Array2::from_shape_fn((63, 4), |(i, t)| {
        T::from_f64(if t == 0 { 0.25 } else { ((i * 5 + t) % 13) as f64 / 12.0 })
    })
}

#[test]
fn a_stored_evaluation_configuration_changes_the_variant() {
    setup();
    let spec = GridSpec::regular(4, 6).unwrap();
    let plan = Evaluator::new(&spec).unwrap();
    assert!(plan.blocks() >= 64);
    let pts = shared_points::<f64>();
    assert_eq!(EvalTuning::tuned::<f64>(63), TUNED_EVAL);
    // Default rule: one tile of 64 not filled, few tiles, many blocks: BlocksParallel.
    assert_eq!(plan.choose_with(pts.view(), &EvalTuning::DEFAULT).0, EvalVariant::BlocksParallel);
    // Tuned: 63 points fill a tile of 32, so the shared prefix is used.
    assert_eq!(plan.choose(pts.view()).0, EvalVariant::SharedPrefix);
    let values: Vec<f64> = (0..spec.len()).map(|i| ((i * 37 % 101) as f64 - 50.0) / 50.0).collect();
    let grid = VectorGrid::from_values(spec.clone(), 1, values.clone()).unwrap();
    let want = grid.evaluate_batch(pts.view()).unwrap();
    let got = plan.evaluate(&values, 1, pts.view()).unwrap();
    let err = hetkit_testkit::max_rel_err(&got, want.as_slice().unwrap(), 1.0);
    assert!(err < 1e-12, "rel err {err:e}");
}

#[test]
fn an_invalid_stored_evaluation_configuration_falls_back_to_the_default() {
    setup();
    assert_eq!(EvalTuning::tuned::<f32>(63), EvalTuning::DEFAULT);
    let plan = Evaluator::new(&GridSpec::regular(4, 6).unwrap()).unwrap();
    assert_eq!(plan.choose(shared_points::<f32>().view()).0, EvalVariant::BlocksParallel);
}

#[test]
fn a_stored_hierarchization_configuration_is_used_and_results_match_the_reference() {
    setup();
    let spec = GridSpec::regular(4, 6).unwrap();
    let n = spec.len() as usize;
    assert_eq!(HierTuning::tuned::<f64>(n), TUNED_HIER);
    assert_eq!(HierTuning::tuned::<f32>(n), HierTuning::DEFAULT);
    let nodal: Vec<f64> = (0..n).map(|i| ((i * 53 % 97) as f64 - 48.0) / 48.0).collect();
    let mut want = nodal.clone();
    sg_core::reference::hierarchize(&spec, &mut want, 1).unwrap();
    let mut got = nodal;
    Hierarchizer::new(&spec).unwrap().hierarchize(&mut got, 1).unwrap();
    let err = hetkit_testkit::max_rel_err(&got, &want, 1.0);
    assert!(err < 1e-12, "rel err {err:e}");
}
