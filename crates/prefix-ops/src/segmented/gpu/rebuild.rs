//! The descriptor rebuild on the device (the thesis's Fig. 5.7): head flags numbered by one
//! exclusive scan give the offsets; offsets give every element's segment id.

use cuda_kernels::{DeviceBuffer, Gpu, PushKernelArg};

use super::launch::{self, launch, ops_fn, read_back};
use super::reorder::worker_grid;
use super::{DeviceSegments, GpuOp, pick, scan_device};
use crate::error::{Error, Result};
use crate::scan::Add;

impl DeviceSegments {
    /// Rebuilds a descriptor from head flags on the device (non-zero where a segment starts):
    /// the flags' exclusive scan numbers the segments, and every head writes its position
    /// into the offsets. Reads back two scalars (the first flag, the number of segments);
    /// empty flags give zero segments.
    ///
    /// Errors: [`Error::Invalid`] when there are flags and the first is zero; GPU failures.
    pub fn from_head_flags(gpu: &Gpu, flags: &DeviceBuffer<u32>) -> Result<DeviceSegments> {
        let n = flags.len();
        if n == 0 {
            return Ok(DeviceSegments::from_device_offsets(0, 0, gpu.zeros::<u64>(1)?));
        }
        let mut pos = gpu.zeros::<u64>(n + 1)?;
        let n64 = n as u64;
        let to_counts = ops_fn(gpu, "seg_heads_to_counts")?;
        // SAFETY: seg_heads_to_counts(flags, n, h): flags of n, h of n + 1.
        unsafe {
            launch(gpu, &to_counts, launch::cover(gpu, n), |a| {
                a.arg(flags).arg(&n64).arg(&mut pos);
            })
        }?;
        scan_device(gpu, &mut pos, &DeviceSegments::regular_raw(1, n64 + 1), Add, true, None)?;
        // pos[1] is the first flag (0 or 1); pos[n] the number of heads.
        if read_back(gpu, &pos, 1..2)?[0] == 0 {
            return Err(Error::Invalid("head flags: flags[0] must be set when there is data".into()));
        }
        let nseg = read_back(gpu, &pos, n..n + 1)?[0] as usize;
        if nseg > u32::MAX as usize {
            return Err(Error::Invalid(format!("{nseg} segments: at most {} (ids are u32)", u32::MAX)));
        }
        let mut off = gpu.zeros::<u64>(nseg + 1)?;
        let to_offsets = ops_fn(gpu, "seg_heads_to_offsets")?;
        // SAFETY: seg_heads_to_offsets(flags, pos, n, off): pos of n + 1 numbering the heads,
        // off of pos[n] + 1.
        unsafe {
            launch(gpu, &to_offsets, launch::cover(gpu, n), |a| {
                a.arg(flags).arg(&pos).arg(&n64).arg(&mut off);
            })
        }?;
        Ok(DeviceSegments::from_device_offsets(nseg, n, off))
    }

    /// The segment of every element, on the device (`len()` entries), filled by the
    /// selector's granularity for reorderings.
    pub fn segment_ids(&self, gpu: &Gpu) -> Result<DeviceBuffer<u32>> {
        let mut ids = gpu.zeros::<u32>(self.len)?;
        if self.len == 0 {
            return Ok(ids);
        }
        let gran = pick::<u32>(gpu, GpuOp::Reverse, self, None);
        let (w, cfg) = worker_grid(gpu, gran, self.nseg);
        let func = ops_fn(gpu, "seg_fill_ids")?;
        let (off, _g, seg_len) = self.view(gpu);
        let nseg = self.nseg as u64;
        // SAFETY: seg_fill_ids(off, seg_len, nseg, W, ids): ids of the descriptor's elements, a
        // grid whose thread count is a multiple of W.
        unsafe {
            launch(gpu, &func, cfg, |a| {
                a.arg(&off).arg(&seg_len).arg(&nseg).arg(&w).arg(&mut ids);
            })
        }?;
        Ok(ids)
    }
}
