//! Smith-Waterman scores and ends equal parasail's `sw_striped_16` on random protein pairs. Runs
//! when a Python with the `parasail` package is found: `HETKIT_PARASAIL_PYTHON`, else the venv
//! the peer script builds (`$CARGO_TARGET_DIR/wavefront-peers/venv`), else `python3`; skips
//! otherwise.

use std::io::Write;
use std::process::{Command, Stdio};

use rand::Rng;
use wavefront::apps::{Scoring, smith_waterman};

fn python_with_parasail() -> Option<String> {
    let mut candidates = Vec::new();
    if let Ok(p) = std::env::var("HETKIT_PARASAIL_PYTHON") {
        candidates.push(p);
    }
    if let Ok(t) = std::env::var("CARGO_TARGET_DIR") {
        candidates.push(format!("{t}/wavefront-peers/venv/bin/python"));
    }
    candidates
        .push(concat!(env!("CARGO_MANIFEST_DIR"), "/../../target/wavefront-peers/venv/bin/python").into());
    candidates.push("python3".into());
    candidates.into_iter().find(|py| {
        Command::new(py)
            .args(["-c", "import parasail"])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
}

#[test]
fn scores_equal_parasail() {
    let Some(py) = python_with_parasail() else {
        println!("SKIPPED scores_equal_parasail: no Python with the parasail package");
        return;
    };
    let mut rng = hetkit_testkit::rng("scores_equal_parasail");
    let residues = b"ARNDCQEGHILKMFPSTWYV";
    let pairs: Vec<(Vec<u8>, Vec<u8>)> = (0..40)
        .map(|_| {
            let (m, n) = (rng.random_range(1..700), rng.random_range(1..700));
            let a = (0..m).map(|_| residues[rng.random_range(0..20)]).collect();
            let b = (0..n).map(|_| residues[rng.random_range(0..20)]).collect();
            (a, b)
        })
        .collect();
    let script = "import sys, parasail\n\
        for line in sys.stdin:\n    a, b = line.split()\n    r = parasail.sw_striped_16(a, b, 11, 1, parasail.blosum62)\n    \
        print(r.score, r.end_query, r.end_ref)\n";
    let mut child = Command::new(&py)
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python starts");
    {
        let mut stdin = child.stdin.take().expect("stdin");
        for (a, b) in &pairs {
            writeln!(stdin, "{} {}", String::from_utf8_lossy(a), String::from_utf8_lossy(b)).expect("write");
        }
    }
    let out = child.wait_with_output().expect("python runs");
    assert!(out.status.success(), "parasail script failed");
    let text = String::from_utf8(out.stdout).expect("utf-8");
    let scoring = Scoring::blosum62(11, 1);
    let mut lines = text.lines();
    for (a, b) in &pairs {
        let v: Vec<i64> =
            lines.next().expect("one line per pair").split(' ').map(|x| x.parse().unwrap()).collect();
        let got = smith_waterman(a, b, &scoring).unwrap();
        assert_eq!(i64::from(got.score), v[0], "score, {}x{}", a.len(), b.len());
        if got.score > 0 {
            assert_eq!((got.end_a as i64, got.end_b as i64), (v[1], v[2]), "ends, {}x{}", a.len(), b.len());
        }
    }
}
