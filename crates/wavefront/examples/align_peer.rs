//! hetkit's side of the parasail comparison (`benches/peers/wavefront/run.sh`): reads two
//! sequences (one per file), times Smith-Waterman (BLOSUM62, open 11, extend 1) and LCS on one
//! thread and on all threads, and prints one JSON line per case with the score and GCUPS.
//!
//! `cargo run --release -p wavefront --example align_peer -- A_FILE B_FILE [REPS]`

use std::time::Instant;

use wavefront::Config2;
use wavefront::apps::{Scoring, lcs_length, lcs_length_with, smith_waterman};

fn best_of<R>(reps: usize, mut f: impl FnMut() -> R) -> (f64, R) {
    let mut best = f64::INFINITY;
    let mut out = None;
    for _ in 0..reps {
        let t = Instant::now();
        out = Some(f());
        best = best.min(t.elapsed().as_secs_f64());
    }
    (best, out.expect("at least one repetition"))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        return Err("usage: align_peer A_FILE B_FILE [REPS]".into());
    }
    let read = |p: &str| -> Result<Vec<u8>, std::io::Error> {
        Ok(std::fs::read(p)?.into_iter().filter(|c| !c.is_ascii_whitespace()).collect())
    };
    let (a, b) = (read(&args[1])?, read(&args[2])?);
    let reps: usize = args.get(3).map(|s| s.parse()).transpose()?.unwrap_or(5);
    let cells = a.len() as f64 * b.len() as f64;
    let all = std::thread::available_parallelism().map_or(1, |n| n.get());
    let scoring = Scoring::blosum62(11, 1);
    for threads in [1, all] {
        let pool = std::sync::Arc::new(rayon::ThreadPoolBuilder::new().num_threads(threads).build()?);
        let (t, al) = pool.install(|| best_of(reps, || smith_waterman(&a, &b, &scoring)));
        let al = al?;
        println!(
            "{{\"case\":\"sw\",\"threads\":{threads},\"score\":{},\"end_a\":{},\"end_b\":{},\"seconds\":{t:.6},\"gcups\":{:.3}}}",
            al.score,
            al.end_a,
            al.end_b,
            cells / t / 1e9
        );
        let (t, len) = pool.install(|| best_of(reps, || lcs_length(&a, &b)));
        println!(
            "{{\"case\":\"lcs\",\"threads\":{threads},\"score\":{len},\"seconds\":{t:.6},\"gcups\":{:.3}}}",
            cells / t / 1e9
        );
        // The generic closure path on a 2000 x 2000 corner (it keeps the whole table).
        let (ga, gb) = (&a[..a.len().min(2000)], &b[..b.len().min(2000)]);
        let cfg = Config2::cpu(128).with_pool(pool.clone());
        let (t, len) = best_of(reps, || lcs_length_with(ga, gb, &cfg));
        let len = len?;
        println!(
            "{{\"case\":\"lcs_closure\",\"threads\":{threads},\"score\":{len},\"seconds\":{t:.6},\"gcups\":{:.3}}}",
            ga.len() as f64 * gb.len() as f64 / t / 1e9
        );
    }
    Ok(())
}
