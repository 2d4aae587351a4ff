//! Dispatch-time lookups: what a kernel calls on every invocation to get its tuned
//! configuration, cheaply.
//!
//! [`TuningCache::lookup`] reads and parses a JSON file, far too slow for every call of a scan.
//! A [`Memo`] reads the cache once per (kernel, element type, size bucket) and keeps the answer
//! (the tuned configuration, or the kernel's default when nothing usable is stored) for the
//! life of the process. The process-wide memo behind [`lookup_memo`] reads
//! [`TuningCache::open_default`]; with `HETKIT_NO_TUNING_CACHE=1` it never reads anything and
//! every kernel runs its defaults (reproducible tests and benchmarks).
//!
//! ```
//! use hetero_sched::tune::dispatch::Memo;
//! use hetero_sched::tune::{Config, Param, Space, TuningCache, Value};
//!
//! let space = Space::builder().param(Param::pow2("chunk", 1 << 10, 1 << 20)).build().unwrap();
//! let default = Config::new(vec![("chunk".into(), Value::Int(1 << 16))]);
//! let dir = tempfile::tempdir().unwrap();
//! let memo = Memo::new(Some(TuningCache::at(dir.path())));
//! let cfg = memo.lookup("my_crate::kernel", "f32", 1_000_000, &space, &default);
//! assert_eq!(*cfg, default); // nothing tuned: the default, now memoised
//! ```

use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};

use super::cache::{CacheKey, Fingerprint, TuningCache, size_bucket};
use super::space::{Config, Space};

/// Set to `1` (or `true`) to make the process-wide memo return defaults only.
pub const NO_CACHE_ENV: &str = "HETKIT_NO_TUNING_CACHE";

/// Memo key: kernel, element type, exponent of the size bucket.
type Key = (&'static str, &'static str, u32);

/// Tuned configurations per (kernel, element type, size bucket), each read from a cache once.
#[derive(Debug)]
pub struct Memo {
    cache: Option<TuningCache>,
    fingerprint: OnceLock<Fingerprint>,
    entries: RwLock<HashMap<Key, Arc<Config>>>,
}

impl Memo {
    /// A memo over `cache`; `None` returns defaults only.
    pub fn new(cache: Option<TuningCache>) -> Self {
        Memo { cache, fingerprint: OnceLock::new(), entries: RwLock::new(HashMap::new()) }
    }

    /// The configuration of `kernel` for `n` elements of `element_type`: the best stored one
    /// valid in `space`, else `default`. The cache is read on the first call per key only; a
    /// missing, corrupt or foreign file, or a stored configuration outside `space`, gives the
    /// default (with a `tracing` warning from the cache for the bad cases).
    pub fn lookup(
        &self,
        kernel: &'static str,
        element_type: &'static str,
        n: u64,
        space: &Space,
        default: &Config,
    ) -> Arc<Config> {
        let key = (kernel, element_type, bucket_exp(n));
        // A poisoned lock only means another thread panicked mid-insert of a complete value.
        if let Some(c) = self.entries.read().unwrap_or_else(|e| e.into_inner()).get(&key) {
            return Arc::clone(c);
        }
        let found = self.cache.as_ref().and_then(|cache| {
            let fp = self.fingerprint.get_or_init(Fingerprint::cpu);
            cache.lookup(&CacheKey::new(kernel, fp, element_type, &size_bucket(n)), space)
        });
        let cfg = Arc::new(found.unwrap_or_else(|| default.clone()));
        let mut map = self.entries.write().unwrap_or_else(|e| e.into_inner());
        Arc::clone(map.entry(key).or_insert(cfg))
    }

    /// Forgets every memoised answer, so the next lookups read the cache again (after a tuning
    /// run stored new results in this process).
    pub fn forget(&self) {
        self.entries.write().unwrap_or_else(|e| e.into_inner()).clear();
    }
}

/// The exponent `k` of [`size_bucket`]`(n)` = `"n<=2^k"`.
pub fn bucket_exp(n: u64) -> u32 {
    n.max(1).next_power_of_two().trailing_zeros()
}

/// Whether `HETKIT_NO_TUNING_CACHE` asks for defaults only.
fn disabled_by_env() -> bool {
    std::env::var(NO_CACHE_ENV).is_ok_and(|v| matches!(v.trim(), "1" | "true" | "yes"))
}

/// The process-wide memo: over [`TuningCache::open_default`], or defaults only when
/// `HETKIT_NO_TUNING_CACHE` is set or no cache directory exists. Both are decided on first use.
pub fn global() -> &'static Memo {
    static GLOBAL: OnceLock<Memo> = OnceLock::new();
    GLOBAL.get_or_init(|| {
        let cache = if disabled_by_env() { None } else { TuningCache::open_default().ok() };
        Memo::new(cache)
    })
}

/// [`Memo::lookup`] on the process-wide memo: what kernels call at dispatch.
pub fn lookup_memo(
    kernel: &'static str,
    element_type: &'static str,
    n: u64,
    space: &Space,
    default: &Config,
) -> Arc<Config> {
    global().lookup(kernel, element_type, n, space, default)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tune::{Measured, Outcome, Param, Value};

    fn space() -> Space {
        Space::builder().param(Param::pow2("chunk", 4, 64)).build().unwrap()
    }

    fn cfg(chunk: i64) -> Config {
        Config::new(vec![("chunk".into(), Value::Int(chunk))])
    }

    fn store(cache: &TuningCache, n: u64, entries: &[(i64, f64)]) {
        let key = CacheKey::new("k", &Fingerprint::cpu(), "f32", &size_bucket(n));
        let measured: Vec<Measured> = entries
            .iter()
            .map(|&(c, t)| Measured {
                config: cfg(c),
                times: vec![t],
                outcome: Outcome::Time(t),
                failure: None,
            })
            .collect();
        cache.store(&key, &space(), &measured).unwrap();
    }

    #[test]
    fn stored_best_is_returned_per_bucket_and_type() {
        let dir = tempfile::tempdir().unwrap();
        let cache = TuningCache::at(dir.path());
        store(&cache, 1000, &[(8, 2.0), (32, 1.0), (64, 3.0)]);
        let memo = Memo::new(Some(cache));
        assert_eq!(*memo.lookup("k", "f32", 1000, &space(), &cfg(16)), cfg(32));
        // Same bucket (513..=1024), same answer; another bucket or type: the default.
        assert_eq!(*memo.lookup("k", "f32", 600, &space(), &cfg(16)), cfg(32));
        assert_eq!(*memo.lookup("k", "f32", 5000, &space(), &cfg(16)), cfg(16));
        assert_eq!(*memo.lookup("k", "f64", 1000, &space(), &cfg(16)), cfg(16));
    }

    #[test]
    fn the_file_is_read_once_per_key() {
        let dir = tempfile::tempdir().unwrap();
        let cache = TuningCache::at(dir.path());
        let memo = Memo::new(Some(cache.clone()));
        assert_eq!(*memo.lookup("k", "f32", 100, &space(), &cfg(16)), cfg(16));
        store(&cache, 100, &[(4, 1.0)]);
        // Memoised: the new file is not seen until the memo forgets.
        assert_eq!(*memo.lookup("k", "f32", 100, &space(), &cfg(16)), cfg(16));
        memo.forget();
        assert_eq!(*memo.lookup("k", "f32", 100, &space(), &cfg(16)), cfg(4));
    }

    #[test]
    fn invalid_or_corrupt_entries_give_the_default() {
        let dir = tempfile::tempdir().unwrap();
        let cache = TuningCache::at(dir.path());
        // 128 is outside the space [4, 64]: stored (by a wider space) but never returned.
        let wide = Space::builder().param(Param::pow2("chunk", 4, 256)).build().unwrap();
        let key = CacheKey::new("k", &Fingerprint::cpu(), "f32", &size_bucket(100));
        let m = Measured { config: cfg(128), times: vec![1.0], outcome: Outcome::Time(1.0), failure: None };
        cache.store(&key, &wide, &[m]).unwrap();
        let memo = Memo::new(Some(cache.clone()));
        assert_eq!(*memo.lookup("k", "f32", 100, &space(), &cfg(16)), cfg(16));
        // A corrupt file.
        let key = CacheKey::new("k", &Fingerprint::cpu(), "f32", &size_bucket(10_000));
        let path = cache.path_for(&key);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "{ not json").unwrap();
        assert_eq!(*memo.lookup("k", "f32", 10_000, &space(), &cfg(16)), cfg(16));
    }

    #[test]
    fn no_cache_gives_defaults() {
        let memo = Memo::new(None);
        assert_eq!(*memo.lookup("k", "f32", 100, &space(), &cfg(8)), cfg(8));
    }

    #[test]
    fn buckets_match_the_cache_names() {
        for n in [0u64, 1, 2, 3, 1000, 1 << 20, (1 << 20) + 1] {
            assert_eq!(size_bucket(n), format!("n<=2^{}", bucket_exp(n)));
        }
    }
}
