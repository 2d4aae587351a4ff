//! The wavefront section: a generic kernel on all cores against the sequential reference, and
//! the sequence comparisons' fast paths.

use std::time::Instant;

use hetkit::wavefront::apps::{self, Scoring};
use hetkit::wavefront::{Config2, apps::synthetic::synthetic_2d};

/// Seconds of the best of three calls, and the last result.
fn best_of_3<R>(mut f: impl FnMut() -> R) -> (f64, R) {
    let mut best = f64::INFINITY;
    let mut out = None;
    for _ in 0..3 {
        let t = Instant::now();
        out = Some(f());
        best = best.min(t.elapsed().as_secs_f64());
    }
    (best, out.expect("ran"))
}

pub(crate) fn section() {
    println!("\nwavefront, synthetic kernel (tsize 20) on a 600 x 600 table");
    let (t_seq, seq) = best_of_3(|| synthetic_2d::<1>(600, 600, 20, &Config2::sequential()).expect("valid"));
    let (t_cpu, par) = best_of_3(|| synthetic_2d::<1>(600, 600, 20, &Config2::cpu(8)).expect("valid"));
    let oracle =
        par.indexed_iter().all(|((i, j), c)| c.a as usize == i + j && c.b as usize == (i + 1) * (j + 1));
    println!(
        "  sequential {:.1} ms, cpu(8) {:.1} ms ({:.1}x), equal: {}, integer oracles hold: {oracle}",
        t_seq * 1e3,
        t_cpu * 1e3,
        t_seq / t_cpu,
        seq == par
    );
    let n = 4000;
    println!("\nsequence comparison, two random proteins of {n} residues");
    let protein = |seed: u64| -> Vec<u8> {
        let mut x = seed;
        (0..n)
            .map(|_| {
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                b"ARNDCQEGHILKMFPSTWYV"[(x >> 33) as usize % 20]
            })
            .collect()
    };
    let (a, b) = (protein(1), protein(2));
    let cells = (n * n) as f64;
    let (t, al) = best_of_3(|| apps::smith_waterman(&a, &b, &Scoring::blosum62(11, 1)).expect("valid"));
    println!(
        "  smith_waterman (BLOSUM62, 11/1): score {} ending at ({}, {}), {:.1} ms, {:.1} GCUPS",
        al.score,
        al.end_a,
        al.end_b,
        t * 1e3,
        cells / t / 1e9
    );
    let (t, len) = best_of_3(|| apps::lcs_length(&a, &b));
    println!("  lcs_length: {len}, {:.1} ms, {:.1} GCUPS", t * 1e3, cells / t / 1e9);
}
