//! The stencil section of the tour: the thesis's four stencils (7-, 13-, 19-point Himeno and
//! 27-point) on every configuration, checked against the sequential reference.

use std::time::Instant;

use hetkit::cuda::Gpu;
use hetkit::ndarray::Array3;
use hetkit::stencil::{Config, Himeno, Stencil};

/// Seconds of one call (best of two) and its result.
fn timed<R>(mut f: impl FnMut() -> R) -> (f64, R) {
    let mut best = f64::INFINITY;
    let mut out = None;
    for _ in 0..2 {
        let t = Instant::now();
        out = Some(f());
        best = best.min(t.elapsed().as_secs_f64());
    }
    (best, out.expect("ran"))
}

pub(crate) fn section(gpu: Option<&Gpu>) {
    let n = 128;
    println!("\nstencils, {n}^3 f32, 4 sweeps; dyadic weights, so every configuration must agree bitwise");
    let u = Array3::from_shape_fn((n, n, n), |(i, j, k)| ((i * 5 + j * 11 + k * 3) % 16) as f32);
    let stencils = [
        ("7-point", Stencil::<f32>::seven_point(0.25, 0.125)),
        ("13-point", Stencil::<f32>::thirteen_point(0.5, 0.0625, 0.015625)),
        ("27-point", Stencil::<f32>::twenty_seven_point(0.5, 1.0 / 32.0, 1.0 / 64.0, 1.0 / 64.0)),
    ];
    for (name, s) in &stencils {
        let run = |cfg: &Config| {
            let mut f = u.clone();
            s.iterate(&mut f, 4, cfg).map(|()| f)
        };
        let (t_seq, want) = timed(|| run(&Config::sequential()).expect("valid grid"));
        let mut line =
            format!("  {name:9} {} flops/pt: sequential {:7.1} ms", s.flops_per_point(), t_seq * 1e3);
        let mut configs = vec![("cpu", Config::cpu()), ("slabs(2)", Config::slabs(2))];
        if gpu.is_some() {
            configs.push(("gpu", Config::gpu()));
        }
        for (label, cfg) in configs {
            match timed(|| run(&cfg)) {
                (t, Ok(got)) => {
                    line += &format!(
                        ", {label} {:6.1} ms{}",
                        t * 1e3,
                        if got == want { "" } else { " (DIFFERS)" }
                    )
                }
                (_, Err(e)) => line += &format!(", {label} failed: {e}"),
            }
        }
        println!("{line}");
    }
    let h = Himeno::<f32>::new(65, 65, 129).expect("size S");
    for (label, cfg) in
        [("sequential", Config::sequential()), ("cpu", Config::cpu()), ("auto", Config::auto())]
    {
        match h.run(3, &cfg) {
            Ok(r) => {
                println!("  Himeno S, 3 iterations, {label:10}: gosa {:.9e}, {:7.0} MFLOPS", r.gosa, r.mflops)
            }
            Err(e) => println!("  Himeno S {label} failed: {e}"),
        }
    }
}
