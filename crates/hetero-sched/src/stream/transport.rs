//! Transports: what a channel's two ends need from whatever carries items between them, so that
//! stages on different processes or nodes can be joined by message passing.
//!
//! A transport moves *batches* of plain items as contiguous slices, in order, and then either
//! ends the stream or cancels it. [`TransportSender`] and [`TransportReceiver`] say exactly that
//! much. Two implementations:
//!
//! - **In process**: [`Sender`] and [`Receiver`] themselves. The trait methods are thin wrappers
//!   over `push` and `pop`, called through generics, so the in-process path stays the direct one
//!   (no per-item or per-batch dynamic dispatch, no extra copy beyond the caller's buffer).
//! - **Byte stream**: [`ByteSender`] and [`ByteReceiver`] frame batches as little-endian bytes
//!   over any [`Write`]/[`Read`] pair (a Unix socket pair, a TCP connection, a pipe).
//!
//! [`send_all`] and [`receive_all`] are the bridge stages: one drains a local channel into a
//! transport, the other fills a local channel from one, so a pipeline on the other side keeps the
//! whole elastic `pop`/`finalize` contract.
//!
//! Wire format, one frame per batch: a tag byte, then for data frames the item size in bytes
//! (`u32` LE, checked against the receiver's `T` so mismatched types are an error, not garbage)
//! and the item count (`u32` LE), then the items, each little-endian. The tags are
//! [`TAG_DATA`], [`TAG_END`] (end of stream) and [`TAG_CANCEL`] (the producer failed).

use std::io::{ErrorKind, Read, Write};

use super::channel::{Item, Receiver, Sender};
use super::error::{Result, StreamError};

/// Frame tag: a batch of items follows.
pub const TAG_DATA: u8 = 0;
/// Frame tag: the stream ended normally; nothing follows.
pub const TAG_END: u8 = 1;
/// Frame tag: the producing side failed or was stopped; nothing follows.
pub const TAG_CANCEL: u8 = 2;
/// Largest payload of one frame: bigger batches are split, and a header announcing more is
/// rejected, so a corrupt or hostile peer cannot make the receiver allocate without bound.
pub const MAX_FRAME_BYTES: usize = 1 << 24;

/// The sending end of a transport: batches in order, then [`close`](Self::close) (end of
/// stream) or [`cancel`](Self::cancel).
pub trait TransportSender<T: Item>: Send {
    /// Sends `items` as one batch (or several, in order).
    ///
    /// Errors: [`StreamError::Cancelled`] when the run was stopped, [`StreamError::Disconnected`]
    /// or [`StreamError::Transport`] when the receiving side is gone.
    fn send(&mut self, items: &[T]) -> Result<()>;

    /// Ends the stream normally: the receiving side flushes what it has and then sees the end.
    fn close(self) -> Result<()>
    where
        Self: Sized;

    /// Ends the stream abnormally: the receiving side gets [`StreamError::Cancelled`].
    fn cancel(self)
    where
        Self: Sized;
}

/// The receiving end of a transport.
pub trait TransportReceiver<T: Item>: Send {
    /// Waits for the next items and appends between 1 and `max` of them (`max >= 1`) to `out`,
    /// returning how many; `Ok(0)` means the stream ended. `stop` is polled when the transport
    /// can wait with a timeout (a socket with a read timeout): once it returns true the call
    /// gives up with [`StreamError::Cancelled`], so a blocked bridge does not hold up its run.
    ///
    /// Errors: [`StreamError::Cancelled`] when the sending side cancelled or `stop` said so,
    /// [`StreamError::Transport`] when the sending side vanished without ending the stream,
    /// [`StreamError::Protocol`] on a malformed frame.
    fn recv(&mut self, out: &mut Vec<T>, max: usize, stop: &dyn Fn() -> bool) -> Result<usize>;
}

impl<T: Item> TransportSender<T> for Sender<T> {
    fn send(&mut self, items: &[T]) -> Result<()> {
        self.push(items)
    }

    /// Dropping the last clone is what ends an in-process stream.
    fn close(self) -> Result<()> {
        drop(self);
        Ok(())
    }

    /// In process, cancelling a channel stops its whole run: every stage is woken.
    fn cancel(self) {
        self.cancel_run();
    }
}

impl<T: Item> TransportReceiver<T> for Receiver<T> {
    /// In process the run's own cancellation wakes a blocked `pop`, so `stop` is not needed.
    fn recv(&mut self, out: &mut Vec<T>, max: usize, _stop: &dyn Fn() -> bool) -> Result<usize> {
        match self.pop(1, max.max(1))? {
            Some(batch) => {
                out.extend_from_slice(&batch);
                Ok(batch.len())
            }
            None => Ok(0),
        }
    }
}

/// Items that have a fixed little-endian encoding, so they can cross a byte-stream transport.
/// Implemented for the integer and floating-point primitives, `bool`, and arrays of them.
pub trait Wire: Item {
    /// Bytes per item on the wire.
    const SIZE: usize;
    /// Writes `self` into `out` (exactly [`Self::SIZE`] bytes), little-endian.
    fn put(&self, out: &mut [u8]);
    /// Reads an item from `bytes` (exactly [`Self::SIZE`] bytes); `None` for a byte pattern that
    /// is no valid value (a `bool` other than 0 or 1).
    fn get(bytes: &[u8]) -> Option<Self>;
}

macro_rules! wire_primitive {
    ($($t:ty),*) => {$(
        impl Wire for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            fn put(&self, out: &mut [u8]) {
                out.copy_from_slice(&self.to_le_bytes());
            }
            fn get(bytes: &[u8]) -> Option<Self> {
                Some(<$t>::from_le_bytes(bytes.try_into().ok()?))
            }
        }
    )*};
}
wire_primitive!(u8, u16, u32, u64, u128, i8, i16, i32, i64, i128, f32, f64);

impl Wire for bool {
    const SIZE: usize = 1;
    fn put(&self, out: &mut [u8]) {
        out[0] = u8::from(*self);
    }
    fn get(bytes: &[u8]) -> Option<Self> {
        match bytes {
            [0] => Some(false),
            [1] => Some(true),
            _ => None,
        }
    }
}

impl<T: Wire, const N: usize> Wire for [T; N]
where
    [T; N]: Default,
{
    const SIZE: usize = T::SIZE * N;
    fn put(&self, out: &mut [u8]) {
        for (v, o) in self.iter().zip(out.chunks_exact_mut(T::SIZE)) {
            v.put(o);
        }
    }
    fn get(bytes: &[u8]) -> Option<Self> {
        let mut a = <[T; N]>::default();
        for (v, b) in a.iter_mut().zip(bytes.chunks_exact(T::SIZE)) {
            *v = T::get(b)?;
        }
        Some(a)
    }
}

/// The sending end of a byte-stream transport: each batch becomes one or more framed messages
/// written to `W`. Call [`close`](TransportSender::close) to end the stream; dropping it
/// unclosed tells the peer the producer stopped abnormally ([`TAG_CANCEL`]), so a failing or
/// panicking stage is never mistaken for a finished one.
pub struct ByteSender<T: Wire, W: Write + Send> {
    writer: Option<W>,
    /// Reused frame buffer: after warm-up a batch costs no allocation.
    frame: Vec<u8>,
    _items: std::marker::PhantomData<fn(T)>,
}

impl<T: Wire, W: Write + Send> ByteSender<T, W> {
    /// A sender writing frames to `writer`.
    pub fn new(writer: W) -> Self {
        ByteSender { writer: Some(writer), frame: Vec::new(), _items: std::marker::PhantomData }
    }

    /// Items per frame: as many as fit [`MAX_FRAME_BYTES`] (at least one).
    fn per_frame() -> usize {
        (MAX_FRAME_BYTES / T::SIZE.max(1)).max(1)
    }

    fn write_frame(&mut self, items: &[T]) -> Result<()> {
        let header = [TAG_DATA]
            .into_iter()
            .chain((T::SIZE as u32).to_le_bytes())
            .chain((items.len() as u32).to_le_bytes());
        self.frame.clear();
        self.frame.extend(header);
        let at = self.frame.len();
        self.frame.resize(at + items.len() * T::SIZE, 0);
        for (i, v) in items.iter().enumerate() {
            v.put(&mut self.frame[at + i * T::SIZE..at + (i + 1) * T::SIZE]);
        }
        let w = self.writer.as_mut().ok_or(StreamError::Disconnected)?;
        w.write_all(&self.frame).and_then(|()| w.flush()).map_err(StreamError::Transport)
    }

    /// Writes a one-byte control frame and gives the writer up.
    fn finish_with(&mut self, tag: u8) -> Result<()> {
        let Some(mut w) = self.writer.take() else { return Ok(()) };
        w.write_all(&[tag]).and_then(|()| w.flush()).map_err(StreamError::Transport)
    }
}

impl<T: Wire, W: Write + Send> TransportSender<T> for ByteSender<T, W> {
    fn send(&mut self, items: &[T]) -> Result<()> {
        items.chunks(Self::per_frame()).try_for_each(|c| self.write_frame(c))
    }

    fn close(mut self) -> Result<()> {
        self.finish_with(TAG_END)
    }

    fn cancel(mut self) {
        // The peer may already be gone; then there is nobody left to tell.
        let _ = self.finish_with(TAG_CANCEL);
    }
}

impl<T: Wire, W: Write + Send> Drop for ByteSender<T, W> {
    fn drop(&mut self) {
        let _ = self.finish_with(TAG_CANCEL);
    }
}

/// The receiving end of a byte-stream transport: reads the frames a [`ByteSender`] wrote.
/// A frame larger than the caller's `max` is handed out over several calls.
pub struct ByteReceiver<T: Wire, R: Read + Send> {
    reader: R,
    /// Decoded items of the current frame not yet handed out: `pending[next..]`.
    pending: Vec<T>,
    next: usize,
    bytes: Vec<u8>,
    ended: bool,
}

impl<T: Wire, R: Read + Send> ByteReceiver<T, R> {
    /// A receiver reading frames from `reader`. To make a blocked read give up when its run is
    /// stopped, give a socket a read timeout (`set_read_timeout`): timeouts poll `stop`.
    pub fn new(reader: R) -> Self {
        ByteReceiver { reader, pending: Vec::new(), next: 0, bytes: Vec::new(), ended: false }
    }

    /// Reads exactly `len` bytes into `self.bytes`. A peer that closes first is an error: a
    /// stream must end with an end frame, so an early close means the producer vanished.
    fn read_exact(&mut self, len: usize, stop: &dyn Fn() -> bool) -> Result<()> {
        self.bytes.resize(len, 0);
        let mut at = 0;
        while at < len {
            match self.reader.read(&mut self.bytes[at..]) {
                Ok(0) => return Err(peer_gone()),
                Ok(k) => at += k,
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    if stop() {
                        return Err(StreamError::Cancelled);
                    }
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(StreamError::Transport(e)),
            }
        }
        Ok(())
    }

    /// Reads frames until one carries items (into `pending`) or the stream ends.
    fn read_frame(&mut self, stop: &dyn Fn() -> bool) -> Result<()> {
        loop {
            self.read_exact(1, stop)?;
            match self.bytes[0] {
                TAG_END => {
                    self.ended = true;
                    return Ok(());
                }
                TAG_CANCEL => return Err(StreamError::Cancelled),
                TAG_DATA => {}
                tag => return Err(StreamError::Protocol(format!("unknown frame tag {tag}"))),
            }
            self.read_exact(8, stop)?;
            let size = u32::from_le_bytes(self.bytes[..4].try_into().expect("4 bytes")) as usize;
            let count = u32::from_le_bytes(self.bytes[4..8].try_into().expect("4 bytes")) as usize;
            let len = check_header::<T>(size, count)?;
            if count == 0 {
                continue;
            }
            self.read_exact(len, stop)?;
            self.pending.clear();
            self.next = 0;
            for i in 0..count {
                let v = T::get(&self.bytes[i * T::SIZE..(i + 1) * T::SIZE])
                    .ok_or_else(|| StreamError::Protocol("invalid item bytes".into()))?;
                self.pending.push(v);
            }
            return Ok(());
        }
    }
}

/// Validates a data frame's header against `T`; returns the payload length in bytes.
fn check_header<T: Wire>(size: usize, count: usize) -> Result<usize> {
    if size != T::SIZE {
        return Err(StreamError::Protocol(format!(
            "items of {size} bytes received by a channel of {}-byte items",
            T::SIZE
        )));
    }
    match count.checked_mul(size) {
        Some(len) if len <= MAX_FRAME_BYTES && (size > 0 || count <= MAX_FRAME_BYTES) => Ok(len),
        _ => Err(StreamError::Protocol(format!("frame of {count} items exceeds the limit"))),
    }
}

fn peer_gone() -> StreamError {
    StreamError::Transport(std::io::Error::new(
        ErrorKind::UnexpectedEof,
        "the sending side closed the connection without ending the stream",
    ))
}

impl<T: Wire, R: Read + Send> TransportReceiver<T> for ByteReceiver<T, R> {
    fn recv(&mut self, out: &mut Vec<T>, max: usize, stop: &dyn Fn() -> bool) -> Result<usize> {
        if self.next == self.pending.len() {
            if self.ended {
                return Ok(0);
            }
            self.read_frame(stop)?;
            if self.ended {
                return Ok(0);
            }
        }
        let k = (self.pending.len() - self.next).min(max.max(1));
        out.extend_from_slice(&self.pending[self.next..self.next + k]);
        self.next += k;
        Ok(k)
    }
}

/// Bridge stage, outgoing side: pops batches of up to `max` items from a local channel and sends
/// them through `to`, then closes it at end of stream. If anything fails (the run was stopped,
/// the peer vanished) the transport is cancelled, so the peer stops too, and the error returned.
///
/// A failing stage drops its senders, ending its channels, a moment before the run learns of the
/// failure; so at end of stream this waits until the stage that dropped the last sender has
/// returned, and cancels instead of closing when it failed. (A stage that drops its sender early
/// and goes on working thus delays the end frame until it returns.)
pub fn send_all<T: Item, S: TransportSender<T>>(from: &mut Receiver<T>, mut to: S, max: usize) -> Result<()> {
    match forward(from, &mut to, max) {
        Ok(()) => to.close(),
        Err(e) => {
            to.cancel();
            Err(e)
        }
    }
}

fn forward<T: Item, S: TransportSender<T>>(from: &mut Receiver<T>, to: &mut S, max: usize) -> Result<()> {
    while let Some(batch) = from.pop(1, max.max(1))? {
        to.send(&batch)?;
    }
    from.ended_cleanly()
}

/// Bridge stage, incoming side: receives batches of up to `max` items from `from` and pushes
/// them into a local channel until the stream ends. A cancelled or vanished peer is an error,
/// which stops this run; a stop of this run makes a transport that can wait with a timeout give
/// up (see [`ByteReceiver::new`]).
pub fn receive_all<T: Item, R: TransportReceiver<T>>(mut from: R, to: &Sender<T>, max: usize) -> Result<()> {
    let mut buf = Vec::new();
    let stop = || to.run_cancelled();
    loop {
        buf.clear();
        if from.recv(&mut buf, max.max(1), &stop)? == 0 {
            return Ok(());
        }
        to.push(&buf)?;
    }
}

impl<T: Wire, W: Write + Send> std::fmt::Debug for ByteSender<T, W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ByteSender").field("open", &self.writer.is_some()).finish_non_exhaustive()
    }
}

impl<T: Wire, R: Read + Send> std::fmt::Debug for ByteReceiver<T, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ByteReceiver")
            .field("pending", &(self.pending.len() - self.next))
            .field("ended", &self.ended)
            .finish_non_exhaustive()
    }
}
