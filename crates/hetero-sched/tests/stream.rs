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

// ---- Transports: pipelines joined by a byte stream (socket) ----

mod transport {
    use super::*;
    use hetero_sched::stream::{
        ByteReceiver, ByteSender, MAX_FRAME_BYTES, TAG_CANCEL, TAG_DATA, TransportReceiver, TransportSender,
        Wire, receive_all, send_all,
    };
    use std::io::Write;
    use std::net::{TcpListener, TcpStream};
    use std::os::unix::net::UnixStream;

    fn never() -> bool {
        false
    }

    /// Runs several pipelines at once (each is one "process"), every one in bounded time.
    fn run_all(pipelines: Vec<Pipeline>, limit: Duration) -> Vec<Result<Report, StreamError>> {
        let handles: Vec<_> =
            pipelines.into_iter().map(|p| thread::spawn(move || run_bounded(p, limit))).collect();
        handles.into_iter().map(|h| h.join().expect("the run did not finish in bounded time")).collect()
    }

    /// A pipeline whose only stage pushes what arrives on `sock` into a channel, and a sink
    /// stage draining that channel with random elastic pops into the returned vector.
    fn sink_pipeline<T: Wire>(sock: UnixStream, seed: u64) -> (Pipeline, Shared<T>) {
        let mut p = Pipeline::new();
        let (tx, mut rx) = p.channel::<T>();
        p.stage("from socket", move || receive_all(ByteReceiver::<T, _>::new(sock), &tx, 64));
        let got = shared();
        let out = got.clone();
        p.stage("sink", move || -> Result<(), StreamError> {
            // Like `drain_randomly`, but a stopped run is an error of this stage, not a panic.
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            loop {
                let min = rng.random_range(1..20);
                let Some(batch) = rx.pop(min, min + rng.random_range(0..30))? else { return Ok(()) };
                let k = rng.random_range(0..=batch.len());
                out.lock().unwrap().extend_from_slice(&batch[..k]);
                batch.finalize(k)?;
            }
        });
        (p, got)
    }

    /// source | socket | FIR | socket | sink: three pipelines, as if on three processes, give the
    /// direct convolution, exactly N - m + 1 outputs, for random batch sizes on every hop.
    #[test]
    fn fir_order_100_across_two_sockets_equals_direct_convolution() {
        for (n, seed) in [(99usize, 31u64), (100, 32), (1009, 33), (4001, 34)] {
            let m = 100;
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let h: Vec<f64> = (0..m).map(|_| rng.random_range(-1.0..1.0)).collect();
            let x: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
            let (s1a, s1b) = UnixStream::pair().unwrap();
            let (s2a, s2b) = UnixStream::pair().unwrap();

            let mut a = Pipeline::new();
            let (src, mut to_net) = a.channel::<f64>();
            let input = x.clone();
            a.stage("source", move || {
                let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 1);
                let mut at = 0;
                while at < input.len() {
                    let k = rng.random_range(1..=300).min(input.len() - at);
                    src.push(&input[at..at + k])?;
                    at += k;
                }
                Ok::<(), StreamError>(())
            });
            a.stage("to socket", move || send_all(&mut to_net, ByteSender::new(s1a), 57));

            let mut b = Pipeline::new();
            let (net_in, fir_in) = b.channel::<f64>();
            let (fir_out, mut fir_net) = b.channel::<f64>();
            b.stage("from socket", move || receive_all(ByteReceiver::<f64, _>::new(s1b), &net_in, 300));
            let hh = h.clone();
            b.stage("fir", move || fir_stage(hh, fir_in, fir_out, seed ^ 2));
            b.stage("to socket", move || send_all(&mut fir_net, ByteSender::new(s2a), 1000));

            let (c, got) = sink_pipeline::<f64>(s2b, seed ^ 3);
            for r in run_all(vec![a, b, c], Duration::from_secs(60)) {
                r.expect("every pipeline ends normally");
            }
            let got = got.lock().unwrap().clone();
            assert_eq!(got.len(), (n + 1).saturating_sub(m), "exactly N - m + 1 outputs (none for N < m)");
            assert_eq!(got, direct_fir(&h, &x), "n = {n}");
        }
    }

    /// Random batches of several item types over TCP on localhost arrive whole and in order, and
    /// the end of stream reaches the far pipeline (its run finishes).
    #[test]
    fn random_batches_over_tcp_keep_order_and_end() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server, _) = listener.accept().unwrap();
        let n = 20_011u32;
        let want: Vec<[u32; 2]> = (0..n).map(|i| [i, i.wrapping_mul(2_654_435_761)]).collect();
        let mut a = Pipeline::new();
        let (mut tx, mut to_net) = a.channel::<[u32; 2]>();
        let items = want.clone();
        a.stage("producer", move || {
            let mut rng = ChaCha8Rng::seed_from_u64(5);
            for chunk in items.chunks(rng.random_range(1..500)) {
                let mut slot = tx.reserve(chunk.len());
                slot.copy_from_slice(chunk);
                slot.commit(chunk.len())?;
            }
            Ok::<(), StreamError>(())
        });
        a.stage("to tcp", move || send_all(&mut to_net, ByteSender::new(client), 333));
        let mut b = Pipeline::new();
        let (tx, mut rx) = b.channel::<[u32; 2]>();
        b.stage("from tcp", move || receive_all(ByteReceiver::<[u32; 2], _>::new(server), &tx, 100));
        let got = shared();
        let out = got.clone();
        b.stage("sink", move || {
            out.lock().unwrap().extend(drain_randomly(&mut rx, 9));
            Ok::<(), StreamError>(())
        });
        for r in run_all(vec![a, b], Duration::from_secs(30)) {
            r.unwrap();
        }
        assert_eq!(*got.lock().unwrap(), want);
    }

    /// The in-process endpoints are a transport too: the same bridges over a local channel.
    #[test]
    fn in_process_endpoints_implement_the_transport() {
        let mut p = Pipeline::new();
        let (src, mut first) = p.channel::<i64>();
        let (relay_tx, relay_rx) = p.channel::<i64>();
        let (out_tx, mut out) = p.channel::<i64>();
        p.stage("source", move || src.push(&(0..5000).collect::<Vec<_>>()));
        p.stage("send", move || send_all(&mut first, relay_tx, 17));
        p.stage("receive", move || receive_all(relay_rx, &out_tx, 23));
        let got = shared();
        let sink = got.clone();
        p.stage("sink", move || {
            sink.lock().unwrap().extend(drain_randomly(&mut out, 4));
            Ok::<(), StreamError>(())
        });
        run_bounded(p, Duration::from_secs(30)).unwrap();
        assert_eq!(*got.lock().unwrap(), (0..5000).collect::<Vec<_>>());

        // Cancelling an in-process transport stops its run: a stage blocked in `pop` on another
        // channel is woken with `Cancelled`, and the run ends with an error.
        let mut p = Pipeline::new();
        let (tx, _rx) = p.channel::<u8>();
        let (keep, mut blocked) = p.channel::<u8>();
        p.stage("canceller", move || {
            thread::sleep(Duration::from_millis(30));
            TransportSender::cancel(tx);
            Ok::<(), StreamError>(())
        });
        p.stage("waiter", move || {
            let _keep = keep;
            blocked.pop(1, 1).map(drop)
        });
        let err = run_bounded(p, Duration::from_secs(20)).unwrap_err();
        assert_eq!(err.stage(), Some("waiter"));
        assert!(
            matches!(err, StreamError::Stage { ref source, .. }
            if matches!(source.downcast_ref::<StreamError>(), Some(StreamError::Cancelled))),
            "{err}"
        );
    }

    /// Encodes with a sender into memory, then decodes with a receiver handing out `max` at a time.
    fn round_trip<T: Wire + PartialEq + std::fmt::Debug>(batches: &[Vec<T>], max: usize) -> Vec<T> {
        let mut bytes = Vec::new();
        let mut tx = ByteSender::<T, _>::new(&mut bytes);
        for b in batches {
            tx.send(b).unwrap();
        }
        tx.close().unwrap();
        let mut rx = ByteReceiver::<T, _>::new(&bytes[..]);
        let mut out = Vec::new();
        loop {
            let before = out.len();
            let k = rx.recv(&mut out, max, &never).unwrap();
            assert!(k <= max && out.len() == before + k);
            if k == 0 {
                break;
            }
        }
        assert_eq!(rx.recv(&mut out, max, &never).unwrap(), 0, "the end stays the end");
        out
    }

    #[test]
    fn wire_encoding_round_trips_and_is_little_endian() {
        let ints: Vec<Vec<i32>> = vec![vec![-1, 0, i32::MAX], vec![], vec![i32::MIN, 7]];
        assert_eq!(round_trip(&ints, 2), [-1, 0, i32::MAX, i32::MIN, 7]);
        let floats = vec![vec![1.5f64, -0.0, f64::INFINITY, f64::MIN_POSITIVE]];
        let back = round_trip(&floats, 10);
        assert_eq!(
            back.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            floats[0].iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
        assert_eq!(round_trip(&[vec![true, false, true]], 1), [true, false, true]);
        assert_eq!(round_trip(&[vec![[1u16, 2, 3], [4, 5, 6]]], 1), [[1, 2, 3], [4, 5, 6]]);
        // The bytes on the wire, written out by hand: tag, size, count, items, end tag.
        let mut bytes = Vec::new();
        let mut tx = ByteSender::<u16, _>::new(&mut bytes);
        tx.send(&[0x0102, 0x0304]).unwrap();
        tx.close().unwrap();
        assert_eq!(bytes, [TAG_DATA, 2, 0, 0, 0, 2, 0, 0, 0, 0x02, 0x01, 0x04, 0x03, 1]);
    }

    /// A batch larger than one frame is split, and arrives whole and in order.
    #[test]
    fn a_batch_above_the_frame_limit_is_split() {
        let n = MAX_FRAME_BYTES / 8 + 3;
        let big: Vec<u64> = (0..n as u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)).collect();
        let mut bytes = Vec::new();
        let mut tx = ByteSender::<u64, _>::new(&mut bytes);
        tx.send(&big).unwrap();
        tx.close().unwrap();
        assert_eq!(bytes.len(), 8 * n + 2 * 9 + 1, "two data frames and an end frame");
        assert_eq!(u32::from_le_bytes(bytes[5..9].try_into().unwrap()) as usize, MAX_FRAME_BYTES / 8);
        let mut rx = ByteReceiver::<u64, _>::new(&bytes[..]);
        let mut out = Vec::new();
        while rx.recv(&mut out, usize::MAX, &never).unwrap() > 0 {}
        assert!(out == big);
    }

    fn decode_error<T: Wire>(bytes: &[u8]) -> StreamError {
        let mut rx = ByteReceiver::<T, _>::new(bytes);
        let mut out = Vec::new();
        loop {
            match rx.recv(&mut out, 1000, &never) {
                Ok(0) => panic!("malformed input decoded to a clean end"),
                Ok(_) => {}
                Err(e) => return e,
            }
        }
    }

    #[test]
    fn malformed_frames_are_errors() {
        let data = |size: u32, count: u32| {
            let mut f = vec![TAG_DATA];
            f.extend(size.to_le_bytes());
            f.extend(count.to_le_bytes());
            f
        };
        assert!(matches!(decode_error::<u8>(&[9]), StreamError::Protocol(m) if m.contains("tag 9")));
        assert!(
            matches!(decode_error::<u32>(&data(8, 1)), StreamError::Protocol(m) if m.contains("8 bytes"))
        );
        assert!(
            matches!(decode_error::<u32>(&data(4, u32::MAX)), StreamError::Protocol(m) if m.contains("limit"))
        );
        let mut bad_bool = data(1, 1);
        bad_bool.push(7);
        assert!(matches!(decode_error::<bool>(&bad_bool), StreamError::Protocol(_)));
        // Truncated: a header promising 3 items, 2 delivered, then the connection closes.
        let mut cut = data(2, 3);
        cut.extend([1, 0, 2, 0]);
        assert!(
            matches!(decode_error::<u16>(&cut), StreamError::Transport(e) if e.kind() == std::io::ErrorKind::UnexpectedEof)
        );
        // No end frame at all: the peer vanished.
        assert!(matches!(decode_error::<u8>(&[]), StreamError::Transport(_)));
        assert!(matches!(decode_error::<u8>(&[TAG_CANCEL]), StreamError::Cancelled));
        // An unclosed sender that is dropped tells the peer it stopped abnormally.
        let mut bytes = Vec::new();
        let mut tx = ByteSender::<u8, _>::new(&mut bytes);
        tx.send(&[1, 2]).unwrap();
        drop(tx);
        assert!(matches!(decode_error::<u8>(&bytes), StreamError::Cancelled));
    }

    /// The producing process dies mid-stream (its socket closes after half a frame): the far
    /// pipeline ends with a transport error naming its bridge stage, in bounded time.
    #[test]
    fn a_dropped_sending_peer_is_an_error_not_a_hang() {
        let (mut raw, theirs) = UnixStream::pair().unwrap();
        let (p, _) = sink_pipeline::<u32>(theirs, 1);
        let writer = thread::spawn(move || {
            let mut frame = vec![TAG_DATA];
            frame.extend(4u32.to_le_bytes());
            frame.extend(10u32.to_le_bytes());
            frame.extend([0u8; 12]);
            raw.write_all(&frame).unwrap();
            thread::sleep(Duration::from_millis(50));
        }); // `raw` is dropped here: the peer process is gone.
        let t = Instant::now();
        let err = run_bounded(p, Duration::from_secs(20)).unwrap_err();
        writer.join().unwrap();
        assert!(t.elapsed() < Duration::from_secs(10));
        assert_eq!(err.stage(), Some("from socket"));
        assert!(
            matches!(err, StreamError::Stage { ref source, .. }
            if matches!(source.downcast_ref::<StreamError>(), Some(StreamError::Transport(_)))),
            "{err}"
        );
    }

    /// The receiving process dies: the sending pipeline's bridge gets a transport error instead
    /// of writing forever, and its run ends naming it.
    #[test]
    fn a_dropped_receiving_peer_is_an_error_not_a_hang() {
        let (ours, theirs) = UnixStream::pair().unwrap();
        drop(theirs);
        let mut p = Pipeline::new();
        let (src, mut to_net) = p.channel::<u64>();
        p.stage("endless", move || {
            loop {
                src.push(&[7; 512])?;
            }
            #[allow(unreachable_code)]
            Ok::<(), StreamError>(())
        });
        p.stage("to socket", move || send_all(&mut to_net, ByteSender::new(ours), 4096));
        let err = run_bounded(p, Duration::from_secs(20)).unwrap_err();
        assert_eq!(err.stage(), Some("to socket"));
        assert!(err.to_string().contains("transport"), "{err}");
    }

    /// A failing stage on one side stops the other side: the sending pipeline's failure crosses
    /// the socket as a cancel frame; and a pipeline whose own stage fails while its bridge is
    /// blocked reading an idle socket (with a read timeout) still ends in bounded time.
    #[test]
    fn cancellation_crosses_the_socket_both_ways() {
        let (ours, theirs) = UnixStream::pair().unwrap();
        let mut a = Pipeline::new();
        let (src, mut to_net) = a.channel::<u8>();
        a.stage("source", move || -> Result<(), hetero_sched::stream::BoxError> {
            src.push(&[1, 2, 3])?;
            thread::sleep(Duration::from_millis(30));
            Err("sensor unplugged".into())
        });
        a.stage("to socket", move || send_all(&mut to_net, ByteSender::new(ours), 64));
        let (b, _) = sink_pipeline::<u8>(theirs, 2);
        let results = run_all(vec![a, b], Duration::from_secs(20));
        assert_eq!(results[0].as_ref().unwrap_err().stage(), Some("source"));
        let far = results[1].as_ref().unwrap_err();
        assert_eq!(far.stage(), Some("from socket"));
        assert!(
            matches!(far, StreamError::Stage { source, .. }
            if matches!(source.downcast_ref::<StreamError>(), Some(StreamError::Cancelled))),
            "{far}"
        );

        // The failing stage ends its output stream first and fails only afterwards: the bridge
        // must still send a cancel, not an end, because its producer did not finish cleanly.
        let (ours, theirs) = UnixStream::pair().unwrap();
        let mut a = Pipeline::new();
        let (src, mut to_net) = a.channel::<u8>();
        a.stage("source", move || -> Result<(), hetero_sched::stream::BoxError> {
            src.push(&[4, 5])?;
            drop(src);
            thread::sleep(Duration::from_millis(50));
            Err("checksum mismatch after the last block".into())
        });
        a.stage("to socket", move || send_all(&mut to_net, ByteSender::new(ours), 64));
        let (b, _) = sink_pipeline::<u8>(theirs, 3);
        let results = run_all(vec![a, b], Duration::from_secs(20));
        assert_eq!(results[0].as_ref().unwrap_err().stage(), Some("source"));
        assert_eq!(results[1].as_ref().unwrap_err().stage(), Some("from socket"));

        // A stage that ends a channel and bridges it itself does not wait for itself.
        let (ours, theirs) = UnixStream::pair().unwrap();
        let mut a = Pipeline::new();
        a.stage("self-bridge", move || {
            let (tx, mut rx) = Pipeline::new().channel::<u8>();
            tx.push(&[6])?;
            drop(tx);
            send_all(&mut rx, ByteSender::new(ours), 8)
        });
        let (b, got) = sink_pipeline::<u8>(theirs, 5);
        for r in run_all(vec![a, b], Duration::from_secs(20)) {
            r.unwrap();
        }
        assert_eq!(*got.lock().unwrap(), [6]);

        let (idle, listening) = UnixStream::pair().unwrap();
        listening.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
        let (mut b, _) = sink_pipeline::<u8>(listening, 6);
        b.stage("bad", || {
            thread::sleep(Duration::from_millis(30));
            Err::<(), _>("out of memory")
        });
        let t = Instant::now();
        let err = run_bounded(b, Duration::from_secs(20)).unwrap_err();
        assert!(t.elapsed() < Duration::from_secs(10));
        assert_eq!(err.stage(), Some("bad"));
        drop(idle);
    }
}
