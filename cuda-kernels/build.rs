//! Embeds every `.cu` file below this crate's root into the library.
//!
//! With `nvcc` (env `NVCC`, else `PATH`) each file is compiled to PTX for the virtual
//! architecture in `HETKIT_CUDA_ARCH` (default `compute_80`). The source, with its quoted
//! `#include`s inlined, is embedded either way, so the runtime can fall back to NVRTC when no PTX
//! was built, when the driver rejects the PTX, or when `HETKIT_FORCE_NVRTC=1` asks it to.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::{env, fs};

/// Folders of the crate that hold kernels: everything except Rust sources and build output.
const SKIP_DIRS: &[&str] = &["src", "target", "benches", "tests", "examples"];

fn main() {
    let root = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    println!("cargo:rerun-if-env-changed=NVCC");
    println!("cargo:rerun-if-env-changed=HETKIT_CUDA_ARCH");
    println!("cargo:rerun-if-env-changed=HETKIT_VERBOSE_BUILD");
    println!("cargo:rerun-if-env-changed=PATH");
    // Watch the whole crate: a new kernel folder must trigger a rerun. Unchanged kernels are not
    // recompiled (see `compile_ptx`), so a rerun after an edit of `src/` costs only the hashing.
    println!("cargo:rerun-if-changed={}", root.display());

    let mut kernel_files = Vec::new();
    collect(&root, &root, &mut kernel_files);
    kernel_files.sort();

    let nvcc = find_nvcc();
    let arch = env::var("HETKIT_CUDA_ARCH").unwrap_or_else(|_| "compute_80".to_string());
    let mut table = String::from("&[\n");
    let mut compiled = 0usize;
    for rel in &kernel_files {
        let path = root.join(rel);
        let name = rel.with_extension("").to_string_lossy().replace('\\', "/");
        if path.extension().is_some_and(|e| e == "cu") {
            let source = inline_includes(&path, &mut HashSet::new());
            let src_file = out.join(format!("{}.cu", name.replace('/', "__")));
            fs::write(&src_file, &source).unwrap();
            let ptx = nvcc.as_ref().map(|nvcc| compile_ptx(nvcc, &path, &arch, &out, &name));
            if ptx.is_some() {
                compiled += 1;
            }
            let ptx_expr = match ptx {
                Some(p) => format!("Some(include_str!({:?}))", p.display().to_string()),
                None => "None".to_string(),
            };
            writeln!(
                table,
                "    EmbeddedModule {{ name: {name:?}, source: include_str!({:?}), ptx: {ptx_expr}, ptx_arch: {arch:?} }},",
                src_file.display().to_string()
            )
            .unwrap();
        }
        println!("cargo:rerun-if-changed={}", path.display());
    }
    table.push(']');
    fs::write(out.join("embedded_modules.rs"), table).unwrap();

    if env::var_os("HETKIT_VERBOSE_BUILD").is_some() {
        match &nvcc {
            Some(n) => println!(
                "cargo:warning=cuda-kernels: compiled {compiled} kernel files to PTX ({arch}) with {}",
                n.display()
            ),
            None => println!(
                "cargo:warning=cuda-kernels: no nvcc found; embedded {} kernel sources for NVRTC",
                kernel_files.iter().filter(|p| p.extension().is_some_and(|e| e == "cu")).count()
            ),
        }
    }
}

/// Every `.cu`/`.cuh` below `dir`, relative to `root`.
fn collect(root: &Path, dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if path.is_dir() {
            if dir == root && SKIP_DIRS.iter().any(|s| name == *s) || name.to_string_lossy().starts_with('.')
            {
                continue;
            }
            println!("cargo:rerun-if-changed={}", path.display());
            collect(root, &path, files);
        } else if path.extension().is_some_and(|e| e == "cu" || e == "cuh") {
            files.push(path.strip_prefix(root).unwrap().to_path_buf());
        }
    }
}

/// The file's text with each `#include "x"` replaced by the (recursively inlined) file, once per
/// translation unit; `#include <x>` lines stay for the compiler.
fn inline_includes(path: &Path, seen: &mut HashSet<PathBuf>) -> String {
    let canonical = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    if !seen.insert(canonical) {
        return String::new();
    }
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("#pragma once") {
            continue;
        }
        if let Some(rest) = trimmed.strip_prefix("#include") {
            let rest = rest.trim();
            if let Some(inner) = rest.strip_prefix('"').and_then(|r| r.split('"').next()) {
                let inc = path.parent().unwrap().join(inner);
                writeln!(out, "// begin {inner}").unwrap();
                out.push_str(&inline_includes(&inc, seen));
                writeln!(out, "// end {inner}").unwrap();
                continue;
            }
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

fn find_nvcc() -> Option<PathBuf> {
    if let Some(p) = env::var_os("NVCC") {
        let p = PathBuf::from(p);
        return p.exists().then_some(p);
    }
    let path = env::var_os("PATH")?;
    env::split_paths(&path).map(|d| d.join("nvcc")).find(|p| p.is_file())
}

fn compile_ptx(nvcc: &Path, src: &Path, arch: &str, out: &Path, name: &str) -> PathBuf {
    let ptx = out.join(format!("{}.ptx", name.replace('/', "__")));
    // The inlined source, the compiler and the architecture decide the PTX: skip nvcc when they
    // are what the existing PTX was made from.
    let stamp_file = ptx.with_extension("stamp");
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    std::hash::Hash::hash(&(inline_includes(src, &mut HashSet::new()), nvcc, arch), &mut hasher);
    let stamp = std::hash::Hasher::finish(&hasher).to_string();
    if ptx.exists() && fs::read_to_string(&stamp_file).is_ok_and(|s| s == stamp) {
        return ptx;
    }
    let status = Command::new(nvcc)
        .args(["-ptx", "-O3", "-lineinfo", "-std=c++17"])
        .arg(format!("-arch={arch}"))
        .arg("-o")
        .arg(&ptx)
        .arg(src)
        .status()
        .unwrap_or_else(|e| panic!("running {}: {e}", nvcc.display()));
    assert!(status.success(), "nvcc failed on {}", src.display());
    fs::write(&stamp_file, stamp).unwrap();
    ptx
}
