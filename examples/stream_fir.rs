//! The FIR filter of GStream's Fig. 3.6 (order 100) as a three-stage pipeline with elastic
//! batches: a source of random samples, the filter popping at least `m` samples and keeping the
//! last `m - 1` as its window, and a sink. The output is checked against the direct convolution.
//!
//! `cargo run --release --example stream_fir [N]`

use hetkit::stream::{Pipeline, Receiver, Sender};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// One FIR step per pop: `y[i] = sum_j h[j] x[i + j]` for every full window of the batch.
fn fir(h: &[f32], mut input: Receiver<f32>, mut output: Sender<f32>) -> hetkit::Result<()> {
    let m = h.len();
    while let Some(batch) = input.pop(m, 4096)? {
        if batch.len() < m {
            break; // end of stream: the last m - 1 samples make no output
        }
        let outs = batch.len() - m + 1;
        let mut slot = output.reserve(outs);
        for (i, y) in slot.iter_mut().enumerate() {
            *y = h.iter().zip(&batch[i..]).map(|(a, b)| a * b).sum();
        }
        slot.commit(outs)?;
        batch.finalize(outs)?;
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(1 << 20).max(100);
    let m = 100;
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let h: Vec<f32> = (0..m).map(|_| rng.random_range(-1.0..1.0) / m as f32).collect();
    let x: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();

    let mut p = Pipeline::new();
    let (src, fir_in) = p.channel::<f32>();
    let (fir_out, mut sink_in) = p.channel::<f32>();
    let (done, result) = std::sync::mpsc::channel();
    let samples = x.clone();
    p.stage("source", move || -> hetkit::Result<()> {
        // Uneven chunks: the filter's batches do not line up with them.
        let mut rng = ChaCha8Rng::seed_from_u64(8);
        let mut at = 0;
        while at < samples.len() {
            let k = rng.random_range(1..3000).min(samples.len() - at);
            src.push(&samples[at..at + k])?;
            at += k;
        }
        Ok(())
    });
    let taps = h.clone();
    p.stage("fir", move || fir(&taps, fir_in, fir_out));
    p.stage("sink", move || -> hetkit::Result<()> {
        let mut y = Vec::new();
        while let Some(batch) = sink_in.pop(1, 1 << 16)? {
            y.extend_from_slice(&batch);
        }
        done.send(y).expect("main waits for the output");
        Ok(())
    });
    let report = p.run()?;
    let y = result.recv().expect("the sink sent its output");

    let direct: Vec<f32> =
        (0..=n.saturating_sub(m)).map(|i| h.iter().zip(&x[i..]).map(|(a, b)| a * b).sum()).collect();
    let equal = y.len() == n - m + 1 && y == direct;
    println!(
        "FIR order {m}, {n} samples -> {} outputs (N - m + 1), equal to the direct convolution: {equal}",
        y.len()
    );
    println!("{report}");
    std::fs::write("stream_fir_timeline.svg", report.timeline_svg())?;
    println!("timeline: stream_fir_timeline.svg");
    assert!(equal, "the streamed FIR differs from the direct convolution");
    Ok(())
}
