//! `hetkit`: the library's command-line tool.
//!
//! - `hetkit info`: devices, the CUDA compile path, the tuning cache.
//! - `hetkit tune replay FILE`: a search strategy against a recorded Kernel Tuner cache file.
//! - `hetkit tune compare FILE`: every strategy against a file, as a table.
//! - `hetkit tune strategies`: the strategy names.
//! - `hetkit tune landscape KERNEL --out FILE`: brute-force one of our CPU kernels' spaces into
//!   a Kernel Tuner cache file (the CPU landscapes of the replay benchmark).

#[path = "hetkit/info.rs"]
mod info;
#[path = "hetkit/landscape.rs"]
mod landscape;
#[path = "hetkit/replay.rs"]
mod replay;

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
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
