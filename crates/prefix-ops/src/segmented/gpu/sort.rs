//! Segmented sort on the GPU: prefix-ops' GPU sorts ([`crate::sort::gpu`]) behind the
//! descriptor: `rows` for regular segments, `segments` (block sorts, merge paths for long
//! segments) for offsets.

use cuda_kernels::{DeviceBuffer, Gpu};

use super::DeviceSegments;
use super::launch::read_back;
use crate::error::Result;
use crate::segmented::descriptor::Form;
use crate::segmented::{Order, Segments};
use crate::sort::gpu as sort_gpu;
use crate::sort::{SortKey, SortValue};

/// Sorts every segment of the device keys (the order of [`crate::sort`]).
///
/// Errors: [`crate::Error::LengthMismatch`] when `keys.len() != segs.len()`; GPU failures.
pub fn sort_device<K: SortKey>(
    gpu: &Gpu,
    keys: &mut DeviceBuffer<K>,
    segs: &Segments,
    order: Order,
) -> Result<()> {
    segs.check_len("keys", keys.len())?;
    if keys.is_empty() {
        return Ok(());
    }
    match segs.form() {
        Form::Regular(seg_len) => sort_gpu::rows(gpu, keys, seg_len, order),
        Form::Offsets(offsets) => sort_gpu::segments(gpu, keys, offsets, order),
    }
}

/// Sorts every segment of the device keys and moves `values` with them; stable.
///
/// Errors: [`crate::Error::LengthMismatch`] when `keys` or `values` disagree with `segs`; GPU
/// failures.
pub fn sort_by_key_device<K: SortKey, V: SortValue>(
    gpu: &Gpu,
    keys: &mut DeviceBuffer<K>,
    values: &mut DeviceBuffer<V>,
    segs: &Segments,
    order: Order,
) -> Result<()> {
    segs.check_len("keys", keys.len())?;
    segs.check_len("values", values.len())?;
    if keys.is_empty() {
        return Ok(());
    }
    match segs.form() {
        Form::Regular(seg_len) => sort_gpu::rows_by_key(gpu, keys, values, seg_len, order),
        Form::Offsets(offsets) => sort_gpu::segments_by_key(gpu, keys, values, offsets, order),
    }
}

/// Sorts every segment of a device descriptor: the prefix-ops sorts take host offsets, so the
/// offsets (not the data) are read back.
pub(super) fn sort_device_segments<K: SortKey>(
    gpu: &Gpu,
    keys: &mut DeviceBuffer<K>,
    segs: &DeviceSegments,
    order: Order,
) -> Result<()> {
    let host = match &segs.offsets {
        Some(o) => {
            let o = read_back(gpu, o, 0..segs.nseg + 1)?;
            Segments::from_built_offsets(o.into_iter().map(|x| x as usize).collect())?
        }
        None => Segments::regular(segs.seg_len as usize, segs.nseg),
    };
    sort_device(gpu, keys, &host, order)
}

/// Host convenience for [`sort_device`].
///
/// Errors: as [`sort_device`].
pub fn sort<K: SortKey>(gpu: &Gpu, keys: &mut [K], segs: &Segments, order: Order) -> Result<()> {
    segs.check_len("keys", keys.len())?;
    if keys.is_empty() {
        return Ok(());
    }
    let mut d = gpu.upload(keys)?;
    sort_device(gpu, &mut d, segs, order)?;
    keys.copy_from_slice(&gpu.download(&d)?);
    Ok(())
}

/// Host convenience for [`sort_by_key_device`].
///
/// Errors: as [`sort_by_key_device`].
pub fn sort_by_key<K: SortKey, V: SortValue>(
    gpu: &Gpu,
    keys: &mut [K],
    values: &mut [V],
    segs: &Segments,
    order: Order,
) -> Result<()> {
    segs.check_len("keys", keys.len())?;
    segs.check_len("values", values.len())?;
    if keys.is_empty() {
        return Ok(());
    }
    let (mut dk, mut dv) = (gpu.upload(keys)?, gpu.upload(values)?);
    sort_by_key_device(gpu, &mut dk, &mut dv, segs, order)?;
    keys.copy_from_slice(&gpu.download(&dk)?);
    values.copy_from_slice(&gpu.download(&dv)?);
    Ok(())
}
