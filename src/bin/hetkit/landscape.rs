//! `hetkit tune landscape`: brute force of a CPU kernel's space through the real evaluation
//! loop ([`Bench`]: apply, warm-up, timed runs, median, verification), written as a Kernel Tuner
//! cache file. These are the CPU landscapes of the replay benchmark (`benches/peers/tuning`).
//!
//! The parameters are applied by this harness around the kernels' public entry points (batch
//! sizes, thread pools, layouts, solver choice); wiring the same spaces into the kernels'
//! dispatchers is the kernels' own work.

use std::path::Path;

use hetero_sched::tune::{
    Bench, Budget, Config, CpuClock, Kernel, KtFile, Measurement, Param, Space, TuneError, Value, run,
    strategy,
};
use indicatif::{ProgressBar, ProgressStyle};
use ndarray::Array2;
use prefix_ops::scan::{Add, single};
use prefix_ops::tridiagonal::{Layout, Solver, TridiagonalBatch};
use rand::{Rng, SeedableRng};
use rayon::prelude::*;
use sg_core::{Grid, GridSpec};
use sg_cpu::{EvalVariant, Evaluator};

type Error = Box<dyn std::error::Error + Send + Sync>;

/// Brute-forces `kernel`'s space into `out`.
pub(crate) fn run_landscape(kernel: &str, out: &Path, runs: usize) -> Result<(), Error> {
    let settings = Measurement { warmup: 1, runs: runs.max(1) };
    let (log, space, problem) = match kernel {
        "sg_eval" => {
            let space = sg_eval_space()?;
            (brute(&space, SgEval::new()?, settings)?, space, "d4 n7, 16384 points, f64")
        }
        "scan" => {
            let space = scan_space()?;
            (brute(&space, Scan::new(), settings)?, space, "2^21 u64")
        }
        "tridiagonal" => {
            let space = tridiagonal_space()?;
            (brute(&space, Tridiagonal::new(), settings)?, space, "2048 systems of 256, f64")
        }
        other => return Err(format!("unknown kernel `{other}` (known: sg_eval, scan, tridiagonal)").into()),
    };
    let file = KtFile {
        device_name: hetero_sched::tune::Fingerprint::cpu().as_str().to_owned(),
        kernel_name: kernel.to_owned(),
        problem_size: serde_json::json!(problem),
        params: space.params().iter().map(|p| (p.name().to_owned(), p.values().to_vec())).collect(),
        entries: log.iter().map(|m| m.to_entry()).collect(),
        extra: [("objective".to_owned(), serde_json::json!("time"))].into_iter().collect(),
    };
    file.write(out)?;
    let ok = log.iter().filter(|m| m.outcome.time().is_some()).count();
    println!("{}: {} configurations ({} failed)", out.display(), log.len(), log.len() - ok);
    Ok(())
}

fn brute<K: Kernel>(
    space: &Space,
    kernel: K,
    settings: Measurement,
) -> Result<Vec<hetero_sched::tune::Measured>, TuneError> {
    let n = space.count_valid();
    let pb = ProgressBar::new(n);
    pb.set_style(
        ProgressStyle::with_template("brute force [{bar:30}] {pos}/{len} configs {elapsed} (eta {eta})")
            .map(|s| s.progress_chars("=> "))
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut bench = Bench::new(space, Progress { inner: kernel, pb: pb.clone() }, CpuClock, settings);
    let mut brute = strategy::by_name("brute_force")?;
    run(brute.as_mut(), space, &mut bench, Budget::evals(n.max(1)), 0)?;
    pb.finish_and_clear();
    Ok(bench.into_parts().1)
}

/// Advances the progress bar on every configuration applied.
pub(crate) struct Progress<K> {
    pub(crate) inner: K,
    pub(crate) pb: ProgressBar,
}

impl<K: Kernel> Kernel for Progress<K> {
    type Output = K::Output;
    fn apply(&mut self, c: &Config) -> Result<(), String> {
        self.pb.inc(1);
        self.inner.apply(c)
    }
    fn run(&mut self) -> Result<K::Output, String> {
        self.inner.run()
    }
    fn verify(&mut self, o: &K::Output) -> Result<(), String> {
        self.inner.verify(o)
    }
}

fn pool(threads: i64) -> Result<rayon::ThreadPool, String> {
    rayon::ThreadPoolBuilder::new().num_threads(threads.max(1) as usize).build().map_err(|e| e.to_string())
}

fn int(c: &Config, k: &str) -> Result<i64, String> {
    c.int(k).ok_or_else(|| format!("missing integer parameter {k}"))
}

fn name<'c>(c: &'c Config, k: &str) -> Result<&'c str, String> {
    c.get(k).and_then(Value::as_str).ok_or_else(|| format!("missing name parameter {k}"))
}

// --- sg-cpu evaluation -------------------------------------------------------------------

fn sg_eval_space() -> Result<Space, TuneError> {
    Space::builder()
        .param(Param::names("variant", &["point_tiles", "blocks_parallel"]))
        .param(Param::range("batch", 256, 16384, 256))
        .param(Param::ints("threads", &[1, 2]))
        .param(Param::boolean("sorted"))
        .build()
}

struct SgEval {
    ev: Evaluator,
    grid: Grid<f64>,
    points: Array2<f64>,
    sorted: Array2<f64>,
    reference: Vec<f64>,
    reference_sorted: Vec<f64>,
    cfg: Option<(EvalVariant, usize, rayon::ThreadPool, bool)>,
}

impl SgEval {
    fn new() -> Result<Self, Error> {
        let (d, n, m) = (4, 7, 16384);
        let spec = GridSpec::regular(d, n)?;
        let mut grid =
            Grid::from_fn(spec.clone(), |x: &[f64]| x.iter().map(|&v| 4.0 * v * (1.0 - v)).product())?;
        grid.hierarchize();
        let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let points = Array2::from_shape_fn((m, d), |_| r.random_range(0.0..1.0));
        let mut rows: Vec<Vec<f64>> = points.rows().into_iter().map(|r| r.to_vec()).collect();
        rows.sort_by(|a, b| {
            a.iter()
                .zip(b)
                .map(|(x, y)| x.total_cmp(y))
                .find(|o| o.is_ne())
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        let sorted = Array2::from_shape_fn((m, d), |(i, k)| rows[i][k]);
        let ev = Evaluator::new(&spec)?;
        // One reference per point order (the sum order per point is fixed, so they agree).
        let reference = ev.evaluate_with(EvalVariant::PointTiles, grid.values(), 1, points.view())?;
        let reference_sorted = ev.evaluate_with(EvalVariant::PointTiles, grid.values(), 1, sorted.view())?;
        Ok(SgEval { ev, grid, points, sorted, reference, reference_sorted, cfg: None })
    }
}

impl Kernel for SgEval {
    type Output = Vec<f64>;

    fn apply(&mut self, c: &Config) -> Result<(), String> {
        let variant = match name(c, "variant")? {
            "point_tiles" => EvalVariant::PointTiles,
            "blocks_parallel" => EvalVariant::BlocksParallel,
            v => return Err(format!("unknown variant {v}")),
        };
        let sorted = c.get("sorted").and_then(Value::as_bool).ok_or("missing sorted")?;
        self.cfg = Some((variant, int(c, "batch")? as usize, pool(int(c, "threads")?)?, sorted));
        Ok(())
    }

    fn run(&mut self) -> Result<Vec<f64>, String> {
        let (variant, batch, pool, sorted) = self.cfg.as_ref().ok_or("not applied")?;
        let pts = if *sorted { &self.sorted } else { &self.points };
        let mut out = Vec::with_capacity(pts.nrows());
        pool.install(|| {
            for start in (0..pts.nrows()).step_by(*batch) {
                let end = (start + batch).min(pts.nrows());
                let part = pts.slice(ndarray::s![start..end, ..]);
                out.extend(
                    self.ev
                        .evaluate_with(*variant, self.grid.values(), 1, part)
                        .map_err(|e| e.to_string())?,
                );
            }
            Ok::<_, String>(())
        })?;
        Ok(out)
    }

    fn verify(&mut self, out: &Vec<f64>) -> Result<(), String> {
        let sorted = self.cfg.as_ref().is_some_and(|c| c.3);
        close(out, if sorted { &self.reference_sorted } else { &self.reference }, 1e-12)
    }
}

pub(crate) fn close(a: &[f64], b: &[f64], tol: f64) -> Result<(), String> {
    if a.len() != b.len() {
        return Err(format!("length {} != {}", a.len(), b.len()));
    }
    let scale = b.iter().fold(1e-300f64, |m, x| m.max(x.abs()));
    match a
        .iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs() / scale)
        .fold(0.0f64, |m, e| if e.is_nan() { f64::INFINITY } else { m.max(e) })
    {
        e if e <= tol => Ok(()),
        e => Err(format!("relative error {e:.3e} > {tol:.0e}")),
    }
}

// --- chained scan over chunks ---------------------------------------------------------------

fn scan_space() -> Result<Space, TuneError> {
    Space::builder()
        .param(Param::range("chunk", 4096, 262_144, 4096))
        .param(Param::ints("threads", &[1, 2]))
        .param(Param::pow2("min_len", 1, 8))
        .param(Param::names("passes", &["reduce_then_scan", "scan_then_fixup"]))
        .build()
}

struct Scan {
    input: Vec<u64>,
    reference: Vec<u64>,
    buf: Vec<u64>,
    cfg: Option<(usize, rayon::ThreadPool, usize, bool)>,
}

impl Scan {
    fn new() -> Self {
        let n = 1 << 21;
        let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let input: Vec<u64> = (0..n).map(|_| r.random_range(0..1000)).collect();
        let mut reference = input.clone();
        prefix_ops::scan::reference::inclusive(&mut reference, Add);
        Scan { buf: vec![0; n], input, reference, cfg: None }
    }
}

impl Kernel for Scan {
    type Output = ();

    fn apply(&mut self, c: &Config) -> Result<(), String> {
        let two_pass = name(c, "passes")? == "reduce_then_scan";
        self.cfg = Some((
            int(c, "chunk")? as usize,
            pool(int(c, "threads")?)?,
            int(c, "min_len")? as usize,
            two_pass,
        ));
        Ok(())
    }

    fn run(&mut self) -> Result<(), String> {
        let (chunk, pool, min_len, reduce_first) = self.cfg.as_ref().ok_or("not applied")?;
        let (chunk, min_len) = (*chunk, *min_len);
        self.buf.copy_from_slice(&self.input);
        let buf = &mut self.buf;
        pool.install(|| {
            if *reduce_first {
                // Pass 1: chunk sums; carries by a sequential scan; pass 2: scan from the carry.
                let sums: Vec<u64> =
                    buf.par_chunks(chunk).with_min_len(min_len).map(|c| single::reduce(c, Add)).collect();
                let mut carries = Vec::with_capacity(sums.len());
                let mut acc = 0u64;
                for s in sums {
                    carries.push(acc);
                    acc = acc.wrapping_add(s);
                }
                buf.par_chunks_mut(chunk).with_min_len(min_len).zip(carries).for_each(|(c, carry)| {
                    single::inclusive_from(c, carry, Add);
                });
            } else {
                // Pass 1: local scans; carries from the chunk totals; pass 2: add the carry.
                let totals: Vec<u64> = buf
                    .par_chunks_mut(chunk)
                    .with_min_len(min_len)
                    .map(|c| single::inclusive_from(c, 0, Add))
                    .collect();
                let mut carries = Vec::with_capacity(totals.len());
                let mut acc = 0u64;
                for t in totals {
                    carries.push(acc);
                    acc = acc.wrapping_add(t);
                }
                buf.par_chunks_mut(chunk).with_min_len(min_len).zip(carries).for_each(|(c, carry)| {
                    c.iter_mut().for_each(|x| *x = x.wrapping_add(carry));
                });
            }
        });
        Ok(())
    }

    fn verify(&mut self, _: &()) -> Result<(), String> {
        if self.buf == self.reference {
            Ok(())
        } else {
            Err("scan differs from the sequential reference".into())
        }
    }
}

// --- batched tridiagonal solves ---------------------------------------------------------------

fn tridiagonal_space() -> Result<Space, TuneError> {
    Space::builder()
        .param(Param::names(
            "solver",
            &[
                "thomas",
                "thomas_parallel",
                "thomas_lanes",
                "cyclic_reduction",
                "pcr",
                "cr_pcr",
                "wang_mou",
                "tpr",
            ],
        ))
        .param(Param::pow2("sub", 8, 256))
        .param(Param::names("layout", &["strided", "interleaved"]))
        .param(Param::pow2("systems_per_call", 64, 2048))
        .param(Param::ints("threads", &[1, 2]))
        .restrict("sub only for cr_pcr and tpr", |c| {
            matches!(c.get("solver").and_then(Value::as_str), Some("cr_pcr" | "tpr"))
                || c.int("sub") == Some(8)
        })
        .build()
}

struct Chunk {
    a: Vec<f64>,
    b: Vec<f64>,
    c: Vec<f64>,
    d: Vec<f64>,
    x: Vec<f64>,
    systems: usize,
}

struct Tridiagonal {
    m: usize,
    systems: usize,
    a: Vec<f64>,
    b: Vec<f64>,
    c: Vec<f64>,
    d: Vec<f64>,
    reference: Vec<f64>,
    cfg: Option<(Solver, Layout, Vec<Chunk>, rayon::ThreadPool)>,
}

impl Tridiagonal {
    fn new() -> Self {
        let (m, systems) = (256, 2048);
        let n = m * systems;
        let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        let mut a: Vec<f64> = (0..n).map(|_| r.random_range(-1.0..1.0)).collect();
        let mut c: Vec<f64> = (0..n).map(|_| r.random_range(-1.0..1.0)).collect();
        for g in 0..systems {
            a[g * m] = 0.0;
            c[g * m + m - 1] = 0.0;
        }
        // Strictly diagonally dominant: every solver is stable on it.
        let b: Vec<f64> = (0..n).map(|i| a[i].abs() + c[i].abs() + r.random_range(1.0..2.0)).collect();
        let d: Vec<f64> = (0..n).map(|_| r.random_range(-1.0..1.0)).collect();
        let mut reference = d.clone();
        TridiagonalBatch::strided(&a, &b, &c, m)
            .and_then(|t| t.solve_with(Solver::Thomas, &mut reference))
            .expect("the reference system is valid");
        Tridiagonal { m, systems, a, b, c, d, reference, cfg: None }
    }

    fn chunk(&self, first: usize, count: usize, layout: Layout) -> Chunk {
        let m = self.m;
        let take = |v: &[f64]| {
            let mut out = vec![0.0; m * count];
            for g in 0..count {
                for k in 0..m {
                    out[layout.index(m, count, g, k)] = v[(first + g) * m + k];
                }
            }
            out
        };
        Chunk {
            a: take(&self.a),
            b: take(&self.b),
            c: take(&self.c),
            d: take(&self.d),
            x: vec![0.0; m * count],
            systems: count,
        }
    }
}

impl Kernel for Tridiagonal {
    type Output = Vec<f64>;

    fn apply(&mut self, c: &Config) -> Result<(), String> {
        let sub = int(c, "sub")? as usize;
        let solver = match name(c, "solver")? {
            "thomas" => Solver::Thomas,
            "thomas_parallel" => Solver::ThomasParallel,
            "thomas_lanes" => Solver::ThomasLanes,
            "cyclic_reduction" => Solver::CyclicReduction,
            "pcr" => Solver::ParallelCyclicReduction,
            "cr_pcr" => Solver::CrPcr { pcr_size: sub },
            "wang_mou" => Solver::WangMou,
            "tpr" => Solver::Tpr { slice: sub },
            s => return Err(format!("unknown solver {s}")),
        };
        let layout = if name(c, "layout")? == "strided" { Layout::Strided } else { Layout::Interleaved };
        let per = int(c, "systems_per_call")? as usize;
        let chunks = (0..self.systems)
            .step_by(per)
            .map(|g| self.chunk(g, per.min(self.systems - g), layout))
            .collect();
        self.cfg = Some((solver, layout, chunks, pool(int(c, "threads")?)?));
        Ok(())
    }

    fn run(&mut self) -> Result<Vec<f64>, String> {
        let m = self.m;
        let (solver, layout, chunks, pool) = self.cfg.as_mut().ok_or("not applied")?;
        pool.install(|| {
            for ch in chunks.iter_mut() {
                ch.x.copy_from_slice(&ch.d);
                let batch =
                    TridiagonalBatch::new(&ch.a, &ch.b, &ch.c, m, *layout).map_err(|e| e.to_string())?;
                batch.solve_with(*solver, &mut ch.x).map_err(|e| e.to_string())?;
            }
            Ok::<_, String>(())
        })?;
        // Back to one strided vector for verification (outside the timed region would be
        // nicer, but the copy is the same for every configuration of a layout).
        let mut x = vec![0.0; self.reference.len()];
        let mut first = 0;
        for ch in chunks.iter() {
            for g in 0..ch.systems {
                for k in 0..m {
                    x[(first + g) * m + k] = ch.x[layout.index(m, ch.systems, g, k)];
                }
            }
            first += ch.systems;
        }
        Ok(x)
    }

    fn verify(&mut self, x: &Vec<f64>) -> Result<(), String> {
        close(x, &self.reference, 1e-9)
    }
}
