//! The channel core under concurrency, against a sequential oracle: every item pushed by 1 to 4
//! producers (random batch sizes, `push` and `reserve`/`commit`, sizes that cross and exceed the
//! storage's segments) is received exactly once and in each producer's order, whatever elastic
//! `pop(min, max)` and `finalize(k)` the receiver uses; broadcasts give every receiver the whole
//! stream; blocked receivers are released by cancellation and by the end of the stream. Items
//! sent one at a time reach a receiver that keeps catching up with its producer (and so paces its
//! reads of the published count), and a lone sender's lock-free in-place slots interleave with
//! the locked pushes of clones that come and go.

use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use hetero_sched::stream::{Pipeline, Receiver, Sender, StreamError};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// An item naming its producer (high half) and its index in that producer's stream.
fn tag(producer: u64, seq: u64) -> u64 {
    (producer << 32) | seq
}

/// Random batch sizes: mostly small, sometimes around and beyond one 4096-item segment.
fn batch_size(rng: &mut ChaCha8Rng) -> usize {
    match rng.random_range(0..10) {
        0 => rng.random_range(3000..9000),
        1..=3 => rng.random_range(64..1200),
        _ => rng.random_range(1..40),
    }
}

/// Sends `count` tagged items as producer `id`, in random batches, alternating between `push`
/// and `reserve` + `commit` of a random prefix (the rest of the slot is discarded, as the
/// contract says).
fn produce(mut tx: Sender<u64>, id: u64, count: u64, seed: u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut seq = 0;
    while seq < count {
        let k = (batch_size(&mut rng) as u64).min(count - seq) as usize;
        if rng.random_bool(0.5) {
            let items: Vec<u64> = (0..k as u64).map(|j| tag(id, seq + j)).collect();
            tx.push(&items).expect("receiver alive");
        } else {
            let extra = rng.random_range(0..4);
            let mut slot = tx.reserve(k + extra);
            for (j, v) in slot.iter_mut().enumerate() {
                *v = tag(id, seq + j as u64);
            }
            if extra == 0 && rng.random_bool(0.3) {
                drop(slot); // dropping publishes all of it
            } else {
                slot.commit(k).expect("k <= reserved");
            }
        }
        seq += k as u64;
    }
}

/// Pops with random elastic ranges and random `finalize` counts until the end of the stream,
/// checking each batch against the contract on the way.
fn consume(rx: &mut Receiver<u64>, seed: u64) -> Vec<u64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::new();
    loop {
        let min = batch_size(&mut rng);
        let max = min + rng.random_range(0..5000);
        let Some(batch) = rx.pop(min, max).expect("valid range") else { return out };
        assert!(!batch.is_empty() && batch.len() <= max, "{} items for pop({min}, {max})", batch.len());
        let k = if rng.random_bool(0.3) { rng.random_range(0..=batch.len()) } else { batch.len() };
        out.extend_from_slice(&batch[..k]);
        batch.finalize(k).expect("k <= len");
    }
}

/// The oracle: the received items are exactly producer `p`'s `0..count` for every `p`, each
/// once, in order within a producer.
fn check_merge(received: &[u64], producers: u64, count: u64) {
    assert_eq!(received.len() as u64, producers * count, "items lost or duplicated");
    let mut next = vec![0u64; producers as usize];
    for &v in received {
        let (p, seq) = ((v >> 32) as usize, v & 0xffff_ffff);
        assert_eq!(seq, next[p], "producer {p} out of order");
        next[p] += 1;
    }
}

/// Runs `f` on a thread and fails if it does not return within `limit` (a hang is a failure).
fn bounded<R: Send + 'static>(limit: Duration, f: impl FnOnce() -> R + Send + 'static) -> R {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(limit).expect("did not finish in bounded time")
}

#[test]
fn one_to_four_producers_deliver_every_item_once_in_order() {
    for producers in 1..=4u64 {
        for seed in 0..3 {
            let count = 6000 + 1000 * seed;
            let received = bounded(Duration::from_secs(60), move || {
                let (tx, mut rx) = Pipeline::new().channel::<u64>();
                let handles: Vec<_> = (0..producers)
                    .map(|p| {
                        let tx = tx.clone();
                        thread::spawn(move || produce(tx, p, count, seed * 10 + p))
                    })
                    .collect();
                drop(tx);
                let out = consume(&mut rx, seed + 100);
                handles.into_iter().for_each(|h| h.join().expect("producer"));
                out
            });
            check_merge(&received, producers, count);
        }
    }
}

#[test]
fn broadcast_to_three_receivers_gives_each_the_whole_stream() {
    let count = 20_000;
    let (tx, receivers) = Pipeline::new().broadcast::<u64>(3);
    let consumers: Vec<_> = receivers
        .into_iter()
        .enumerate()
        .map(|(i, mut rx)| thread::spawn(move || consume(&mut rx, 7 + i as u64)))
        .collect();
    bounded(Duration::from_secs(60), move || produce(tx, 0, count, 5));
    for c in consumers {
        check_merge(&c.join().expect("consumer"), 1, count);
    }
}

#[test]
fn a_slow_producer_wakes_a_parked_receiver_every_time() {
    // Each push comes after a pause longer than the receiver's spin, so the receiver has parked;
    // the producer keeps the stream open until the receiver acknowledged the item, so only the
    // push's wake-up (not the end of the stream) can release it: a lost wake-up hangs and fails
    // the bound.
    let (tx, mut rx) = Pipeline::new().channel::<u32>();
    let (ack_tx, ack_rx) = mpsc::channel();
    let producer = thread::spawn(move || {
        for i in 0..30u32 {
            thread::sleep(Duration::from_millis(2));
            tx.push(&[i]).expect("receiver alive");
            ack_rx.recv_timeout(Duration::from_secs(5)).expect("the receiver was not woken");
        }
    });
    let got = bounded(Duration::from_secs(30), move || {
        let mut got = Vec::new();
        while let Some(b) = rx.pop(1, 8).expect("valid") {
            got.extend_from_slice(&b);
            let _ = ack_tx.send(());
        }
        got
    });
    producer.join().expect("producer");
    assert_eq!(got, (0..30).collect::<Vec<_>>());
}

#[test]
fn end_of_stream_releases_a_receiver_blocked_on_more_than_remains() {
    let (tx, mut rx) = Pipeline::new().channel::<u16>();
    let consumer = thread::spawn(move || {
        let first = rx.pop(10, 10).expect("valid").map(|b| b.to_vec());
        let then = rx.pop(10, 10).expect("valid").map(|b| b.to_vec());
        (first, then)
    });
    tx.push(&[1, 2, 3]).expect("receiver alive");
    thread::sleep(Duration::from_millis(50)); // the receiver parks waiting for 7 more
    drop(tx);
    let (first, then) = bounded(Duration::from_secs(10), move || consumer.join().expect("consumer"));
    assert_eq!(first, Some(vec![1, 2, 3]));
    assert_eq!(then, None);
}

#[test]
fn cancellation_releases_a_parked_receiver() {
    let mut p = Pipeline::new();
    let (tx, mut rx) = p.channel::<u8>();
    let (seen_tx, seen_rx) = mpsc::channel();
    p.stage("blocked", move || {
        let _keep_open = tx; // its own sender: the stream never ends on its own
        let start = Instant::now();
        let r = rx.pop(1, 1).map(|b| b.map(|b| b.len()));
        seen_tx.send((r, start.elapsed())).expect("test waits");
        Ok::<(), StreamError>(())
    });
    p.stage("failing", || {
        thread::sleep(Duration::from_millis(100)); // the other stage has parked by now
        Err::<(), _>("boom")
    });
    let out = bounded(Duration::from_secs(10), move || p.run());
    assert_eq!(out.expect_err("a stage failed").stage(), Some("failing"));
    let (r, waited) = seen_rx.recv().expect("the blocked stage returned");
    assert!(matches!(r, Err(StreamError::Cancelled)), "{r:?}");
    assert!(waited >= Duration::from_millis(50), "returned after {waited:?} without being cancelled");
}

#[test]
fn a_dropped_receiver_makes_pushes_and_commits_fail() {
    let (mut tx, rx) = Pipeline::new().channel::<u32>();
    tx.push(&[1; 5000]).expect("receiver alive");
    drop(rx);
    assert!(matches!(tx.push(&[1]), Err(StreamError::Disconnected)));
    assert!(matches!(tx.reserve(4096).commit(4096), Err(StreamError::Disconnected)));
    assert!(matches!(tx.reserve(3).commit(3), Err(StreamError::Disconnected)));
}

#[test]
fn large_commits_and_pushes_across_segments_keep_order() {
    // Sizes around the segment size, sequentially: commits moved in whole, pushes split over
    // a sealed segment, and pops whose batch spans two segments (copied) or one (direct).
    let (mut tx, mut rx) = Pipeline::new().channel::<u32>();
    let mut want = Vec::new();
    let mut next = 0u32;
    for &k in &[4096usize, 1, 4095, 4097, 1024, 1023, 10_000, 3, 8192, 4096, 2] {
        let items: Vec<u32> = (next..next + k as u32).collect();
        next += k as u32;
        if k % 2 == 0 {
            tx.reserve(k).copy_from_slice(&items);
        } else {
            tx.push(&items).expect("receiver alive");
        }
        want.extend_from_slice(&items);
    }
    drop(tx);
    let mut got = Vec::new();
    for max in [1, 4095, 4097, 5000, 7, 4096, 9000].into_iter().cycle() {
        match rx.pop(1, max).expect("valid") {
            Some(b) => got.extend_from_slice(&b),
            None => break,
        }
    }
    assert_eq!(got, want);
}

#[test]
fn odd_item_types_round_trip() {
    let (tx, mut rx) = Pipeline::new().channel::<()>();
    tx.push(&[(); 9000]).expect("receiver alive");
    drop(tx);
    let mut n = 0;
    while let Some(b) = rx.pop(1, 5000).expect("valid") {
        n += b.len();
    }
    assert_eq!(n, 9000);

    let (tx, mut rx) = Pipeline::new().channel::<[f64; 3]>();
    let items: Vec<[f64; 3]> = (0..5003).map(|i| [i as f64, -0.5, f64::from(i as u32 % 7)]).collect();
    tx.push(&items[..17]).expect("receiver alive");
    tx.push(&items[17..]).expect("receiver alive");
    drop(tx);
    let mut got = Vec::new();
    while let Some(b) = rx.pop(3, 4100).expect("valid") {
        got.extend_from_slice(&b);
    }
    assert_eq!(got, items);
}

#[test]
fn endpoints_can_move_between_and_be_shared_by_threads() {
    fn send_sync<X: Send + Sync>() {}
    send_sync::<Sender<u32>>();
    send_sync::<Receiver<u32>>();
    send_sync::<hetero_sched::stream::Slot<'static, u32>>();
    send_sync::<hetero_sched::stream::Batch<'static, u32>>();
}

#[test]
fn a_leaked_slot_loses_its_items_but_blocks_nothing() {
    let (mut tx, mut rx) = Pipeline::new().channel::<u32>();
    tx.push(&[1, 2]).expect("receiver alive");
    let mut slot = tx.reserve(3);
    slot.copy_from_slice(&[7, 7, 7]);
    std::mem::forget(slot);
    let got = bounded(Duration::from_secs(10), move || {
        tx.push(&[3]).expect("receiver alive");
        let clone = tx.clone();
        clone.push(&[4]).expect("receiver alive");
        std::mem::forget(tx.reserve(1)); // leaked again, now with a clone around
        clone.push(&[5]).expect("receiver alive");
        drop((tx, clone));
        let mut got = Vec::new();
        while let Some(b) = rx.pop(1, 10).expect("valid") {
            got.extend_from_slice(&b);
        }
        got
    });
    assert_eq!(got, [1, 2, 3, 4, 5]);
}

/// Sends items `seq..seq + count` of producer `id` one at a time, alternating at random between
/// `push(&[x])` and an in-place `reserve(1)` (committed, or published by dropping the slot);
/// returns the next sequence number.
fn send_singles(tx: &mut Sender<u64>, id: u64, seq: u64, count: u64, rng: &mut ChaCha8Rng) -> u64 {
    for s in seq..seq + count {
        if rng.random_bool(0.5) {
            tx.push(&[tag(id, s)]).expect("receiver alive");
        } else {
            let mut slot = tx.reserve(1);
            slot[0] = tag(id, s);
            if rng.random_bool(0.5) {
                slot.commit(1).expect("1 <= 1");
            }
        }
    }
    seq + count
}

/// Pops one to three items at a time, sometimes consuming none of them (`finalize(0)`, so the
/// same items come again) or only the first, until the end of the stream.
fn consume_singles(rx: &mut Receiver<u64>, seed: u64) -> Vec<u64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::new();
    while let Some(batch) = rx.pop(1, rng.random_range(1..=3)).expect("valid range") {
        let k = match rng.random_range(0..10) {
            0 => 0,
            1 => 1,
            _ => batch.len(),
        };
        out.extend_from_slice(&batch[..k]);
        batch.finalize(k).expect("k <= len");
    }
    out
}

#[test]
fn single_items_reach_a_receiver_that_keeps_up_with_the_producer() {
    // The receiver is faster than the producer, so it keeps catching up with it and pacing its
    // looks at the published count; the stream ends while it waits for more.
    for seed in 0..4 {
        let count = 100_000;
        let received = bounded(Duration::from_secs(60), move || {
            let (mut tx, mut rx) = Pipeline::new().channel::<u64>();
            let producer = thread::spawn(move || {
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                send_singles(&mut tx, 0, 0, count, &mut rng);
            });
            let out = consume_singles(&mut rx, seed + 50);
            producer.join().expect("producer");
            out
        });
        check_merge(&received, 1, count);
    }
}

#[test]
fn in_place_slots_of_a_lone_sender_interleave_with_clones_that_come_and_go() {
    // Without clones, a slot owns the tail without taking the lock; a clone pushing from another
    // thread takes it. Rounds alternate between the two, with the clone dropped (the sender is
    // alone again) before the next round's lock-free slots.
    let rounds = 300;
    let per_round = 60;
    let received = bounded(Duration::from_secs(60), move || {
        let (mut tx, mut rx) = Pipeline::new().channel::<u64>();
        let consumer = thread::spawn(move || consume_singles(&mut rx, 9));
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let (mut mine, mut theirs) = (0, 0);
        for round in 0..rounds {
            mine = send_singles(&mut tx, 0, mine, per_round / 2, &mut rng);
            let mut clone = tx.clone();
            let first = theirs;
            let other = thread::spawn(move || {
                let mut rng = ChaCha8Rng::seed_from_u64(round);
                send_singles(&mut clone, 1, first, per_round, &mut rng)
            });
            mine = send_singles(&mut tx, 0, mine, per_round / 2, &mut rng);
            theirs = other.join().expect("clone");
        }
        drop(tx);
        consumer.join().expect("consumer")
    });
    check_merge(&received, 2, rounds * per_round);
}

/// Pops with `min` of one to three and `max` up to eight (so that the end of the stream flushes
/// fewer than `min`), consuming a random prefix of each batch, until the end of the stream.
fn consume_elastic_small(rx: &mut Receiver<u64>, seed: u64) -> Vec<u64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::new();
    loop {
        let min = rng.random_range(1..=3);
        let max = min + rng.random_range(0..=5);
        let Some(batch) = rx.pop(min, max).expect("valid range") else { return out };
        assert!(!batch.is_empty() && batch.len() <= max, "{} items for pop({min}, {max})", batch.len());
        let k = match rng.random_range(0..8) {
            0 => 0,
            1 => rng.random_range(0..=batch.len()),
            _ => batch.len(),
        };
        out.extend_from_slice(&batch[..k]);
        batch.finalize(k).expect("k <= len");
    }
}

/// Sends `count` items of producer 0 from `seq` on as one-item in-place slots (committed or
/// published by dropping), pausing for a millisecond about once in 2000 items.
fn send_lone(tx: &mut Sender<u64>, seq: &mut u64, count: u64, rng: &mut ChaCha8Rng) {
    for _ in 0..count {
        if rng.random_range(0..2000) == 0 {
            thread::sleep(Duration::from_millis(1));
        }
        let mut slot = tx.reserve(1);
        slot[0] = tag(0, *seq);
        match rng.random_range(0..3) {
            0 => drop(slot),
            _ => slot.commit(1).expect("1 <= 1"),
        }
        *seq += 1;
    }
}

#[test]
fn one_item_slots_of_a_lone_sender_then_of_several_keep_every_item_once_in_order() {
    // A lone sender writes one-item slots in place (the lock-free path), pausing now and then
    // for longer than the receiver spins, so that the receiver parks in `pop` and only that
    // slot's publication can wake it; then clones on other threads send at the same time
    // (every slot staged, pushes locked) and go away, the lone path resumes, and the stream
    // ends while the receiver waits for more than remains.
    for seed in 0..3u64 {
        let received = bounded(Duration::from_secs(60), move || {
            let (mut tx, mut rx) = Pipeline::new().channel::<u64>();
            let consumer = thread::spawn(move || consume_elastic_small(&mut rx, seed + 70));
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut seq = 0u64;
            send_lone(&mut tx, &mut seq, 20_000, &mut rng);
            let others: Vec<_> = (1..=3u64)
                .map(|p| {
                    let mut clone = tx.clone();
                    thread::spawn(move || {
                        let mut rng = ChaCha8Rng::seed_from_u64(seed * 10 + p);
                        send_singles(&mut clone, p, 0, 5_000, &mut rng)
                    })
                })
                .collect();
            seq = send_singles(&mut tx, 0, seq, 5_000, &mut rng);
            others.into_iter().for_each(|h| {
                h.join().expect("clone");
            });
            send_lone(&mut tx, &mut seq, 20_000, &mut rng);
            // An uncommitted prefix (k = 0) publishes nothing, and the next slot reuses the room.
            tx.reserve(1).commit(0).expect("0 <= 1");
            assert!(matches!(tx.reserve(1).commit(2), Err(StreamError::CommitTooMany { k: 2, n: 1 })));
            thread::sleep(Duration::from_millis(5)); // the receiver parks, waiting for more
            drop(tx);
            consumer.join().expect("consumer")
        });
        assert_eq!(received.len(), 45_000 + 15_000);
        let mine: Vec<u64> = received.iter().copied().filter(|v| v >> 32 == 0).collect();
        assert_eq!(mine, (0..45_000).map(|s| tag(0, s)).collect::<Vec<_>>());
        for p in 1..=3u64 {
            let theirs: Vec<u64> = received.iter().copied().filter(|v| v >> 32 == p).collect();
            assert_eq!(theirs, (0..5_000).map(|s| tag(p, s)).collect::<Vec<_>>(), "producer {p}");
        }
    }
}

/// A producer that gets far ahead of its consumer (more than the 256 KiB the storage lets it
/// run ahead before it waits) must never wait for a consumer that makes no progress: on one
/// thread (the consumer waits for the producer's own pushes), with the consumer parked on
/// another thread for more than is ever sent, with a consumer that stops and is dropped while
/// the producer is ahead, and with the run cancelled meanwhile. Between those, a slow consumer
/// on another thread lets the producer wait and go on repeatedly (the wait re-arms once the
/// consumer is seen near again), and every item arrives once, in order, across many recycled
/// segments.
#[test]
fn a_producer_far_ahead_of_its_consumer_never_waits_for_one_that_does_not_progress() {
    const AHEAD: u32 = 1 << 20; // 4 MiB of u32: sixteen times the bound
    bounded(Duration::from_secs(120), || {
        // One thread: far ahead, drain, and far ahead again (the wait re-armed in between).
        let (mut tx, mut rx) = Pipeline::new().channel::<u32>();
        let mut at = 0u32;
        let mut next = 0u32;
        for _ in 0..2 {
            while at < next + AHEAD {
                if at.is_multiple_of(3) {
                    let items: Vec<u32> = (at..at + 4096).collect();
                    tx.push(&items).expect("receiver alive");
                } else {
                    let mut slot = tx.reserve(4096);
                    for (j, v) in slot.iter_mut().enumerate() {
                        *v = at + j as u32;
                    }
                    slot.commit(4096).expect("k <= n");
                }
                at += 4096;
            }
            while next < at {
                let b = rx.pop(1, 5000).expect("valid range").expect("items remain");
                for &v in b.iter() {
                    assert_eq!(v, next, "out of order");
                    next += 1;
                }
            }
        }
        drop(tx);
        assert!(rx.pop(1, 1).expect("valid range").is_none());

        // A receiver parked for more than is ever sent, then released by the end of the stream.
        let (tx, mut rx) = Pipeline::new().channel::<u32>();
        let waiting = thread::spawn(move || {
            let b = rx.pop(4 * AHEAD as usize, 4 * AHEAD as usize).expect("valid range").expect("flushed");
            b.len()
        });
        for at in (0..2 * AHEAD).step_by(1024) {
            let items: Vec<u32> = (at..at + 1024).collect();
            tx.push(&items).expect("receiver alive");
        }
        drop(tx);
        assert_eq!(waiting.join().expect("receiver"), 2 * AHEAD as usize);

        // A slow consumer on another thread: the producer waits for it and goes on, many times.
        let (mut tx, mut rx) = Pipeline::new().channel::<u32>();
        let slow = thread::spawn(move || {
            let mut next = 0u32;
            let mut pops = 0u32;
            while let Some(b) = rx.pop(1, 3000).expect("valid range") {
                for &v in b.iter() {
                    assert_eq!(v, next, "out of order");
                    next += 1;
                }
                drop(b);
                pops += 1;
                if pops.is_multiple_of(64) {
                    thread::sleep(Duration::from_micros(200));
                }
            }
            next
        });
        let total = 4 * AHEAD;
        for at in (0..total).step_by(4096) {
            let mut slot = tx.reserve(4096);
            for (j, v) in slot.iter_mut().enumerate() {
                *v = at + j as u32;
            }
            drop(slot);
        }
        drop(tx);
        assert_eq!(slow.join().expect("consumer"), total);

        // A consumer that stops and is dropped while the producer is far ahead: the producer
        // goes on, then learns that the receiver is gone.
        let (tx, mut rx) = Pipeline::new().channel::<u32>();
        let (stop_tx, stop_rx) = mpsc::channel();
        let quitter = thread::spawn(move || {
            let got = drain_in_order_until(&mut rx, AHEAD as usize / 4);
            stop_rx.recv().expect("producer far ahead");
            drop(rx);
            got
        });
        let mut at = 0u32;
        let disconnected = loop {
            let items: Vec<u32> = (at..at + 4096).collect();
            match tx.push(&items) {
                Ok(()) => at += 4096,
                Err(e) => break e,
            }
            if at == 2 * AHEAD {
                stop_tx.send(()).expect("consumer waits");
            }
        };
        assert!(matches!(disconnected, StreamError::Disconnected), "{disconnected:?}");
        assert!(quitter.join().expect("consumer") >= AHEAD as usize / 4);

        // The run stopped while the producer is far ahead: pushes fail, nothing hangs.
        let mut p = Pipeline::new();
        let (tx, mut rx) = p.channel::<u32>();
        let (gone_tx, gone_rx) = mpsc::channel::<()>();
        p.stage("source", move || -> Result<(), StreamError> {
            let mut at = 0u32;
            loop {
                let items: Vec<u32> = (at..at + 4096).collect();
                tx.push(&items)?;
                at = at.wrapping_add(4096);
            }
        });
        p.stage("stops", move || {
            let b = rx.pop(AHEAD as usize, AHEAD as usize)?.expect("endless source");
            assert_eq!(b.len(), AHEAD as usize);
            drop(b);
            drop(gone_tx);
            Err::<(), _>(StreamError::Cancelled)
        });
        assert!(p.run().is_err(), "a failing stage ends the run with its error");
        assert!(gone_rx.recv().is_err());
    });
}

/// Pops in order from 0 until at least `n` items were taken; returns how many.
fn drain_in_order_until(rx: &mut Receiver<u32>, n: usize) -> usize {
    let mut next = 0u32;
    while (next as usize) < n {
        let b = rx.pop(1, 4096).expect("valid range").expect("producer runs on");
        for &v in b.iter() {
            assert_eq!(v, next, "out of order");
            next += 1;
        }
    }
    next as usize
}
