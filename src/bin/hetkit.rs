//! `hetkit`: the library's command-line tool.
//!
//! - `hetkit info`: devices, the CUDA compile path, the tuning cache.
//! - `hetkit tune replay FILE`: a search strategy against a recorded Kernel Tuner cache file.
//! - `hetkit tune compare FILE`: every strategy against a file, as a table.
//! - `hetkit tune strategies`: the strategy names.
//! - `hetkit tune landscape KERNEL --out FILE`: brute-force one of our CPU kernels' spaces into
//!   a Kernel Tuner cache file (the CPU landscapes of the replay benchmark).
//! - `hetkit tune kernel NAME`: tune a wired CPU kernel (scan, sort, sg_eval, sg_hier, the
//!   learning operators sg_learn_stream and sg_learn_subspace, tridiagonal) on this machine,
//!   store the result where its dispatch looks, and compare default and tuned.
//! - `hetkit tune stencil STENCIL`: tune a stencil's CPU blocks and generated GPU kernel.
//! - `hetkit tune wavefront`: calibrate the wavefront auto-tuner (`Config2::auto`) on this machine.

#[path = "hetkit/info.rs"]
mod info;
#[path = "hetkit/landscape.rs"]
mod landscape;
#[path = "hetkit/replay.rs"]
mod replay;
#[path = "hetkit/tune_kernel.rs"]
mod tune_kernel;
#[path = "hetkit/tune_stencil.rs"]
mod tune_stencil;
#[path = "hetkit/tune_wavefront.rs"]
mod tune_wavefront;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(name = "hetkit", version, about = "hetkit: devices, tuning cache and autotuning tools")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Devices, CUDA compile path, tuning cache location and contents.
    Info,
    /// Autotuning tools.
    #[command(subcommand)]
    Tune(Tune),
}

#[derive(Subcommand, Debug)]
enum Tune {
    /// Replay a strategy on a Kernel Tuner cache file (plain or gzip JSON).
    Replay {
        /// The cache file.
        file: PathBuf,
        /// Strategy name (default: the library's default strategy).
        #[arg(long)]
        strategy: Option<String>,
        /// Evaluations per run.
        #[arg(long, default_value_t = 100)]
        budget: u64,
        /// Seeded runs.
        #[arg(long, default_value_t = 20)]
        runs: u32,
        /// Seed of the first run.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Print one JSON object instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Replay every strategy on a cache file and print a table.
    Compare {
        /// The cache file.
        file: PathBuf,
        /// Evaluations per run (repeatable).
        #[arg(long, default_values_t = vec![100u64, 400])]
        budget: Vec<u64>,
        /// Seeded runs.
        #[arg(long, default_value_t = 20)]
        runs: u32,
        /// Seed of the first run.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Strategies (default: all).
        #[arg(long, value_delimiter = ',')]
        strategies: Vec<String>,
        /// Print one JSON object per line instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// List the strategies.
    Strategies,
    /// Brute-force a CPU kernel's tuning space into a Kernel Tuner cache file.
    Landscape {
        /// One of: sg_eval, scan, tridiagonal.
        kernel: String,
        /// Output file (`.json` or `.json.gz`).
        #[arg(long)]
        out: PathBuf,
        /// Timed runs per configuration (median).
        #[arg(long, default_value_t = 5)]
        runs: usize,
    },
    /// Tune a wired CPU kernel on this machine and store the result in the tuning cache, where
    /// the kernel's dispatch finds it; ends with default versus tuned.
    Kernel {
        /// One of: scan, sort, segmented, sg_eval, sg_hier, sg_learn_stream, sg_learn_subspace,
        /// tridiagonal, tridiagonal_interleaved.
        name: String,
        /// Evaluations of the search (capped at the size of the space).
        #[arg(long, default_value_t = 40)]
        budget: u64,
        /// Strategy name (default: the library's default strategy).
        #[arg(long)]
        strategy: Option<String>,
        /// Timed runs per configuration (median).
        #[arg(long, default_value_t = 5)]
        runs: usize,
        /// Seed of the search.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Problem size: scan elements (default 2^22), sort row length (192; 2^20 keys in all),
        /// segmented elements (2^22, random segment lengths), sg_eval points (4096; d4 n7 grid),
        /// sg_hier level of a d4 regular grid (8), sg_learn_stream and sg_learn_subspace data points
        /// (2^13; Friedman1, d10 level-4 grid), tridiagonal system size (64; 2^20 unknowns in all).
        #[arg(long)]
        size: Option<usize>,
        /// Alternating timed runs of default and tuned in the final comparison.
        #[arg(long, default_value_t = 21)]
        compare_runs: usize,
    },
    /// Tune a stencil: the CPU block sizes and, with a GPU, the generated kernel's tile, threads
    /// and read-only flag (exhaustive unless a strategy is named); results go to the tuning cache.
    Stencil {
        /// `7`, `13`, `27` (the thesis's stencils) or a specification such as
        /// "out[i][j][k] = a*u[i][j][k] + b*(u[i+1][j][k] + u[i-1][j][k])".
        stencil: String,
        /// Scalar bindings of a specification, `name=value` (repeatable).
        #[arg(long = "scalar")]
        scalars: Vec<String>,
        /// f32 or f64.
        #[arg(long, default_value = "f32")]
        precision: String,
        /// Edge of the cubic grid.
        #[arg(long, default_value_t = 256)]
        size: usize,
        /// cpu, gpu or all.
        #[arg(long, default_value = "all")]
        target: String,
        /// A strategy name instead of the exhaustive search.
        #[arg(long)]
        strategy: Option<String>,
        /// Most configurations timed.
        #[arg(long, default_value_t = u64::MAX)]
        budget: u64,
        /// Timed sweeps per configuration (median).
        #[arg(long, default_value_t = 3)]
        runs: usize,
    },
    /// Calibrate the wavefront auto-tuner: search the synthetic training instances, fit the
    /// models on the best five configurations of each, store them in the tuning cache.
    Wavefront {
        /// JSON-lines search log; an interrupted calibration resumes from it.
        #[arg(long)]
        log: Option<PathBuf>,
        /// Timed runs per configuration (the fastest is kept).
        #[arg(long, default_value_t = 3)]
        reps: usize,
        /// A run longer than this (ms) is not repeated and its configuration is capped.
        #[arg(long, default_value_t = 2000)]
        cap_ms: u64,
        /// Parameter learner: model-tree, tree, linear, svm, neighbours-worst or neighbours-mean.
        #[arg(long, default_value = "model-tree")]
        learner: String,
        /// The smaller 2D-only training grid.
        #[arg(long)]
        quick: bool,
        /// Then measure the prediction against the exhaustive best on held-out instances.
        #[arg(long)]
        evaluate: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Info => info::run(),
        Command::Tune(Tune::Replay { file, strategy, budget, runs, seed, json }) => {
            replay::replay(&file, strategy.as_deref(), budget, runs, seed, json)
        }
        Command::Tune(Tune::Compare { file, budget, runs, seed, strategies, json }) => {
            replay::compare(&file, &budget, runs, seed, &strategies, json)
        }
        Command::Tune(Tune::Strategies) => {
            replay::list();
            Ok(())
        }
        Command::Tune(Tune::Landscape { kernel, out, runs }) => landscape::run_landscape(&kernel, &out, runs),
        Command::Tune(Tune::Kernel { name, budget, strategy, runs, seed, size, compare_runs }) => {
            let opts = tune_kernel::Options { budget, strategy, runs, seed, size, compare_runs };
            tune_kernel::tune_kernel(&name, &opts)
        }
        Command::Tune(Tune::Stencil {
            stencil,
            scalars,
            precision,
            size,
            target,
            strategy,
            budget,
            runs,
        }) => {
            let opts =
                tune_stencil::Options { stencil, scalars, precision, size, target, strategy, budget, runs };
            tune_stencil::run(&opts)
        }
        Command::Tune(Tune::Wavefront { log, reps, cap_ms, learner, quick, evaluate }) => {
            tune_wavefront::run(&tune_wavefront::Options { log, reps, cap_ms, learner, quick, evaluate })
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
