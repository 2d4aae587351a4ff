//! The persistent tuning cache: Kernel Tuner cache files in the user's cache directory, one per
//! (kernel, element type, problem-shape bucket, device fingerprint).
//!
//! Layout: `<dir>/<kernel>/<element type>-<bucket>-<fingerprint hash>.json`, where `<dir>` is
//! `$HETKIT_CACHE_DIR` if set, else the platform cache directory (`~/.cache/hetkit/tuning` on
//! Linux). Each file is a complete Kernel Tuner cache file (`device_name` is the fingerprint,
//! `problem_size` the bucket) with an extra `hetkit` object naming the key, so Kernel Tuner's
//! tools open it and its files can be imported.
//!
//! At dispatch a kernel calls [`TuningCache::lookup`]: the best recorded configuration that is
//! still valid in the kernel's declared space, or `None` (then the kernel uses its default).
//! Files of other devices, corrupt files and configurations outside the space are ignored with a
//! warning (`tracing`), never returned.

use std::path::{Path, PathBuf};

use serde_json::json;

use super::error::{Result, TuneError};
use super::kt::{KtEntry, KtFile};
use super::measure::Measured;
use super::space::{Config, Domain, Space};

/// The environment variable that overrides the cache directory.
pub const CACHE_DIR_ENV: &str = "HETKIT_CACHE_DIR";

/// Identifies a device: tuned results are never shared between fingerprints.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Fingerprint(String);

impl Fingerprint {
    /// A fingerprint from a description (e.g. GPU name, compute capability and driver).
    pub fn new(s: impl Into<String>) -> Self {
        Fingerprint(s.into())
    }

    /// This machine's CPU: model name and hardware threads.
    pub fn cpu() -> Self {
        Fingerprint(format!(
            "cpu: {} x{}",
            cpu_model(),
            std::thread::available_parallelism().map_or(1, |n| n.get())
        ))
    }

    /// A CUDA device: name, compute capability, multiprocessors and memory (as
    /// [`CudaDevice`](crate::split::CudaDevice)'s fingerprint, so a device's tuned kernels and
    /// its split calibrations share one key).
    pub fn gpu(gpu: &cuda_kernels::Gpu) -> Self {
        let p = gpu.props();
        Fingerprint(format!(
            "cuda:{}:sm_{}{}:{}sm:{}MiB",
            p.name,
            p.compute_capability.0,
            p.compute_capability.1,
            p.sm_count,
            p.total_memory >> 20
        ))
    }

    /// The description.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    fn hash_hex(&self) -> String {
        // FNV-1a: stable across Rust versions, unlike `DefaultHasher`'s output.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in self.0.bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        format!("{h:016x}")
    }
}

/// The CPU model name from `/proc/cpuinfo` (or the architecture where that is unavailable).
pub fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_owned())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_owned())
}

/// The problem-shape bucket of a size: `"n<=2^k"` with the smallest such `k`.
pub fn size_bucket(n: u64) -> String {
    format!("n<=2^{}", n.max(1).next_power_of_two().trailing_zeros())
}

/// What a tuned configuration is for.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CacheKey {
    /// Kernel name, e.g. `"sg_cpu::evaluate"`.
    pub kernel: String,
    /// Device fingerprint.
    pub fingerprint: Fingerprint,
    /// Element type, e.g. `"f64"`.
    pub element_type: String,
    /// Problem-shape bucket (see [`size_bucket`]).
    pub bucket: String,
}

impl CacheKey {
    /// A key.
    pub fn new(kernel: &str, fingerprint: &Fingerprint, element_type: &str, bucket: &str) -> Self {
        CacheKey {
            kernel: kernel.into(),
            fingerprint: fingerprint.clone(),
            element_type: element_type.into(),
            bucket: bucket.into(),
        }
    }
}

/// Summary of one cache file (for `hetkit info`).
#[derive(Debug, Clone, PartialEq)]
pub struct CacheFileInfo {
    /// The file.
    pub path: PathBuf,
    /// Kernel name.
    pub kernel: String,
    /// Device fingerprint.
    pub device: String,
    /// `problem_size` as text.
    pub problem: String,
    /// Entries, and how many of them succeeded.
    pub entries: usize,
    /// Successful entries.
    pub succeeded: usize,
    /// Best time (ms) and configuration key.
    pub best: Option<(f64, String)>,
}

/// The tuning cache directory.
#[derive(Debug, Clone)]
pub struct TuningCache {
    dir: PathBuf,
}

fn safe(s: &str) -> String {
    s.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.=".contains(c) { c } else { '_' }).collect()
}

impl TuningCache {
    /// The cache at `$HETKIT_CACHE_DIR`, or the user's cache directory.
    pub fn open_default() -> Result<Self> {
        Ok(TuningCache { dir: Self::default_dir()? })
    }

    /// The directory [`open_default`](Self::open_default) uses.
    pub fn default_dir() -> Result<PathBuf> {
        if let Some(d) = std::env::var_os(CACHE_DIR_ENV).filter(|d| !d.is_empty()) {
            return Ok(PathBuf::from(d));
        }
        directories::ProjectDirs::from("", "", "hetkit")
            .map(|p| p.cache_dir().join("tuning"))
            .ok_or(TuneError::NoCacheDir)
    }

    /// A cache in `dir`.
    pub fn at(dir: impl Into<PathBuf>) -> Self {
        TuningCache { dir: dir.into() }
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file holding `key`'s results.
    pub fn path_for(&self, key: &CacheKey) -> PathBuf {
        self.dir.join(safe(&key.kernel)).join(format!(
            "{}-{}-{}.json",
            safe(&key.element_type),
            safe(&key.bucket),
            key.fingerprint.hash_hex()
        ))
    }

    /// Merges measured configurations into `key`'s file (a new measurement of a configuration
    /// replaces the old one).
    pub fn store(&self, key: &CacheKey, space: &Space, measured: &[Measured]) -> Result<PathBuf> {
        let path = self.path_for(key);
        let mut file = match self.load_own(key, space, &path) {
            Some(f) => f,
            None => KtFile {
                device_name: key.fingerprint.as_str().to_owned(),
                kernel_name: key.kernel.clone(),
                problem_size: json!(key.bucket),
                params: space.params().iter().map(|p| (p.name().to_owned(), p.values().to_vec())).collect(),
                entries: Vec::new(),
                extra: Default::default(),
            },
        };
        file.extra.insert("objective".into(), json!("time"));
        file.extra.insert(
            "hetkit".into(),
            json!({"kernel": key.kernel, "element_type": key.element_type, "bucket": key.bucket, "fingerprint": key.fingerprint.as_str()}),
        );
        for m in measured {
            let e: KtEntry = m.to_entry();
            let k = e.key();
            file.entries.retain(|x| x.key() != k);
            file.entries.push(e);
        }
        file.write(&path)?;
        Ok(path)
    }

    /// Replaces `key`'s file by the measured configurations (older entries are dropped: a
    /// recalibration, not more samples of the same one).
    pub fn replace(&self, key: &CacheKey, space: &Space, measured: &[Measured]) -> Result<PathBuf> {
        let path = self.path_for(key);
        match std::fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(TuneError::Io { path: path.clone(), source: e }),
        }
        self.store(key, space, measured)
    }

    /// Every entry of `key`'s file (failed ones included) when the file exists, is readable,
    /// belongs to this key and its parameters are `space`'s; `None` otherwise (with a warning
    /// for foreign or corrupt files).
    pub fn entries(&self, key: &CacheKey, space: &Space) -> Option<Vec<KtEntry>> {
        Some(self.load_own(key, space, &self.path_for(key))?.entries)
    }

    /// `key`'s file if it exists, is readable, belongs to this key and matches the space.
    fn load_own(&self, key: &CacheKey, space: &Space, path: &Path) -> Option<KtFile> {
        if !path.exists() {
            return None;
        }
        let file = match KtFile::read(path) {
            Ok(f) => f,
            Err(e) => {
                tracing::warn!("ignoring tuning cache file: {e}");
                return None;
            }
        };
        let meta = file.extra.get("hetkit");
        let field = |k: &str| meta.and_then(|m| m.get(k)).and_then(|v| v.as_str());
        let ours = file.device_name == key.fingerprint.as_str()
            && file.kernel_name == key.kernel
            && field("element_type") == Some(key.element_type.as_str())
            && field("bucket") == Some(key.bucket.as_str());
        let names: Vec<&str> = space.params().iter().map(|p| p.name()).collect();
        if !ours {
            tracing::warn!(
                "ignoring tuning cache file {}: it belongs to another device or key",
                path.display()
            );
            return None;
        }
        if file.keys() != names {
            tracing::warn!(
                "ignoring tuning cache file {}: its parameters differ from the kernel's space",
                path.display()
            );
            return None;
        }
        Some(file)
    }

    /// The best recorded configuration for `key` that is valid in `space`, or `None`.
    pub fn lookup(&self, key: &CacheKey, space: &Space) -> Option<Config> {
        let file = self.load_own(key, space, &self.path_for(key))?;
        let best = file
            .entries
            .iter()
            .filter_map(|e| {
                let cfg = Config::new(
                    space
                        .params()
                        .iter()
                        .map(|p| p.name().to_owned())
                        .zip(e.values.iter().cloned())
                        .collect(),
                );
                let p = space.point_of(&cfg)?;
                (space.is_valid(&p) && e.time.is_some()).then(|| (e.time.unwrap_or(f64::INFINITY), cfg))
            })
            .min_by(|a, b| a.0.total_cmp(&b.0));
        if best.is_none() && !file.entries.is_empty() {
            tracing::warn!("tuning cache for {} has no valid successful configuration", key.kernel);
        }
        best.map(|(_, c)| c)
    }

    /// [`lookup`](Self::lookup), or `default` when nothing usable is cached.
    pub fn lookup_or(&self, key: &CacheKey, space: &Space, default: Config) -> Config {
        self.lookup(key, space).unwrap_or(default)
    }

    /// Every cache file under the directory (unreadable ones are reported as errors in the list).
    pub fn files(&self) -> Vec<Result<CacheFileInfo>> {
        let mut out = Vec::new();
        let Ok(kernels) = std::fs::read_dir(&self.dir) else { return out };
        let mut paths: Vec<PathBuf> = kernels
            .flatten()
            .filter(|e| e.path().is_dir())
            .flat_map(|d| std::fs::read_dir(d.path()).into_iter().flatten().flatten().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        paths.sort();
        for path in paths {
            out.push(KtFile::read(&path).map(|f| {
                let ok: Vec<&KtEntry> = f.entries.iter().filter(|e| e.time.is_some()).collect();
                let best = ok
                    .iter()
                    .min_by(|a, b| {
                        a.time.unwrap_or(f64::INFINITY).total_cmp(&b.time.unwrap_or(f64::INFINITY))
                    })
                    .map(|e| (e.time.unwrap_or(f64::INFINITY), e.key()));
                CacheFileInfo {
                    path: path.clone(),
                    kernel: f.kernel_name.clone(),
                    device: f.device_name.clone(),
                    problem: f.problem_size.to_string(),
                    entries: f.entries.len(),
                    succeeded: ok.len(),
                    best,
                }
            }));
        }
        out
    }
}
