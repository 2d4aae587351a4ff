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
//! A kernel's parameters implement [`Tunable`]: they declare the kernel's name, space, default
//! and problem-shape buckets, and the provided [`Tunable::tuned`] is the one lookup every kernel
//! uses at dispatch ([`Tunable::tuned_in`] with an explicit memo, e.g. [`Memo::new`]`(None)`
//! for defaults whatever a user's cache holds).
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

use std::any::Any;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, OnceLock, RwLock};

use super::cache::{CacheKey, Fingerprint, TuningCache};
use super::space::{Config, Space};

/// Set to `1` (or `true`) to make the process-wide memo return defaults only.
pub const NO_CACHE_ENV: &str = "HETKIT_NO_TUNING_CACHE";

/// A problem-shape bucket: the power-of-two exponents of one or two extents. Its
/// [`name`](Bucket::name) is the cache key's bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Bucket {
    /// One size `n`, `2^(k-1) < n <= 2^k`: named `n<=2^k` (as [`size_bucket`](super::size_bucket)).
    Len(u32),
    /// A batch of `count` problems of size `len` (system size and batch size, row length and
    /// rows): named `m<=2^a,batch<=2^b`.
    Batch {
        /// Exponent of the problem size.
        len: u32,
        /// Exponent of the number of problems.
        count: u32,
    },
    /// A batch in a named arrangement (a memory layout, a variant of the problem) that
    /// changes what is fastest: named `<tag>,m<=2^a,batch<=2^b`.
    Tagged {
        /// The arrangement.
        tag: &'static str,
        /// Exponent of the problem size.
        len: u32,
        /// Exponent of the number of problems.
        count: u32,
    },
}

impl Bucket {
    /// The bucket of a size `n`.
    pub fn len(n: u64) -> Self {
        Bucket::Len(bucket_exp(n))
    }

    /// The bucket of `count` problems of size `len`.
    pub fn batch(len: u64, count: u64) -> Self {
        Bucket::Batch { len: bucket_exp(len), count: bucket_exp(count) }
    }

    /// The bucket of `count` problems of size `len` arranged as `tag`.
    pub fn tagged(tag: &'static str, len: u64, count: u64) -> Self {
        Bucket::Tagged { tag, len: bucket_exp(len), count: bucket_exp(count) }
    }

    /// The name used in cache keys.
    pub fn name(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for Bucket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Bucket::Len(k) => write!(f, "n<=2^{k}"),
            Bucket::Batch { len, count } => write!(f, "m<=2^{len},batch<=2^{count}"),
            Bucket::Tagged { tag, len, count } => write!(f, "{tag},m<=2^{len},batch<=2^{count}"),
        }
    }
}

/// A kernel's tuning parameters: what a kernel declares to be tuned, and the one lookup it
/// uses at dispatch.
///
/// The implementing type declares the kernel's cache name, its space, the conversions to and
/// from a [`Config`] and how a problem shape maps to a [`Bucket`]; its [`Default`] (or
/// [`fallback`](Tunable::fallback) where the default depends on the shape) is what the kernel
/// runs when nothing is tuned. [`tuned`](Tunable::tuned) is provided.
///
/// ```
/// use std::sync::OnceLock;
/// use hetero_sched::tune::dispatch::{Bucket, Memo, Tunable};
/// use hetero_sched::tune::{Config, Param, Space, Value};
///
/// #[derive(Debug, Clone, Copy, PartialEq, Default)]
/// struct Chunk(usize);
///
/// impl Tunable for Chunk {
///     const KERNEL: &'static str = "doc::chunked";
///     type Shape = usize;
///     fn space() -> &'static Space {
///         static S: OnceLock<Space> = OnceLock::new();
///         S.get_or_init(|| Space::builder().param(Param::pow2("chunk", 1, 1 << 20)).build().unwrap())
///     }
///     fn to_config(&self) -> Config {
///         Config::new(vec![("chunk".into(), Value::Int(self.0 as i64))])
///     }
///     fn from_config(c: &Config) -> Option<Self> {
///         c.int("chunk").and_then(|v| usize::try_from(v).ok()).map(Chunk)
///     }
///     fn bucket(n: usize) -> Option<Bucket> {
///         (n >= 1024).then(|| Bucket::len(n as u64)) // shorter inputs: always the default
///     }
/// }
///
/// // With a memo that reads no cache, always the default.
/// assert_eq!(Chunk::tuned_in::<f32>(&Memo::new(None), 1 << 20), Chunk::default());
/// ```
pub trait Tunable: Default + Clone + Send + Sync + 'static {
    /// The kernel's name in the tuning cache.
    const KERNEL: &'static str;
    /// What [`bucket`](Tunable::bucket) reads: a size, or (size, count) of a batch.
    type Shape: Copy;
    /// The space tuning searches; a stored configuration outside it is never used.
    fn space() -> &'static Space;
    /// As a configuration of [`space`](Tunable::space).
    fn to_config(&self) -> Config;
    /// From a configuration; `None` when it is not one the kernel can run with.
    fn from_config(c: &Config) -> Option<Self>;
    /// The bucket tuned results are kept under for `shape`; `None` for shapes every
    /// configuration handles alike (no lookup, the default).
    fn bucket(shape: Self::Shape) -> Option<Bucket>;

    /// The untuned parameters for `shape`: [`Default`] unless overridden. Must depend on the
    /// shape only through its [`bucket`](Tunable::bucket) (answers are memoised per bucket).
    fn fallback(_shape: Self::Shape) -> Self {
        Self::default()
    }

    /// The parameters for `shape` with elements of type `T`, through `memo`: the best stored
    /// configuration of this bucket, else the default. Memoised per bucket and type, so a
    /// dispatch after the first costs a read lock and a hash look-up.
    fn tuned_in<T: ?Sized>(memo: &Memo, shape: Self::Shape) -> Self {
        match Self::bucket(shape) {
            Some(bucket) => {
                memo.tuned_for::<Self>(None, std::any::type_name::<T>(), bucket, || Self::fallback(shape))
            }
            None => Self::fallback(shape),
        }
    }

    /// True when [`Default`] is a valid point of [`space`](Tunable::space) and converts back to
    /// itself. Every declaration must satisfy it: an untuned dispatch runs the default, and a
    /// search starts from it.
    fn default_is_in_space() -> bool
    where
        Self: PartialEq,
    {
        use super::Domain as _;
        let default = Self::default();
        let c = default.to_config();
        let space = Self::space();
        space.point_of(&c).is_some_and(|p| space.is_valid(&p)) && Self::from_config(&c) == Some(default)
    }

    /// [`tuned_in`](Tunable::tuned_in) on the process-wide memo ([`global`]): what kernels call
    /// at dispatch.
    fn tuned<T: ?Sized>(shape: Self::Shape) -> Self {
        Self::tuned_in::<T>(global(), shape)
    }

    /// [`tuned_in`](Tunable::tuned_in) for another device than this machine's CPU (a GPU,
    /// by its [`Fingerprint::gpu`]).
    fn tuned_on<T: ?Sized>(memo: &Memo, device: &Fingerprint, shape: Self::Shape) -> Self {
        match Self::bucket(shape) {
            Some(bucket) => memo.tuned_for::<Self>(Some(device), std::any::type_name::<T>(), bucket, || {
                Self::fallback(shape)
            }),
            None => Self::fallback(shape),
        }
    }
}

/// Memo key: kernel, element type, bucket.
type Key = (&'static str, &'static str, Bucket);

/// Typed memo key: [`Key`] and the device's fingerprint (`None`: this machine's CPU).
type TypedKey = (Key, Option<Fingerprint>);

/// Tuned configurations per (kernel, element type, size bucket), each read from a cache once.
#[derive(Debug)]
pub struct Memo {
    cache: Option<TuningCache>,
    fingerprint: OnceLock<Fingerprint>,
    entries: RwLock<HashMap<Key, Arc<Config>>>,
    typed: RwLock<HashMap<TypedKey, Arc<dyn Any + Send + Sync>>>,
}

impl Memo {
    /// A memo over `cache`; `None` returns defaults only.
    pub fn new(cache: Option<TuningCache>) -> Self {
        Memo {
            cache,
            fingerprint: OnceLock::new(),
            entries: RwLock::new(HashMap::new()),
            typed: RwLock::new(HashMap::new()),
        }
    }

    /// [`Tunable::tuned_in`]'s memo: the typed parameters of `P` for `bucket` on `device`
    /// (`None`: the CPU), converted from the stored configuration once.
    fn tuned_for<P: Tunable>(
        &self,
        device: Option<&Fingerprint>,
        element_type: &'static str,
        bucket: Bucket,
        fallback: impl FnOnce() -> P,
    ) -> P {
        let key = ((P::KERNEL, element_type, bucket), device.cloned());
        if let Some(p) = read(&self.typed).get(&key).and_then(|a| a.downcast_ref::<P>()) {
            return p.clone();
        }
        let found = self.read_cache(device, P::KERNEL, element_type, bucket, P::space());
        let p = found.as_ref().and_then(P::from_config).unwrap_or_else(fallback);
        write(&self.typed).insert(key, Arc::new(p.clone()));
        p
    }

    fn read_cache(
        &self,
        device: Option<&Fingerprint>,
        kernel: &str,
        element_type: &str,
        bucket: Bucket,
        space: &Space,
    ) -> Option<Config> {
        let cache = self.cache.as_ref()?;
        let fp = device.unwrap_or_else(|| self.fingerprint.get_or_init(Fingerprint::cpu));
        cache.lookup(&CacheKey::new(kernel, fp, element_type, &bucket.name()), space)
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
        let bucket = Bucket::len(n);
        let key = (kernel, element_type, bucket);
        if let Some(c) = read(&self.entries).get(&key) {
            return Arc::clone(c);
        }
        let found = self.read_cache(None, kernel, element_type, bucket, space);
        let cfg = Arc::new(found.unwrap_or_else(|| default.clone()));
        Arc::clone(write(&self.entries).entry(key).or_insert(cfg))
    }

    /// Forgets every memoised answer, so the next lookups read the cache again (after a tuning
    /// run stored new results in this process).
    pub fn forget(&self) {
        write(&self.entries).clear();
        write(&self.typed).clear();
    }
}

// A poisoned lock only means another thread panicked mid-insert of a complete value.
fn read<T>(l: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(|e| e.into_inner())
}

fn write<T>(l: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(|e| e.into_inner())
}

/// The exponent `k` of [`size_bucket`](super::size_bucket)`(n)` = `"n<=2^k"`.
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
    use crate::tune::{Measured, Outcome, Param, Value, size_bucket};

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

    /// A test kernel tuned per batch shape; batches of fewer than 4 problems are never looked up.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    struct Chunk(i64);

    impl Default for Chunk {
        fn default() -> Self {
            Chunk(16)
        }
    }

    impl Tunable for Chunk {
        const KERNEL: &'static str = "k";
        type Shape = (u64, u64);
        fn space() -> &'static Space {
            static S: OnceLock<Space> = OnceLock::new();
            S.get_or_init(space)
        }
        fn to_config(&self) -> Config {
            cfg(self.0)
        }
        fn from_config(c: &Config) -> Option<Self> {
            c.int("chunk").map(Chunk)
        }
        fn bucket((len, count): (u64, u64)) -> Option<Bucket> {
            (count >= 4).then(|| Bucket::batch(len, count))
        }
    }

    fn store_bucket(cache: &TuningCache, bucket: Bucket, space: &Space, chunk: i64) {
        let key = CacheKey::new("k", &Fingerprint::cpu(), "f64", &bucket.name());
        let m = Measured { config: cfg(chunk), times: vec![1.0], outcome: Outcome::Time(1.0), failure: None };
        cache.store(&key, space, &[m]).unwrap();
    }

    #[test]
    fn tunable_reads_its_batch_bucket_once() {
        let dir = tempfile::tempdir().unwrap();
        let cache = TuningCache::at(dir.path());
        store_bucket(&cache, Bucket::batch(100, 1000), &space(), 8);
        let memo = Memo::new(Some(cache.clone()));
        assert_eq!(Chunk::tuned_in::<f64>(&memo, (100, 1000)), Chunk(8));
        // Same bucket (65..=128 by 513..=1024); another size, count or type: the default.
        assert_eq!(Chunk::tuned_in::<f64>(&memo, (65, 513)), Chunk(8));
        assert_eq!(Chunk::tuned_in::<f64>(&memo, (200, 1000)), Chunk::default());
        assert_eq!(Chunk::tuned_in::<f64>(&memo, (100, 100)), Chunk::default());
        assert_eq!(Chunk::tuned_in::<f32>(&memo, (100, 1000)), Chunk::default());
        // Below the bucketed shapes nothing is read.
        store_bucket(&cache, Bucket::batch(100, 2), &space(), 4);
        assert_eq!(Chunk::tuned_in::<f64>(&memo, (100, 2)), Chunk::default());
        // Memoised until forgotten.
        store_bucket(&cache, Bucket::batch(200, 1000), &space(), 64);
        assert_eq!(Chunk::tuned_in::<f64>(&memo, (200, 1000)), Chunk::default());
        memo.forget();
        assert_eq!(Chunk::tuned_in::<f64>(&memo, (200, 1000)), Chunk(64));
    }

    #[test]
    fn tunable_ignores_configurations_outside_its_space() {
        let dir = tempfile::tempdir().unwrap();
        let cache = TuningCache::at(dir.path());
        let wide = Space::builder().param(Param::pow2("chunk", 4, 256)).build().unwrap();
        store_bucket(&cache, Bucket::batch(10, 10), &wide, 128);
        let memo = Memo::new(Some(cache));
        assert_eq!(Chunk::tuned_in::<f64>(&memo, (10, 10)), Chunk::default());
        assert_eq!(Chunk::tuned_in::<f64>(&Memo::new(None), (10, 10)), Chunk::default());
    }

    #[test]
    fn devices_have_their_own_entries() {
        let dir = tempfile::tempdir().unwrap();
        let cache = TuningCache::at(dir.path());
        let gpu = Fingerprint::new("cuda:test:sm_90");
        let key = CacheKey::new("k", &gpu, "f64", &Bucket::batch(10, 10).name());
        let m = Measured { config: cfg(32), times: vec![1.0], outcome: Outcome::Time(1.0), failure: None };
        cache.store(&key, &space(), &[m]).unwrap();
        let memo = Memo::new(Some(cache));
        assert_eq!(Chunk::tuned_on::<f64>(&memo, &gpu, (10, 10)), Chunk(32));
        assert_eq!(Chunk::tuned_in::<f64>(&memo, (10, 10)), Chunk::default());
        assert_eq!(
            Chunk::tuned_on::<f64>(&memo, &Fingerprint::new("cuda:other"), (10, 10)),
            Chunk::default()
        );
    }

    #[test]
    fn bucket_names() {
        assert_eq!(Bucket::len(1000).name(), "n<=2^10");
        assert_eq!(Bucket::batch(1, 1025).name(), "m<=2^0,batch<=2^11");
        assert_eq!(Bucket::tagged("strided", 3, 1).name(), "strided,m<=2^2,batch<=2^0");
    }

    #[test]
    fn buckets_match_the_cache_names() {
        for n in [0u64, 1, 2, 3, 1000, 1 << 20, (1 << 20) + 1] {
            assert_eq!(size_bucket(n), format!("n<=2^{}", bucket_exp(n)));
        }
    }
}
