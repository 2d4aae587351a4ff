//! Kernel Tuner's cache-file format: read (plain or gzip JSON, closed or still open) and write.
//!
//! A file holds `device_name`, `kernel_name`, `problem_size`, `tune_params_keys` (parameter
//! order), `tune_params` (each parameter's values) and `cache`: an object from the
//! comma-joined values (Python `str` of each) to an entry with one field per parameter, `time`
//! (milliseconds, or a string such as `"RuntimeFailedConfig"` for a failed configuration),
//! `times`, `compile_time` and so on. Fields we do not interpret are kept for round trips.

use std::io::Read;
use std::path::Path;

use serde_json::{Map, Value as Json, json};

use super::error::{Result, TuneError};
use super::space::{Config, Space};
use super::value::Value;

/// One configuration of a cache file.
#[derive(Debug, Clone, PartialEq)]
pub struct KtEntry {
    /// The values, in `tune_params_keys` order.
    pub values: Vec<Value>,
    /// The measured time in milliseconds; `None` for a failed configuration.
    pub time: Option<f64>,
    /// Every field of the entry (parameters, `time`, `times`, ...).
    pub fields: Map<String, Json>,
}

/// A Kernel Tuner cache file.
#[derive(Debug, Clone, PartialEq)]
pub struct KtFile {
    /// `device_name`.
    pub device_name: String,
    /// `kernel_name`.
    pub kernel_name: String,
    /// `problem_size` (any JSON).
    pub problem_size: Json,
    /// Parameters and their values, in `tune_params_keys` order.
    pub params: Vec<(String, Vec<Value>)>,
    /// The entries, in file order.
    pub entries: Vec<KtEntry>,
    /// Other top-level fields (`objective`, `schema_version`, ...), kept as they are.
    pub extra: Map<String, Json>,
}

fn bad(path: &Path, reason: impl Into<String>) -> TuneError {
    TuneError::Format { path: path.to_owned(), reason: reason.into() }
}

impl KtFile {
    /// Reads a cache file, plain or gzip-compressed.
    pub fn read(path: &Path) -> Result<KtFile> {
        let raw = std::fs::read(path).map_err(|source| TuneError::Io { path: path.to_owned(), source })?;
        let text = if raw.starts_with(&[0x1f, 0x8b]) {
            let mut s = String::new();
            flate2::read::MultiGzDecoder::new(&raw[..])
                .read_to_string(&mut s)
                .map_err(|e| bad(path, format!("gzip: {e}")))?;
            s
        } else {
            String::from_utf8(raw).map_err(|_| bad(path, "not UTF-8 text"))?
        };
        Self::parse(&text, path)
    }

    /// Parses the text of a cache file (`path` only names it in errors).
    pub fn parse(text: &str, path: &Path) -> Result<KtFile> {
        let json: Json = match serde_json::from_str(text) {
            Ok(j) => j,
            // Kernel Tuner appends entries while tuning and closes the object at the end: an
            // interrupted run leaves `..."cache": {..., ` open. Close it the way Kernel Tuner does.
            Err(e) => serde_json::from_str(&format!("{}}}}}", text.trim_end().trim_end_matches(',')))
                .map_err(|_| bad(path, format!("invalid JSON: {e}")))?,
        };
        Self::from_json(json, path)
    }

    fn from_json(json: Json, path: &Path) -> Result<KtFile> {
        let Json::Object(mut top) = json else { return Err(bad(path, "top level is not an object")) };
        let keys: Vec<String> = match top.remove("tune_params_keys") {
            Some(Json::Array(a)) => a
                .into_iter()
                .map(|k| {
                    k.as_str()
                        .map(str::to_owned)
                        .ok_or_else(|| bad(path, "tune_params_keys holds a non-string"))
                })
                .collect::<Result<_>>()?,
            _ => return Err(bad(path, "missing tune_params_keys")),
        };
        if keys.is_empty() {
            return Err(bad(path, "tune_params_keys is empty"));
        }
        let Some(Json::Object(tp)) = top.remove("tune_params") else {
            return Err(bad(path, "missing tune_params"));
        };
        let params = keys
            .iter()
            .map(|k| {
                let vals = tp
                    .get(k)
                    .and_then(Json::as_array)
                    .ok_or_else(|| bad(path, format!("tune_params lacks `{k}`")))?;
                let vals = vals
                    .iter()
                    .map(|v| {
                        Value::from_json(v).ok_or_else(|| bad(path, format!("`{k}` has a non-scalar value")))
                    })
                    .collect::<Result<Vec<_>>>()?;
                Ok((k.clone(), vals))
            })
            .collect::<Result<Vec<_>>>()?;
        let Some(Json::Object(cache)) = top.remove("cache") else {
            return Err(bad(path, "missing cache object"));
        };
        let entries = cache
            .into_iter()
            .map(|(key, e)| {
                parse_entry(&key, e, &params).map_err(|r| bad(path, format!("entry `{key}`: {r}")))
            })
            .collect::<Result<Vec<_>>>()?;
        let text = |top: &mut Map<String, Json>, k: &str| match top.remove(k) {
            Some(Json::String(s)) => s,
            _ => String::new(),
        };
        Ok(KtFile {
            device_name: text(&mut top, "device_name"),
            kernel_name: text(&mut top, "kernel_name"),
            problem_size: top.remove("problem_size").unwrap_or(Json::Null),
            params,
            entries,
            extra: top,
        })
    }

    /// The file as JSON, in Kernel Tuner's layout.
    pub fn to_json(&self) -> Json {
        let mut top = self.extra.clone();
        top.insert("device_name".into(), json!(self.device_name));
        top.insert("kernel_name".into(), json!(self.kernel_name));
        top.insert("problem_size".into(), self.problem_size.clone());
        top.insert("tune_params_keys".into(), json!(self.params.iter().map(|(k, _)| k).collect::<Vec<_>>()));
        let tp: Map<String, Json> = self
            .params
            .iter()
            .map(|(k, vs)| (k.clone(), Json::Array(vs.iter().map(Value::to_json).collect())))
            .collect();
        top.insert("tune_params".into(), Json::Object(tp));
        top.entry("objective").or_insert_with(|| json!("time"));
        let cache: Map<String, Json> =
            self.entries.iter().map(|e| (e.key(), Json::Object(e.fields.clone()))).collect();
        top.insert("cache".into(), Json::Object(cache));
        Json::Object(top)
    }

    /// The file as text: pretty JSON with `cache` as the last field, which Kernel Tuner needs
    /// (it treats a file not ending in the cache's closing braces as still open).
    pub fn to_text(&self) -> String {
        let Json::Object(mut top) = self.to_json() else { unreachable!("to_json builds an object") };
        let cache = top.remove("cache").unwrap_or(Json::Object(Map::new()));
        let field = |k: &str, v: &Json| {
            let body =
                serde_json::to_string_pretty(v).unwrap_or_else(|_| "null".into()).replace('\n', "\n  ");
            format!("  {}: {body}", Json::from(k))
        };
        let mut parts: Vec<String> = top.iter().map(|(k, v)| field(k, v)).collect();
        parts.push(field("cache", &cache));
        format!("{{\n{}\n}}\n", parts.join(",\n"))
    }

    /// Writes the file (gzip when the name ends in `.gz`), atomically.
    pub fn write(&self, path: &Path) -> Result<()> {
        let io = |source| TuneError::Io { path: path.to_owned(), source };
        let text = self.to_text();
        let bytes = if path.extension().is_some_and(|e| e == "gz") {
            use std::io::Write;
            let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            enc.write_all(text.as_bytes()).map_err(io)?;
            enc.finish().map_err(io)?
        } else {
            text.into_bytes()
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        std::fs::write(&tmp, bytes).map_err(io)?;
        std::fs::rename(&tmp, path).map_err(io)
    }

    /// A space with the file's parameters and no constraints (the configurations in the file
    /// are the valid ones for replay; see [`ReplayDomain`](super::ReplayDomain)).
    pub fn space(&self) -> Result<Space> {
        self.params
            .iter()
            .fold(Space::builder(), |b, (k, vs)| b.param(super::Param::new(k.clone(), vs.clone())))
            .build()
    }

    /// The parameter names in order.
    pub fn keys(&self) -> Vec<&str> {
        self.params.iter().map(|(k, _)| k.as_str()).collect()
    }
}

impl KtEntry {
    /// A new entry for a measured configuration: `times` in milliseconds (their median is the
    /// `time`), or `failure` (Kernel Tuner's failure strings: `"CompilationFailedConfig"`,
    /// `"RuntimeFailedConfig"`, `"InvalidConfig"`) with the reason in `hetkit_reason`.
    pub fn measured(config: &Config, times: &[f64], failure: Option<(&str, &str)>) -> KtEntry {
        let mut fields = Map::new();
        for (k, v) in config.pairs() {
            fields.insert(k.clone(), v.to_json());
        }
        let time = match failure {
            Some((kind, reason)) => {
                fields.insert("time".into(), json!(kind));
                fields.insert("hetkit_reason".into(), json!(reason));
                None
            }
            None => {
                let t = super::replay::median(times);
                fields.insert("time".into(), json!(t));
                Some(t)
            }
        };
        fields.insert("times".into(), json!(times));
        for k in ["compile_time", "verification_time", "benchmark_time", "strategy_time", "framework_time"] {
            fields.entry(k).or_insert(json!(0));
        }
        KtEntry { values: config.pairs().iter().map(|(_, v)| v.clone()).collect(), time, fields }
    }

    /// Kernel Tuner's cache key of the entry.
    pub fn key(&self) -> String {
        self.values.iter().map(Value::to_string).collect::<Vec<_>>().join(",")
    }
}

/// Parses one `cache` entry; the values come from the entry's parameter fields, or (files
/// without them) from matching the key's parts against the declared values.
fn parse_entry(key: &str, e: Json, params: &[(String, Vec<Value>)]) -> Result<KtEntry, String> {
    let Json::Object(fields) = e else { return Err("not an object".into()) };
    let parts: Vec<&str> = key.split(',').collect();
    let values = params
        .iter()
        .enumerate()
        .map(|(i, (k, vals))| {
            let v = match fields.get(k) {
                Some(j) => Value::from_json(j).filter(|v| vals.contains(v)),
                None => parts.get(i).and_then(|s| vals.iter().find(|v| v.to_string() == *s).cloned()),
            };
            v.ok_or_else(|| format!("value of `{k}` is not among tune_params"))
        })
        .collect::<Result<Vec<_>, String>>()?;
    let time = match fields.get("time") {
        Some(Json::Number(n)) => n.as_f64().filter(|t| t.is_finite() && *t >= 0.0),
        _ => None,
    };
    Ok(KtEntry { values, time, fields })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = r#"{"device_name": "Dev", "kernel_name": "k", "problem_size": 100,
      "tune_params_keys": ["bs", "alg", "flag", "f"],
      "tune_params": {"bs": [32, 64], "alg": ["a", "b"], "flag": [true, false], "f": [1.0, 2.45]},
      "objective": "time",
      "cache": {
        "32,a,True,1.0": {"bs": 32, "alg": "a", "flag": true, "f": 1.0, "time": 2.5, "times": [2.5]},
        "64,b,False,2.45": {"bs": 64, "alg": "b", "flag": false, "f": 2.45, "time": "RuntimeFailedConfig"},
        "64,a,False,2.45": {"time": 1.5}
      }}"#;

    #[test]
    fn parses_entries_and_failures() {
        let f = KtFile::parse(SMALL, Path::new("x")).unwrap();
        assert_eq!(f.keys(), ["bs", "alg", "flag", "f"]);
        assert_eq!(f.entries.len(), 3);
        let by_key = |k: &str| f.entries.iter().find(|e| e.key() == k).unwrap();
        assert_eq!(by_key("32,a,True,1.0").time, Some(2.5));
        assert_eq!(by_key("64,b,False,2.45").time, None);
        // Values recovered from the key alone.
        assert_eq!(by_key("64,a,False,2.45").values[0], Value::Int(64));
        assert_eq!(f.extra.get("objective"), Some(&json!("time")));
    }

    #[test]
    fn reads_an_open_file() {
        // Kernel Tuner's open form: the entries so far, each followed by a comma, no closing.
        let open = SMALL.trim_end().strip_suffix("}}").unwrap().to_owned() + ",\n";
        let f = KtFile::parse(&open, Path::new("x")).unwrap();
        assert_eq!(f.entries.len(), 3);
    }

    #[test]
    fn rejects_malformed_files() {
        for text in [
            "",
            "[1, 2]",
            "{\"tune_params\": {}, \"cache\": {}}",
            r#"{"tune_params_keys": ["a"], "tune_params": {"a": [1]}}"#,
            r#"{"tune_params_keys": ["a"], "tune_params": {"b": [1]}, "cache": {}}"#,
            r#"{"tune_params_keys": ["a"], "tune_params": {"a": [1]}, "cache": {"2": {"a": 2, "time": 1}}}"#,
            r#"{"tune_params_keys": ["a"], "tune_params": {"a": [[1]]}, "cache": {}}"#,
            r#"{"tune_params_keys": [], "tune_params": {}, "cache": {}}"#,
        ] {
            assert!(matches!(KtFile::parse(text, Path::new("x")), Err(TuneError::Format { .. })), "{text}");
        }
    }

    #[test]
    fn round_trips_plain_and_gzip() {
        let f = KtFile::parse(SMALL, Path::new("x")).unwrap();
        let dir = tempfile::tempdir().unwrap();
        for name in ["a.json", "a.json.gz"] {
            let p = dir.path().join(name);
            f.write(&p).unwrap();
            let g = KtFile::read(&p).unwrap();
            assert_eq!(g.params, f.params);
            let mut a: Vec<_> = f.entries.iter().map(|e| (e.key(), e.time)).collect();
            let mut b: Vec<_> = g.entries.iter().map(|e| (e.key(), e.time)).collect();
            a.sort_by(|x, y| x.0.cmp(&y.0));
            b.sort_by(|x, y| x.0.cmp(&y.0));
            assert_eq!(a, b);
            assert_eq!(g.device_name, "Dev");
        }
        // Kernel Tuner's test for a closed file: the text ends with the cache's closing braces.
        assert!(f.to_text().trim_end().ends_with("}\n}"));
        assert!(f.to_text().trim_end().rfind("\"cache\"") > f.to_text().rfind("\"tune_params\""));
    }
}
