//! Benchmarks of `hetero_sched::stream`:
//!
//! - `channel/*`: 4-byte items through a two-stage pipeline (producer thread, consumer thread
//!   summing) at batches of 1, 64 and 4096, against `crossbeam-channel` and `std::sync::mpsc`
//!   sending the same items one by one and as `Vec` batches (goal: at least as fast as the best
//!   peer at every batch size, at least 1 GB/s at 4096).
//! - `forward/*`: source -> two forwarding stages -> a sink doing a fixed amount of arithmetic per
//!   item (tens of ns), against the same work as one loop (goal: at most 5 % slower at batches of
//!   4096). Forwarding costs about a copy per item and stage, so the comparison is only meaningful
//!   with work per item; with none, any pipeline is several times slower than one loop.
//!
//! hetkit runs twice: `hetkit reserve` writes each batch in place (`reserve(batch)` then
//! `commit`), `hetkit push` copies it in with `push(&items)` (at batch 1, `push(&[x])` per
//! item); the table reports both against the best peer, so the slower path is visible.
//!
//! After criterion, with `--bench`, a table of medians and ratios is printed: every contender
//! runs once per round, rounds repeated (contenders interleaved so that all of them share the
//! machine's background load, each round starting with the next contender), medians over the
//! rounds, and each contender's best round beside them.
//!
//! Every contender's producer runs on the first CPU this process may use and its consumer on the
//! second (`sched_setaffinity`), so that no run depends on where the scheduler happened to put
//! the two threads; `STREAM_PIN=0` leaves them unpinned. `STREAM_BATCHES=1,4096` restricts the
//! table to those batch sizes (and skips the forwarding runs), `STREAM_ROUNDS=n` sets its rounds,
//! `STREAM_SHOW_ROUNDS=1` prints every round's rate of every contender (to see bistable runs),
//! `STREAM_ONLY=reserve,crossbeam` runs only the contenders whose names contain those words.
//! Before every timed run the allocator's free lists are consolidated, untimed (see
//! `settle_heap`; `STREAM_SETTLE=0` turns that off).

use std::hint::black_box;
use std::ops::Range;
use std::sync::{OnceLock, mpsc};
use std::thread;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group};
use hetero_sched::stream::{Pipeline, Sender, StreamError};

const BATCHES: [usize; 3] = [1, 64, 4096];

/// Items per run: fewer at batch 1, where every item is a channel operation.
fn items(batch: usize) -> usize {
    if batch == 1 { 1 << 20 } else { 1 << 23 }
}

/// The value of item `i`: cheap, not constant, so the sum checks that nothing was lost.
fn item(i: usize) -> u32 {
    (i as u32).wrapping_mul(2_654_435_761)
}

fn want(n: usize) -> u64 {
    (0..n).map(|i| item(i) as u64).sum()
}

/// The CPUs the two threads of every contender run on (producer, consumer), or `None` to leave
/// them to the scheduler: unpinned, the two could share a core for a while or move between
/// cores mid-run, a likely cause of the bistable 4096 runs of every contender on the 2-vCPU EPYC.
fn pinned_cpus() -> Option<[usize; 2]> {
    static CPUS: OnceLock<Option<[usize; 2]>> = OnceLock::new();
    *CPUS.get_or_init(|| {
        if std::env::var("STREAM_PIN").is_ok_and(|v| v == "0") {
            return None;
        }
        // SAFETY: `set` is a plain bit set that `sched_getaffinity` fills for this thread.
        let set = unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            (libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) == 0).then_some(set)
        }?;
        // SAFETY: `CPU_ISSET` reads a bit of an initialised set; `cpu` is below its size.
        let mut allowed =
            (0..libc::CPU_SETSIZE as usize).filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) });
        Some([allowed.next()?, allowed.next()?])
    })
}

/// The two threads of a contender.
#[derive(Clone, Copy)]
enum Role {
    Producer = 0,
    Consumer = 1,
}

/// Moves the calling thread to its role's CPU (a no-op when unpinned or when that fails: the run
/// is then only less repeatable).
fn pin(role: Role) {
    let Some(cpus) = pinned_cpus() else { return };
    // SAFETY: a zeroed `cpu_set_t` is the empty set; `CPU_SET` sets one bit below its size, and
    // `sched_setaffinity` only reads it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpus[role as usize], &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

/// Producer reserves `batch` items in place and fills them; consumer pops up to `batch` and sums.
fn run_stream_reserve(n: usize, batch: usize) -> u64 {
    stream_pipeline(n, batch, |tx, at, k| {
        let mut slot = tx.reserve(k);
        for (j, v) in slot.iter_mut().enumerate() {
            *v = item(at + j);
        }
        slot.commit(k)
    })
}

/// Producer fills a buffer of `batch` items and pushes a copy of it (at batch 1, `push(&[x])`).
fn run_stream_push(n: usize, batch: usize) -> u64 {
    let mut buf = vec![0u32; batch];
    stream_pipeline(n, batch, move |tx, at, k| {
        for (j, v) in buf[..k].iter_mut().enumerate() {
            *v = item(at + j);
        }
        tx.push(&buf[..k])
    })
}

/// Producer stage sending items `0..n` by `send(tx, first, count)`, consumer stage popping up to
/// `batch` and summing; returns the sum.
fn stream_pipeline(
    n: usize,
    batch: usize,
    mut send: impl FnMut(&mut Sender<u32>, usize, usize) -> Result<(), StreamError> + Send + 'static,
) -> u64 {
    let mut p = Pipeline::new();
    let (mut tx, mut rx) = p.channel::<u32>();
    p.stage("producer", move || {
        pin(Role::Producer);
        let mut at = 0;
        while at < n {
            let k = batch.min(n - at);
            send(&mut tx, at, k)?;
            at += k;
        }
        Ok::<(), StreamError>(())
    });
    let (out_tx, out_rx) = mpsc::channel();
    p.stage("consumer", move || {
        pin(Role::Consumer);
        let mut s = 0u64;
        while let Some(b) = rx.pop(1, batch)? {
            s += b.iter().map(|&v| v as u64).sum::<u64>();
        }
        out_tx.send(s).expect("main thread waits");
        Ok::<(), StreamError>(())
    });
    p.run().expect("bench pipeline");
    out_rx.recv().expect("sum")
}

/// Sums, on a consumer thread, the batches `rx` yields (`Vec`s, or single items as one-item
/// batches), so that every peer channel is driven by the same producer and consumer code.
fn consumer<B: AsRef<[u32]>>(rx: impl IntoIterator<Item = B> + Send + 'static) -> thread::JoinHandle<u64> {
    thread::spawn(move || {
        pin(Role::Consumer);
        rx.into_iter().map(|b| b.as_ref().iter().map(|&x| x as u64).sum::<u64>()).sum()
    })
}

/// Sends items `0..n` as messages of `batch` items (`message` builds one from a range of item
/// indices) through `send`, then drops the sending end (closing the channel) and returns the
/// consumer's sum. Generic rather than `fn` pointers, so the per-item path is inlined as it would
/// be in hand-written code.
fn produce<Tx, M>(
    (n, batch): (usize, usize),
    tx: Tx,
    sum: thread::JoinHandle<u64>,
    message: impl Fn(Range<usize>) -> M,
    send: impl Fn(&Tx, M),
) -> u64 {
    pin(Role::Producer);
    for at in (0..n).step_by(batch) {
        send(&tx, message(at..(at + batch).min(n)));
    }
    drop(tx);
    sum.join().expect("consumer")
}

fn one_item(r: Range<usize>) -> u32 {
    item(r.start)
}

fn vec_of_items(r: Range<usize>) -> Vec<u32> {
    r.map(item).collect()
}

fn run_crossbeam_items(n: usize) -> u64 {
    let (tx, rx) = crossbeam_channel::unbounded::<u32>();
    let sum = consumer(rx.into_iter().map(|v| [v]));
    produce((n, 1), tx, sum, one_item, |tx, v| tx.send(v).expect("receiver alive"))
}

fn run_crossbeam_vecs(n: usize, batch: usize) -> u64 {
    let (tx, rx) = crossbeam_channel::unbounded::<Vec<u32>>();
    produce((n, batch), tx, consumer(rx), vec_of_items, |tx, v| tx.send(v).expect("receiver alive"))
}

fn run_mpsc_items(n: usize) -> u64 {
    let (tx, rx) = mpsc::channel::<u32>();
    let sum = consumer(rx.into_iter().map(|v| [v]));
    produce((n, 1), tx, sum, one_item, |tx, v| tx.send(v).expect("receiver alive"))
}

fn run_mpsc_vecs(n: usize, batch: usize) -> u64 {
    let (tx, rx) = mpsc::channel::<Vec<u32>>();
    produce((n, batch), tx, consumer(rx), vec_of_items, |tx, v| tx.send(v).expect("receiver alive"))
}

type Contender = (&'static str, fn(usize, usize) -> u64);

/// Contenders whose names start with `hetkit` are ours; the others are the peers.
fn contenders() -> [Contender; 6] {
    [
        ("hetkit reserve", run_stream_reserve),
        ("hetkit push", run_stream_push),
        ("crossbeam items", |n, _| run_crossbeam_items(n)),
        ("crossbeam vecs", run_crossbeam_vecs),
        ("mpsc items", |n, _| run_mpsc_items(n)),
        ("mpsc vecs", run_mpsc_vecs),
    ]
}

fn channel(c: &mut Criterion) {
    for batch in BATCHES {
        let n = items(batch);
        let expect = want(n);
        let mut g = c.benchmark_group(format!("channel/batch{batch}"));
        // A warm-up and 20 samples: one sample is one run (tens of ms), and the table below
        // showed runs to vary with the background load more than criterion's default expects.
        g.warm_up_time(Duration::from_secs(1)).sample_size(20).throughput(Throughput::Bytes(4 * n as u64));
        for (name, f) in contenders() {
            g.bench_function(name, |b| b.iter(|| assert_eq!(black_box(f(n, batch)), expect)));
        }
        g.finish();
    }
}

/// Arithmetic standing for a stage's real work: a chain of square roots per item (tens of ns
/// per item), so that what the comparison measures is the forwarding, not memory bandwidth.
fn work(v: u32) -> u64 {
    let mut x = f64::from(v & 0xffff) + 1.0;
    for _ in 0..8 {
        x = (x * x + 1.0).sqrt();
    }
    x as u64
}

fn one_loop(n: usize) -> u64 {
    (0..n).map(|i| work(item(i))).fold(0u64, u64::wrapping_add)
}

/// source -> forward -> forward -> sink(work), batches of `batch`.
fn forwarded(n: usize, batch: usize) -> u64 {
    let mut p = Pipeline::new();
    let (mut src, mut a) = p.channel::<u32>();
    let (mut a_out, mut b) = p.channel::<u32>();
    let (mut b_out, mut sink) = p.channel::<u32>();
    p.stage("source", move || {
        for at in (0..n).step_by(batch) {
            let k = batch.min(n - at);
            let mut slot = src.reserve(k);
            for (j, v) in slot.iter_mut().enumerate() {
                *v = item(at + j);
            }
            slot.commit(k)?;
        }
        Ok::<(), StreamError>(())
    });
    p.stage("forward 1", move || forward(&mut a, &mut a_out, batch));
    p.stage("forward 2", move || forward(&mut b, &mut b_out, batch));
    let (tx, rx) = mpsc::channel();
    p.stage("sink", move || {
        let mut s = 0u64;
        while let Some(b) = sink.pop(1, batch)? {
            s = b.iter().map(|&v| work(v)).fold(s, u64::wrapping_add);
        }
        tx.send(s).expect("main waits");
        Ok::<(), StreamError>(())
    });
    p.run().expect("bench pipeline");
    rx.recv().expect("sum")
}

fn forward(
    rx: &mut hetero_sched::stream::Receiver<u32>,
    tx: &mut hetero_sched::stream::Sender<u32>,
    batch: usize,
) -> Result<(), StreamError> {
    while let Some(b) = rx.pop(1, batch)? {
        tx.push(&b)?;
    }
    Ok(())
}

fn forward_overhead(c: &mut Criterion) {
    let n = 1 << 22;
    let expect = one_loop(n);
    let mut g = c.benchmark_group("forward");
    g.sample_size(10).throughput(Throughput::Elements(n as u64));
    g.bench_function("one loop", |b| b.iter(|| assert_eq!(black_box(one_loop(n)), expect)));
    g.bench_function("pipeline batch4096", |b| b.iter(|| assert_eq!(black_box(forwarded(n, 4096)), expect)));
    g.finish();
}

fn seconds(f: impl FnOnce()) -> f64 {
    let s = Instant::now();
    f();
    s.elapsed().as_secs_f64()
}

fn median(mut t: Vec<f64>) -> f64 {
    t.sort_by(f64::total_cmp);
    t[t.len() / 2]
}

/// Rounds of the table (`STREAM_ROUNDS` overrides): every contender once per round.
const ROUNDS: usize = 15;

/// A number from the environment, or `default`.
fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// The batch sizes of the table (`STREAM_BATCHES`, comma separated, overrides).
fn table_batches() -> Vec<usize> {
    let chosen = std::env::var("STREAM_BATCHES").ok();
    chosen.map_or(BATCHES.to_vec(), |v| v.split(',').filter_map(|b| b.trim().parse().ok()).collect())
}

/// Hands the allocator's deferred work back before a timed run, untimed, so that no contender
/// pays for another's frees: one allocation of 64 KiB on this (the main) thread, freed at once.
/// With glibc a request of that size first consolidates the arena's fast bins (the small freed
/// chunks it keeps unmerged); it moves no live allocation and returns no memory to the system
/// (which `malloc_trim` would, making the next runs fault their pages in again). With other
/// allocators it is one cheap allocation.
///
/// Why: at batch 1 the `Vec` peers allocate a million one-item `Vec`s per run on the main
/// thread, and their consumer frees them into the main thread's arena; the next large
/// allocation there, the first segment of the next hetkit run, then paid for merging them (the
/// likely mechanism, from glibc's documented behaviour; not profiled). Interleaved with them,
/// `reserve(1)` ran at 18-33 M items/s every second or third round and at 61-67 in the others;
/// without the `Vec` peers (with crossbeam's per-item `send`, or with `push`) at 61-67 in every
/// round: the bistability of the batch-1 table was the bench's, not the channel's.
/// `STREAM_SETTLE=0` turns this off, to compare.
fn settle_heap() {
    static ON: OnceLock<bool> = OnceLock::new();
    if *ON.get_or_init(|| std::env::var("STREAM_SETTLE").map_or(true, |v| v != "0")) {
        drop(black_box(Vec::<u8>::with_capacity(64 << 10)));
    }
}

/// The contenders of the table: all, or those whose names contain one of the comma-separated
/// words of `STREAM_ONLY` (`STREAM_ONLY=reserve,crossbeam` runs hetkit's `reserve` against both
/// crossbeam contenders), to see how one contender's runs depend on which others run between.
fn chosen_contenders() -> Vec<Contender> {
    let only = std::env::var("STREAM_ONLY").unwrap_or_default();
    let chosen = |name: &str| only.is_empty() || only.split(',').any(|w| name.contains(w.trim()));
    contenders().into_iter().filter(|(name, _)| chosen(name)).collect()
}

/// Seconds per run of each contender at `batch`, `rounds` interleaved rounds.
fn interleaved(all: &[Contender], batch: usize, rounds: usize) -> Vec<Vec<f64>> {
    let n = items(batch);
    let mut times = vec![Vec::new(); all.len()];
    // Each round starts with a different contender, so that none always runs first (after
    // another batch size's runs, or right after the same peer).
    for round in 0..rounds {
        for i in (0..all.len()).map(|i| (i + round) % all.len()) {
            let f = all[i].1;
            settle_heap();
            times[i].push(seconds(|| {
                black_box(f(n, batch));
            }));
        }
    }
    times
}

/// The best rate among the peers (contenders whose names do not start with `hetkit`).
fn best_peer(all: &[Contender], rate: &[f64]) -> f64 {
    let peers = all.iter().zip(rate).filter(|((name, _), _)| !name.starts_with("hetkit"));
    peers.map(|(_, &r)| r).fold(0.0, f64::max)
}

/// Medians measured in one process with the contenders interleaved, so the ratios share the
/// machine's load; each contender's best round beside them, because a 2-vCPU VM can run a whole
/// round slow or fast for every contender.
fn report() {
    let rounds = env_or("STREAM_ROUNDS", ROUNDS);
    let show_rounds = env_or("STREAM_SHOW_ROUNDS", 0u32) != 0;
    let pinned = pinned_cpus()
        .map_or("unpinned".to_owned(), |[p, c]| format!("producer on CPU {p}, consumer on CPU {c}"));
    println!(
        "\nthroughput, 4-byte items, two threads ({pinned}; median and best of {rounds} interleaved rounds)"
    );
    println!(
        "{:>6} {:>16} {:>12} {:>10} {:>14} {:>12} {:>14}",
        "batch", "contender", "M items/s", "GB/s", "/ best peer", "best M/s", "best / best"
    );
    let batches = table_batches();
    for &batch in &batches {
        let n = items(batch) as f64;
        let all = chosen_contenders();
        let times = interleaved(&all, batch, rounds);
        let rate: Vec<f64> = times.iter().map(|t| n / median(t.clone())).collect();
        let top: Vec<f64> =
            times.iter().map(|t| n / t.iter().copied().fold(f64::INFINITY, f64::min)).collect();
        let (peer, peer_top) = (best_peer(&all, &rate), best_peer(&all, &top));
        if show_rounds {
            // Every round's rate, in the order run, to see which state each round was in.
            for ((name, _), t) in all.iter().zip(&times) {
                let r: Vec<String> = t.iter().map(|s| format!("{:.0}", n / s / 1e6)).collect();
                println!("{batch:>6} {name:>16} rounds (M items/s): {}", r.join(" "));
            }
        }
        for (((name, _), &r), &b) in all.iter().zip(&rate).zip(&top) {
            let ours = name.starts_with("hetkit");
            let ratio = |x: f64| if ours { format!("{x:.2}") } else { String::new() };
            let (ratio, top_ratio) = (ratio(r / peer), ratio(b / peer_top));
            println!(
                "{batch:>6} {name:>16} {:>12.1} {:>10.3} {ratio:>14} {:>12.1} {top_ratio:>14}",
                r / 1e6,
                4.0 * r / 1e9,
                b / 1e6
            );
        }
    }
    if batches != BATCHES {
        return;
    }
    // Alternating runs, so both medians see the same background load.
    let n = 1 << 22;
    let (mut lone, mut piped) = (Vec::new(), Vec::new());
    for _ in 0..9 {
        lone.push(seconds(|| {
            black_box(one_loop(n));
        }));
        piped.push(seconds(|| {
            black_box(forwarded(n, 4096));
        }));
    }
    let (lone, piped) = (median(lone), median(piped));
    println!(
        "\nforwarding (medians of 9 alternating runs): one loop {:.2} ms, 4-stage pipeline {:.2} ms, ratio {:.3}",
        lone * 1e3,
        piped * 1e3,
        piped / lone
    );
}

criterion_group!(benches, channel, forward_overhead);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    if std::env::args().any(|a| a == "--bench") {
        report();
    }
}
