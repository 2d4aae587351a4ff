//! The CPU backends take their parameters from the tuning cache at dispatch: a stored
//! configuration for a problem's `(N, m)` bucket is what `CpuStreaming` and `CpuSubspace` run
//! with unless given explicit parameters, a stored configuration outside the space is ignored
//! for the default, and fits with tuned parameters equal fits with the defaults.
//!
//! Its own test binary: the process-wide memo reads `HETKIT_CACHE_DIR` on first use, so the
//! variable is set (to a fresh directory) before any lookup, once, by `setup`.

use std::sync::{Arc, OnceLock};

use hetero_sched::tune::dispatch::{Bucket, Tunable};
use hetero_sched::tune::{CacheKey, Config, Fingerprint, Measured, Outcome, Param, Space, TuningCache};
use sg_cpu::learn::{STREAM_KERNEL, SUBSPACE_KERNEL, StreamTuning, SubspaceTuning};
use sg_learn::{CpuAlgorithm, CpuStreaming, CpuSubspace, GridSpec, Regressor, datasets};

/// The problem of the tests: Friedman1 rows on a level-2 grid in 10 dimensions (21 points).
const M: usize = 300;
const LEVEL: u32 = 2;

fn grid_len() -> usize {
    GridSpec::regular(10, LEVEL).unwrap().len() as usize
}

const TUNED_STREAM: StreamTuning = StreamTuning { lanes: 8, data_chunk: 64, grid_chunk: 2 };
const TUNED_SUBSPACE: SubspaceTuning =
    SubspaceTuning { chunk_size: 32, skipping: false, reuse_intermediates: true };

fn store(cache: &TuningCache, kernel: &str, shape: (usize, usize), space: &Space, config: Config) {
    let bucket = Bucket::batch(shape.0 as u64, shape.1 as u64).name();
    let key = CacheKey::new(kernel, &Fingerprint::cpu(), "f64", &bucket);
    let m = Measured { config, times: vec![1.0], outcome: Outcome::Time(1.0), failure: None };
    cache.store(&key, space, &[m]).unwrap();
}

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
        let cache = TuningCache::at(dir.path());
        let n = grid_len();
        store(&cache, STREAM_KERNEL, (n, M), StreamTuning::space(), TUNED_STREAM.to_config());
        store(&cache, SUBSPACE_KERNEL, (n, M), SubspaceTuning::space(), TUNED_SUBSPACE.to_config());
        // Lanes of 7 are no SIMD width: a wider space stores them, the operator's rejects them.
        let wide = Space::builder()
            .param(Param::ints("lanes", &[7]))
            .param(Param::pow2("data_chunk", 64, 64))
            .param(Param::pow2("grid_chunk", 1, 1))
            .build()
            .unwrap();
        let bad = StreamTuning { lanes: 7, data_chunk: 64, grid_chunk: 1 };
        store(&cache, STREAM_KERNEL, (n, 2 * M), &wide, bad.to_config());
        dir
    });
}

#[test]
fn stored_configurations_are_what_the_backends_run_with() {
    setup();
    let n = grid_len();
    assert_eq!(CpuStreaming::default().tuning_for(n, M), TUNED_STREAM);
    assert_eq!(CpuSubspace::default().tuning_for(n, M), TUNED_SUBSPACE);
    // Another bucket, nothing stored: the defaults.
    assert_eq!(CpuStreaming::default().tuning_for(n, 4 * M), StreamTuning::DEFAULT);
    assert_eq!(CpuSubspace::default().tuning_for(4 * n, M), SubspaceTuning::DEFAULT);
    // Explicit parameters win over the cache.
    let explicit = CpuStreaming { tuning: Some(StreamTuning::DEFAULT) };
    assert_eq!(explicit.tuning_for(n, M), StreamTuning::DEFAULT);
}

#[test]
fn an_unusable_stored_configuration_falls_back_to_the_default() {
    setup();
    assert_eq!(CpuStreaming::default().tuning_for(grid_len(), 2 * M), StreamTuning::DEFAULT);
}

#[test]
fn fits_with_tuned_parameters_equal_fits_with_the_defaults() {
    setup();
    let (x, y) = datasets::friedman1(M, 0.5, 4);
    let spec = GridSpec::regular(10, LEVEL).unwrap();
    let fit = |backend: Arc<dyn sg_learn::Backend>| {
        let model =
            Regressor::new(spec.clone()).lambda(1e-3).backend(backend).fit(x.view(), y.view()).unwrap();
        model.alpha().to_vec()
    };
    let reference = fit(Arc::new(CpuStreaming { tuning: Some(StreamTuning::DEFAULT) }));
    for got in [fit(Arc::new(CpuStreaming::default())), fit(Arc::new(CpuSubspace::default()))] {
        let err = hetkit_testkit::max_rel_err(&got, &reference, 1.0);
        // The products sum in other orders; CG amplifies the rounding by the conditioning.
        assert!(err < 1e-6, "rel err {err:e}");
    }
}
