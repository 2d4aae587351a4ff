//! Hierarchization and dehierarchization on the device: one launch of `sg_hierarchize_T` or
//! `sg_dehierarchize_T` per dimension, one thread block per work group of chains (see
//! `cuda-kernels/sg/sg_hierarchize.cu` and [`crate::tables::SweepTable`]). Launches on one stream
//! are ordered, which is the device-wide barrier between the dimension sweeps.

use cuda_kernels::{LaunchConfig, PushKernelArg};

use crate::device::{DeviceGrid, DeviceReal};
use crate::error::Result;
use crate::launch;

impl<T: DeviceReal> DeviceGrid<T> {
    /// Nodal values to hierarchical surpluses, in place on the device.
    ///
    /// # Errors
    /// Kernel load or launch failures.
    pub fn hierarchize(&mut self) -> Result<()> {
        self.sweep_all(true)
    }

    /// Hierarchical surpluses to nodal values, in place on the device.
    ///
    /// # Errors
    /// Kernel load or launch failures.
    pub fn dehierarchize(&mut self) -> Result<()> {
        self.sweep_all(false)
    }

    fn sweep_all(&mut self, hierarchize: bool) -> Result<()> {
        let _span = tracing::debug_span!("DeviceGrid::sweep", hierarchize, len = self.spec.len()).entered();
        let name = launch::sweep_kernel::<T>(hierarchize);
        let func = self.gpu.kernel(launch::SWEEP_MODULE, &name)?;
        launch::check_block(&func, self.sweep_config.block_size, &name)?;
        let ncomp = self.ncomp as u32;
        for sweep in &self.sweeps {
            if sweep.groups == 0 {
                continue;
            }
            let cfg = LaunchConfig {
                grid_dim: (launch::grid_x(sweep.groups, "a sweep")?, 1, 1),
                block_dim: (self.sweep_config.block_size, 1, 1),
                shared_mem_bytes: 0,
            };
            let stride = sweep.stride;
            let values = &mut self.values;
            // SAFETY: sg_*hierarchize_T(const u32* groups, const u64* chains, u32 stride, u32 ncomp,
            // T* v); the group and chain rows were built from this grid's spec, so every index the
            // kernel forms is inside the value buffer of len · ncomp (checked by the emulator tests).
            unsafe {
                self.gpu.launch(&func, cfg, |a| {
                    a.arg(&sweep.group_rows).arg(&sweep.chain_rows).arg(&stride).arg(&ncomp).arg(values);
                })?;
            }
        }
        Ok(())
    }
}
