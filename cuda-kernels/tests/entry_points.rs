//! `EmbeddedModule::entry_points` against the system C preprocessor (`c++ -E`, skipped where
//! there is none) and, in builds with nvcc, against the `.entry` names of nvcc's PTX.

use std::collections::BTreeSet;
use std::io::Write;
use std::process::{Command, Stdio};

/// The source run through `c++ -E -P`, or None where no C++ preprocessor runs.
fn system_preprocessed(source: &str) -> Option<String> {
    let mut child = Command::new("c++")
        .args(["-E", "-P", "-x", "c++", "-DHETKIT_NVRTC=1", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    child.stdin.take()?.write_all(source.as_bytes()).ok()?;
    let out = child.wait_with_output().ok()?;
    assert!(out.status.success(), "c++ -E failed: {}", String::from_utf8_lossy(&out.stderr));
    Some(String::from_utf8(out.stdout).unwrap())
}

/// `extern "C" __global__` names in preprocessed text: the identifier before the first `(`
/// that is not `__launch_bounds__`'s.
fn names_in_expanded(text: &str) -> BTreeSet<String> {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut names = BTreeSet::new();
    for piece in flat.split("extern \"C\" __global__").skip(1) {
        let mut rest = piece;
        if let Some(at) = rest.find("__launch_bounds__")
            && !rest[..at].contains('(')
        {
            let after = &rest[at + "__launch_bounds__".len()..];
            let close = after.find(')').expect("launch bounds close");
            rest = &after[close + 1..];
        }
        let open = rest.find('(').expect("parameter list");
        let name = rest[..open].trim().rsplit(' ').next().unwrap();
        names.insert(name.to_string());
    }
    names
}

#[test]
fn entry_points_match_the_system_preprocessor() {
    let mut checked = 0;
    for module in cuda_kernels::embedded_modules() {
        let ours: Vec<String> = module.entry_points().unwrap_or_else(|e| panic!("{}: {e}", module.name));
        let unique: BTreeSet<String> = ours.iter().cloned().collect();
        assert_eq!(unique.len(), ours.len(), "{}: a name twice", module.name);
        assert!(!ours.is_empty(), "{}: no entry points", module.name);
        let Some(expanded) = system_preprocessed(module.source) else {
            println!("SKIPPED entry_points_match_the_system_preprocessor: no c++");
            return;
        };
        assert_eq!(unique, names_in_expanded(&expanded), "{}", module.name);
        checked += 1;
    }
    assert!(checked > 30, "only {checked} modules");
}

#[test]
fn entry_points_match_nvccs_ptx() {
    for module in cuda_kernels::embedded_modules() {
        let Some(ptx) = module.ptx else {
            println!("SKIPPED entry_points_match_nvccs_ptx: no nvcc PTX in this build");
            return;
        };
        let entries: BTreeSet<String> = ptx
            .lines()
            .filter_map(|l| {
                l.trim_start().strip_prefix(".visible .entry ").or(l.trim_start().strip_prefix(".entry "))
            })
            .map(|l| l.split('(').next().unwrap().trim().to_string())
            .collect();
        let ours: BTreeSet<String> = module.entry_points().unwrap().into_iter().collect();
        assert_eq!(ours, entries, "{}", module.name);
    }
}
