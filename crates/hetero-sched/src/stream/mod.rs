//! Streaming pipelines with elastic, typed channels (thesis 002, chapter 3: GStream; digest §3).
//!
//! A program is a graph of **stages**, each on its own thread, joined by **channels**:
//!
//! - [`Pipeline::channel`] makes an unbounded FIFO of plain values (`T: Copy + Default + Send`).
//!   [`Sender`] is `Clone` (producers merge); the stream ends when every sender is dropped.
//! - [`Receiver::pop`]`(min, max)` is *elastic*: it blocks until `min` items are there, then hands
//!   out up to `max` of them as one contiguous [`Batch`]; [`Batch::finalize`]`(k)` consumes only a
//!   prefix (a sliding window keeps the rest). At end of stream the remainder is flushed, then
//!   `Ok(None)`.
//! - [`Sender::reserve`]`(n)` lends channel memory to write in place ([`Slot`]);
//!   [`Slot::commit`]`(k)` publishes a prefix.
//! - Group channels for stage arrays: [`Pipeline::broadcast`], [`Pipeline::reduce`],
//!   [`Pipeline::all_to_all`]. Feedback edges are ordinary channels from a later stage back to an
//!   earlier one; queues are unbounded, so they cannot deadlock on space.
//! - [`Pipeline::run`] runs every stage; the first stage that fails or panics ends the run with
//!   its name, and every other stage is woken ([`StreamError::Cancelled`]). The [`Report`] has
//!   per-stage counts and times and draws as a timeline ([`Report::timeline_svg`]).
//! - GPU stages: a [`MirroredBuffer`] holds a batch on the host (pinned) and on a device with a
//!   [`Valid`] state; a stage says where it wants its data with a [`Place`], and [`map_batches`]
//!   runs a stage's CPU or GPU function over its batches with double-buffered, asynchronous
//!   transfers on their own CUDA streams, so moving a stage is changing its `Place`.
//! - Transports: [`TransportSender`] / [`TransportReceiver`] carry batches, end of stream and
//!   cancellation between processes; the in-process endpoints implement them directly, and
//!   [`ByteSender`] / [`ByteReceiver`] frame items as little-endian bytes over any
//!   `Read`/`Write` pair (a socket). [`send_all`] and [`receive_all`] bridge a local channel to
//!   a transport, so two pipelines joined by a socket behave as one.
//!
//! See the book, chapter "Streaming pipelines".

mod channel;
mod device;
mod error;
mod pace;
mod pipeline;
mod report;
mod segments;
mod stats;
mod transport;

pub use channel::{Batch, Item, Receiver, Sender, Slot};
pub use device::{MirroredBuffer, Place, Valid, map_batches};
pub use error::{BoxError, Result, StreamError};
pub use pipeline::Pipeline;
pub use report::{Report, StageReport};
pub use transport::{
    ByteReceiver, ByteSender, MAX_FRAME_BYTES, TAG_CANCEL, TAG_DATA, TAG_END, TransportReceiver,
    TransportSender, Wire, receive_all, send_all,
};
