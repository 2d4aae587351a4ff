//! Streaming pipelines: stages on their own threads joined by typed, elastic channels
//! (thesis 002, chapter 3: GStream). The runtime is [`hetero_sched::stream`]; this module is its
//! public face, and its errors convert into [`crate::Error`] with `?`.
//!
//! ```
//! use hetkit::stream::Pipeline;
//!
//! let mut p = Pipeline::new();
//! let (tx, mut rx) = p.channel::<f32>();
//! p.stage("source", move || tx.push(&[1.0, 2.0, 3.0, 4.0]));
//! p.stage("window-sums", move || -> hetkit::Result<()> {
//!     // Pairs of neighbours: pop at least 2, consume all but the last one.
//!     while let Some(batch) = rx.pop(2, 64)? {
//!         if batch.len() < 2 {
//!             break;
//!         }
//!         let sums: Vec<f32> = batch.windows(2).map(|w| w[0] + w[1]).collect();
//!         assert_eq!(sums, [3.0, 5.0, 7.0]);
//!         let keep = batch.len() - 1;
//!         batch.finalize(keep)?;
//!     }
//!     Ok(())
//! });
//! let report = p.run()?;
//! assert_eq!(report.stage("window-sums").unwrap().items_popped, 4);
//! # Ok::<(), hetkit::Error>(())
//! ```
//!
//! See the book, chapter "Streaming pipelines".

pub use hetero_sched::stream::{
    Batch, BoxError, ByteReceiver, ByteSender, Item, MAX_FRAME_BYTES, MirroredBuffer, Pipeline, Place,
    Receiver, Report, Sender, Slot, StageReport, StreamError, TAG_CANCEL, TAG_DATA, TAG_END,
    TransportReceiver, TransportSender, Valid, Wire, map_batches, receive_all, send_all,
};
