//! Issue 25's contract, through `hetkit::stream` with the names exactly as written there.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hetkit::stream::{Batch, Pipeline, Receiver, Report, Sender, Slot};

#[test]
fn channel_pop_finalize_reserve_commit() -> hetkit::Result<()> {
    let pipeline = Pipeline::new();
    let (mut tx, mut rx): (Sender<u32>, Receiver<u32>) = pipeline.channel::<u32>();
    let tx2 = tx.clone();
    tx.push(&[1, 2, 3])?;
    tx2.push(&[4])?;
    {
        let mut slot: Slot<'_, u32> = tx.reserve(3);
        assert_eq!(slot.len(), 3);
        slot.copy_from_slice(&[5, 6, 7]);
        slot.commit(2)?;
    }
    {
        let mut slot = tx.reserve(1);
        slot[0] = 8;
    }
    let batch: Batch<'_, u32> = rx.pop(2, 4)?.expect("items");
    assert_eq!(&*batch, &[1, 2, 3, 4]);
    batch.finalize(1)?;
    assert_eq!(&*rx.pop(1, 100)?.expect("items"), &[2, 3, 4, 5, 6, 8]);
    assert!(rx.pop(0, 1).is_err());
    assert!(rx.pop(2, 1).is_err());
    tx.push(&[9])?;
    let b = rx.pop(1, 1)?.expect("items");
    assert!(b.finalize(2).is_err());
    assert!(tx.reserve(1).commit(2).is_err());
    drop((tx, tx2));
    assert_eq!(&*rx.pop(5, 10)?.expect("flush below min at end"), &[9]);
    assert!(rx.pop(5, 10)?.is_none());
    Ok(())
}

#[test]
fn stages_broadcast_run_and_report() -> hetkit::Result<()> {
    let mut pipeline = Pipeline::new();
    let (tx, rxs) = pipeline.broadcast::<f64>(2);
    pipeline.stage("source", move || -> hetkit::Result<()> {
        for i in 0..100 {
            tx.push(&[i as f64])?;
        }
        Ok(())
    });
    let sums = Arc::new(Mutex::new(Vec::new()));
    for (i, mut rx) in rxs.into_iter().enumerate() {
        let sums = sums.clone();
        pipeline.stage(&format!("sum {i}"), move || -> Result<(), hetkit::Error> {
            let mut s = 0.0;
            while let Some(batch) = rx.pop(1, 16)? {
                s += batch.iter().sum::<f64>();
            }
            sums.lock().unwrap().push(s);
            Ok(())
        });
    }
    let report: Report = pipeline.run()?;
    assert_eq!(*sums.lock().unwrap(), [4950.0, 4950.0]);
    for name in ["sum 0", "sum 1"] {
        let s = report.stage(name).expect("stage reported");
        assert_eq!((s.items_popped, s.items_pushed), (100, 0));
        assert!(s.batches >= 7);
        let _: (Duration, Duration) = (s.busy, s.blocked);
    }
    assert_eq!(report.stage("source").expect("stage").items_pushed, 100);
    Ok(())
}

#[test]
fn a_failing_stage_ends_run_with_its_name_even_when_others_block() {
    let mut pipeline = Pipeline::new();
    let (tx, mut rx) = pipeline.channel::<u8>();
    pipeline.stage("blocked", move || {
        let _own_sender = tx; // never sends: only cancellation can wake this pop
        rx.pop(1, 1).map(drop)
    });
    pipeline.stage("failing", || Err(std::io::Error::other("no such file")));
    let t = Instant::now();
    let err = pipeline.run().expect_err("the failing stage ends the run");
    assert!(t.elapsed() < Duration::from_secs(10));
    let text = err.to_string();
    assert!(text.contains("failing") && text.contains("no such file"), "{text}");
    assert_eq!(err.stage(), Some("failing"));
    assert!(matches!(hetkit::Error::from(err), hetkit::Error::Stream(_)));
}

#[test]
fn stream_errors_convert_into_hetkit_errors_flattening_cuda() {
    let no_gpu = hetkit::stream::StreamError::Cuda(hetkit::cuda::Error::NoDriver);
    assert!(hetkit::Error::from(no_gpu).is_no_gpu());
    let misuse = hetkit::Error::from(hetkit::stream::StreamError::ZeroMin);
    assert!(matches!(misuse, hetkit::Error::Stream(hetkit::stream::StreamError::ZeroMin)));
}
