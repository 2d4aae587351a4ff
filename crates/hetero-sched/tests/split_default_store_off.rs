//! With `HETKIT_NO_TUNING_CACHE=1` the default split store keeps calibrations in memory only
//! (its own test binary: it sets the environment before the store is first used).

use hetero_sched::split::{AffineModel, CACHE_DIR_ENV, ModelKey, default_store};
use hetero_sched::tune::TuningCache;
use hetero_sched::tune::dispatch::NO_CACHE_ENV;

#[test]
fn no_tuning_cache_keeps_calibrations_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    // SAFETY: the only test of this binary, before any thread reads the environment.
    unsafe {
        std::env::set_var(CACHE_DIR_ENV, dir.path());
        std::env::set_var(NO_CACHE_ENV, "1");
    }
    let key = ModelKey::new("cpu:test", "axpy", "f64");
    let m = AffineModel::new(1e-9, 2e-6);
    default_store().put_model(key.clone(), m).unwrap();
    assert_eq!(default_store().model(&key), Some(m));
    assert!(TuningCache::at(dir.path()).files().into_iter().flatten().next().is_none());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "nothing written to disk");
}
