//! Whether a GPU band can run at all on this machine.

use crate::error::Result;

/// `Ok` when device 0 answers; the CUDA error (no driver, no device) otherwise.
pub(crate) fn require_gpu() -> Result<()> {
    cuda_kernels::Gpu::new(0)?;
    Ok(())
}
