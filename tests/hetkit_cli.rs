//! The `hetkit` command-line contract: `info`, `tune replay` and `tune kernel` for the learning
//! operators, including the error cases.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use hetero_sched::tune::{CacheKey, Fingerprint, KtFile, Measured, Outcome, Param, Space, TuningCache};

fn hetkit(args: &[&str], cache_dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hetkit")).args(args).env("HETKIT_CACHE_DIR", cache_dir).output().unwrap()
}

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/hetero-sched/tests/data").join(name)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// An error exit with a message and no panic.
fn assert_clean_error(o: &Output, needle: &str) {
    let err = text(&o.stderr);
    assert!(!o.status.success(), "succeeded: {err}");
    assert!(err.to_lowercase().contains(needle), "stderr lacks {needle:?}: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn info_lists_devices_compile_path_and_cache() {
    let dir = tempfile::tempdir().unwrap();
    let o = hetkit(&["info"], dir.path());
    let out = text(&o.stdout);
    assert!(o.status.success(), "{}", text(&o.stderr));
    for needle in ["Devices", "CPU:", "GPU", "Compile path", "Tuning cache", "(empty)"] {
        assert!(out.contains(needle), "{needle}: {out}");
    }
    assert!(out.contains(&dir.path().display().to_string()));
    // With an entry in the cache, info reports it per kernel and device.
    let space = Space::builder().param(Param::pow2("chunk", 1, 8)).build().unwrap();
    let key = CacheKey::new("prefix_ops::scan", &Fingerprint::new("test device"), "f64", "n<=2^10");
    let m =
        Measured { config: space.config(&[2]), times: vec![1.5], outcome: Outcome::Time(1.5), failure: None };
    TuningCache::at(dir.path()).store(&key, &space, &[m]).unwrap();
    let out = text(&hetkit(&["info"], dir.path()).stdout);
    assert!(out.contains("prefix_ops::scan on test device"), "{out}");
    assert!(out.contains("1 entries"), "{out}");
}

#[test]
fn replay_json_has_the_contract_fields() {
    let dir = tempfile::tempdir().unwrap();
    let file = data("kt_vector_add.json");
    let o = hetkit(
        &["tune", "replay", file.to_str().unwrap(), "--json", "--budget", "5", "--runs", "7", "--seed", "3"],
        dir.path(),
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert_eq!(out.trim().lines().count(), 1, "{out}");
    let j: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(j["strategy"], hetero_sched::tune::strategy::DEFAULT);
    assert_eq!(j["budget"], 5);
    assert_eq!(j["runs"], 7);
    for k in ["within5", "within1"] {
        let v = j[k].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&v), "{k} = {v}");
    }
    assert!(j["median_ratio"].as_f64().unwrap() >= 1.0);
    assert!(j["evals_to_95"].is_null() || j["evals_to_95"].as_f64().unwrap() >= 1.0);
    // Same seed, same answer.
    let again = hetkit(
        &["tune", "replay", file.to_str().unwrap(), "--json", "--budget", "5", "--runs", "7", "--seed", "3"],
        dir.path(),
    );
    assert_eq!(text(&again.stdout), out);
}

#[test]
fn replay_brute_force_on_a_gzip_file() {
    let dir = tempfile::tempdir().unwrap();
    let gz = dir.path().join("copy.json.gz");
    KtFile::read(&data("kt_mixed_types.json")).unwrap().write(&gz).unwrap();
    assert_eq!(&std::fs::read(&gz).unwrap()[..2], &[0x1f, 0x8b]);
    let o = hetkit(
        &[
            "tune",
            "replay",
            gz.to_str().unwrap(),
            "--strategy",
            "brute_force",
            "--budget",
            "15",
            "--runs",
            "2",
            "--json",
        ],
        dir.path(),
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let j: serde_json::Value = serde_json::from_str(text(&o.stdout).trim()).unwrap();
    assert_eq!(j["strategy"], "brute_force");
    assert_eq!(j["within5"], 1.0);
    assert_eq!(j["within1"], 1.0);
    assert_eq!(j["median_ratio"], 1.0);
    // Without --json: a table with the strategy's row.
    let o = hetkit(
        &["tune", "replay", gz.to_str().unwrap(), "--strategy", "tpe", "--budget", "4", "--runs", "3"],
        dir.path(),
    );
    assert!(o.status.success());
    assert!(text(&o.stdout).contains("within5"));
    assert!(text(&o.stdout).lines().any(|l| l.starts_with("tpe")));
}

#[test]
fn failed_configurations_never_win() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("failing.json");
    // The "fastest" entry failed: its time is a string.
    std::fs::write(
        &f,
        r#"{"device_name": "d", "kernel_name": "k", "tune_params_keys": ["x"], "tune_params": {"x": [1, 2, 3]},
            "cache": {"1": {"x": 1, "time": "RuntimeFailedConfig"}, "2": {"x": 2, "time": 2.0}, "3": {"x": 3, "time": 4.0}}}"#,
    )
    .unwrap();
    let o = hetkit(
        &[
            "tune",
            "replay",
            f.to_str().unwrap(),
            "--strategy",
            "brute_force",
            "--budget",
            "3",
            "--runs",
            "1",
            "--json",
        ],
        dir.path(),
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let j: serde_json::Value = serde_json::from_str(text(&o.stdout).trim()).unwrap();
    assert_eq!(j["median_ratio"], 1.0);
    // Budget 1: brute force only sees the failed configuration, so nothing is found.
    let o = hetkit(
        &[
            "tune",
            "replay",
            f.to_str().unwrap(),
            "--strategy",
            "brute_force",
            "--budget",
            "1",
            "--runs",
            "1",
            "--json",
        ],
        dir.path(),
    );
    let j: serde_json::Value = serde_json::from_str(text(&o.stdout).trim()).unwrap();
    assert_eq!(j["within5"], 0.0);
    assert!(j["median_ratio"].is_null());
    assert!(j["evals_to_95"].is_null());
}

#[test]
fn replay_errors_exit_non_zero_without_panicking() {
    let dir = tempfile::tempdir().unwrap();
    let file = data("kt_vector_add.json");
    let f = file.to_str().unwrap();
    assert_clean_error(
        &hetkit(&["tune", "replay", f, "--strategy", "no_such"], dir.path()),
        "unknown strategy",
    );
    assert_clean_error(&hetkit(&["tune", "replay", f, "--budget", "0"], dir.path()), "budget");
    let missing = dir.path().join("missing.json");
    assert_clean_error(&hetkit(&["tune", "replay", missing.to_str().unwrap()], dir.path()), "no such file");
    for (name, body) in [
        ("bad.json", "{ not json"),
        ("array.json", "[1, 2, 3]"),
        ("nocache.json", r#"{"tune_params_keys": ["x"], "tune_params": {"x": [1]}}"#),
        ("empty.json", r#"{"tune_params_keys": ["x"], "tune_params": {"x": [1]}, "cache": {}}"#),
        (
            "allfailed.json",
            r#"{"tune_params_keys": ["x"], "tune_params": {"x": [1]}, "cache": {"1": {"x": 1, "time": "InvalidConfig"}}}"#,
        ),
    ] {
        let p = dir.path().join(name);
        std::fs::write(&p, body).unwrap();
        let o = hetkit(&["tune", "replay", p.to_str().unwrap(), "--json"], dir.path());
        assert_clean_error(&o, "");
        assert!(text(&o.stdout).is_empty(), "{name}: {}", text(&o.stdout));
    }
    let gz = dir.path().join("broken.json.gz");
    std::fs::write(&gz, [0x1f, 0x8b, 0, 1, 2, 3]).unwrap();
    assert_clean_error(&hetkit(&["tune", "replay", gz.to_str().unwrap()], dir.path()), "gzip");
    // Bad arguments are clap's errors.
    assert_clean_error(&hetkit(&["tune", "replay"], dir.path()), "file");
    assert_clean_error(&hetkit(&["tune", "replay", f, "--budget", "-3"], dir.path()), "");
}

#[test]
fn strategies_lists_the_default() {
    let dir = tempfile::tempdir().unwrap();
    let out = text(&hetkit(&["tune", "strategies"], dir.path()).stdout);
    let default = hetero_sched::tune::strategy::DEFAULT;
    assert!(out.lines().any(|l| l == format!("{default} (default)")), "{out}");
    assert_eq!(out.lines().count(), hetero_sched::tune::strategy::NAMES.len());
}

/// `tune kernel` for the learning operators stores under the key their dispatch looks up: this
/// CPU, f64, the `(N, m)` bucket of the Friedman1 problem (level-4 grid in 10 dimensions).
#[test]
fn tune_kernel_learning_operators_store_where_dispatch_looks() {
    use hetero_sched::tune::dispatch::{Bucket, Tunable};
    use sg_cpu::learn::{STREAM_KERNEL, SUBSPACE_KERNEL, StreamTuning, SubspaceTuning};
    let dir = tempfile::tempdir().unwrap();
    let m = 256;
    let bucket = Bucket::batch(2001, m).name();
    let cache = TuningCache::at(dir.path());
    for (name, kernel, space) in [
        ("sg_learn_stream", STREAM_KERNEL, StreamTuning::space()),
        ("sg_learn_subspace", SUBSPACE_KERNEL, SubspaceTuning::space()),
    ] {
        let size = m.to_string();
        let args =
            ["tune", "kernel", name, "--budget", "3", "--runs", "1", "--compare-runs", "1", "--size", &size];
        let o = hetkit(&args, dir.path());
        assert!(o.status.success(), "{}", text(&o.stderr));
        let out = text(&o.stdout);
        assert!(out.contains(kernel) && out.contains("| tuned `"), "{out}");
        let key = CacheKey::new(kernel, &Fingerprint::cpu(), "f64", &bucket);
        let stored = cache.lookup(&key, space).unwrap_or_else(|| panic!("nothing stored for {name}"));
        let usable = match name {
            "sg_learn_stream" => StreamTuning::from_config(&stored).is_some(),
            _ => SubspaceTuning::from_config(&stored).is_some(),
        };
        assert!(usable, "{stored:?}");
    }
    let o = hetkit(&["tune", "kernel", "sg_learn_stream", "--size", "0"], dir.path());
    assert_clean_error(&o, "at least one data point");
    assert_clean_error(&hetkit(&["tune", "kernel", "sg_learn"], dir.path()), "sg_learn_subspace");
}
