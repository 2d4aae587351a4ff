//! `HETKIT_CACHE_DIR` moves the default store (its own test binary: it sets the environment).

use hetero_sched::split::{
    AffineModel, CACHE_DIR_ENV, JsonStore, ModelKey, STORE_FILE, SplitStore, default_dir,
};

#[test]
fn cache_dir_env_overrides_the_user_cache_directory() {
    let dir = std::env::temp_dir().join(format!("hetero-sched-env-{}", std::process::id()));
    // SAFETY: the only test of this binary; no other thread reads the environment meanwhile.
    unsafe { std::env::set_var(CACHE_DIR_ENV, &dir) };
    assert_eq!(default_dir().unwrap(), dir);
    let store = JsonStore::open_default().unwrap();
    assert_eq!(store.path(), dir.join(STORE_FILE));
    store.put_model(ModelKey::new("d", "o", "f32"), AffineModel::new(1e-9, 0.0)).unwrap();
    assert!(dir.join(STORE_FILE).is_file());
    std::fs::remove_dir_all(&dir).ok();
}
