//! `hetkit tune stencil`: tunes a stencil's CPU block sizes and, when there is a GPU, its
//! generated kernel's parameters (exhaustive by default, as the thesis argues), with a progress
//! bar; stores every measurement in the tuning cache where `Config::cpu()` and `Config::gpu()`
//! look, and prints the best against the default.

use hetero_sched::tune::{TuningCache, strategy};
use hetkit::stencil::tuning::{TuneOptions, TuneReport, tune_cpu, tune_gpu};
use hetkit::stencil::{Element, Stencil};
use indicatif::{ProgressBar, ProgressStyle};

type Error = Box<dyn std::error::Error + Send + Sync>;

/// Options of `hetkit tune stencil`.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    /// `7`, `13` or `27` (the thesis's stencils with Laplacian-like weights), or a specification.
    pub(crate) stencil: String,
    /// `name=value` bindings of a specification's scalars.
    pub(crate) scalars: Vec<String>,
    /// `f32` or `f64`.
    pub(crate) precision: String,
    /// Edge of the cubic grid.
    pub(crate) size: usize,
    /// `cpu`, `gpu` or `all`.
    pub(crate) target: String,
    /// A hetero-sched strategy instead of the exhaustive search.
    pub(crate) strategy: Option<String>,
    /// Most configurations timed.
    pub(crate) budget: u64,
    /// Timed sweeps per configuration.
    pub(crate) runs: usize,
}

pub(crate) fn run(o: &Options) -> Result<(), Error> {
    match o.precision.as_str() {
        "f32" => run_typed::<f32>(o),
        "f64" => run_typed::<f64>(o),
        p => Err(format!("unknown precision `{p}` (f32 or f64)").into()),
    }
}

fn stencil<T: Element>(o: &Options) -> Result<Stencil<T>, Error> {
    let f = T::from_f64;
    Ok(match o.stencil.as_str() {
        "7" => Stencil::seven_point(f(-6.0), f(1.0)),
        "13" => Stencil::thirteen_point(f(-90.0), f(16.0), f(-1.0)),
        "27" => Stencil::twenty_seven_point(f(-26.0), f(1.0), f(1.0), f(1.0)),
        spec => {
            let mut s = Stencil::parse(spec)?;
            for b in &o.scalars {
                let (name, value) = b.split_once('=').ok_or_else(|| format!("`{b}`: expected name=value"))?;
                s = s.scalar(name.trim(), f(value.trim().parse::<f64>()?))?;
            }
            s
        }
    })
}

fn run_typed<T: Element>(o: &Options) -> Result<(), Error> {
    let s = stencil::<T>(o)?;
    let shape = [o.size; 3];
    let cache = TuningCache::open_default()?;
    let targets: &[&str] = match o.target.as_str() {
        "cpu" => &["cpu"],
        "gpu" => &["gpu"],
        "all" => &["cpu", "gpu"],
        t => return Err(format!("unknown target `{t}` (cpu, gpu or all)").into()),
    };
    println!(
        "stencil: {} points, halo {:?}, {}corners, {} flops/point; {}^3 {}",
        s.num_points(),
        s.halo(),
        if s.has_corners() { "" } else { "no " },
        s.flops_per_point(),
        o.size,
        T::NAME
    );
    for &target in targets {
        let opts = TuneOptions {
            strategy: o.strategy.as_deref().map(strategy::by_name).transpose()?,
            budget: o.budget,
            runs: o.runs,
            cache: Some(&cache),
            seed: 1,
        };
        let pb = ProgressBar::new(0);
        pb.set_style(
            ProgressStyle::with_template("{msg} [{bar:30}] {pos} configs {elapsed}")
                .map(|s| s.progress_chars("=> "))
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        pb.set_message(format!("tuning {target}"));
        let report = match target {
            "cpu" => tune_cpu(&s, shape, opts, &mut |n| pb.set_position(n as u64))?,
            _ => {
                let gpu = match hetkit::cuda::Gpu::new(0) {
                    Ok(g) => g,
                    Err(e) if o.target == "all" => {
                        pb.finish_and_clear();
                        println!("gpu: skipped ({e})");
                        continue;
                    }
                    Err(e) => return Err(e.into()),
                };
                pb.set_length(
                    hetkit::stencil::tuning::gpu_space(
                        s.halo(),
                        s.has_corners(),
                        std::mem::size_of::<T>(),
                        gpu.props().max_threads_per_block.into(),
                        hetkit::stencil::STATIC_SHARED_LIMIT.min(gpu.props().shared_per_block) as u64,
                    )?
                    .count_valid()
                    .min(o.budget),
                );
                tune_gpu(&gpu, &s, shape, opts, &mut |n| pb.set_position(n as u64))?
            }
        };
        pb.finish_and_clear();
        print_report(target, &report, s.num_points(), shape);
    }
    Ok(())
}

fn print_report(target: &str, r: &TuneReport, _points: usize, shape: [usize; 3]) {
    let n: usize = shape.iter().product();
    let best = r.best.as_ref().map_or_else(|| "none".into(), |c| c.key());
    println!(
        "{target}: {} of {} configurations valid after pruning, {} timed in {:.1} s",
        r.valid, r.space_size, r.evaluated, r.seconds
    );
    println!(
        "  best {best}: {:.3} ms/sweep ({:.0} Mpoints/s); default {:.3} ms ({:.2}x)",
        r.best_ms,
        n as f64 / r.best_ms / 1e3,
        r.default_ms,
        r.default_ms / r.best_ms
    );
    if let Some(p) = &r.stored {
        println!("  stored in {}", p.display());
    }
}
