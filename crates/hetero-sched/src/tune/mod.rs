//! Autotuning: parameter spaces, search strategies, the evaluation loop, a persistent cache in
//! Kernel Tuner's file format, and replay of recorded landscapes.
//!
//! How a kernel uses it (the tuner is wired into kernels by their own crates):
//!
//! ```
//! use hetero_sched::tune::{CacheKey, Config, Fingerprint, Param, Space, TuningCache, Value, size_bucket};
//!
//! // 1. The kernel declares its space once.
//! let space = Space::builder()
//!     .param(Param::pow2("chunk", 1 << 10, 1 << 20))
//!     .param(Param::ints("threads", &[1, 2]))
//!     .build()
//!     .unwrap();
//! let default = Config::new(vec![("chunk".into(), Value::Int(1 << 16)), ("threads".into(), Value::Int(2))]);
//!
//! // 2. At dispatch it asks the cache and falls back to its default.
//! let dir = tempfile::tempdir().unwrap();
//! let cache = TuningCache::at(dir.path()); // real code: TuningCache::open_default()
//! let key = CacheKey::new("prefix_ops::scan", &Fingerprint::cpu(), "f64", &size_bucket(1_000_000));
//! let cfg = cache.lookup_or(&key, &space, default.clone());
//! assert_eq!(cfg, default); // nothing tuned yet
//! ```
//!
//! Tuning itself: wrap the kernel in a [`Kernel`] (apply / run / verify), measure it with a
//! [`Bench`] (warm-up, timed runs, median, verification), search with [`run`] and a
//! [`Strategy`], and [`TuningCache::store`] the bench's log. At dispatch, kernels go through
//! [`dispatch::lookup_memo`], which reads the cache once per key and process.

mod cache;
mod constraint;
pub mod dispatch;
mod error;
mod kt;
mod measure;
mod param;
mod replay;
mod search;
mod space;
pub mod strategy;
mod value;

pub use cache::{CACHE_DIR_ENV, CacheFileInfo, CacheKey, Fingerprint, TuningCache, cpu_model, size_bucket};
pub use constraint::{ConfigView, Constraint};
pub use error::{Result, TuneError};
pub use kt::{KtEntry, KtFile};
pub use measure::{
    Bench, Clock, CompileCache, Compiler, CpuClock, CudaEventClock, Kernel, Measured, Measurement,
    NvrtcSource,
};
pub use param::Param;
pub use replay::{ReplayConfig, ReplayDomain, ReplayObjective, ReplaySummary, median, replay};
pub use search::{Budget, Objective, Outcome, Record, Search, Stop, StopReason, TuneResult, run};
pub use space::{Config, Domain, Point, Space, SpaceBuilder, adjacent, hamming};
pub use strategy::Strategy;
pub use value::Value;

/// The random generator of searches: seeded, portable, fast.
pub type TuneRng = rand_chacha::ChaCha8Rng;
