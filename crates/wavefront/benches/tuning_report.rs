//! The auto-tuner's report (book chapter "Tuning wavefronts"): calibrates on the synthetic
//! training grids (2D and 3D), searches the held-out instances exhaustively, and measures each
//! learner's 2D predictions against the exhaustive best (`T_best / T_tuned`), with speed-ups,
//! parameter sensitivity and a PNG plot, then the 3D predictions of the model tree and the
//! worst-case ranking learner (`neighbours-worst`).
//!
//! `cargo bench -p wavefront --bench tuning_report`; logs, the model cache and the plot go to
//! `$WF_TUNE_DIR` (default `target/wf-tune`), and the searches resume from the logs. With
//! `WF_TUNE_OFFLINE` set, only the scores from the logs are computed (nothing is re-timed once
//! the logs are complete); `WF_TUNE_PASSES` sets how many times the re-timing is repeated
//! (default 2); with two or more, the passes pooled (`report::pooled`: every configuration's
//! fastest round over all passes) are the headline score.

use std::path::PathBuf;
use std::time::Instant;

use hetero_sched::tune::TuningCache;
use plotters::prelude::*;
use wavefront::tune::report::{self, EvalRow};
use wavefront::tune::{
    self, App, CalibrateOptions, Learner, Predictor, Record, SearchLog, SweepEvaluator,
    training_instances_2d, training_instances_3d, training_set,
};

type Error = Box<dyn std::error::Error>;

fn main() -> Result<(), Error> {
    if std::env::args().any(|a| a == "--list") {
        return Ok(()); // `cargo bench -- --list` / `cargo test --benches` probes
    }
    // Every timed run, in the searches and the re-timing, finds its table's pages mapped.
    tune::keep_heap_mapped();
    let dir = std::env::var_os("WF_TUNE_DIR").map_or_else(|| PathBuf::from("target/wf-tune"), PathBuf::from);
    std::fs::create_dir_all(&dir)?;
    let cache = TuningCache::at(dir.join("cache"));
    let mut instances = training_instances_2d();
    instances.extend(training_instances_3d());
    let opts =
        CalibrateOptions { instances, log: Some(dir.join("train.jsonl")), ..CalibrateOptions::default() };
    println!(
        "machine: {}; synthetic unit {:.2} ns",
        tune::fingerprint_here().as_str(),
        tune::synthetic_unit_ns()
    );
    let cal = tune::calibrate(&opts, &cache, &mut |_| {})?;
    println!(
        "training search: {} timed now, {} from the log, {} capped, {} refined, {:.1} s; fit {:.3} s; rows {:?}",
        cal.summary.evaluated,
        cal.summary.reused,
        cal.summary.capped,
        cal.summary.refined,
        cal.search_time.as_secs_f64(),
        cal.train_time.as_secs_f64(),
        cal.rows
    );
    let is_3d = |r: &&Record| r.instance.app == App::Synthetic3;
    let rows = training_set(
        &cal.records.iter().filter(|r| !is_3d(r)).cloned().collect::<Vec<_>>(),
        opts.top_k,
        opts.within,
    );
    let rows3 =
        training_set(&cal.records.iter().filter(is_3d).cloned().collect::<Vec<_>>(), opts.top_k, opts.within);

    let held = report::held_out_instances();
    let held3 = report::held_out_instances_3d();
    let mut log = SearchLog::open(&dir.join("heldout.jsonl"))?;
    let mut eval = SweepEvaluator::new();
    let t = Instant::now();
    let all_held: Vec<_> = held.iter().chain(&held3).copied().collect();
    let s = tune::search(&all_held, &mut eval, &mut log, &opts.search, &mut |_| {})?;
    println!(
        "held-out search: {} timed now, {} from the log, {} refined, {:.1} s",
        s.evaluated,
        s.reused,
        s.refined,
        t.elapsed().as_secs_f64()
    );

    // Every learner is scored from the exhaustive log (no machine time) and, unless
    // WF_TUNE_OFFLINE is set, re-measured now: every learner's prediction and the search's
    // best five in the same interleaved rounds, `passes` times over (WF_TUNE_PASSES, default
    // 2), so a loss every pass repeats can be told from noise.
    let offline = std::env::var_os("WF_TUNE_OFFLINE").is_some();
    let passes: usize = std::env::var("WF_TUNE_PASSES").ok().and_then(|v| v.parse().ok()).unwrap_or(2);
    let timing = report::Retiming::default();
    let mut fits = Vec::new();
    let mut predictors = Vec::new();
    for learner in Learner::ALL {
        let t = Instant::now();
        predictors.push(Predictor::fit(&rows, learner, &opts.search.space.tiles)?);
        fits.push(t.elapsed().as_secs_f64());
    }
    // One closure type for every learner, so they can be listed side by side.
    let predicts: Vec<_> = predictors.iter().map(|p| move |f: &tune::Features| p.predict(f, 0)).collect();
    let refs: Vec<&dyn Fn(&tune::Features) -> tune::Candidate> =
        predicts.iter().map(|c| c as &dyn Fn(&tune::Features) -> tune::Candidate).collect();
    let logged: Vec<Vec<EvalRow>> =
        refs.iter().map(|p| report::from_log(log.records(), &held, p)).collect::<Result<_, _>>()?;
    let t = Instant::now();
    let retimed: Vec<Vec<Vec<EvalRow>>> = if offline {
        Vec::new()
    } else {
        (0..passes)
            .map(|_| report::evaluate_many(log.records(), &held, &refs, &mut eval, &timing))
            .collect::<Result<_, _>>()?
    };
    if !offline {
        println!(
            "re-timing: {passes} passes over {} learners, {:.1} s",
            refs.len(),
            t.elapsed().as_secs_f64()
        );
    }
    let mut head = String::from("| learner | fit s | log: mean % of best | log: min % |");
    let mut rule = String::from("|---|---|---|---|");
    for k in 1..=retimed.len() {
        head.push_str(&format!(" re-timed {k}: mean % | min % |"));
        rule.push_str("---|---|");
    }
    if retimed.len() > 1 {
        head.push_str(" **pooled: mean %** | **min %** |");
        rule.push_str("---|---|");
    }
    println!("\n{head} mean x seq | mean x untuned cpu |\n{rule}---|---|");
    for (k, learner) in Learner::ALL.iter().enumerate() {
        let (lmean, lmin) = report::mean_min(&logged[k], EvalRow::pct_of_best);
        let mut line = format!("| {} | {:.3} | {lmean:.1} | {lmin:.1} |", learner.name(), fits[k]);
        let passes_k: Vec<Vec<EvalRow>> = retimed.iter().map(|p| p[k].clone()).collect();
        for pass in &passes_k {
            let (mean, min) = report::mean_min(pass, EvalRow::pct_of_best);
            line.push_str(&format!(" {mean:.1} | {min:.1} |"));
        }
        if passes_k.len() > 1 {
            let (mean, min) = report::mean_min(&report::pooled(&passes_k)?, EvalRow::pct_of_best);
            line.push_str(&format!(" **{mean:.1}** | **{min:.1}** |"));
        }
        let first = retimed.first().map(|p| p[k].as_slice()).unwrap_or_default();
        let seq = report::mean_min(first, EvalRow::speedup_over_sequential).0;
        let cpu = report::mean_min(first, EvalRow::speedup_over_untuned_cpu).0;
        println!("{line} {seq:.2} | {cpu:.2} |");
    }
    // The model tree (Learner::ALL[0]) in detail.
    let main_log_rows = logged[0].clone();
    let main_passes: Vec<Vec<EvalRow>> = retimed.iter().map(|p| p[0].clone()).collect();
    let main_rows = main_passes.first().cloned().unwrap_or_default();
    if !offline {
        println!(
            "\nmodel tree, per held-out instance, re-timed (pass 1):\n\n{}",
            report::markdown(&main_rows)
        );
        println!(
            "model tree, from the log and every re-timing pass:\n\n{}",
            report::passes_markdown(&main_log_rows, &main_passes)
        );
    }
    println!(
        "model tree, per held-out instance, from the search log:\n\n{}",
        report::markdown(&main_log_rows)
    );
    // The ranking learners (issue 21) in detail too, to compare instance by instance.
    for (k, learner) in Learner::ALL.iter().enumerate().filter(|(_, l)| l.name().starts_with("neighbours")) {
        let passes_k: Vec<Vec<EvalRow>> = retimed.iter().map(|p| p[k].clone()).collect();
        let table = if offline {
            report::markdown(&logged[k])
        } else {
            report::passes_markdown(&logged[k], &passes_k)
        };
        println!(
            "{}, per held-out instance, from the log{}:\n\n{table}",
            learner.name(),
            if offline { "" } else { " and every re-timing pass" }
        );
    }

    // 3D: the model tree and the worst-case ranking learner on the held-out 3D instances,
    // re-timed in the same rounds.
    let learners3 = [Learner::ModelTree, Learner::NeighboursWorst];
    let p3: Vec<Predictor> = learners3
        .iter()
        .map(|&l| Predictor::fit(&rows3, l, &opts.search.space.tiles))
        .collect::<Result<_, _>>()?;
    let predicts3: Vec<_> = p3.iter().map(|p| move |f: &tune::Features| p.predict(f, 0)).collect();
    let refs3: Vec<&dyn Fn(&tune::Features) -> tune::Candidate> =
        predicts3.iter().map(|c| c as &dyn Fn(&tune::Features) -> tune::Candidate).collect();
    let log3: Vec<Vec<EvalRow>> =
        refs3.iter().map(|p| report::from_log(log.records(), &held3, p)).collect::<Result<_, _>>()?;
    let r3: Vec<Vec<Vec<EvalRow>>> = if offline {
        Vec::new()
    } else {
        (0..passes)
            .map(|_| report::evaluate_many(log.records(), &held3, &refs3, &mut eval, &timing))
            .collect::<Result<_, _>>()?
    };
    for (k, learner) in learners3.iter().enumerate() {
        println!(
            "3D, {}, per held-out instance, from the search log:\n\n{}",
            learner.name(),
            report::markdown(&log3[k])
        );
        if !offline {
            let passes_k: Vec<Vec<EvalRow>> = r3.iter().map(|p| p[k].clone()).collect();
            println!(
                "3D, {}, from the log and every re-timing pass:\n\n{}",
                learner.name(),
                report::passes_markdown(&log3[k], &passes_k)
            );
        }
    }

    let mut all = cal.records.clone();
    all.extend(log.records().iter().cloned());
    println!("sensitivity (all searched instances: % of the best reachable with the value)\n");
    println!("| parameter | value | mean % | min % | instances |\n|---|---|---|---|---|");
    for s in report::sensitivity(&all) {
        println!(
            "| {} | {} | {:.1} | {:.1} | {} |",
            s.parameter, s.value, s.mean_pct, s.min_pct, s.instances
        );
    }
    let spread = report::spread(&all);
    let worst = spread.iter().map(|s| s.1).fold(0.0, f64::max);
    let med = spread.iter().map(|s| s.2).sum::<f64>() / spread.len().max(1) as f64;
    println!("\nworst/best over instances: up to {worst:.1}x; median/best on average {med:.2}x");

    let png = dir.join("tuning.png");
    plot(if offline { &main_log_rows } else { &main_rows }, &png)?;
    println!("plot: {}", png.display());
    Ok(())
}

/// % of the exhaustive best per held-out instance as bars (blue synthetic, red LCS, green SW),
/// with grey lines every 20 %, and the goals drawn black (95 %, mean) and red (80 %, minimum).
/// No text: the bitmap backend has no font here; the book's caption names the axes.
fn plot(rows: &[EvalRow], path: &PathBuf) -> Result<(), Error> {
    let root = BitMapBackend::new(path, (900, 400)).into_drawing_area();
    root.fill(&WHITE)?;
    let n = rows.len().max(1);
    let top = rows.iter().map(EvalRow::pct_of_best).fold(120.0, f64::max);
    let mut chart = ChartBuilder::on(&root).margin(15).build_cartesian_2d(0.0..n as f64, 0.0..top)?;
    for g in (1..=(top / 20.0) as usize).map(|k| k as f64 * 20.0) {
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(0.0, g), (n as f64, g)],
            RGBColor(210, 210, 210),
        )))?;
    }
    chart.draw_series(rows.iter().enumerate().map(|(i, r)| {
        let color = match r.instance.app {
            tune::App::Lcs => RED,
            tune::App::Sw => GREEN,
            _ => BLUE,
        };
        let x = i as f64;
        Rectangle::new([(x + 0.15, 0.0), (x + 0.85, r.pct_of_best())], color.mix(0.7).filled())
    }))?;
    for (goal, color) in [(95.0, BLACK), (80.0, RED)] {
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(0.0, goal), (n as f64, goal)],
            color.stroke_width(2),
        )))?;
    }
    root.present()?;
    Ok(())
}
