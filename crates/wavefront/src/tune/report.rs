//! How good the tuner is (digest §3.1): on held-out instances, the predicted configuration's
//! time against the exhaustive best (`T_best / T_tuned`, the thesis's % of optimal), and
//! speed-ups over the sequential reference and an untuned all-cores configuration; and how
//! sensitive each instance is to each parameter.
//!
//! Two measurements, each timing the prediction and the best the same way: [`evaluate`]
//! re-measures the search's best few, the predictions and the baselines now, interleaved
//! round-robin in batched runs, each configuration's fastest round kept, with the spread of
//! the score over the rounds; [`from_log`] reads both times from the exhaustive search's log
//! (the fastest of its repetitions). A prediction equal to the best scores exactly 100 % in
//! both.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::error::{Result, WavefrontError};
use crate::tune::driver::{Evaluate, Instance, Record, fastest as fastest_of, median};
use crate::tune::features::Features;
use crate::tune::rounds::remeasure;
use crate::tune::space::Candidate;

pub use crate::tune::rounds::Retiming;

/// The untuned all-cores baseline: the parallel executor with 8 x 8 tiles (the thesis's most
/// frequent best CPU tile).
pub const UNTUNED_TILE: usize = 8;

/// Held-out instances, disjoint from [`crate::tune::training_instances_2d`]: synthetic sides,
/// grains and payloads between the training points, and the two sequence-comparison
/// applications the model never saw.
pub fn held_out_instances() -> Vec<Instance> {
    let mut out = Vec::new();
    for dim in [48, 96, 192, 384] {
        for grain in [2, 8, 32] {
            for dsize in [2, 4] {
                out.push(Instance::synthetic(dim, grain, dsize));
            }
        }
    }
    for dim in [200, 700, 1500] {
        out.push(Instance::of(crate::tune::App::Lcs, dim));
    }
    for dim in [150, 400, 800] {
        out.push(Instance::of(crate::tune::App::Sw, dim));
    }
    out
}

/// Held-out 3D instances, disjoint from [`crate::tune::training_instances_3d`]: sides and
/// grains of the 3D synthetic kernel between the training points.
pub fn held_out_instances_3d() -> Vec<Instance> {
    let mut out = Vec::new();
    for dim in [12, 20, 40] {
        for grain in [3, 24] {
            out.push(Instance { app: crate::tune::App::Synthetic3, dim, grain, dsize: 0 });
        }
    }
    out
}

/// One held-out instance.
#[derive(Debug, Clone, PartialEq)]
pub struct EvalRow {
    /// The instance.
    pub instance: Instance,
    /// Its features.
    pub features: Features,
    /// The exhaustive search's best configuration (the fastest of its best few, re-measured).
    pub best: Candidate,
    /// The predicted configuration.
    pub tuned: Candidate,
    /// Re-measured time of the best (ms).
    pub t_best_ms: f64,
    /// Re-measured time of the prediction (ms).
    pub t_tuned_ms: f64,
    /// The sequential reference (ms).
    pub t_seq_ms: f64,
    /// The untuned all-cores configuration (ms).
    pub t_cpu_ms: f64,
    /// Re-measured only (NaN from the log): the 25th, 50th and 75th percentiles over the
    /// rounds of `100 T_best / T_tuned` within one round, how much the score moves with noise.
    pub paired_pct: [f64; 3],
    /// Re-measured only (empty from the log): `100 T_best / T_tuned` within each round, the
    /// values behind [`EvalRow::paired_pct`] (kept so that passes can be [`pooled`]).
    pub rounds_pct: Vec<f64>,
}

impl EvalRow {
    /// `100 T_best / T_tuned`.
    pub fn pct_of_best(&self) -> f64 {
        100.0 * self.t_best_ms / self.t_tuned_ms
    }

    /// `T_seq / T_tuned`.
    pub fn speedup_over_sequential(&self) -> f64 {
        self.t_seq_ms / self.t_tuned_ms
    }

    /// `T_untuned_cpu / T_tuned`.
    pub fn speedup_over_untuned_cpu(&self) -> f64 {
        self.t_cpu_ms / self.t_tuned_ms
    }
}

/// Configurations of the search re-measured as contenders for the best.
pub const BEST_RECHECKED: usize = 5;

/// The timed configurations of `inst` in `records`, fastest first (ties by configuration).
fn timed_of<'a>(records: &'a [Record], inst: &Instance) -> Result<Vec<&'a Record>> {
    let mut timed: Vec<&Record> =
        records.iter().filter(|r| r.instance == *inst && r.time_ms.is_some()).collect();
    timed.sort_by(|a, b| {
        let t = |r: &Record| r.time_ms.unwrap_or(f64::INFINITY);
        t(a).total_cmp(&t(b)).then(a.candidate.cmp(&b.candidate))
    });
    if timed.is_empty() {
        return Err(WavefrontError::Tune(format!("{inst}: no timed configuration to compare with")));
    }
    Ok(timed)
}

/// The `q`-quantile of `xs` (linear between order statistics); NaN for none.
fn quantile(xs: &[f64], q: f64) -> f64 {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| !x.is_nan()).collect();
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let pos = q.clamp(0.0, 1.0) * (v.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    v[lo] + (v[hi] - v[lo]) * (pos - lo as f64)
}

/// The 25th, 50th and 75th percentiles of `xs`.
fn quartiles(xs: &[f64]) -> [f64; 3] {
    [0.25, 0.5, 0.75].map(|q| quantile(xs, q))
}

/// Several re-timing passes of one predictor as one: per instance, every configuration keeps
/// its fastest round over all the passes (the statistic of one pass, over more rounds), so
/// `T_best` is the fastest contender of any pass and `T_tuned` the prediction's fastest round
/// of any pass. Both sides get the same extra rounds, so a prediction that is slower in every
/// pass keeps its loss, while a state that slowed one configuration for a whole pass (the
/// passes of sub-0.1-ms instances on the 2-vCPU VM disagreed by up to 30 points, issue 21) no
/// longer decides its score. The per-round spread is that of all the passes' rounds.
///
/// # Errors
/// No pass, passes of different lengths, or passes whose rows differ in instance or prediction.
pub fn pooled(passes: &[Vec<EvalRow>]) -> Result<Vec<EvalRow>> {
    let first = passes.first().ok_or_else(|| WavefrontError::Tune("no re-timing pass to pool".into()))?;
    if passes.iter().any(|p| p.len() != first.len()) {
        return Err(WavefrontError::Tune("the re-timing passes differ in length".into()));
    }
    let mut out = Vec::with_capacity(first.len());
    for (i, row) in first.iter().enumerate() {
        let mut acc = row.clone();
        for pass in &passes[1..] {
            let r = pass.get(i).filter(|r| r.instance == row.instance && r.tuned == row.tuned).ok_or_else(
                || {
                    WavefrontError::Tune(format!(
                        "{}: the re-timing passes do not match row for row",
                        row.instance
                    ))
                },
            )?;
            if r.t_best_ms < acc.t_best_ms {
                (acc.best, acc.t_best_ms) = (r.best, r.t_best_ms);
            }
            acc.t_tuned_ms = acc.t_tuned_ms.min(r.t_tuned_ms);
            acc.t_seq_ms = acc.t_seq_ms.min(r.t_seq_ms);
            acc.t_cpu_ms = acc.t_cpu_ms.min(r.t_cpu_ms);
            acc.rounds_pct.extend(&r.rounds_pct);
        }
        acc.paired_pct = quartiles(&acc.rounds_pct);
        out.push(acc);
    }
    Ok(out)
}

/// [`evaluate`] for one predictor.
///
/// # Errors
/// As [`evaluate_many`].
pub fn evaluate(
    records: &[Record],
    instances: &[Instance],
    tuned: &dyn Fn(&Features) -> Candidate,
    eval: &mut dyn Evaluate,
    timing: &Retiming,
) -> Result<Vec<EvalRow>> {
    Ok(evaluate_many(records, instances, &[tuned], eval, timing)?.remove(0))
}

/// Re-measures, for every instance in `instances`, the search's [`BEST_RECHECKED`] best
/// configurations, every predictor's configuration, the sequential reference and the untuned
/// baseline, all in the same rounds (see [`Retiming`]), and scores each predictor: one row per
/// instance, one list per predictor.
///
/// Every configuration's time is its fastest round, the statistic of the search's log
/// (interference only adds time). `T_best` is the fastest of the re-measured search
/// configurations and the predictions (each a point of the searched space), so a prediction
/// equal to the best scores exactly 100 % and none scores more. [`EvalRow::paired_pct`] gives
/// the spread: the quartiles over the rounds of `T_best / T_tuned` within one round.
///
/// # Errors
/// An instance with no timed configuration in `records`, or the evaluator's errors (a
/// configuration that fails to run here is an error too).
pub fn evaluate_many(
    records: &[Record],
    instances: &[Instance],
    tuned: &[&dyn Fn(&Features) -> Candidate],
    eval: &mut dyn Evaluate,
    timing: &Retiming,
) -> Result<Vec<Vec<EvalRow>>> {
    let mut out = vec![Vec::new(); tuned.len()];
    for inst in instances {
        let timed = timed_of(records, inst)?;
        let features = timed[0].features;
        let fastest = timed[0].time_ms.unwrap_or(f64::NAN);
        let predicted: Vec<Candidate> = tuned.iter().map(|t| t(&features)).collect();
        let seq = Candidate::cpu(false, inst.dim.max(1));
        let cpu = Candidate::cpu(true, UNTUNED_TILE.min(inst.dim.max(1)));
        let mut contenders: Vec<Candidate> = timed.iter().take(BEST_RECHECKED).map(|r| r.candidate).collect();
        contenders.extend(&predicted);
        let mut cands = contenders.clone();
        cands.extend([seq, cpu]);
        cands.sort();
        cands.dedup();
        let batch = timing.batch_runs(fastest);
        let times = remeasure(inst, &cands, eval, batch, timing.rounds(fastest, batch))?;
        let m = |c: &Candidate| fastest_of(&times[c]);
        let best = contenders.iter().copied().min_by(|a, b| m(a).total_cmp(&m(b)).then(a.cmp(b)));
        let best = best.expect("the log has a timed configuration, a contender");
        for (rows, tuned_c) in out.iter_mut().zip(predicted) {
            let paired: Vec<f64> =
                times[&best].iter().zip(&times[&tuned_c]).map(|(b, t)| 100.0 * b / t).collect();
            rows.push(EvalRow {
                instance: *inst,
                features,
                best,
                tuned: tuned_c,
                t_best_ms: m(&best),
                t_tuned_ms: m(&tuned_c),
                t_seq_ms: m(&seq),
                t_cpu_ms: m(&cpu),
                paired_pct: quartiles(&paired),
                rounds_pct: paired,
            });
        }
    }
    Ok(out)
}

/// The same comparison from the exhaustive search's log alone: `T_tuned` is the logged time
/// of the prediction (a legal configuration, so the search timed it), `T_best` the log's
/// fastest, both measured by the search in the same way. Needs no machine time; the
/// sequential reference is not a searched configuration, so `t_seq_ms` is NaN.
///
/// # Errors
/// An instance with no timed configuration in `records`, or a prediction the log does not
/// hold (a capped or failed configuration, or one outside the searched space).
pub fn from_log(
    records: &[Record],
    instances: &[Instance],
    tuned: &dyn Fn(&Features) -> Candidate,
) -> Result<Vec<EvalRow>> {
    let mut out = Vec::new();
    for inst in instances {
        let timed = timed_of(records, inst)?;
        let features = timed[0].features;
        let tuned_c = tuned(&features);
        let time_of = |c: &Candidate| timed.iter().find(|r| r.candidate == *c).and_then(|r| r.time_ms);
        let t_tuned_ms = time_of(&tuned_c).ok_or_else(|| {
            WavefrontError::Tune(format!("{inst}: the search log has no time for {tuned_c}"))
        })?;
        let cpu = Candidate::cpu(true, UNTUNED_TILE.min(inst.dim.max(1)));
        out.push(EvalRow {
            instance: *inst,
            features,
            best: timed[0].candidate,
            tuned: tuned_c,
            t_best_ms: timed[0].time_ms.unwrap_or(f64::NAN),
            t_tuned_ms,
            t_seq_ms: f64::NAN,
            t_cpu_ms: time_of(&cpu).unwrap_or(f64::NAN),
            paired_pct: [f64::NAN; 3],
            rounds_pct: Vec::new(),
        });
    }
    Ok(out)
}

/// Mean and minimum of `f` over `rows` (NaN for none).
pub fn mean_min(rows: &[EvalRow], f: impl Fn(&EvalRow) -> f64) -> (f64, f64) {
    let v: Vec<f64> = rows.iter().map(f).collect();
    if v.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    (v.iter().sum::<f64>() / v.len() as f64, v.iter().copied().fold(f64::INFINITY, f64::min))
}

/// The evaluation as a Markdown table, one row per instance, then mean and minimum.
pub fn markdown(rows: &[EvalRow]) -> String {
    let mut s = String::from(
        "| instance | dim | tsize | dsize | best | tuned | T_best ms | T_tuned ms | % of best | x seq | x untuned cpu |\n|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        let _ = writeln!(
            s,
            "| {} | {} | {:.2} | {} | {} | {} | {:.3} | {:.3} | {:.1} | {} | {} |",
            r.instance,
            r.features.dim,
            r.features.tsize,
            r.features.dsize,
            r.best,
            r.tuned,
            r.t_best_ms,
            r.t_tuned_ms,
            r.pct_of_best(),
            ratio(r.speedup_over_sequential()),
            ratio(r.speedup_over_untuned_cpu())
        );
    }
    let (mean, min) = mean_min(rows, EvalRow::pct_of_best);
    let (sseq, _) = mean_min(rows, EvalRow::speedup_over_sequential);
    let (scpu, _) = mean_min(rows, EvalRow::speedup_over_untuned_cpu);
    let (sseq, scpu) = (ratio(sseq), ratio(scpu));
    let _ = writeln!(s, "| **mean** | | | | | | | | **{mean:.1}** (min {min:.1}) | {sseq} | {scpu} |");
    s
}

/// One predictor's scores side by side, per instance: from the log, then every re-timing pass
/// (its best, % of best, and the quartiles of the per-round score), so a loss that every pass
/// repeats stands apart from one that moves with noise, and, with more than one pass, the
/// passes [`pooled`]. `passes[k][i]` and `log[i]` must be the same instance.
pub fn passes_markdown(log: &[EvalRow], passes: &[Vec<EvalRow>]) -> String {
    let mut columns: Vec<(String, &[EvalRow])> =
        passes.iter().enumerate().map(|(k, p)| (format!("pass {}", k + 1), p.as_slice())).collect();
    let pool = if passes.len() > 1 { pooled(passes).ok() } else { None };
    if let Some(p) = &pool {
        columns.push(("pooled".into(), p.as_slice()));
    }
    let mut s = String::from("| instance | tuned | log: best | log % |");
    let mut rule = String::from("|---|---|---|---|");
    for (name, _) in &columns {
        let _ = write!(s, " {name}: best | % | rounds p25-p75 |");
        rule.push_str("---|---|---|");
    }
    let _ = write!(s, "\n{rule}\n");
    for (i, l) in log.iter().enumerate() {
        let _ = write!(s, "| {} | {} | {} | {:.1} |", l.instance, l.tuned, l.best, l.pct_of_best());
        for (_, p) in &columns {
            match p.get(i) {
                Some(r) => {
                    let _ = write!(
                        s,
                        " {} | {:.1} | {:.0}-{:.0} |",
                        r.best,
                        r.pct_of_best(),
                        r.paired_pct[0],
                        r.paired_pct[2]
                    );
                }
                None => s.push_str(" | | |"),
            }
        }
        s.push('\n');
    }
    let (lm, ln) = mean_min(log, EvalRow::pct_of_best);
    let _ = write!(s, "| **mean** (min) | | | {lm:.1} ({ln:.1}) |");
    for (_, p) in &columns {
        let (m, n) = mean_min(p, EvalRow::pct_of_best);
        let _ = write!(s, " | {m:.1} ({n:.1}) | |");
    }
    s.push('\n');
    s
}

/// A speed-up with two decimals, or `-` where it was not measured (NaN).
fn ratio(v: f64) -> String {
    if v.is_finite() { format!("{v:.2}") } else { "-".into() }
}

/// How much one parameter value costs: over the instances where it was timed, the mean and
/// minimum of `T_best / T_best with this value` (100 % where the value is in the best
/// configuration).
#[derive(Debug, Clone, PartialEq)]
pub struct Sensitivity {
    /// `"executor"` (tiled or parallel) or `"tile"`.
    pub parameter: &'static str,
    /// The value.
    pub value: String,
    /// Mean % of the best reachable with this value.
    pub mean_pct: f64,
    /// Worst case over the instances.
    pub min_pct: f64,
    /// Instances where the value was timed.
    pub instances: usize,
}

/// The sensitivity of every parameter value over the instances in `records`.
pub fn sensitivity(records: &[Record]) -> Vec<Sensitivity> {
    let mut per: BTreeMap<Instance, Vec<(Candidate, f64)>> = BTreeMap::new();
    for r in records {
        if let Some(t) = r.time_ms {
            per.entry(r.instance).or_default().push((r.candidate, t));
        }
    }
    let key = |p: &'static str, c: &Candidate| match p {
        "executor" => (if c.parallel { "parallel" } else { "tiled" }).to_string(),
        _ => format!("{:>3}", c.tile),
    };
    let mut acc: BTreeMap<(&'static str, String), Vec<f64>> = BTreeMap::new();
    for rs in per.values() {
        let best = rs.iter().map(|x| x.1).fold(f64::INFINITY, f64::min);
        for p in ["executor", "tile"] {
            let mut by_value: BTreeMap<String, f64> = BTreeMap::new();
            for (c, t) in rs {
                let e = by_value.entry(key(p, c)).or_insert(f64::INFINITY);
                *e = e.min(*t);
            }
            for (v, t) in by_value {
                acc.entry((p, v)).or_default().push(100.0 * best / t);
            }
        }
    }
    acc.into_iter()
        .map(|((parameter, value), v)| Sensitivity {
            parameter,
            value: value.trim().to_string(),
            mean_pct: v.iter().sum::<f64>() / v.len() as f64,
            min_pct: v.iter().copied().fold(f64::INFINITY, f64::min),
            instances: v.len(),
        })
        .collect()
}

/// Per instance: best/worst and best/median over its timed configurations (how much a wrong
/// choice costs; the thesis's violin plots).
pub fn spread(records: &[Record]) -> Vec<(Instance, f64, f64)> {
    let mut per: BTreeMap<Instance, Vec<f64>> = BTreeMap::new();
    for r in records {
        if let Some(t) = r.time_ms {
            per.entry(r.instance).or_default().push(t);
        }
    }
    per.into_iter()
        .map(|(i, ts)| {
            let best = ts.iter().copied().fold(f64::INFINITY, f64::min);
            let worst = ts.iter().copied().fold(0.0, f64::max);
            (i, worst / best, median(&ts) / best)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A deterministic machine: time = 1 + tile penalty.
    struct Det;
    impl Evaluate for Det {
        fn features(&mut self, i: &Instance) -> Result<Features> {
            Ok(Features::new(i.dim, 1.0, 1))
        }
        fn run(&mut self, _: &Instance, c: &Candidate) -> Result<std::result::Result<Duration, String>> {
            let ms = 1.0 + (c.tile as f64 / 16.0).log2().abs() + if c.parallel { 0.0 } else { 1.0 };
            Ok(Ok(Duration::from_secs_f64(ms / 1e3)))
        }
    }

    fn records(inst: Instance) -> Vec<Record> {
        let mut det = Det;
        crate::tune::space::candidates(inst.dim, &Default::default())
            .into_iter()
            .map(|c| {
                let t = det.run(&inst, &c).unwrap().unwrap().as_secs_f64() * 1e3;
                Record {
                    instance: inst,
                    features: Features::new(inst.dim, 1.0, 1),
                    candidate: c,
                    times_ms: vec![t],
                    time_ms: Some(t),
                    failure: None,
                    refined: false,
                }
            })
            .collect()
    }

    #[test]
    fn percent_of_best_and_speedups() {
        let inst = Instance::synthetic(64, 1, 1);
        let recs = records(inst);
        let exact = evaluate(&recs, &[inst], &|_| Candidate::cpu(true, 16), &mut Det, &few(3)).unwrap();
        assert_eq!(exact[0].best, Candidate::cpu(true, 16));
        assert!((exact[0].pct_of_best() - 100.0).abs() < 1e-9);
        assert_eq!(exact[0].paired_pct, [100.0; 3]);
        let off = evaluate(&recs, &[inst], &|_| Candidate::cpu(true, 4), &mut Det, &few(1)).unwrap();
        // tile 4 costs 1 + 2 ms against 1 ms: 33.3 %; sequential (tile 64, tiled) 1 + 2 + 1.
        assert!((off[0].pct_of_best() - 100.0 / 3.0).abs() < 1e-6, "{off:?}");
        assert!((off[0].speedup_over_sequential() - 4.0 / 3.0).abs() < 1e-6);
        assert!((off[0].speedup_over_untuned_cpu() - 2.0 / 3.0).abs() < 1e-6);
        assert!(off[0].paired_pct.iter().all(|p| (p - 100.0 / 3.0).abs() < 1e-6));
        // A search whose best was a lucky run: re-measuring its best few finds the real best.
        let mut lucky = recs.clone();
        lucky
            .iter_mut()
            .filter(|r| r.candidate == Candidate::cpu(true, 32))
            .for_each(|r| r.time_ms = Some(0.1));
        let fixed = evaluate(&lucky, &[inst], &|_| Candidate::cpu(true, 16), &mut Det, &few(2)).unwrap();
        assert_eq!(fixed[0].best, Candidate::cpu(true, 16));
        assert!((fixed[0].pct_of_best() - 100.0).abs() < 1e-9);
        let (mean, min) = mean_min(&[exact[0].clone(), off[0].clone()], EvalRow::pct_of_best);
        assert!((mean - (100.0 + 100.0 / 3.0) / 2.0).abs() < 1e-6 && (min - 100.0 / 3.0).abs() < 1e-6);
        assert!(markdown(&off).contains("33.3"));
        assert!(
            evaluate(&recs, &[Instance::synthetic(9, 1, 1)], &|_| Candidate::cpu(true, 1), &mut Det, &few(1))
                .is_err()
        );
    }

    #[test]
    fn from_log_scores_the_logged_times() {
        let inst = Instance::synthetic(64, 1, 1);
        let recs = records(inst);
        // The log: parallel tile 16 at 1 ms is the best; parallel tile 4 takes 3 ms, tile 8 2 ms.
        let rows = from_log(&recs, &[inst], &|_| Candidate::cpu(true, 4)).unwrap();
        assert_eq!(rows[0].best, Candidate::cpu(true, 16));
        assert!((rows[0].pct_of_best() - 100.0 / 3.0).abs() < 1e-9, "{rows:?}");
        assert!((rows[0].speedup_over_untuned_cpu() - 2.0 / 3.0).abs() < 1e-9);
        assert!(rows[0].t_seq_ms.is_nan());
        assert!(markdown(&rows).contains("| 33.3 | - | 0.67 |"), "{}", markdown(&rows));
        let exact = from_log(&recs, &[inst], &|_| Candidate::cpu(true, 16)).unwrap();
        assert_eq!(exact[0].pct_of_best(), 100.0);
        // A prediction the search did not time is an error, not a guess.
        assert!(from_log(&recs, &[inst], &|_| Candidate::cpu(true, 128)).is_err());
        assert!(from_log(&recs, &[Instance::synthetic(9, 1, 1)], &|_| Candidate::cpu(true, 1)).is_err());
    }

    /// Exactly `rounds` rounds of single runs.
    fn few(rounds: usize) -> Retiming {
        Retiming { min_batch_ms: 0.0, min_total_ms: 0.0, min_rounds: rounds, max_rounds: rounds }
    }

    /// A machine whose runs take 10 us (parallel tile 16) or 20 us, counting them; every `slow_every`-th
    /// run of each configuration (the first included) takes 1 ms, as a descheduled thread would.
    struct Tiny {
        runs: usize,
        per: BTreeMap<Candidate, usize>,
        slow_every: usize,
    }
    impl Evaluate for Tiny {
        fn features(&mut self, i: &Instance) -> Result<Features> {
            Ok(Features::new(i.dim, 1.0, 1))
        }
        fn run(&mut self, _: &Instance, c: &Candidate) -> Result<std::result::Result<Duration, String>> {
            self.runs += 1;
            let k = self.per.entry(*c).or_default();
            *k += 1;
            let us = if (*k - 1).is_multiple_of(self.slow_every) {
                1000
            } else if c.tile == 16 && c.parallel {
                10
            } else {
                20
            };
            Ok(Ok(Duration::from_micros(us)))
        }
    }

    #[test]
    fn batches_and_rounds_grow_for_short_runs() {
        let t = Retiming::default();
        assert_eq!(
            (t.batch_runs(0.01), t.batch_runs(5.0), t.batch_runs(f64::NAN), t.batch_runs(0.0)),
            (200, 1, 1, 1)
        );
        assert_eq!(t.rounds(0.01, 200), 20, "40 ms in batches of 2 ms");
        assert_eq!((t.rounds(5.0, 1), t.rounds(f64::NAN, 1)), (9, 9), "at least 9 rounds");
        assert_eq!(t.rounds(1e-6, 1), 200, "at most 200");
        assert!((quantile(&[4.0, 1.0, 3.0, 2.0], 0.5) - 2.5).abs() < 1e-12);
        assert_eq!((quantile(&[5.0], 0.25), quantile(&[1.0, 3.0], 0.75)), (5.0, 2.5));
        assert!(quantile(&[], 0.5).is_nan());
    }

    /// Microsecond instances are re-measured in batches over many rounds after a warm-up batch;
    /// the first (cold) run of every configuration never counts, and the per-run time comes
    /// out unchanged.
    #[test]
    fn short_runs_are_timed_in_warmed_up_batches() {
        let inst = Instance::synthetic(64, 1, 1);
        let mut recs = records(inst);
        recs.iter_mut().for_each(|r| r.time_ms = r.time_ms.map(|t| t / 100.0)); // 10 us and up
        let mut tiny = Tiny { runs: 0, per: BTreeMap::new(), slow_every: usize::MAX };
        let timing = Retiming { min_batch_ms: 0.095, min_total_ms: 0.95, min_rounds: 2, max_rounds: 100 };
        let rows = evaluate(&recs, &[inst], &|_| Candidate::cpu(true, 16), &mut tiny, &timing).unwrap();
        // Contenders: the log's best five (parallel 8, 10, 16, 32 and tiled 16), plus tiled 64
        // (sequential); batches of 10 runs, 10 rounds (about 1 ms at 10 us a run), one warm-up batch.
        assert_eq!(tiny.runs, 6 * (10 + 1) * 10);
        assert!((rows[0].t_tuned_ms - 0.01).abs() < 1e-9 && (rows[0].t_seq_ms - 0.02).abs() < 1e-9);
        assert_eq!(rows[0].pct_of_best(), 100.0);
    }

    /// Slow rounds (a descheduled thread) lengthen some timings: the fastest round is kept for
    /// both sides, so the score stays that of the machine, and the paired spread shows the noise.
    #[test]
    fn slow_rounds_do_not_decide_the_score() {
        let inst = Instance::synthetic(64, 1, 1);
        let recs = records(inst);
        let mut tiny = Tiny { runs: 0, per: BTreeMap::new(), slow_every: 4 };
        let rows = evaluate_many(
            &recs,
            &[inst],
            &[&|_| Candidate::cpu(true, 32), &|_| Candidate::cpu(true, 16)],
            &mut tiny,
            &few(12),
        )
        .unwrap();
        assert_eq!(rows.len(), 2);
        assert!((rows[0][0].pct_of_best() - 50.0).abs() < 1e-9, "{:?}", rows[0][0]);
        assert_eq!(rows[1][0].pct_of_best(), 100.0);
        assert_eq!(rows[0][0].best, Candidate::cpu(true, 16));
        let [p25, p50, p75] = rows[0][0].paired_pct;
        assert!(p25 <= p50 && p50 <= p75 && (p50 - 50.0).abs() < 1e-9, "{:?}", rows[0][0].paired_pct);
    }

    /// A machine like `Det` whose configuration `slow` takes `factor` times longer.
    struct Slowed {
        slow: Candidate,
        factor: f64,
    }
    impl Evaluate for Slowed {
        fn features(&mut self, i: &Instance) -> Result<Features> {
            Det.features(i)
        }
        fn run(&mut self, i: &Instance, c: &Candidate) -> Result<std::result::Result<Duration, String>> {
            let t = Det.run(i, c)?.unwrap().as_secs_f64();
            Ok(Ok(Duration::from_secs_f64(if *c == self.slow { t * self.factor } else { t })))
        }
    }

    /// Pooling keeps each configuration's fastest round of any pass: a prediction slowed for one
    /// whole pass scores as in the other, a prediction slower in every pass keeps its loss, and
    /// rows that do not match are an error.
    #[test]
    fn pooled_passes_keep_the_fastest_round_of_each_side() {
        let inst = Instance::synthetic(64, 1, 1);
        let recs = records(inst);
        let best = Candidate::cpu(true, 16);
        let pass = |slow: Candidate, factor: f64, tuned: Candidate| {
            evaluate(&recs, &[inst], &move |_| tuned, &mut Slowed { slow, factor }, &few(3)).unwrap()
        };
        // Pass 1: the prediction (the best, 1 ms) slowed to 3 ms for the whole pass, so parallel
        // tiles of 10 (1 + log2 1.6 ms) win it; pass 2: nothing slowed.
        let (p1, p2) = (pass(best, 3.0, best), pass(best, 1.0, best));
        let lost = 100.0 * (1.0 + 1.6f64.log2()) / 3.0;
        assert_eq!(p1[0].best, Candidate::cpu(true, 10));
        assert!((p1[0].pct_of_best() - lost).abs() < 1e-4, "{p1:?}");
        let pool = pooled(&[p1.clone(), p2.clone()]).unwrap();
        assert_eq!((pool[0].best, pool[0].pct_of_best()), (best, 100.0));
        assert_eq!(pool[0].rounds_pct.len(), p1[0].rounds_pct.len() + p2[0].rounds_pct.len());
        assert!((pool[0].paired_pct[0] - lost).abs() < 1e-4 && pool[0].paired_pct[2] == 100.0);
        // A prediction of parallel tile 4 (3 ms against 1 ms) slowed 1.5x in one pass: 33.3 % pooled.
        let off = Candidate::cpu(true, 4);
        let pool = pooled(&[pass(off, 1.5, off), pass(off, 1.0, off)]).unwrap();
        assert!((pool[0].pct_of_best() - 100.0 / 3.0).abs() < 1e-6, "{pool:?}");
        assert!(markdown(&pool).contains("33.3"));
        // Mismatched rows, different lengths or no pass at all are errors.
        assert!(pooled(&[p2.clone(), pass(off, 1.0, off)]).is_err());
        assert!(pooled(&[p2.clone(), Vec::new()]).is_err());
        assert!(pooled(&[]).is_err());
        assert_eq!(pooled(std::slice::from_ref(&p2)).unwrap(), p2);
        assert!(passes_markdown(&p2, &[p2.clone(), p2.clone()]).contains("pooled: best"));
    }

    #[test]
    fn held_out_instances_are_not_training_instances() {
        let train = crate::tune::training_instances_2d();
        let held = held_out_instances();
        assert!(held.iter().all(|h| !train.contains(h)));
        assert!(
            held.iter().any(|h| h.app == crate::tune::App::Lcs)
                && held.iter().any(|h| h.app == crate::tune::App::Sw)
        );
        let train3 = crate::tune::training_instances_3d();
        let held3 = held_out_instances_3d();
        assert!(!held3.is_empty() && held3.iter().all(|h| !train3.contains(h)));
        assert!(held3.iter().all(|h| h.app == crate::tune::App::Synthetic3));
    }

    #[test]
    fn sensitivity_and_spread() {
        let recs = records(Instance::synthetic(64, 1, 1));
        let s = sensitivity(&recs);
        let get = |p: &str, v: &str| s.iter().find(|x| x.parameter == p && x.value == v).unwrap().mean_pct;
        assert!((get("executor", "parallel") - 100.0).abs() < 1e-9);
        assert!((get("executor", "tiled") - 50.0).abs() < 1e-9);
        assert!((get("tile", "16") - 100.0).abs() < 1e-9);
        assert!((get("tile", "64") - 100.0 / 3.0).abs() < 1e-9);
        let sp = spread(&recs);
        assert_eq!(sp.len(), 1);
        // worst: tile 1 tiled = 1 + 4 + 1 = 6 ms.
        assert!((sp[0].1 - 6.0).abs() < 1e-9);
    }
}
