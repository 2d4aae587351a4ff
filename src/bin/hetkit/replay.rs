//! `hetkit tune replay|compare|strategies`.

use std::path::Path;

use hetero_sched::tune::{
    KtFile, ReplayConfig, ReplayDomain, ReplaySummary, TuneError, replay as run_replay, strategy,
};
use indicatif::{ProgressBar, ProgressStyle};

type Error = Box<dyn std::error::Error + Send + Sync>;

fn load(file: &Path) -> Result<ReplayDomain, Error> {
    let kt = KtFile::read(file)?;
    let domain = ReplayDomain::new(&kt)?;
    if domain.is_empty() {
        return Err(format!("{}: the cache holds no configurations", file.display()).into());
    }
    Ok(domain)
}

fn bar(len: u64, msg: String, quiet: bool) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(len);
    pb.set_style(
        ProgressStyle::with_template("{msg:>28} [{bar:30}] {pos}/{len} runs {elapsed}")
            .map(|s| s.progress_chars("=> "))
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    pb.set_message(msg);
    pb
}

fn check_budget(budget: u64) -> Result<(), Error> {
    if budget == 0 {
        return Err(TuneError::InvalidBudget("the budget must be at least 1".into()).into());
    }
    Ok(())
}

/// `hetkit tune replay`.
pub(crate) fn replay(
    file: &Path,
    strategy_name: Option<&str>,
    budget: u64,
    runs: u32,
    seed: u64,
    json: bool,
) -> Result<(), Error> {
    let name = strategy_name.unwrap_or(strategy::DEFAULT);
    strategy::by_name(name)?;
    check_budget(budget)?;
    let domain = load(file)?;
    let cfg = ReplayConfig { strategy: name.to_owned(), budget, runs, seed };
    let pb = bar(u64::from(runs), name.to_owned(), json);
    let s = run_replay(&domain, &cfg, &mut |i| pb.set_position(u64::from(i)))?;
    pb.finish_and_clear();
    if json {
        println!("{}", serde_json::to_string(&s)?);
    } else {
        println!("{}: {} configurations, best {:.6}", file.display(), s.configurations, s.best);
        print_table(&[s]);
    }
    Ok(())
}

/// `hetkit tune compare`.
pub(crate) fn compare(
    file: &Path,
    budgets: &[u64],
    runs: u32,
    seed: u64,
    strategies: &[String],
    json: bool,
) -> Result<(), Error> {
    let names: Vec<String> = if strategies.is_empty() {
        strategy::NAMES.iter().map(|s| s.to_string()).collect()
    } else {
        strategies.to_vec()
    };
    for n in &names {
        strategy::by_name(n)?;
    }
    for &b in budgets {
        check_budget(b)?;
    }
    let domain = load(file)?;
    let mut rows = Vec::new();
    for &budget in budgets {
        for name in &names {
            let cfg = ReplayConfig { strategy: name.clone(), budget, runs, seed };
            let pb = bar(u64::from(runs), format!("{name} @ {budget}"), json);
            let s = run_replay(&domain, &cfg, &mut |i| pb.set_position(u64::from(i)))?;
            pb.finish_and_clear();
            if json {
                println!("{}", serde_json::to_string(&s)?);
            }
            rows.push(s);
        }
    }
    if !json {
        println!("{}: {} configurations", file.display(), domain.len());
        print_table(&rows);
    }
    Ok(())
}

/// `hetkit tune strategies`.
pub(crate) fn list() {
    for n in strategy::NAMES {
        let mark = if *n == strategy::DEFAULT { " (default)" } else { "" };
        println!("{n}{mark}");
    }
}

fn print_table(rows: &[ReplaySummary]) {
    println!(
        "{:<20} {:>6} {:>5} {:>8} {:>8} {:>12} {:>11}",
        "strategy", "budget", "runs", "within5", "within1", "median_ratio", "evals_to_95"
    );
    for s in rows {
        let opt = |x: Option<f64>, p: usize| x.map_or("-".to_owned(), |v| format!("{v:.p$}"));
        println!(
            "{:<20} {:>6} {:>5} {:>8.2} {:>8.2} {:>12} {:>11}",
            s.strategy,
            s.budget,
            s.runs,
            s.within5,
            s.within1,
            opt(s.median_ratio, 4),
            opt(s.evals_to_95, 1)
        );
    }
}
