//! Location transparency: channel data with a host and a device copy, stages that say where they
//! want their data, and the double-buffered transfer template GPU stages run on.
//!
//! Channels carry host memory. A GPU stage pops a batch into a [`MirroredBuffer`] (pinned host
//! memory plus a device copy and a [`Valid`] state); the buffer uploads on a copy stream, the
//! kernel runs on the stage's compute stream, and cudarc's per-buffer events order the two, so no
//! global queue serialises independent stages (GStream's single command FIFO, modernised as the
//! digest §9.3 asks). [`map_batches`] is the overlap template: while batch `i` computes, batch
//! `i + 1` is popped and uploaded and the result of batch `i - 1` is copied out and pushed.

use std::time::Instant;

use cuda_kernels::{DeviceBuffer, Gpu, GpuScalar};
use cudarc::driver::PinnedHostSlice;

use super::channel::{Receiver, Sender};
use super::error::{BoxError, Result, StreamError};
use super::stats;

/// Where a stage wants its data.
#[derive(Debug, Clone)]
pub enum Place {
    /// Host memory: the stage computes on the CPU.
    Host,
    /// Device memory of this GPU: the stage launches kernels on this handle's stream.
    Device(Gpu),
}

/// Which copy of a [`MirroredBuffer`] holds the current data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Valid {
    /// Only the host copy (just loaded, or written on the host).
    Host,
    /// Only the device copy (written by a kernel).
    Device,
    /// Both copies hold the same data (a copy was made, possibly still in flight on its stream).
    Both,
}

enum HostCopy<T> {
    Plain(Vec<T>),
    Pinned(PinnedHostSlice<T>),
}

/// A batch of items with a host and a device copy and a state saying which is valid; copies
/// are made only when the other side asks for the data, asynchronously on the stream given.
///
/// With a GPU the host copy is pinned (page-locked) memory, so copies run asynchronously and
/// overlap kernels. Both copies are reallocated when the length changes: stages that pop fixed
/// batches (`min == max`, except the last) allocate once.
pub struct MirroredBuffer<T: GpuScalar> {
    gpu: Option<Gpu>,
    host: HostCopy<T>,
    device: Option<DeviceBuffer<T>>,
    len: usize,
    valid: Valid,
}

impl<T: GpuScalar> std::fmt::Debug for MirroredBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MirroredBuffer")
            .field("len", &self.len)
            .field("valid", &self.valid)
            .finish_non_exhaustive()
    }
}

impl<T: GpuScalar> MirroredBuffer<T> {
    /// An empty buffer for data that lives where `place` says (pinned host memory for a GPU).
    pub fn new(place: &Place) -> Self {
        let gpu = match place {
            Place::Host => None,
            Place::Device(g) => Some(g.clone()),
        };
        MirroredBuffer { gpu, host: HostCopy::Plain(Vec::new()), device: None, len: 0, valid: Valid::Host }
    }

    /// A buffer whose only valid copy is `device` (a kernel's output).
    pub fn from_device(gpu: &Gpu, device: DeviceBuffer<T>) -> Self {
        let len = device.len();
        MirroredBuffer {
            gpu: Some(gpu.clone()),
            host: HostCopy::Plain(Vec::new()),
            device: Some(device),
            len,
            valid: Valid::Device,
        }
    }

    /// Items in the buffer.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the buffer holds no items.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Which copy is current.
    pub fn valid(&self) -> Valid {
        self.valid
    }

    /// Replaces the contents with `items` (host copy valid).
    pub fn load(&mut self, items: &[T]) -> Result<()> {
        self.host_storage(items.len())?.copy_from_slice(items);
        self.len = items.len();
        self.valid = Valid::Host;
        Ok(())
    }

    /// The host copy, copied from the device first (on `gpu`'s stream, waiting for it) when
    /// only the device copy is valid.
    pub fn host(&mut self, gpu: &Gpu) -> Result<&[T]> {
        if self.valid == Valid::Device {
            self.download(gpu)?;
        }
        let t = Instant::now();
        let len = self.len;
        let s = match &self.host {
            HostCopy::Plain(v) => &v[..len],
            // Waits for copies in flight into this memory.
            HostCopy::Pinned(p) => &p.as_slice().map_err(cuda_kernels::Error::from)?[..len],
        };
        stats::transfer(t, "wait for copy to host");
        Ok(s)
    }

    /// The host copy for writing; the device copy becomes stale.
    pub fn host_mut(&mut self, gpu: &Gpu) -> Result<&mut [T]> {
        if self.valid == Valid::Device {
            self.download(gpu)?;
        }
        self.valid = Valid::Host;
        let len = self.len;
        Ok(match &mut self.host {
            HostCopy::Plain(v) => &mut v[..len],
            HostCopy::Pinned(p) => &mut p.as_mut_slice().map_err(cuda_kernels::Error::from)?[..len],
        })
    }

    /// Starts the copy to the device on `gpu`'s stream when only the host copy is valid; kernels
    /// on other streams that use [`MirroredBuffer::device`] wait for it on the device, not here.
    pub fn upload(&mut self, gpu: &Gpu) -> Result<()> {
        if self.valid != Valid::Host {
            return Ok(());
        }
        let t = Instant::now();
        if self.device.as_ref().is_none_or(|d| d.len() != self.len) {
            self.device = Some(gpu.zeros::<T>(self.len)?);
        }
        let dev = self.device.as_mut().expect("allocated above");
        if self.len > 0 {
            match &self.host {
                HostCopy::Plain(v) => gpu.stream().memcpy_htod(&v[..self.len], dev),
                HostCopy::Pinned(p) => gpu.stream().memcpy_htod(p, dev),
            }
            .map_err(cuda_kernels::Error::from)?;
        }
        stats::transfer(t, "copy to device");
        self.valid = Valid::Both;
        Ok(())
    }

    /// Starts the copy to the host on `gpu`'s stream when only the device copy is valid; it
    /// waits on the device for the kernel that wrote the data. [`MirroredBuffer::host`] waits
    /// for it to land.
    pub fn download(&mut self, gpu: &Gpu) -> Result<()> {
        if self.valid != Valid::Device {
            return Ok(());
        }
        let t = Instant::now();
        let len = self.len;
        self.host_storage(len)?;
        let dev = self.device.as_ref().expect("a device-valid buffer has a device copy");
        if len > 0 {
            match &mut self.host {
                HostCopy::Plain(v) => gpu.stream().memcpy_dtoh(dev, &mut v[..len]),
                HostCopy::Pinned(p) => gpu.stream().memcpy_dtoh(dev, p),
            }
            .map_err(cuda_kernels::Error::from)?;
        }
        stats::transfer(t, "copy to host");
        self.valid = Valid::Both;
        Ok(())
    }

    /// The device copy, uploaded first (on `gpu`'s stream) when only the host copy is valid.
    pub fn device(&mut self, gpu: &Gpu) -> Result<&DeviceBuffer<T>> {
        self.upload(gpu)?;
        Ok(self.device.as_ref().expect("uploaded above"))
    }

    /// The device copy for writing; the host copy becomes stale.
    pub fn device_mut(&mut self, gpu: &Gpu) -> Result<&mut DeviceBuffer<T>> {
        self.upload(gpu)?;
        self.valid = Valid::Device;
        Ok(self.device.as_mut().expect("uploaded above"))
    }

    /// Host memory for `n` items: pinned when the buffer belongs to a GPU, reallocated when the
    /// length changes; waits for copies still in flight into or out of it.
    fn host_storage(&mut self, n: usize) -> Result<&mut [T]> {
        if let Some(gpu) = &self.gpu {
            let fits = matches!(&self.host, HostCopy::Pinned(p) if p.len() == n);
            if !fits && n > 0 {
                // SAFETY: `alloc_pinned_with_flags` returns uninitialised page-locked memory of `n`
                // elements; `T: GpuScalar` is valid for every bit pattern (`ValidAsZeroBits` plain
                // numbers), and every caller writes the first `n` items before reading them.
                let p = unsafe { gpu.context().alloc_pinned_with_flags::<T>(n, 0) }
                    .map_err(cuda_kernels::Error::from)?;
                self.host = HostCopy::Pinned(p);
            }
        }
        Ok(match &mut self.host {
            HostCopy::Plain(v) => {
                v.resize(n, T::default());
                &mut v[..n]
            }
            HostCopy::Pinned(p) if n > 0 => &mut p.as_mut_slice().map_err(cuda_kernels::Error::from)?[..n],
            HostCopy::Pinned(_) => &mut [],
        })
    }
}

/// The overlap template of a GPU stage (thesis 002, Fig. 2.2): pops batches of `min..=max` items
/// from `input`, computes each where `place` says, and pushes the results in order.
///
/// On [`Place::Host`] it calls `cpu` on each batch. On [`Place::Device`] it calls `gpu` with the
/// batch's device copy and pushes the device buffer `gpu` returns; uploads run on one copy stream
/// and downloads on another, double-buffered, so while batch `i` computes, batch `i + 1` is popped
/// and uploaded and the result of batch `i - 1` is copied out and pushed. Moving a stage between
/// CPU and GPU is changing `place`: the two functions must compute the same thing.
///
/// Errors: those of the channels, the CUDA layer, and [`StreamError::Compute`] from either
/// function.
pub fn map_batches<T, U, C, G>(
    place: &Place,
    input: &mut Receiver<T>,
    output: &mut Sender<U>,
    min: usize,
    max: usize,
    mut cpu: C,
    mut gpu: G,
) -> Result<()>
where
    T: GpuScalar,
    U: GpuScalar,
    C: FnMut(&[T]) -> std::result::Result<Vec<U>, BoxError>,
    G: FnMut(&Gpu, &DeviceBuffer<T>) -> std::result::Result<DeviceBuffer<U>, BoxError>,
{
    let Place::Device(compute) = place else {
        while let Some(batch) = input.pop(min, max)? {
            let out = cpu(&batch).map_err(StreamError::Compute)?;
            drop(batch);
            output.push(&out)?;
        }
        return Ok(());
    };
    let (up, down) = (compute.with_new_stream()?, compute.with_new_stream()?);
    let mut inputs = [MirroredBuffer::new(place), MirroredBuffer::new(place)];
    let mut pending: Option<MirroredBuffer<U>> = None;
    let mut k = 0;
    while let Some(batch) = input.pop(min, max)? {
        let buf = &mut inputs[k];
        buf.load(&batch)?;
        drop(batch);
        buf.upload(&up)?;
        let out = gpu(compute, buf.device(&up)?).map_err(StreamError::Compute)?;
        let mut out = MirroredBuffer::from_device(compute, out);
        out.download(&down)?;
        if let Some(mut prev) = pending.replace(out) {
            output.push(prev.host(&down)?)?;
        }
        k ^= 1;
    }
    if let Some(mut last) = pending {
        output.push(last.host(&down)?)?;
    }
    Ok(())
}
