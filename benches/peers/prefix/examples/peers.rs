//! hetkit's CPU sorts and tridiagonal solvers against the Rust peers, on the inputs `gen` writes
//! (the Python peers, numpy and LAPACK gtsv, read the same files: see `peers.py`).
//!
//! ```text
//! peers gen DIR         write the inputs (raw little-endian arrays) into DIR
//! peers run DIR REPS    time every case REPS times, contenders interleaved; one line per run:
//!                       case <TAB> who <TAB> milliseconds [<TAB> scaled residual]
//! ```

use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

use prefix_ops::sort::{self, Order};
use prefix_ops::tridiagonal::{Layout, Solver, TridiagonalBatch};
use rayon::prelude::*;
use voracious_radix_sort::{RadixSort as _, Radixable};

/// 2^24 keys and 2^24 unknowns.
const N: usize = 1 << 24;
/// Row lengths of the batched sorts.
const ROWS: [usize; 3] = [32, 256, 4096];
/// System size of the strided tridiagonal batches (G = N / M systems).
const M: usize = 1024;
/// The interleaved case: G = 4 systems of 2^20 unknowns.
const G_FEW: usize = 4;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("gen") => generate(Path::new(&args[2])),
        Some("run") => {
            let reps = args.get(3).and_then(|r| r.parse().ok()).unwrap_or(5);
            let only = args.get(4).cloned().unwrap_or_default();
            run(Path::new(&args[2]), reps, &only)
        }
        _ => eprintln!("usage: peers gen DIR | peers run DIR REPS [CASE-PREFIX]"),
    }
}

/// splitmix64: a fixed, portable stream of random bits.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [-1, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
}

fn write<T: Copy>(dir: &Path, name: &str, v: &[T]) {
    // SAFETY: plain numbers, read back as raw bytes.
    let bytes = unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), size_of_val(v)) };
    std::fs::write(dir.join(name), bytes).unwrap();
}

fn read<T: Copy + Default>(dir: &Path, name: &str) -> Vec<T> {
    let bytes = std::fs::read(dir.join(name)).unwrap();
    let mut v = vec![T::default(); bytes.len() / size_of::<T>()];
    // SAFETY: v has exactly bytes.len() bytes of plain numbers.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), v.as_mut_ptr().cast::<u8>(), bytes.len()) };
    v
}

fn generate(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    let mut rng = Rng(2026);
    let f32s: Vec<f32> = (0..N).map(|_| (rng.unit() * 1.0e6) as f32).collect();
    let u32s: Vec<u32> = (0..N).map(|_| rng.next() as u32).collect();
    let vals: Vec<u32> = (0..N as u32).collect();
    write(dir, "keys_f32.bin", &f32s);
    write(dir, "keys_u32.bin", &u32s);
    write(dir, "vals_u32.bin", &vals);
    // Tridiagonal: a, c uniform in [-1, 1); b dominant (|a| + |c| + 1 + u) or general (uniform
    // in [-1, 1): pivoting needed); d uniform.
    let a: Vec<f64> = (0..N).map(|_| rng.unit()).collect();
    let c: Vec<f64> = (0..N).map(|_| rng.unit()).collect();
    let d: Vec<f64> = (0..N).map(|_| rng.unit()).collect();
    let dom: Vec<f64> = (0..N).map(|i| a[i].abs() + c[i].abs() + 1.0 + 0.5 * rng.unit().abs()).collect();
    let general: Vec<f64> = (0..N).map(|_| rng.unit()).collect();
    for (name, v) in
        [("tri_a", &a), ("tri_c", &c), ("tri_d", &d), ("tri_b_dom", &dom), ("tri_b_gen", &general)]
    {
        write(dir, &format!("{name}.f64"), v);
    }
}

/// A run's time: wall-clock milliseconds, or with `PEERS_CPU=1` the CPU time of the whole
/// process (every thread, user and system, 10 ms ticks from `/proc/self/stat`), which a loaded
/// machine inflates far less than the wall clock.
struct Clock(Instant, Option<f64>);

impl Clock {
    fn now() -> Clock {
        Clock(Instant::now(), std::env::var("PEERS_CPU").is_ok().then(cpu_ms).flatten())
    }
    fn ms(&self) -> f64 {
        match self.1 {
            Some(start) => cpu_ms().map_or(f64::NAN, |now| now - start),
            None => self.0.elapsed().as_secs_f64() * 1e3,
        }
    }
}

/// utime + stime of this process in milliseconds (Linux, 100 ticks per second).
fn cpu_ms() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the parenthesised command name: state is field 3, utime 14, stime 15.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks * 10.0)
}

/// One contender of a case: a name and a function timed on a fresh copy of the input.
type Contender<'a, T> = (&'a str, Box<dyn Fn(&mut Vec<T>) + 'a>);

/// Times every contender `reps` times, interleaved (contender 1, 2, ..., 1, 2, ...), each run on
/// a fresh copy of `input`, and checks that they all produce the first one's output.
fn time_case<T: Clone + PartialEq + Send>(case: &str, input: &[T], reps: usize, who: &[Contender<'_, T>]) {
    let mut first: Option<Vec<T>> = None;
    for _ in 0..reps {
        for (name, f) in who {
            if std::env::var("PEERS_WHO").is_ok_and(|w| !name.starts_with(&w)) {
                continue;
            }
            let mut buf = input.to_vec();
            let t = Clock::now();
            f(&mut buf);
            let ms = t.ms();
            println!("{case}\t{name}\t{ms:.3}");
            match &first {
                None => first = Some(black_box(buf)),
                Some(want) => assert!(*want == buf, "{case}: {name} disagrees with {}", who[0].0),
            }
        }
    }
}

/// f32 keys with the crate's total order (only finite keys here, so `total_cmp` order).
#[derive(Clone, Copy, PartialEq, PartialOrd, Debug)]
struct KeyVal {
    key: f32,
    val: u32,
}

impl rdst::RadixKey for KeyVal {
    const LEVELS: usize = 4;
    #[inline]
    fn get_level(&self, level: usize) -> u8 {
        let b = self.key.to_bits();
        let ordered = if b >> 31 == 1 { !b } else { b | (1 << 31) };
        (ordered >> (level * 8)) as u8
    }
}

impl Radixable<f32> for KeyVal {
    type Key = f32;
    #[inline]
    fn key(&self) -> f32 {
        self.key
    }
}

fn run(dir: &Path, reps: usize, only: &str) {
    let threads = rayon::current_num_threads();
    let wanted = |case: &str| case.starts_with(only);
    let f32s: Vec<f32> = read(dir, "keys_f32.bin");
    let u32s: Vec<u32> = read(dir, "keys_u32.bin");
    let vals: Vec<u32> = read(dir, "vals_u32.bin");

    if wanted("sort_f32_whole") {
        time_case(
            "sort_f32_whole",
            &f32s,
            reps,
            &[
                ("hetkit", Box::new(|v: &mut Vec<f32>| sort::whole(v, Order::Ascending))),
                ("rdst", Box::new(|v: &mut Vec<f32>| rdst::RadixSort::radix_sort_unstable(v))),
                ("voracious", Box::new(move |v: &mut Vec<f32>| v.voracious_mt_sort(threads))),
                (
                    "std_par_sort_unstable",
                    Box::new(|v: &mut Vec<f32>| v.par_sort_unstable_by(f32::total_cmp)),
                ),
            ],
        );
    }
    if wanted("sort_u32_whole_floor") {
        // The bandwidth floor of a whole-array sort: one parallel read and write of the keys,
        // into fresh memory (its page faults included, as a sort's scratch buffer pays them)
        // and in place.
        let salt = black_box(0u32);
        time_case(
            "sort_u32_whole_floor",
            &u32s,
            reps,
            &[
                ("copy_to_fresh_memory", Box::new(|v: &mut Vec<u32>| *v = v.par_iter().copied().collect())),
                (
                    "read_write_in_place",
                    Box::new(move |v: &mut Vec<u32>| {
                        v.par_chunks_mut(1 << 16).for_each(|c| c.iter_mut().for_each(|x| *x ^= salt))
                    }),
                ),
            ],
        );
    }
    if wanted("sort_u32_whole") {
        time_case(
            "sort_u32_whole",
            &u32s,
            reps,
            &[
                ("hetkit", Box::new(|v: &mut Vec<u32>| sort::whole(v, Order::Ascending))),
                ("rdst", Box::new(|v: &mut Vec<u32>| rdst::RadixSort::radix_sort_unstable(v))),
                ("voracious", Box::new(move |v: &mut Vec<u32>| v.voracious_mt_sort(threads))),
                ("std_par_sort_unstable", Box::new(|v: &mut Vec<u32>| v.par_sort_unstable())),
            ],
        );
    }
    for row in ROWS {
        let case = format!("sort_f32_rows{row}");
        if wanted(&case) {
            time_case(
                &case,
                &f32s,
                reps,
                &[
                    (
                        "hetkit",
                        Box::new(move |v: &mut Vec<f32>| sort::rows(v, row, Order::Ascending).unwrap()),
                    ),
                    (
                        "voracious_per_row",
                        Box::new(move |v: &mut Vec<f32>| {
                            v.par_chunks_mut(row).for_each(|r| r.voracious_sort())
                        }),
                    ),
                    (
                        "rdst_per_row",
                        Box::new(move |v: &mut Vec<f32>| {
                            v.par_chunks_mut(row)
                                .for_each(|r| r.radix_sort_builder().with_single_threaded_tuner().sort())
                        }),
                    ),
                    (
                        "std_sort_unstable_per_row",
                        Box::new(move |v: &mut Vec<f32>| {
                            v.par_chunks_mut(row).for_each(|r| r.sort_unstable_by(f32::total_cmp))
                        }),
                    ),
                ],
            );
        }
        let case = format!("sort_u32_rows{row}");
        if wanted(&case) {
            time_case(
                &case,
                &u32s,
                reps,
                &[
                    (
                        "hetkit",
                        Box::new(move |v: &mut Vec<u32>| sort::rows(v, row, Order::Ascending).unwrap()),
                    ),
                    (
                        "voracious_per_row",
                        Box::new(move |v: &mut Vec<u32>| {
                            v.par_chunks_mut(row).for_each(|r| r.voracious_sort())
                        }),
                    ),
                    (
                        "rdst_per_row",
                        Box::new(move |v: &mut Vec<u32>| {
                            v.par_chunks_mut(row)
                                .for_each(|r| r.radix_sort_builder().with_single_threaded_tuner().sort())
                        }),
                    ),
                    (
                        "std_sort_unstable_per_row",
                        Box::new(move |v: &mut Vec<u32>| {
                            v.par_chunks_mut(row).for_each(|r| r.sort_unstable())
                        }),
                    ),
                ],
            );
        }
    }
    kv_cases(&f32s, &vals, reps, threads, &wanted);
    tridiagonal_cases(dir, reps, only);
}

use rdst::RadixSort as _;

fn kv_cases(f32s: &[f32], vals: &[u32], reps: usize, threads: usize, wanted: &dyn Fn(&str) -> bool) {
    let pairs: Vec<KeyVal> = f32s.iter().zip(vals).map(|(&key, &val)| KeyVal { key, val }).collect();
    // hetkit sorts separate key and value arrays in place (its API); the peers sort an array
    // of structs (theirs).
    for (case, row) in [("kv_f32_whole", 0usize), ("kv_f32_rows4096", 4096)] {
        if !wanted(case) {
            continue;
        }
        for _ in 0..reps {
            // hetkit: key and value arrays, as its API takes them.
            let (mut k, mut x) = (f32s.to_vec(), vals.to_vec());
            let t = Clock::now();
            if row == 0 {
                sort::whole_by_key(&mut k, &mut x, Order::Ascending).unwrap();
            } else {
                sort::rows_by_key(&mut k, &mut x, row, Order::Ascending).unwrap();
            }
            println!("{case}\thetkit\t{:.3}", t.ms());
            let want: Vec<(u32, u32)> = k.iter().map(|k| k.to_bits()).zip(x).collect();
            let peers: [(&str, &dyn Fn(&mut [KeyVal])); 3] = [
                ("rdst", &|v: &mut [KeyVal]| {
                    if row == 0 {
                        v.radix_sort_unstable()
                    } else {
                        v.par_chunks_mut(row)
                            .for_each(|r| r.radix_sort_builder().with_single_threaded_tuner().sort())
                    }
                }),
                ("voracious", &|v: &mut [KeyVal]| {
                    if row == 0 {
                        v.voracious_mt_sort(threads)
                    } else {
                        v.par_chunks_mut(row).for_each(|r| r.voracious_sort())
                    }
                }),
                ("std_par_sort_stable", &|v: &mut [KeyVal]| {
                    if row == 0 {
                        v.par_sort_by(|a, b| a.key.total_cmp(&b.key))
                    } else {
                        v.par_chunks_mut(row).for_each(|r| r.sort_by(|a, b| a.key.total_cmp(&b.key)))
                    }
                }),
            ];
            for (name, f) in peers {
                let mut v = pairs.clone();
                let t = Clock::now();
                f(&mut v);
                println!("{case}\t{name}\t{:.3}", t.ms());
                // Unstable peers may order equal keys' values differently: compare keys only.
                assert!(
                    v.iter().zip(&want).all(|(p, w)| p.key.to_bits() == w.0),
                    "{case}: {name} keys differ"
                );
            }
        }
    }
}

fn tridiagonal_cases(dir: &Path, reps: usize, only: &str) {
    let load = |n: &str| read::<f64>(dir, &format!("{n}.f64"));
    if !(only.starts_with("tri_") || "tri_".starts_with(only)) {
        return;
    }
    let wanted = |case: &str| case.starts_with(only);
    let (a, c, d) = (load("tri_a"), load("tri_c"), load("tri_d"));
    let interleave = |v: &[f64]| -> Vec<f64> {
        let m = v.len() / G_FEW;
        let mut out = vec![0.0; v.len()];
        for g in 0..G_FEW {
            for k in 0..m {
                out[k * G_FEW + g] = v[g * m + k];
            }
        }
        out
    };
    for kind in ["dom", "gen"] {
        let b = load(&format!("tri_b_{kind}"));
        let case = format!("tri_{kind}_m{M}");
        if wanted(&case) {
            let batch = TridiagonalBatch::strided(&a, &b, &c, M).unwrap();
            tri_case(&case, &batch, &d, reps);
        }
        let case = format!("tri_{kind}_interleaved_g{G_FEW}");
        if wanted(&case) {
            let (ai, bi, ci, di) = (interleave(&a), interleave(&b), interleave(&c), interleave(&d));
            let batch = TridiagonalBatch::new(&ai, &bi, &ci, N / G_FEW, Layout::Interleaved).unwrap();
            tri_case(&case, &batch, &di, reps);
        }
    }
}

/// Times `PivotingLu` and the default solver on one batch; prints each run's time and scaled
/// residual (the default may fail on general systems: printed as `failed`).
fn tri_case(case: &str, batch: &TridiagonalBatch<'_, f64>, d: &[f64], reps: usize) {
    for _ in 0..reps {
        for (name, solver) in [("hetkit_pivoting_lu", Solver::PivotingLu), ("hetkit_default", Solver::Auto)] {
            let mut x = d.to_vec();
            let t = Instant::now();
            let ok = batch.solve_with(solver, &mut x);
            let ms = t.elapsed().as_secs_f64() * 1e3;
            match ok {
                Ok(()) => println!("{case}\t{name}\t{ms:.3}\t{:.3e}", batch.residual(&x, d).unwrap()),
                Err(e) => eprintln!("{case}\t{name}\tfailed: {e}"),
            }
        }
    }
}
