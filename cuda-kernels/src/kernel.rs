//! A kernel looked up once, with the attributes launches are checked against.

use std::ops::Deref;
use std::sync::Arc;

use cudarc::driver::{CudaFunction, LaunchConfig};

use crate::error::{Error, Result};

/// What the driver says about a kernel, read once when it is first looked up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelAttributes {
    /// The largest block it can be launched with (its `__launch_bounds__`, or what its
    /// registers allow).
    pub max_threads_per_block: u32,
    /// Registers per thread.
    pub registers: u32,
    /// Static (`__shared__`) shared memory per block, in bytes.
    pub static_shared_bytes: usize,
    /// Local memory per thread (spills and stack), in bytes.
    pub local_bytes: usize,
    /// The most dynamic shared memory a launch may ask for: raised once, when the kernel was first
    /// looked up, to everything the device allows beside the static shared memory.
    pub max_dynamic_shared_bytes: usize,
}

/// A kernel of a loaded module with its [`KernelAttributes`]. Cloning is cheap (a reference
/// count), and it dereferences to cudarc's [`CudaFunction`], so `gpu.launch(&kernel, ...)` works
/// as with a function.
#[derive(Debug, Clone)]
pub struct Kernel(Arc<(CudaFunction, KernelAttributes)>);

impl Kernel {
    pub(crate) fn new(func: CudaFunction, attrs: KernelAttributes) -> Kernel {
        Kernel(Arc::new((func, attrs)))
    }

    /// True when both are the same looked-up kernel (one cache entry).
    pub fn ptr_eq(a: &Kernel, b: &Kernel) -> bool {
        Arc::ptr_eq(&a.0, &b.0)
    }

    /// The cudarc function.
    pub fn function(&self) -> &CudaFunction {
        &self.0.0
    }

    /// The attributes read when it was looked up.
    pub fn attributes(&self) -> &KernelAttributes {
        &self.0.1
    }

    /// An error (rather than a launch failure) when `cfg` asks for a larger block or more dynamic
    /// shared memory than this kernel allows.
    pub fn check(&self, cfg: &LaunchConfig) -> Result<()> {
        let a = self.attributes();
        let (x, y, z) = cfg.block_dim;
        let threads = u64::from(x) * u64::from(y) * u64::from(z);
        if threads > u64::from(a.max_threads_per_block) {
            return Err(Error::Invalid(format!(
                "a block of {threads} threads exceeds the kernel's limit of {}",
                a.max_threads_per_block
            )));
        }
        if cfg.shared_mem_bytes as usize > a.max_dynamic_shared_bytes {
            return Err(Error::Invalid(format!(
                "{} B of dynamic shared memory exceed the kernel's limit of {} B",
                cfg.shared_mem_bytes, a.max_dynamic_shared_bytes
            )));
        }
        Ok(())
    }
}

impl Deref for Kernel {
    type Target = CudaFunction;

    fn deref(&self) -> &CudaFunction {
        self.function()
    }
}
