//! Streaming pipelines: 2^22 four-byte items through source -> square -> sum, batches of 4096,
//! against the same work as one loop, with the per-stage report.

use std::time::Instant;

use hetkit::stream::Pipeline;

pub(crate) fn section() {
    println!("\nstream, 2^22 u32 through source -> square -> sum (batches of 4096)");
    let n: u64 = 1 << 22;
    let t = Instant::now();
    let want: u64 = (0..n).map(|i| (i % 1000) * (i % 1000)).sum();
    let t_loop = t.elapsed().as_secs_f64();
    let run = || -> hetkit::Result<(u64, hetkit::stream::Report)> {
        let mut p = Pipeline::new();
        let (mut src, mut sq_in) = p.channel::<u32>();
        let (sq_out, mut sum_in) = p.channel::<u64>();
        let (tx, rx) = std::sync::mpsc::channel();
        p.stage("source", move || -> hetkit::Result<()> {
            for start in (0..n).step_by(4096) {
                let mut slot = src.reserve(4096);
                for (j, v) in slot.iter_mut().enumerate() {
                    *v = ((start + j as u64) % 1000) as u32;
                }
            }
            Ok(())
        });
        p.stage("square", move || -> hetkit::Result<()> {
            let mut out = Vec::with_capacity(4096);
            while let Some(b) = sq_in.pop(1, 4096)? {
                out.clear();
                out.extend(b.iter().map(|&v| u64::from(v) * u64::from(v)));
                sq_out.push(&out)?;
            }
            Ok(())
        });
        p.stage("sum", move || -> hetkit::Result<()> {
            let mut s = 0;
            while let Some(b) = sum_in.pop(1, 4096)? {
                s += b.iter().sum::<u64>();
            }
            let _ = tx.send(s);
            Ok(())
        });
        let report = p.run()?;
        Ok((rx.recv().unwrap_or(0), report))
    };
    let t = Instant::now();
    match run() {
        Ok((got, report)) => {
            let s = t.elapsed().as_secs_f64();
            println!(
                "  one loop {:.1} ms, pipeline {:.1} ms ({:.2} GB/s of input), equal: {}",
                t_loop * 1e3,
                s * 1e3,
                4.0 * n as f64 / s / 1e9,
                got == want
            );
            for line in report.to_string().lines() {
                println!("  {line}");
            }
        }
        Err(e) => println!("  pipeline failed: {e}"),
    }
}
