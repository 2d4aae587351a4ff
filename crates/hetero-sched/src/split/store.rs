//! Persisted calibrations and to-one choices: the [`SplitStore`] trait, an in-memory store and
//! a JSON file store. The tuning cache's store ([`CacheStore`](super::CacheStore)) is the
//! default place: calibrations next to the device's tuned kernels.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::error::{Result, SplitError};
use super::model::AffineModel;

/// Environment variable naming the cache directory (overrides the user's cache directory).
pub const CACHE_DIR_ENV: &str = "HETKIT_CACHE_DIR";

/// File name of the JSON store inside the cache directory.
pub const STORE_FILE: &str = "split-calibrations.json";

const VERSION: u32 = 1;

/// What a calibration is valid for: one device, one operation, one element type, one problem
/// shape (a bucket such as `"d4-n6"`, or `""` where the model covers all shapes).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ModelKey {
    /// [`Device::fingerprint`](super::Device::fingerprint).
    pub device: String,
    /// The operation, e.g. `"sg-cuda/evaluate"`.
    pub operation: String,
    /// The element type, e.g. `"f64"`.
    pub element: String,
    /// The problem-shape bucket.
    pub shape: String,
}

impl ModelKey {
    /// A key with an empty shape bucket.
    pub fn new(device: impl Into<String>, operation: impl Into<String>, element: impl Into<String>) -> Self {
        ModelKey {
            device: device.into(),
            operation: operation.into(),
            element: element.into(),
            shape: String::new(),
        }
    }

    /// The same key for the shape bucket `shape`.
    pub fn with_shape(mut self, shape: impl Into<String>) -> Self {
        self.shape = shape.into();
        self
    }
}

/// What a to-one decision is about: an operation at a problem shape, among a set of devices.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ChoiceKey {
    /// The operation.
    pub operation: String,
    /// The problem-shape bucket.
    pub shape: String,
    /// The candidate devices' fingerprints, sorted.
    pub devices: Vec<String>,
}

/// A measured to-one decision: the chosen device and every candidate's median time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Choice {
    /// Fingerprint of the fastest device.
    pub device: String,
    /// `(fingerprint, seconds)` of every device that ran.
    pub seconds: Vec<(String, f64)>,
}

/// Where calibrations and to-one choices are kept.
pub trait SplitStore: Send + Sync + fmt::Debug {
    /// The model stored under `key`.
    fn model(&self, key: &ModelKey) -> Option<AffineModel>;
    /// Stores (replaces) the model under `key`.
    ///
    /// # Errors
    /// [`SplitError::Store`] when the store cannot be written.
    fn put_model(&self, key: ModelKey, model: AffineModel) -> Result<()>;
    /// Stores (replaces) the calibration under `key` from its measured `(items, seconds)`
    /// samples. By default the fitted model is stored; stores that can keep the measurements
    /// (the tuning cache) keep them.
    ///
    /// # Errors
    /// [`SplitError::Invalid`] for samples [`AffineModel::fit`] rejects;
    /// [`SplitError::Store`] when the store cannot be written.
    fn put_samples(&self, key: ModelKey, samples: &[(usize, f64)]) -> Result<()> {
        self.put_model(key, AffineModel::fit(samples)?)
    }
    /// The choice stored under `key`.
    fn choice(&self, key: &ChoiceKey) -> Option<Choice>;
    /// Stores (replaces) the choice under `key`.
    ///
    /// # Errors
    /// [`SplitError::Store`] when the store cannot be written.
    fn put_choice(&self, key: ChoiceKey, choice: Choice) -> Result<()>;
}

/// The contents of a store.
#[derive(Debug, Default, Clone)]
struct Contents {
    models: BTreeMap<ModelKey, AffineModel>,
    choices: BTreeMap<ChoiceKey, Choice>,
}

/// The file layout: lists of entries, since JSON object keys must be strings.
#[derive(Debug, Serialize, Deserialize)]
struct FileFormat {
    version: u32,
    models: Vec<ModelEntry>,
    choices: Vec<ChoiceEntry>,
}

#[derive(Debug, Serialize, Deserialize)]
struct ModelEntry {
    key: ModelKey,
    model: AffineModel,
}

#[derive(Debug, Serialize, Deserialize)]
struct ChoiceEntry {
    key: ChoiceKey,
    choice: Choice,
}

impl Contents {
    fn to_file(&self) -> FileFormat {
        FileFormat {
            version: VERSION,
            models: self.models.iter().map(|(k, m)| ModelEntry { key: k.clone(), model: *m }).collect(),
            choices: self
                .choices
                .iter()
                .map(|(k, c)| ChoiceEntry { key: k.clone(), choice: c.clone() })
                .collect(),
        }
    }

    /// Keeps only entries a solver can use: a damaged entry is dropped, never returned.
    fn from_file(f: FileFormat) -> Self {
        let usable = |m: &AffineModel| m.check(0).is_ok();
        let models = f.models.into_iter().filter(|e| usable(&e.model)).map(|e| (e.key, e.model)).collect();
        let choices = f
            .choices
            .into_iter()
            .filter(|e| e.key.devices.contains(&e.choice.device))
            .map(|e| (e.key, e.choice))
            .collect();
        Contents { models, choices }
    }
}

/// A store that lives as long as the process.
#[derive(Debug, Default)]
pub struct MemoryStore {
    contents: Mutex<Contents>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

impl SplitStore for MemoryStore {
    fn model(&self, key: &ModelKey) -> Option<AffineModel> {
        lock(&self.contents).models.get(key).copied()
    }

    fn put_model(&self, key: ModelKey, model: AffineModel) -> Result<()> {
        lock(&self.contents).models.insert(key, model);
        Ok(())
    }

    fn choice(&self, key: &ChoiceKey) -> Option<Choice> {
        lock(&self.contents).choices.get(key).cloned()
    }

    fn put_choice(&self, key: ChoiceKey, choice: Choice) -> Result<()> {
        lock(&self.contents).choices.insert(key, choice);
        Ok(())
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A JSON file of calibrations and choices. A missing file is an empty store; a corrupt or
/// foreign one is ignored with a warning (and replaced at the next write). Every write merges
/// with what is on disk and replaces the file atomically (write, then rename).
///
/// ```
/// use hetero_sched::split::{AffineModel, JsonStore, ModelKey, SplitStore};
/// let dir = std::env::temp_dir().join(format!("hetero-sched-doc-{}", std::process::id()));
/// let store = JsonStore::open(dir.join("split.json"))?;
/// let key = ModelKey::new("cpu:x86_64:test:2t", "axpy", "f64");
/// store.put_model(key.clone(), AffineModel::new(1e-9, 1e-5))?;
/// let again = JsonStore::open(dir.join("split.json"))?;
/// assert_eq!(again.model(&key), Some(AffineModel::new(1e-9, 1e-5)));
/// # std::fs::remove_dir_all(&dir).ok();
/// # Ok::<(), hetero_sched::split::SplitError>(())
/// ```
#[derive(Debug)]
pub struct JsonStore {
    path: PathBuf,
    contents: Mutex<Contents>,
}

impl JsonStore {
    /// The store at `path`.
    ///
    /// # Errors
    /// [`SplitError::Store`] when the file exists but cannot be read.
    pub fn open(path: impl Into<PathBuf>) -> Result<Self> {
        let path = path.into();
        let contents = read_contents(&path)?;
        Ok(JsonStore { path, contents: Mutex::new(contents) })
    }

    /// The store in the default location: `$HETKIT_CACHE_DIR/split-calibrations.json`, or the
    /// user's cache directory (`~/.cache/hetkit` on Linux).
    ///
    /// # Errors
    /// [`SplitError::Store`] when no cache directory can be found or the file cannot be read.
    pub fn open_default() -> Result<Self> {
        Self::open(default_dir()?.join(STORE_FILE))
    }

    /// The file behind this store.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn update(&self, f: impl FnOnce(&mut Contents)) -> Result<()> {
        let mut mem = lock(&self.contents);
        // Merge with entries other processes wrote since this store was opened.
        let mut merged = read_contents(&self.path)?;
        merged.models.extend(std::mem::take(&mut mem.models));
        merged.choices.extend(std::mem::take(&mut mem.choices));
        f(&mut merged);
        write_contents(&self.path, &merged)?;
        *mem = merged;
        Ok(())
    }
}

impl SplitStore for JsonStore {
    fn model(&self, key: &ModelKey) -> Option<AffineModel> {
        lock(&self.contents).models.get(key).copied()
    }

    fn put_model(&self, key: ModelKey, model: AffineModel) -> Result<()> {
        model.check(0)?;
        self.update(|c| {
            c.models.insert(key, model);
        })
    }

    fn choice(&self, key: &ChoiceKey) -> Option<Choice> {
        lock(&self.contents).choices.get(key).cloned()
    }

    fn put_choice(&self, key: ChoiceKey, choice: Choice) -> Result<()> {
        self.update(|c| {
            c.choices.insert(key, choice);
        })
    }
}

/// `$HETKIT_CACHE_DIR`, else the platform's cache directory for hetkit.
///
/// # Errors
/// [`SplitError::Store`] when neither exists (no home directory).
pub fn default_dir() -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os(CACHE_DIR_ENV).filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    directories::ProjectDirs::from("", "", "hetkit").map(|p| p.cache_dir().to_path_buf()).ok_or_else(|| {
        SplitError::Store {
            path: String::new(),
            message: format!("no cache directory (set {CACHE_DIR_ENV})"),
        }
    })
}

fn store_error(path: &Path, message: impl fmt::Display) -> SplitError {
    SplitError::Store { path: path.display().to_string(), message: message.to_string() }
}

fn read_contents(path: &Path) -> Result<Contents> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Contents::default()),
        Err(e) => return Err(store_error(path, e)),
    };
    match serde_json::from_str::<FileFormat>(&text) {
        Ok(f) if f.version == VERSION => Ok(Contents::from_file(f)),
        Ok(f) => {
            tracing::warn!(path = %path.display(), version = f.version, "calibration store of another version ignored");
            Ok(Contents::default())
        }
        Err(e) => {
            tracing::warn!(path = %path.display(), error = %e, "corrupt calibration store ignored");
            Ok(Contents::default())
        }
    }
}

fn write_contents(path: &Path, contents: &Contents) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| store_error(path, e))?;
    }
    let text = serde_json::to_string_pretty(&contents.to_file()).map_err(|e| store_error(path, e))?;
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, text).map_err(|e| store_error(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| store_error(path, e))
}
