//! The persistent cache, Kernel Tuner files, the evaluation loop and replay.

use std::path::{Path, PathBuf};

use hetero_sched::tune::{
    Bench, Budget, CacheKey, Clock, CompileCache, Compiler, Config, Constraint, Fingerprint, Kernel, KtFile,
    Measured, Measurement, NvrtcSource, Outcome, Param, ReplayConfig, ReplayDomain, Space, TuneError,
    TuningCache, Value, replay, run, strategy,
};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)
}

fn space() -> Space {
    Space::builder()
        .param(Param::pow2("block", 32, 1024))
        .param(Param::names("alg", &["a", "b"]))
        .constraint(Constraint::custom("alg b needs block >= 128", |c| {
            c.get("alg") != Some(&Value::from("b")) || c.int("block").unwrap() >= 128
        }))
        .build()
        .unwrap()
}

fn cfg(block: i64, alg: &str) -> Config {
    Config::new(vec![("block".into(), Value::Int(block)), ("alg".into(), alg.into())])
}

fn measured(block: i64, alg: &str, t: Option<f64>) -> Measured {
    Measured {
        config: cfg(block, alg),
        times: t.map_or(vec![], |t| vec![t, t]),
        outcome: t.map_or(Outcome::Failed("verify: wrong".into()), Outcome::Time),
        failure: if t.is_none() { Some("RuntimeFailedConfig") } else { None },
    }
}

#[test]
fn cache_round_trip_and_lookup() {
    let dir = tempfile::tempdir().unwrap();
    let cache = TuningCache::at(dir.path());
    let dev = Fingerprint::new("gpu A");
    let key = CacheKey::new("scan", &dev, "f32", "n<=2^20");
    let s = space();
    assert_eq!(cache.lookup(&key, &s), None);
    cache
        .store(
            &key,
            &s,
            &[measured(64, "a", Some(3.0)), measured(256, "b", Some(2.0)), measured(512, "b", None)],
        )
        .unwrap();
    assert_eq!(cache.lookup(&key, &s), Some(cfg(256, "b")));
    // A later, better measurement is merged in; a re-measurement replaces the old one.
    cache.store(&key, &s, &[measured(64, "a", Some(1.0)), measured(256, "b", Some(5.0))]).unwrap();
    assert_eq!(cache.lookup(&key, &s), Some(cfg(64, "a")));
    let file = KtFile::read(&cache.path_for(&key)).unwrap();
    assert_eq!(file.entries.len(), 3);
    assert_eq!(file.device_name, "gpu A");
    let failed = file.entries.iter().find(|e| e.key() == "512,b").unwrap();
    assert_eq!(failed.time, None);
    assert_eq!(failed.fields["time"], "RuntimeFailedConfig");
    // Other keys see nothing.
    for other in [
        CacheKey::new("scan", &dev, "f64", "n<=2^20"),
        CacheKey::new("scan", &dev, "f32", "n<=2^10"),
        CacheKey::new("sort", &dev, "f32", "n<=2^20"),
    ] {
        assert_eq!(cache.lookup(&other, &s), None);
    }
    let infos = cache.files();
    assert_eq!(infos.len(), 1);
    let info = infos[0].as_ref().unwrap();
    assert_eq!((info.entries, info.succeeded), (3, 2));
    assert_eq!(info.best.as_ref().unwrap().1, "64,a");
}

#[test]
fn another_devices_entries_are_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let cache = TuningCache::at(dir.path());
    let s = space();
    let a = CacheKey::new("scan", &Fingerprint::new("gpu A"), "f32", "b");
    let b = CacheKey::new("scan", &Fingerprint::new("gpu B"), "f32", "b");
    cache.store(&a, &s, &[measured(64, "a", Some(1.0))]).unwrap();
    assert_eq!(cache.lookup(&b, &s), None);
    // Device A's file copied to device B's name is still A's: ignored.
    std::fs::copy(cache.path_for(&a), cache.path_for(&b)).unwrap();
    assert_eq!(cache.lookup(&b, &s), None);
    assert_eq!(cache.lookup(&a, &s), Some(cfg(64, "a")));
    // Storing for B does not merge A's entries.
    cache.store(&b, &s, &[measured(128, "a", Some(9.0))]).unwrap();
    assert_eq!(cache.lookup(&b, &s), Some(cfg(128, "a")));
}

#[test]
fn corrupt_and_foreign_files_are_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let cache = TuningCache::at(dir.path());
    let s = space();
    let key = CacheKey::new("scan", &Fingerprint::new("gpu A"), "f32", "b");
    let path = cache.path_for(&key);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    for junk in ["", "{", "null", "[1,2]", "{\"cache\": 3}", "\u{0}\u{1}binary"] {
        std::fs::write(&path, junk).unwrap();
        assert_eq!(cache.lookup(&key, &s), None, "{junk:?}");
    }
    assert!(matches!(&cache.files()[0], Err(TuneError::Format { .. })));
    // A well-formed file whose best configuration the space forbids: never returned.
    cache
        .store(
            &key,
            &Space::builder()
                .param(Param::pow2("block", 32, 1024))
                .param(Param::names("alg", &["a", "b"]))
                .build()
                .unwrap(),
            &[measured(32, "b", Some(0.5)), measured(64, "a", Some(2.0))],
        )
        .unwrap();
    assert_eq!(cache.lookup(&key, &s), Some(cfg(64, "a")));
    // A file for the same key with other parameters (a changed kernel): ignored.
    let other = Space::builder().param(Param::pow2("tile", 1, 8)).build().unwrap();
    std::fs::remove_file(&path).unwrap();
    cache
        .store(
            &key,
            &other,
            &[Measured {
                config: Config::new(vec![("tile".into(), Value::Int(2))]),
                times: vec![1.0],
                outcome: Outcome::Time(1.0),
                failure: None,
            }],
        )
        .unwrap();
    assert_eq!(cache.lookup(&key, &s), None);
    let default = cfg(256, "a");
    assert_eq!(cache.lookup_or(&key, &s, default.clone()), default);
}

#[test]
fn default_dir_honours_the_environment() {
    // Set only in this test's process image: the other tests use explicit directories.
    let dir = tempfile::tempdir().unwrap();
    // SAFETY: no other thread of this test binary reads or writes HETKIT_CACHE_DIR.
    unsafe { std::env::set_var("HETKIT_CACHE_DIR", dir.path()) };
    assert_eq!(TuningCache::open_default().unwrap().dir(), dir.path());
}

#[test]
fn reads_kernel_tuner_files() {
    let f = KtFile::read(&data("kt_vector_add.json")).unwrap();
    assert_eq!(f.device_name, "NVIDIA RTX A4000");
    assert_eq!(f.keys(), ["block_size_x"]);
    assert_eq!(f.entries.len(), 15);
    let d = ReplayDomain::new(&f).unwrap();
    assert_eq!(d.len(), 15);
    // The best time by an independent scan of the JSON.
    let raw: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(data("kt_vector_add.json")).unwrap()).unwrap();
    let best = raw["cache"]
        .as_object()
        .unwrap()
        .values()
        .map(|e| e["time"].as_f64().unwrap())
        .fold(f64::INFINITY, f64::min);
    assert_eq!(d.best_time(), Some(best));

    let m = KtFile::read(&data("kt_mixed_types.json")).unwrap();
    assert_eq!(m.keys(), ["block_size_x", "test_string", "test_single", "test_bool", "test_mixed"]);
    assert_eq!(
        m.params[4].1,
        vec![Value::from("test"), Value::Int(1), Value::Bool(true), Value::Float(2.45)]
    );
    // Our keys are Kernel Tuner's keys.
    let keys: Vec<String> = raw_keys(&data("kt_mixed_types.json"));
    let mut ours: Vec<String> = m.entries.iter().map(|e| e.key()).collect();
    ours.sort();
    assert_eq!(ours, keys);
}

fn raw_keys(p: &Path) -> Vec<String> {
    let raw: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
    let mut k: Vec<String> = raw["cache"].as_object().unwrap().keys().cloned().collect();
    k.sort();
    k
}

#[test]
fn kernel_tuner_file_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let f = KtFile::read(&data("kt_mixed_types.json")).unwrap();
    let out = dir.path().join("copy.json.gz");
    f.write(&out).unwrap();
    let g = KtFile::read(&out).unwrap();
    assert_eq!(g.params, f.params);
    assert_eq!(g.device_name, f.device_name);
    assert_eq!(g.problem_size, f.problem_size);
    let sorted = |f: &KtFile| {
        let mut v: Vec<(String, serde_json::Map<String, serde_json::Value>)> =
            f.entries.iter().map(|e| (e.key(), e.fields.clone())).collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    };
    assert_eq!(sorted(&g), sorted(&f));
}

#[test]
fn replay_metrics_match_a_hand_count() {
    let f = KtFile::read(&data("kt_vector_add.json")).unwrap();
    let d = ReplayDomain::new(&f).unwrap();
    // Brute force with the whole budget always finds the best.
    let s = replay(
        &d,
        &ReplayConfig { strategy: "brute_force".into(), budget: 15, runs: 3, seed: 0 },
        &mut |_| {},
    )
    .unwrap();
    assert_eq!((s.within5, s.within1, s.median_ratio), (1.0, 1.0, Some(1.0)));
    // With a budget of 1, brute force sees only the first configuration in index order.
    let s1 = replay(
        &d,
        &ReplayConfig { strategy: "brute_force".into(), budget: 1, runs: 2, seed: 0 },
        &mut |_| {},
    )
    .unwrap();
    let first = f.entries.iter().find(|e| e.values[0] == Value::Int(128)).unwrap().time.unwrap();
    assert_eq!(s1.median_ratio, Some(first / d.best_time().unwrap()));
    let times: Vec<f64> = f.entries.iter().filter_map(|e| e.time).collect();
    let best = d.best_time().unwrap();
    let near = times.iter().filter(|&&t| t <= best / 0.95).count();
    if first > best / 0.95 {
        assert_eq!(s1.evals_to_95, None);
    }
    assert!(near >= 1);
    // Random sampling of 1 evaluation over many runs: within5 estimates the share of good
    // configurations.
    let r = replay(
        &d,
        &ReplayConfig { strategy: "random_sampling".into(), budget: 1, runs: 400, seed: 1 },
        &mut |_| {},
    )
    .unwrap();
    let share = times.iter().filter(|&&t| t <= best * 1.05).count() as f64 / times.len() as f64;
    assert!((r.within5 - share).abs() < 0.1, "{} vs {share}", r.within5);
    assert!(matches!(
        replay(&d, &ReplayConfig { strategy: "x".into(), budget: 5, runs: 1, seed: 0 }, &mut |_| {}),
        Err(TuneError::UnknownStrategy(_))
    ));
    assert!(
        replay(&d, &ReplayConfig { strategy: "tpe".into(), budget: 0, runs: 1, seed: 0 }, &mut |_| {})
            .is_err()
    );
}

/// A fake kernel: fails to compile for block 32, fails verification for alg b at block 1024,
/// and runs in a time given by a fake clock.
struct Fake {
    block: i64,
    alg_b: bool,
    runs: usize,
}

impl Kernel for Fake {
    type Output = i64;
    fn apply(&mut self, c: &Config) -> Result<(), String> {
        self.block = c.int("block").unwrap();
        self.alg_b = c.get("alg") == Some(&Value::from("b"));
        if self.block == 32 { Err("too few registers".into()) } else { Ok(()) }
    }
    fn run(&mut self) -> Result<i64, String> {
        self.runs += 1;
        Ok(if self.alg_b && self.block == 1024 { -1 } else { 42 })
    }
    fn verify(&mut self, out: &i64) -> Result<(), String> {
        if *out == 42 { Ok(()) } else { Err(format!("got {out}")) }
    }
}

/// Returns 3, 1, 2, 3, 1, 2, ... milliseconds.
struct FakeClock(u32);

impl Clock for FakeClock {
    fn time(&mut self, f: &mut dyn FnMut() -> Result<(), String>) -> Result<f64, String> {
        f()?;
        self.0 += 1;
        Ok(f64::from(self.0 % 3 + 1))
    }
}

#[test]
fn evaluation_loop_records_times_and_failures() {
    let s = space();
    let mut bench = Bench::new(
        &s,
        Fake { block: 0, alg_b: false, runs: 0 },
        FakeClock(0),
        Measurement { warmup: 2, runs: 3 },
    );
    let ok = bench.measure(&cfg(64, "a"));
    assert_eq!(ok.times, [2.0, 3.0, 1.0]);
    assert_eq!(ok.outcome, Outcome::Time(2.0));
    let compile = bench.measure(&cfg(32, "a"));
    assert!(matches!(&compile.outcome, Outcome::Failed(r) if r.starts_with("compile")));
    assert_eq!(compile.failure, Some("CompilationFailedConfig"));
    let verify = bench.measure(&cfg(1024, "b"));
    assert!(matches!(&verify.outcome, Outcome::Failed(r) if r.starts_with("verify")));
    // Warm-up runs are verified too: the failure is caught before timing.
    let (k, _) = bench.into_parts();
    assert_eq!(k.runs, 2 + 3 + 1);

    // A whole search through the loop: failures are skipped, the best is a working config.
    let mut bench =
        Bench::new(&s, Fake { block: 0, alg_b: false, runs: 0 }, FakeClock(0), Measurement::default());
    let mut st = strategy::by_name("brute_force").unwrap();
    let r = run(st.as_mut(), &s, &mut bench, Budget::evals(100), 0).unwrap();
    assert_eq!(r.evaluations, s.count_valid());
    let log = bench.log();
    assert_eq!(log.len() as u64, s.count_valid());
    assert_eq!(log.iter().filter(|m| m.outcome.time().is_none()).count(), 2);
    let (p, best) = r.best.clone().unwrap();
    assert_ne!(s.config(&p).int("block"), Some(32));
    // The log stores as a Kernel Tuner file.
    let dir = tempfile::tempdir().unwrap();
    let cache = TuningCache::at(dir.path());
    let key = CacheKey::new("fake", &Fingerprint::cpu(), "i64", "n<=2^0");
    cache.store(&key, &s, log).unwrap();
    let back = cache.lookup(&key, &s).unwrap();
    assert!(log.iter().any(|m| m.config == back && m.outcome.time() == Some(best)));
}

struct CountingCompiler;

impl Compiler for CountingCompiler {
    type Module = String;
    fn compile(&self, c: &Config) -> Result<String, String> {
        if c.int("block") == Some(32) { Err("nope".into()) } else { Ok(c.defines()) }
    }
}

#[test]
fn compile_cache_compiles_once_per_configuration() {
    let mut cc = CompileCache::new(CountingCompiler);
    let a = cc.get(&cfg(64, "a")).unwrap();
    let b = cc.get(&cfg(64, "a")).unwrap();
    assert!(std::sync::Arc::ptr_eq(&a, &b));
    assert_eq!(*a, "#define BLOCK 64\n#define ALG a\n");
    assert!(cc.get(&cfg(32, "a")).is_err());
    assert!(cc.get(&cfg(32, "a")).is_err());
    assert_eq!(cc.len(), 2);
}

#[test]
fn nvrtc_source_puts_defines_first() {
    let src = NvrtcSource {
        name: "k".into(),
        source: "__global__ void k() {}\n".into(),
        compute_capability: (8, 0),
    };
    let c =
        Config::new(vec![("block_size_x".into(), Value::Int(128)), ("use_shmem".into(), Value::Bool(true))]);
    assert_eq!(src.source_for(&c), "#define BLOCK_SIZE_X 128\n#define USE_SHMEM 1\n__global__ void k() {}\n");
    // Compiling needs libnvrtc; where it is installed, a configuration compiles to PTX.
    if cuda_kernels::nvrtc_present() {
        let ptx = src.compile(&c).unwrap();
        assert!(ptx.to_src().contains(".entry"));
    }
}

#[test]
fn cuda_event_clock_times_gpu_work() {
    let Some(gpu) = hetkit_testkit::gpu_or_skip("cuda_event_clock_times_gpu_work") else { return };
    let mut clock = hetero_sched::tune::CudaEventClock::new(&gpu).unwrap();
    let host = vec![1.0f32; 1 << 20];
    let t = clock.time(&mut || gpu.upload(&host).map(|_| ()).map_err(|e| e.to_string())).unwrap();
    assert!(t > 0.0 && t.is_finite(), "{t}");
    // The closure's own failure comes back as the clock's error.
    assert_eq!(clock.time(&mut || Err("launch failed".into())), Err("launch failed".into()));
}
