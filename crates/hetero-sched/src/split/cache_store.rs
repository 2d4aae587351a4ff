//! Calibrations and to-one choices kept in the tuning cache ([`TuningCache`]), in Kernel Tuner's
//! file format, under the same device fingerprints, operation names and shape buckets as tuned
//! kernels.
//!
//! - A calibration of operation `op` on a device is the file of kernel `split::op` for that
//!   device, element type and shape bucket: one entry per calibration size `w` (the parameter)
//!   with its median time in milliseconds, refit into an [`AffineModel`] when read. A model
//!   stored without its samples ([`SplitStore::put_model`]) is kept as its values at `w = 1` and
//!   `w = 2` (entries marked `"hetkit_predicted": true`), from which the fit is exact.
//! - A to-one choice of `op` at a shape among devices is the file of kernel `split_to_one::op`
//!   whose "device" is the sorted candidate list: one entry per candidate (parameter `device`)
//!   with its median time; the fastest is the choice.

use std::sync::OnceLock;

use serde_json::json;

use super::error::{Result, SplitError};
use super::model::AffineModel;
use super::store::{Choice, ChoiceKey, MemoryStore, ModelKey, SplitStore};
use crate::tune::dispatch::NO_CACHE_ENV;
use crate::tune::{
    CacheKey, Config, Fingerprint, KtEntry, Measured, Outcome, Param, Space, TuningCache, Value,
};

/// A [`SplitStore`] in the tuning cache.
///
/// ```
/// use hetero_sched::split::{AffineModel, CacheStore, ModelKey, SplitStore};
/// use hetero_sched::tune::TuningCache;
/// let dir = tempfile::tempdir().unwrap();
/// let store = CacheStore::new(TuningCache::at(dir.path()));
/// let key = ModelKey::new("cpu:x86_64:test:2t", "axpy", "f64").with_shape("2^20");
/// store.put_samples(key.clone(), &[(1000, 2e-4), (4000, 5e-4)])?;
/// let again = CacheStore::new(TuningCache::at(dir.path()));
/// let m = again.model(&key).unwrap();
/// assert!((m.gamma - 1e-7).abs() < 1e-12 && (m.delta - 1e-4).abs() < 1e-12);
/// # Ok::<(), hetero_sched::split::SplitError>(())
/// ```
#[derive(Debug, Clone)]
pub struct CacheStore {
    cache: TuningCache,
}

/// The bucket name of a key without a shape.
const ALL_SHAPES: &str = "all";

impl CacheStore {
    /// A store in `cache`.
    pub fn new(cache: TuningCache) -> Self {
        CacheStore { cache }
    }

    /// The store in the default tuning cache (`$HETKIT_CACHE_DIR`, or the user's cache
    /// directory): where kernels look up their tuned configurations.
    ///
    /// # Errors
    /// [`SplitError::Store`] when there is no cache directory.
    pub fn open_default() -> Result<Self> {
        let cache = TuningCache::open_default()
            .map_err(|e| SplitError::Store { path: String::new(), message: e.to_string() })?;
        Ok(CacheStore::new(cache))
    }

    /// The tuning cache behind the store.
    pub fn cache(&self) -> &TuningCache {
        &self.cache
    }

    fn model_key(key: &ModelKey) -> CacheKey {
        let shape = if key.shape.is_empty() { ALL_SHAPES } else { &key.shape };
        CacheKey::new(
            &format!("split::{}", key.operation),
            &Fingerprint::new(&key.device),
            &key.element,
            shape,
        )
    }

    fn choice_key(key: &ChoiceKey) -> CacheKey {
        let mut devices = key.devices.clone();
        devices.sort();
        let shape = if key.shape.is_empty() { ALL_SHAPES } else { &key.shape };
        CacheKey::new(
            &format!("split_to_one::{}", key.operation),
            &Fingerprint::new(devices.join(" | ")),
            "-",
            shape,
        )
    }

    fn write(&self, key: &CacheKey, name: &str, values: Vec<Value>, rows: Vec<Measured>) -> Result<()> {
        let space = Space::builder()
            .param(Param::new(name, values))
            .build()
            .map_err(|e| SplitError::Store { path: String::new(), message: e.to_string() })?;
        self.cache.replace(key, &space, &rows).map(|_| ()).map_err(|e| SplitError::Store {
            path: self.cache.path_for(key).display().to_string(),
            message: e.to_string(),
        })
    }

    /// The entries of `key`'s file over a one-parameter space named `name`.
    fn read(&self, key: &CacheKey, name: &str) -> Option<Vec<KtEntry>> {
        let path = self.cache.path_for(key);
        let file = match crate::tune::KtFile::read(&path) {
            Ok(f) => f,
            Err(e) => {
                if path.exists() {
                    tracing::warn!(path = %path.display(), error = %e, "ignoring a corrupt split calibration file");
                }
                return None;
            }
        };
        let values = file.params.iter().find(|(n, _)| n == name)?.1.clone();
        let space = Space::builder().param(Param::new(name, values)).build().ok()?;
        self.cache.entries(key, &space)
    }
}

/// The store that calibrations and to-one choices go to when a caller names none: the default
/// tuning cache ([`CacheStore::open_default`]: `$HETKIT_CACHE_DIR`, or the user's cache
/// directory), so a calibration measured once is read back by every later run on this machine.
/// With `HETKIT_NO_TUNING_CACHE=1` (the switch that also keeps kernels on their defaults), or
/// where there is no cache directory, a [`MemoryStore`] that lives as long as the process.
/// Decided on first use, like the tuned kernels' look-up.
///
/// ```
/// use hetero_sched::split::{SplitStore, default_store};
/// let store: &dyn SplitStore = default_store();
/// # let _ = store;
/// ```
pub fn default_store() -> &'static dyn SplitStore {
    static STORE: OnceLock<Box<dyn SplitStore>> = OnceLock::new();
    STORE
        .get_or_init(|| {
            let disabled =
                std::env::var(NO_CACHE_ENV).is_ok_and(|v| matches!(v.trim(), "1" | "true" | "yes"));
            match CacheStore::open_default() {
                Ok(store) if !disabled => Box::new(store),
                Ok(_) => Box::new(MemoryStore::new()),
                Err(e) => {
                    tracing::warn!(error = %e, "no tuning cache: split calibrations last one process");
                    Box::new(MemoryStore::new())
                }
            }
        })
        .as_ref()
}

fn row(name: &str, value: Value, seconds: f64) -> Measured {
    let ms = seconds * 1e3;
    Measured {
        config: Config::new(vec![(name.into(), value)]),
        times: vec![ms],
        outcome: Outcome::Time(ms),
        failure: None,
    }
}

impl SplitStore for CacheStore {
    fn model(&self, key: &ModelKey) -> Option<AffineModel> {
        let entries = self.read(&Self::model_key(key), "w")?;
        let samples: Vec<(usize, f64)> = entries
            .iter()
            .filter_map(|e| match e.values.first()? {
                Value::Int(w) => Some((usize::try_from(*w).ok()?, e.time? / 1e3)),
                _ => None,
            })
            .collect();
        let model = AffineModel::fit(&samples).ok()?;
        model.check(0).is_ok().then_some(model)
    }

    fn put_model(&self, key: ModelKey, model: AffineModel) -> Result<()> {
        model.check(0)?;
        let k = Self::model_key(&key);
        let rows: Vec<Measured> =
            [1usize, 2].iter().map(|&w| row("w", Value::Int(w as i64), model.time(w))).collect();
        self.write(&k, "w", vec![Value::Int(1), Value::Int(2)], rows)?;
        self.mark_predicted(&k)
    }

    fn put_samples(&self, key: ModelKey, samples: &[(usize, f64)]) -> Result<()> {
        AffineModel::fit(samples)?.check(0)?;
        let mut sizes: Vec<i64> = samples.iter().map(|s| s.0 as i64).collect();
        sizes.sort_unstable();
        sizes.dedup();
        let rows = samples.iter().map(|&(w, t)| row("w", Value::Int(w as i64), t)).collect();
        self.write(&Self::model_key(&key), "w", sizes.into_iter().map(Value::Int).collect(), rows)
    }

    fn choice(&self, key: &ChoiceKey) -> Option<Choice> {
        let entries = self.read(&Self::choice_key(key), "device")?;
        let seconds: Vec<(String, f64)> = entries
            .iter()
            .filter_map(|e| Some((e.values.first()?.as_str()?.to_owned(), e.time? / 1e3)))
            .filter(|(d, _)| key.devices.contains(d))
            .collect();
        let best = seconds.iter().min_by(|a, b| a.1.total_cmp(&b.1))?.0.clone();
        Some(Choice { device: best, seconds })
    }

    fn put_choice(&self, key: ChoiceKey, choice: Choice) -> Result<()> {
        let names: Vec<Value> = key.devices.iter().map(|d| Value::Str(d.clone())).collect();
        let rows = choice.seconds.iter().map(|(d, t)| row("device", Value::Str(d.clone()), *t)).collect();
        self.write(&Self::choice_key(&key), "device", names, rows)
    }
}

impl CacheStore {
    /// Marks every entry of `key`'s file as a model's prediction rather than a measurement.
    fn mark_predicted(&self, key: &CacheKey) -> Result<()> {
        let path = self.cache.path_for(key);
        let err = |e: crate::tune::TuneError| SplitError::Store {
            path: path.display().to_string(),
            message: e.to_string(),
        };
        let mut file = crate::tune::KtFile::read(&path).map_err(err)?;
        for e in &mut file.entries {
            e.fields.insert("hetkit_predicted".into(), json!(true));
        }
        file.write(&path).map_err(err)
    }
}
