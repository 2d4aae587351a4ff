//! The on-disk module cache, and module loading across processes.
//!
//! The cache itself needs no GPU. Loading across processes runs this test binary again as a child
//! (an `#[ignore]`d test run with `--ignored --exact`) with its own environment, because the
//! runtime keeps loaded modules for the life of a process and reads the environment once; on the
//! emulator (`scripts/cuda-emu.sh -p cuda-kernels --test module_cache`) that covers the cubin
//! path, the PTX fallback and the error when nothing loads.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use cuda_kernels::{CacheKey, Error, Gpu, ModuleCache, axpy, axpy_cpu};
use hetkit_testkit::{assert_close, gpu_or_skip};

fn key(input: &str) -> CacheKey {
    CacheKey::new(
        "blas/axpy",
        "nvrtc-cubin",
        input.as_bytes(),
        &["--gpu-architecture=sm_90".into()],
        "nvrtc 12.8",
        (9, 0),
        12080,
    )
}

fn entries(dir: &Path) -> Vec<std::path::PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut v: Vec<_> =
        rd.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "bin")).collect();
    v.sort();
    v
}

#[test]
fn put_then_get_returns_the_image_and_other_keys_miss() {
    let dir = tempfile::tempdir().unwrap();
    let cache = ModuleCache::at(dir.path().join("nested/cuda-modules"));
    let image: Vec<u8> = (0..10_000u32).map(|i| (i * 31 % 251) as u8).collect();
    assert_eq!(cache.get(&key("a")), None);
    assert!(cache.put(&key("a"), &image));
    assert_eq!(cache.get(&key("a")).as_deref(), Some(&image[..]));
    assert_eq!(cache.get(&key("b")), None);
    // Replacing an entry leaves exactly one file and no temporary files behind.
    assert!(cache.put(&key("a"), b"second"));
    assert_eq!(cache.get(&key("a")).as_deref(), Some(&b"second"[..]));
    let all: Vec<_> = std::fs::read_dir(cache.dir()).unwrap().flatten().collect();
    assert_eq!(all.len(), 1, "{all:?}");
}

#[test]
fn corrupt_truncated_and_foreign_entries_are_misses() {
    let dir = tempfile::tempdir().unwrap();
    let cache = ModuleCache::at(dir.path());
    assert!(cache.put(&key("a"), b"an image of some length"));
    let path = cache.path(&key("a"));
    let good = std::fs::read(&path).unwrap();
    // Truncated at every length, and with one byte flipped anywhere.
    for cut in [0, 1, 10, good.len() / 2, good.len() - 1] {
        std::fs::write(&path, &good[..cut]).unwrap();
        assert_eq!(cache.get(&key("a")), None, "truncated to {cut}");
    }
    for at in (0..good.len()).step_by(7) {
        let mut bad = good.clone();
        bad[at] ^= 0x20;
        std::fs::write(&path, &bad).unwrap();
        assert_eq!(cache.get(&key("a")), None, "byte {at} flipped");
    }
    // Another key's valid entry under this key's name.
    assert!(cache.put(&key("b"), b"other"));
    std::fs::copy(cache.path(&key("b")), &path).unwrap();
    assert_eq!(cache.get(&key("a")), None);
    // A directory where the entry should be.
    std::fs::remove_file(&path).unwrap();
    std::fs::create_dir(&path).unwrap();
    assert_eq!(cache.get(&key("a")), None);
    assert!(!cache.put(&key("a"), b"x"), "a directory in the way cannot be replaced");
}

#[test]
fn an_unwritable_cache_only_costs_the_write() {
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("file");
    std::fs::write(&blocker, b"not a directory").unwrap();
    let cache = ModuleCache::at(blocker.join("cuda-modules"));
    assert!(!cache.put(&key("a"), b"image"));
    assert_eq!(cache.get(&key("a")), None);
}

/// Threads writing different images under one key: every read sees one whole image.
#[test]
fn concurrent_writers_never_leave_a_partial_entry() {
    let dir = tempfile::tempdir().unwrap();
    let cache = Arc::new(ModuleCache::at(dir.path()));
    let images: Vec<Vec<u8>> = (0..4u8).map(|t| vec![t; 200_000 + t as usize]).collect();
    std::thread::scope(|s| {
        for t in 0..4 {
            let (cache, images) = (cache.clone(), &images);
            s.spawn(move || {
                for _ in 0..20 {
                    assert!(cache.put(&key("k"), &images[t]));
                    let got = cache.get(&key("k")).expect("an entry is always there once written");
                    assert!(images.contains(&got), "partial or mixed entry of {} bytes", got.len());
                }
            });
        }
    });
    assert_eq!(entries(dir.path()).len(), 1);
}

/// Runs the `#[ignore]`d test `name` of this binary in a child process with `env`, returning its
/// output; panics if it failed.
fn child(name: &str, env: &[(&str, &str)]) -> String {
    let exe = std::env::current_exe().unwrap();
    let mut cmd = Command::new(exe);
    cmd.args(["--ignored", "--exact", name, "--nocapture", "--test-threads=1"]);
    for var in
        ["HETKIT_NO_MODULE_CACHE", "HETKIT_EMU_DRIVER_VERSION", "HETKIT_EMU_NVRTC_VERSION", "HETKIT_EMU_CC"]
    {
        cmd.env_remove(var);
    }
    cmd.envs(env.iter().copied());
    let out = cmd.output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "child {name} failed:\n{text}");
    assert!(text.contains("1 passed"), "child {name} ran no test:\n{text}");
    text
}

/// The line `key: value` a child printed.
fn field<'a>(out: &'a str, key: &str) -> &'a str {
    out.lines()
        .find_map(|l| l.split_once(&format!("@@{key}: ")).map(|(_, v)| v))
        .unwrap_or_else(|| panic!("no `{key}` in:\n{out}"))
}

/// `HETKIT_CACHE_DIR` and `HETKIT_NO_MODULE_CACHE` as the runtime reads them.
#[test]
#[ignore = "run by from_env_follows_the_environment in a child process"]
fn child_print_cache_dir() {
    println!("\n@@cache: {:?}", ModuleCache::from_env().map(|c| c.dir().to_path_buf()));
}

#[test]
fn from_env_follows_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    let out = child("child_print_cache_dir", &[("HETKIT_CACHE_DIR", root)]);
    assert_eq!(field(&out, "cache"), format!("Some({:?})", dir.path().join("cuda-modules")));
    let out = child("child_print_cache_dir", &[("HETKIT_CACHE_DIR", root), ("HETKIT_NO_MODULE_CACHE", "1")]);
    assert_eq!(field(&out, "cache"), "None");
    // Without the override: the user's cache directory (HOME is set wherever tests run).
    let out = child("child_print_cache_dir", &[("HETKIT_CACHE_DIR", "")]);
    assert!(field(&out, "cache").contains("cuda-modules"), "{out}");
}

/// Loads `blas/axpy`, checks it against the CPU and prints how it was loaded (or the error).
#[test]
#[ignore = "run by the gpu_* tests of this file in child processes"]
fn child_load_axpy() {
    let gpu = Gpu::new(0).unwrap();
    match gpu.module_info("blas/axpy") {
        Ok(info) => {
            println!("\n@@from_disk_cache: {}", info.from_disk_cache);
            println!("\n@@nvrtc_cubin: {}", info.nvrtc_cubin);
            println!("\n@@path: {:?}", info.path);
            println!("\n@@load_seconds: {}", info.load_seconds);
            let x: Vec<f64> = (0..1000).map(|i| i as f64 * 0.5).collect();
            let mut want: Vec<f64> = (0..1000).map(|i| 1.0 - i as f64).collect();
            let dx = gpu.upload(&x).unwrap();
            let mut dy = gpu.upload(&want).unwrap();
            axpy(&gpu, 3.0, &dx, &mut dy).unwrap();
            axpy_cpu(3.0, &x, &mut want).unwrap();
            assert_close(&gpu.download(&dy).unwrap(), &want, 1e-15);
            println!("\n@@result: ok");
        }
        Err(e) => println!(
            "\n@@error: {e}\n@@error_kind: {}",
            if matches!(e, Error::NothingLoads { .. }) { "NothingLoads" } else { "other" }
        ),
    }
}

/// On a real GPU with nvcc's PTX embedded the first route is nvcc's; these tests pin NVRTC.
const NVRTC: (&str, &str) = ("HETKIT_FORCE_NVRTC", "1");

#[test]
fn gpu_second_process_loads_from_the_disk_cache() {
    let Some(gpu) = gpu_or_skip("gpu_second_process_loads_from_the_disk_cache") else { return };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    let cache_dir = dir.path().join("cuda-modules");
    let first = child("child_load_axpy", &[("HETKIT_CACHE_DIR", root), NVRTC]);
    assert_eq!(field(&first, "result"), "ok");
    assert_eq!(field(&first, "from_disk_cache"), "false");
    assert_eq!(field(&first, "nvrtc_cubin"), "true", "NVRTC knows sm_90: a cubin");
    assert_eq!(entries(&cache_dir).len(), 1, "{:?}", entries(&cache_dir));
    let second = child("child_load_axpy", &[("HETKIT_CACHE_DIR", root), NVRTC]);
    assert_eq!(field(&second, "result"), "ok");
    assert_eq!(field(&second, "from_disk_cache"), "true");
    let t1: f64 = field(&first, "load_seconds").parse().unwrap();
    let t2: f64 = field(&second, "load_seconds").parse().unwrap();
    println!("blas/axpy: {t1:.3} s compiled, {t2:.3} s from the disk cache");

    // A damaged entry is recompiled and rewritten, then used again.
    let entry = entries(&cache_dir).remove(0);
    let mut bytes = std::fs::read(&entry).unwrap();
    let n = bytes.len();
    bytes[n - 3] ^= 0xff;
    std::fs::write(&entry, &bytes).unwrap();
    let third = child("child_load_axpy", &[("HETKIT_CACHE_DIR", root), NVRTC]);
    assert_eq!((field(&third, "result"), field(&third, "from_disk_cache")), ("ok", "false"));
    let fourth = child("child_load_axpy", &[("HETKIT_CACHE_DIR", root), NVRTC]);
    assert_eq!(field(&fourth, "from_disk_cache"), "true");

    // A well-framed entry whose image the driver refuses is dropped and recompiled. The key is
    // rebuilt here from what decides the image, which also pins what the runtime keys on.
    let module = cuda_kernels::embedded_modules().iter().find(|m| m.name == "blas/axpy").unwrap();
    let (major, minor) = gpu.props().compute_capability;
    let opts: Vec<String> = [
        format!("--gpu-architecture=sm_{major}{minor}"),
        "-std=c++17".into(),
        "-lineinfo".into(),
        "-DHETKIT_NVRTC=1".into(),
    ]
    .into();
    let nvrtc = format!("nvrtc {}", cuda_kernels::nvrtc_version().unwrap());
    let driver = cuda_kernels::driver_version().unwrap().as_driver_int();
    let key = CacheKey::new(
        "blas/axpy",
        "nvrtc-cubin",
        module.source.as_bytes(),
        &opts,
        &nvrtc,
        (major, minor),
        driver,
    );
    let cache = ModuleCache::at(&cache_dir);
    assert_eq!(cache.path(&key), entry, "the runtime's key is not the one documented");
    assert!(cache.put(&key, b"not an image any driver loads"));
    let fifth = child("child_load_axpy", &[("HETKIT_CACHE_DIR", root), NVRTC]);
    assert_eq!((field(&fifth, "result"), field(&fifth, "from_disk_cache")), ("ok", "false"));
    assert_ne!(cache.get(&key).as_deref(), Some(&b"not an image any driver loads"[..]));

    // With the cache off, nothing is read or written.
    let off = tempfile::tempdir().unwrap();
    let out = child(
        "child_load_axpy",
        &[("HETKIT_CACHE_DIR", off.path().to_str().unwrap()), ("HETKIT_NO_MODULE_CACHE", "1"), NVRTC],
    );
    assert_eq!((field(&out, "result"), field(&out, "from_disk_cache")), ("ok", "false"));
    assert!(entries(&off.path().join("cuda-modules")).is_empty());
}

/// Four processes compiling the same module into an empty cache at once: each loads it, and one
/// whole entry is left that a fifth process reads.
#[test]
fn gpu_concurrent_processes_share_the_cache() {
    if gpu_or_skip("gpu_concurrent_processes_share_the_cache").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    let outs: Vec<String> = std::thread::scope(|s| {
        let kids: Vec<_> = (0..4)
            .map(|_| s.spawn(|| child("child_load_axpy", &[("HETKIT_CACHE_DIR", root), NVRTC])))
            .collect();
        kids.into_iter().map(|k| k.join().unwrap()).collect()
    });
    for out in &outs {
        assert_eq!(field(out, "result"), "ok");
    }
    assert_eq!(entries(&dir.path().join("cuda-modules")).len(), 1);
    let last = child("child_load_axpy", &[("HETKIT_CACHE_DIR", root), NVRTC]);
    assert_eq!((field(&last, "result"), field(&last, "from_disk_cache")), ("ok", "true"));
}

/// The emulator's version knobs: a driver one minor release behind NVRTC still loads NVRTC's
/// cubin; one a major release behind loads nothing, and the error names both versions.
#[test]
fn gpu_driver_older_than_nvrtc() {
    let Some(gpu) = gpu_or_skip("gpu_driver_older_than_nvrtc") else { return };
    if !gpu.props().name.contains("CUDA emulator") {
        println!("SKIPPED gpu_driver_older_than_nvrtc: needs the emulator's version knobs");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    let minor = child(
        "child_load_axpy",
        &[
            ("HETKIT_CACHE_DIR", root),
            NVRTC,
            ("HETKIT_EMU_DRIVER_VERSION", "12020"),
            ("HETKIT_EMU_NVRTC_VERSION", "12.8"),
        ],
    );
    assert_eq!((field(&minor, "result"), field(&minor, "nvrtc_cubin")), ("ok", "true"));
    let major = child(
        "child_load_axpy",
        &[
            ("HETKIT_CACHE_DIR", root),
            NVRTC,
            ("HETKIT_EMU_DRIVER_VERSION", "12020"),
            ("HETKIT_EMU_NVRTC_VERSION", "13.0"),
        ],
    );
    assert_eq!(field(&major, "error_kind"), "NothingLoads", "{major}");
    let msg = field(&major, "error");
    for part in ["CUDA 12.2", "NVRTC 13.0", "cubin", "PTX", "blas/axpy"] {
        assert!(msg.contains(part), "`{part}` missing from: {msg}");
    }
}

/// A device newer than NVRTC knows: no cubin, PTX for compute_80 through the driver's JIT.
#[test]
fn gpu_device_newer_than_nvrtc_falls_back_to_ptx() {
    let Some(gpu) = gpu_or_skip("gpu_device_newer_than_nvrtc_falls_back_to_ptx") else { return };
    if !gpu.props().name.contains("CUDA emulator") {
        println!("SKIPPED gpu_device_newer_than_nvrtc_falls_back_to_ptx: needs the emulator's HETKIT_EMU_CC");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let env = [("HETKIT_CACHE_DIR", dir.path().to_str().unwrap()), NVRTC, ("HETKIT_EMU_CC", "120")];
    let out = child("child_load_axpy", &env);
    assert_eq!((field(&out, "result"), field(&out, "nvrtc_cubin")), ("ok", "false"), "{out}");
    // The JIT's cubin is cached like NVRTC's.
    let again = child("child_load_axpy", &env);
    assert_eq!((field(&again, "result"), field(&again, "from_disk_cache")), ("ok", "true"));
}
