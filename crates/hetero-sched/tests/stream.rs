//! The streaming runtime against oracles: the FIR stream equals the direct convolution for any
//! batch sizes (digest §10.7), the pop/finalize and reserve/commit contract, topologies, and
//! failing stages ending the run without a hang.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::thread;
use std::time::{Duration, Instant};

use hetero_sched::stream::{Pipeline, Receiver, Report, Sender, StreamError};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

type Shared<T> = Arc<Mutex<Vec<T>>>;

fn shared<T>() -> Shared<T> {
    Arc::new(Mutex::new(Vec::new()))
}

/// Runs the pipeline on a helper thread and fails the test if it does not finish in `limit`,
/// so a hang is a failure rather than a stuck CI job.
fn run_bounded(p: Pipeline, limit: Duration) -> Result<Report, StreamError> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(p.run());
    });
    rx.recv_timeout(limit).expect("the run did not finish in bounded time")
}

/// Drains a receiver with pops of random elastic ranges and random finalize counts.
fn drain_randomly<T: Copy + Default + Send + 'static>(rx: &mut Receiver<T>, seed: u64) -> Vec<T> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::new();
    loop {
        let min = rng.random_range(1..20);
        let max = min + rng.random_range(0..30);
        let Some(batch) = rx.pop(min, max).expect("valid range") else { return out };
        assert!(!batch.is_empty() && batch.len() <= max);
        let k = rng.random_range(0..=batch.len());
        out.extend_from_slice(&batch[..k]);
        batch.finalize(k).expect("k <= len");
    }
}

/// Direct convolution in the thesis's orientation: `y[i] = sum_j h[j] * x[i + j]`.
fn direct_fir<T: Copy + Default + std::ops::Add<Output = T> + std::ops::Mul<Output = T>>(
    h: &[T],
    x: &[T],
) -> Vec<T> {
    if x.len() < h.len() {
        return Vec::new();
    }
    (0..=x.len() - h.len())
        .map(|i| h.iter().zip(&x[i..]).fold(T::default(), |acc, (&a, &b)| acc + a * b))
        .collect()
}

/// The FIR stage of Fig. 3.6: pop at least `m`, emit `b - m + 1` into a reserved slot, finalize
/// `b - m + 1` so the last `m - 1` inputs stay as the window.
fn fir_stage<T>(h: Vec<T>, mut rx: Receiver<T>, mut tx: Sender<T>, seed: u64) -> Result<(), StreamError>
where
    T: Copy + Default + Send + 'static + std::ops::Add<Output = T> + std::ops::Mul<Output = T>,
{
    let m = h.len();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    loop {
        let max = m + rng.random_range(0..3 * m);
        let Some(batch) = rx.pop(m, max)? else { return Ok(()) };
        if batch.len() < m {
            continue; // end of stream: fewer than m inputs left make no output
        }
        let outs = batch.len() - m + 1;
        let mut slot = tx.reserve(outs);
        for (i, y) in slot.iter_mut().enumerate() {
            *y = h.iter().zip(&batch[i..]).fold(T::default(), |acc, (&a, &b)| acc + a * b);
        }
        slot.commit(outs)?;
        batch.finalize(outs)?;
    }
}

fn fir_case<T>(n: usize, seed: u64, to_t: fn(f64) -> T)
where
    T: Copy + Default + Send + 'static + PartialEq + std::fmt::Debug,
    T: std::ops::Add<Output = T> + std::ops::Mul<Output = T>,
{
    let m = 100;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let h: Vec<T> = (0..m).map(|_| to_t(rng.random_range(-1.0..1.0))).collect();
    let x: Vec<T> = (0..n).map(|_| to_t(rng.random_range(-1.0..1.0))).collect();
    let mut p = Pipeline::new();
    let (src_tx, src_rx) = p.channel::<T>();
    let (fir_tx, mut out_rx) = p.channel::<T>();
    let input = x.clone();
    p.stage("source", move || {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 1);
        let mut at = 0;
        while at < input.len() {
            let k = rng.random_range(1..=300).min(input.len() - at);
            src_tx.push(&input[at..at + k])?;
            at += k;
        }
        Ok::<(), StreamError>(())
    });
    let hh = h.clone();
    p.stage("fir", move || fir_stage(hh, src_rx, fir_tx, seed ^ 2));
    let got = shared::<T>();
    let sink = got.clone();
    p.stage("sink", move || {
        let out = drain_randomly(&mut out_rx, seed ^ 3);
        sink.lock().unwrap().extend(out);
        Ok::<(), StreamError>(())
    });
    let report = run_bounded(p, Duration::from_secs(60)).expect("run");
    let got = got.lock().unwrap().clone();
    let want = direct_fir(&h, &x);
    assert_eq!(got.len(), n.saturating_sub(m - 1), "exactly N - m + 1 outputs");
    assert_eq!(got, want, "n = {n}, seed = {seed}");
    assert_eq!(report.stage("source").unwrap().items_pushed, n as u64);
    assert_eq!(report.stage("fir").unwrap().items_popped, n as u64);
    assert_eq!(report.stage("sink").unwrap().items_popped, want.len() as u64);
}

#[test]
fn fir_order_100_equals_direct_convolution_for_any_batch_sizes() {
    for (n, seed) in [(99, 1), (100, 2), (101, 3), (1009, 4), (4001, 5)] {
        fir_case::<f64>(n, seed, |v| v);
        fir_case::<f32>(n, seed + 100, |v| v as f32);
    }
}

#[test]
fn pop_blocks_until_min_then_returns_at_most_max_in_order() {
    let p = Pipeline::new();
    let (tx, mut rx) = p.channel::<u32>();
    let returned = Arc::new(AtomicBool::new(false));
    let flag = returned.clone();
    let consumer = thread::spawn(move || {
        let batch = rx.pop(5, 7).unwrap().unwrap();
        flag.store(true, Ordering::SeqCst);
        let first: Vec<u32> = batch.to_vec();
        drop(batch);
        let rest: Vec<u32> = rx.pop(1, 100).unwrap().unwrap().to_vec();
        (first, rest, rx.pop(1, 1).unwrap().is_none())
    });
    tx.push(&[0, 1, 2]).unwrap();
    thread::sleep(Duration::from_millis(100));
    assert!(!returned.load(Ordering::SeqCst), "pop returned with 3 < min = 5 items");
    tx.push(&[3, 4, 5, 6, 7, 8]).unwrap();
    drop(tx);
    let (first, rest, ended) = consumer.join().unwrap();
    assert_eq!(first, [0, 1, 2, 3, 4, 5, 6], "min(available, max) items, in order");
    assert_eq!(rest, [7, 8]);
    assert!(ended);
}

#[test]
fn end_of_stream_flushes_below_min_then_none() {
    let p = Pipeline::new();
    let (tx, mut rx) = p.channel::<i64>();
    tx.push(&[10, 20, 30]).unwrap();
    drop(tx);
    assert_eq!(&*rx.pop(5, 10).unwrap().unwrap(), &[10, 20, 30]);
    assert!(rx.pop(5, 10).unwrap().is_none());
    assert!(rx.pop(1, 1).unwrap().is_none());
}

#[test]
fn finalize_keeps_the_unconsumed_tail_at_the_head() {
    let p = Pipeline::new();
    let (tx, mut rx) = p.channel::<u16>();
    tx.push(&(0..10).collect::<Vec<_>>()).unwrap();
    let b = rx.pop(1, 4).unwrap().unwrap();
    assert_eq!(&*b, &[0, 1, 2, 3]);
    b.finalize(2).unwrap();
    tx.push(&[10, 11]).unwrap();
    assert_eq!(&*rx.pop(1, 100).unwrap().unwrap(), &(2..12).collect::<Vec<_>>()[..]);
    // finalize(0) consumes nothing.
    tx.push(&[12]).unwrap();
    rx.pop(1, 1).unwrap().unwrap().finalize(0).unwrap();
    assert_eq!(&*rx.pop(1, 1).unwrap().unwrap(), &[12]);
}

#[test]
fn bad_arguments_are_errors_and_lose_nothing() {
    let mut p = Pipeline::new();
    let (mut tx, mut rx) = p.channel::<u8>();
    assert!(matches!(rx.pop(0, 5), Err(StreamError::ZeroMin)));
    assert!(matches!(rx.pop(3, 2), Err(StreamError::MinAboveMax { min: 3, max: 2 })));
    tx.push(&[1, 2, 3]).unwrap();
    let b = rx.pop(1, 3).unwrap().unwrap();
    assert!(matches!(b.finalize(4), Err(StreamError::FinalizeTooMany { k: 4, len: 3 })));
    assert_eq!(&*rx.pop(3, 3).unwrap().unwrap(), &[1, 2, 3], "a rejected finalize consumes nothing");
    let mut slot = tx.reserve(2);
    slot.copy_from_slice(&[7, 8]);
    assert!(matches!(slot.commit(3), Err(StreamError::CommitTooMany { k: 3, n: 2 })));
    tx.push(&[9]).unwrap();
    assert_eq!(&*rx.pop(1, 10).unwrap().unwrap(), &[9], "a rejected commit publishes nothing");
    // Push into a channel whose receiver is gone.
    drop(rx);
    assert!(matches!(tx.push(&[1]), Err(StreamError::Disconnected)));
    // A pipeline with no stages runs to an empty report.
    let (_t, _r) = p.channel::<u8>();
    p.stage("noop", || Ok::<(), StreamError>(()));
    assert_eq!(p.run().unwrap().stages.len(), 1);
}

#[test]
fn reserve_commit_publishes_a_prefix_and_dropping_publishes_all() {
    let p = Pipeline::new();
    let (mut tx, mut rx) = p.channel::<u32>();
    {
        let mut slot = tx.reserve(5);
        assert_eq!(slot.len(), 5);
        slot.copy_from_slice(&[1, 2, 3, 4, 5]);
        slot.commit(3).unwrap(); // channel empty: the swap path
    }
    {
        let mut slot = tx.reserve(2);
        slot.copy_from_slice(&[6, 7]);
        slot.commit(2).unwrap(); // channel not empty: the copy path
    }
    {
        let mut slot = tx.reserve(3);
        slot.copy_from_slice(&[8, 9, 10]);
    } // dropped: all 3 published
    tx.push(&[11]).unwrap();
    drop(tx);
    let all: Vec<u32> = std::iter::from_fn(|| rx.pop(1, 2).unwrap().map(|b| b.to_vec())).flatten().collect();
    assert_eq!(all, [1, 2, 3, 6, 7, 8, 9, 10, 11]);
}

/// Random pushes and reserves against random pops and finalizes: the consumed sequence is the
/// produced one.
#[test]
fn random_interleavings_keep_fifo_order() {
    for seed in 0..6u64 {
        let n: u32 = [1, 2, 97, 1000, 4099, 20011][seed as usize];
        let mut p = Pipeline::new();
        let (mut tx, mut rx) = p.channel::<u32>();
        p.stage("producer", move || {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut next = 0u32;
            while next < n {
                let k = rng.random_range(1..50u32).min(n - next);
                if rng.random_bool(0.5) {
                    tx.push(&(next..next + k).collect::<Vec<_>>())?;
                } else {
                    let mut slot = tx.reserve(k as usize + 3);
                    for (i, v) in slot.iter_mut().enumerate() {
                        *v = next + i as u32;
                    }
                    slot.commit(k as usize)?;
                }
                next += k;
            }
            Ok::<(), StreamError>(())
        });
        let got = shared();
        let sink = got.clone();
        p.stage("consumer", move || {
            sink.lock().unwrap().extend(drain_randomly(&mut rx, seed + 7));
            Ok::<(), StreamError>(())
        });
        run_bounded(p, Duration::from_secs(30)).unwrap();
        assert_eq!(*got.lock().unwrap(), (0..n).collect::<Vec<_>>(), "seed {seed}");
    }
}

#[test]
fn three_stage_pipeline_with_report_counts() {
    let mut p = Pipeline::new();
    let (a_tx, mut a_rx) = p.channel::<u64>();
    let (b_tx, mut b_rx) = p.channel::<u64>();
    let n = 5000u64;
    p.stage("f", move || {
        for chunk in (0..n).collect::<Vec<_>>().chunks(7) {
            a_tx.push(chunk)?;
        }
        Ok::<(), StreamError>(())
    });
    p.stage("g", move || {
        while let Some(b) = a_rx.pop(1, 64)? {
            let doubled: Vec<u64> = b.iter().map(|v| 2 * v).collect();
            b_tx.push(&doubled)?;
        }
        Ok::<(), StreamError>(())
    });
    let total = Arc::new(Mutex::new(0u64));
    let t = total.clone();
    p.stage("h", move || {
        while let Some(b) = b_rx.pop(1, 100)? {
            *t.lock().unwrap() += b.iter().sum::<u64>();
        }
        Ok::<(), StreamError>(())
    });
    let report = run_bounded(p, Duration::from_secs(30)).unwrap();
    assert_eq!(*total.lock().unwrap(), n * (n - 1));
    let (f, g, h) = (report.stage("f").unwrap(), report.stage("g").unwrap(), report.stage("h").unwrap());
    assert_eq!((f.items_popped, f.items_pushed, f.batches), (0, n, 0));
    assert_eq!((g.items_popped, g.items_pushed), (n, n));
    assert!(g.batches >= n.div_ceil(64));
    assert_eq!((h.items_popped, h.items_pushed), (n, 0));
    assert!(f.end <= report.wall && g.busy + g.blocked <= g.end - g.start + Duration::from_micros(1));
    let svg = report.timeline_svg();
    assert!(svg.starts_with("<svg") && svg.contains(">g</text>") && svg.trim_end().ends_with("</svg>"));
    assert!(report.to_string().contains("wall"));
}

#[test]
fn merge_of_cloned_senders_keeps_each_producers_order() {
    let mut p = Pipeline::new();
    let (tx, mut rx) = p.channel::<(u8, u32)>();
    for id in 0..4u8 {
        let tx = tx.clone();
        p.stage(&format!("producer {id}"), move || {
            for i in 0..1000u32 {
                tx.push(&[(id, i)])?;
            }
            Ok::<(), StreamError>(())
        });
    }
    drop(tx);
    let got = shared();
    let sink = got.clone();
    p.stage("merge", move || {
        sink.lock().unwrap().extend(drain_randomly(&mut rx, 11));
        Ok::<(), StreamError>(())
    });
    run_bounded(p, Duration::from_secs(30)).unwrap();
    let got = got.lock().unwrap();
    assert_eq!(got.len(), 4000);
    for id in 0..4u8 {
        let seq: Vec<u32> = got.iter().filter(|(p, _)| *p == id).map(|&(_, i)| i).collect();
        assert_eq!(seq, (0..1000).collect::<Vec<_>>());
    }
}

#[test]
fn broadcast_reaches_every_receiver() {
    let mut p = Pipeline::new();
    let (mut tx, rxs) = p.broadcast::<i32>(3);
    p.stage("source", move || {
        tx.push(&[1, 2, 3])?;
        let mut slot = tx.reserve(2);
        slot.copy_from_slice(&[4, 5]);
        slot.commit(2)
    });
    let outs: Vec<Shared<i32>> = (0..3).map(|_| shared()).collect();
    for (i, mut rx) in rxs.into_iter().enumerate() {
        let out = outs[i].clone();
        p.stage(&format!("reader {i}"), move || {
            out.lock().unwrap().extend(drain_randomly(&mut rx, i as u64));
            Ok::<(), StreamError>(())
        });
    }
    run_bounded(p, Duration::from_secs(30)).unwrap();
    for out in &outs {
        assert_eq!(*out.lock().unwrap(), [1, 2, 3, 4, 5]);
    }
    let p = Pipeline::new();
    let (tx, none) = p.broadcast::<i32>(0);
    assert!(none.is_empty());
    assert!(matches!(tx.push(&[1]), Err(StreamError::Disconnected)));
}

/// A stage array `a[i]` (i < 5) reduced into one stage, and an all-to-all exchange among 3
/// stages that route every value to receiver `value % 3`.
#[test]
fn stage_arrays_reduce_and_all_to_all() {
    let mut p = Pipeline::new();
    let (senders, mut sum_rx) = p.reduce::<u64>(5);
    assert_eq!(senders.len(), 5);
    for (i, tx) in senders.into_iter().enumerate() {
        p.stage(&format!("a[{i}]"), move || tx.push(&[(i as u64 + 1) * 10; 3]));
    }
    let sum = Arc::new(Mutex::new(0));
    let s = sum.clone();
    p.stage("reduce", move || {
        while let Some(b) = sum_rx.pop(1, 2)? {
            *s.lock().unwrap() += b.iter().sum::<u64>();
        }
        Ok::<(), StreamError>(())
    });
    let n = 3;
    let (grid, receivers) = p.all_to_all::<u32>(n);
    let routed: Vec<Shared<u32>> = (0..n).map(|_| shared()).collect();
    for (i, (row, mut rx)) in grid.into_iter().zip(receivers).enumerate() {
        let out = routed[i].clone();
        p.stage(&format!("x[{i}]"), move || {
            for v in (i as u32 * 100)..(i as u32 * 100 + 50) {
                row[v as usize % n].push(&[v])?;
            }
            drop(row);
            out.lock().unwrap().extend(drain_randomly(&mut rx, i as u64));
            Ok::<(), StreamError>(())
        });
    }
    run_bounded(p, Duration::from_secs(30)).unwrap();
    assert_eq!(*sum.lock().unwrap(), 3 * (10 + 20 + 30 + 40 + 50));
    for (j, out) in routed.iter().enumerate() {
        let mut got = out.lock().unwrap().clone();
        got.sort_unstable();
        let want: Vec<u32> =
            (0..n as u32).flat_map(|i| (i * 100)..(i * 100 + 50)).filter(|v| *v as usize % n == j).collect();
        assert_eq!(got, want);
    }
}

/// `h | f` feedback: `f` sends a token only after `h` acknowledged the previous one, a cycle
/// that deadlocks with bounded queues of zero slack and must not here.
#[test]
fn feedback_edge_without_deadlock() {
    let mut p = Pipeline::new();
    let (fwd_tx, mut fwd_rx) = p.channel::<u32>();
    let (back_tx, mut back_rx) = p.channel::<u32>();
    let rounds = 300;
    p.stage("f", move || {
        fwd_tx.push(&[0])?;
        for i in 1..rounds {
            let ack = back_rx.pop(1, 1)?.expect("h acknowledges every token");
            assert_eq!(ack[0], i - 1);
            drop(ack);
            fwd_tx.push(&[i])?;
        }
        Ok::<(), StreamError>(())
    });
    let seen = shared();
    let s = seen.clone();
    p.stage("h", move || {
        while let Some(b) = fwd_rx.pop(1, 10)? {
            s.lock().unwrap().extend_from_slice(&b);
            // The last ack may find `f` gone: that is the end of the loop, not an error.
            match back_tx.push(&b) {
                Ok(()) | Err(StreamError::Disconnected) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    });
    run_bounded(p, Duration::from_secs(30)).unwrap();
    assert_eq!(*seen.lock().unwrap(), (0..rounds).collect::<Vec<_>>());
}

/// Builds stages that would block forever on each other (a cycle of pops) plus an endless
/// source, so only cancellation can end the run.
fn stuck_stages(p: &mut Pipeline) {
    let (a_tx, mut a_rx) = p.channel::<u8>();
    let (b_tx, mut b_rx) = p.channel::<u8>();
    p.stage("wait-a", move || {
        let _keep = b_tx;
        a_rx.pop(1, 1).map(drop)
    });
    p.stage("wait-b", move || {
        let _keep = a_tx;
        b_rx.pop(1, 1).map(drop)
    });
    let (c_tx, _c_rx) = p.channel::<u8>();
    let c_rx = _c_rx;
    p.stage("endless", move || {
        loop {
            c_tx.push(&[0; 64])?;
            thread::sleep(Duration::from_millis(1));
        }
        #[allow(unreachable_code)]
        Ok::<(), StreamError>(())
    });
    p.stage("reader", move || {
        let mut rx = c_rx;
        loop {
            match rx.pop(1, 64) {
                Ok(_) => {}
                Err(e) => return Err(e),
            }
        }
    });
}

#[test]
fn failing_stage_ends_the_run_naming_it_and_wakes_blocked_stages() {
    let mut p = Pipeline::new();
    stuck_stages(&mut p);
    p.stage("bad", || {
        thread::sleep(Duration::from_millis(50));
        Err("the disk is on fire")
    });
    let t = Instant::now();
    let err = run_bounded(p, Duration::from_secs(20)).unwrap_err();
    assert!(t.elapsed() < Duration::from_secs(10));
    assert_eq!(err.stage(), Some("bad"));
    assert!(err.to_string().contains("the disk is on fire"), "{err}");
    assert!(matches!(err, StreamError::Stage { .. }));
}

#[test]
fn panicking_stage_ends_the_run_naming_it() {
    let mut p = Pipeline::new();
    stuck_stages(&mut p);
    p.stage("boom", || -> Result<(), StreamError> {
        thread::sleep(Duration::from_millis(50));
        panic!("index out of range, deliberately")
    });
    let err = run_bounded(p, Duration::from_secs(20)).unwrap_err();
    match err {
        StreamError::StagePanicked { stage, message } => {
            assert_eq!(stage, "boom");
            assert!(message.contains("deliberately"));
        }
        other => panic!("expected a panic report, got {other}"),
    }
}
