//! The device handle: context, stream, properties, buffers and launches.

use std::fmt;
use std::sync::{Arc, OnceLock};

use cudarc::driver::sys::CUdevice_attribute as Attr;
use cudarc::driver::{CudaContext, CudaFunction, CudaSlice, CudaStream, LaunchArgs, LaunchConfig};

use crate::GpuScalar;
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::loader::{self, DeviceModules, Module, ModuleInfo};
use crate::modules::CompilePath;

/// True when `libcuda` can be loaded on this machine.
pub fn driver_present() -> bool {
    // SAFETY: only tries to open the shared library; no CUDA call is made.
    unsafe { cudarc::driver::sys::is_culib_present() }
}

/// What the kernels and the dispatchers need to know about a device.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceProps {
    /// Marketing name, e.g. "NVIDIA H100 80GB HBM3".
    pub name: String,
    /// Compute capability (major, minor).
    pub compute_capability: (i32, i32),
    /// Streaming multiprocessors.
    pub sm_count: u32,
    /// Global memory in bytes.
    pub total_memory: usize,
    /// L2 cache in bytes.
    pub l2_bytes: usize,
    /// Shared memory a block gets without opting in (48 KiB).
    pub shared_per_block: usize,
    /// Shared memory a block may get after raising its limit (227 KiB on Hopper).
    pub shared_per_block_optin: usize,
    /// Shared memory per multiprocessor.
    pub shared_per_sm: usize,
    /// Registers per block.
    pub regs_per_block: u32,
    /// Maximum threads per block.
    pub max_threads_per_block: u32,
    /// Threads per warp.
    pub warp_size: u32,
    /// Peak DRAM bandwidth in bytes/s from memory clock and bus width (0 if the driver does not say).
    pub peak_bandwidth: f64,
}

impl fmt::Display for DeviceProps {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let gib = |b: usize| b as f64 / (1u64 << 30) as f64;
        write!(
            f,
            "{} (sm_{}{}), {} SMs, {:.1} GiB, L2 {:.1} MiB, shared {}/{} KiB per block, {:.0} GB/s peak",
            self.name,
            self.compute_capability.0,
            self.compute_capability.1,
            self.sm_count,
            gib(self.total_memory),
            self.l2_bytes as f64 / (1 << 20) as f64,
            self.shared_per_block / 1024,
            self.shared_per_block_optin / 1024,
            self.peak_bandwidth / 1e9
        )
    }
}

/// One CUDA device with its context and the stream hetkit's calls run on.
#[derive(Debug, Clone)]
pub struct Gpu {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    props: Arc<DeviceProps>,
    modules: Arc<DeviceModules>,
}

impl Gpu {
    /// Opens device `ordinal`. Returns [`Error::NoDriver`] or [`Error::NoDevice`] (never panics)
    /// on machines without a usable GPU.
    pub fn new(ordinal: usize) -> Result<Gpu> {
        if !driver_present() {
            return Err(Error::NoDriver);
        }
        let count = match CudaContext::device_count() {
            Ok(c) => c.max(0) as usize,
            // cuInit fails with NO_DEVICE (or similar) when the driver sees no GPU.
            Err(_) => 0,
        };
        if ordinal >= count {
            return Err(Error::NoDevice { ordinal, count });
        }
        let ctx = CudaContext::new(ordinal)?;
        if ctx.has_async_alloc() {
            keep_freed_pool_memory(&ctx);
        }
        let stream = ctx.new_stream()?;
        let props = Arc::new(read_props(&ctx)?);
        let modules = loader::device_modules(
            &ctx,
            props.compute_capability,
            props.shared_per_block,
            props.shared_per_block_optin,
        )?;
        Ok(Gpu { ctx, stream, props, modules })
    }

    /// The device's properties.
    pub fn props(&self) -> &DeviceProps {
        &self.props
    }

    /// The cudarc context, for code that needs more than this wrapper offers.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// The stream every operation of this handle is queued on.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// A second handle on the same device with its own stream (for overlapping work).
    pub fn with_new_stream(&self) -> Result<Gpu> {
        Ok(Gpu {
            ctx: self.ctx.clone(),
            stream: self.ctx.new_stream()?,
            props: self.props.clone(),
            modules: self.modules.clone(),
        })
    }

    /// Kernel `function` of the embedded file `module` (e.g. `"blas/axpy"`, `"axpy_f32"`),
    /// compiled and loaded once per process and device (and read from the on-disk module cache
    /// when an earlier process compiled it). A clone of the cached function: no driver call after
    /// the first.
    pub fn function(&self, module: &str, function: &str) -> Result<CudaFunction> {
        Ok(self.kernel(module, function)?.function().clone())
    }

    /// Kernel `function` of the embedded file `module` with its attributes (registers, shared
    /// memory, block limit), looked up once per process and device. Its dynamic shared memory
    /// limit is already raised to the device's maximum, so callers need not (and should not) set
    /// `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES` themselves.
    pub fn kernel(&self, module: &str, function: &str) -> Result<Kernel> {
        self.modules.embedded(module)?.kernel(function)
    }

    /// The embedded file `module`, loaded on this device on first use.
    pub fn module(&self, module: &str) -> Result<Arc<Module>> {
        self.modules.embedded(module)
    }

    /// A module compiled with NVRTC from `source` generated at run time (no quoted `#include`s;
    /// NVRTC gets no include paths), once per process, device and source text, and cached on
    /// disk like the embedded ones. `label` names it in errors and logs.
    pub fn module_from_source(&self, label: &str, source: &str) -> Result<Arc<Module>> {
        self.modules.generated(label, source)
    }

    /// How `module` was (or will be) brought onto this device.
    pub fn compile_path(&self, module: &str) -> Result<CompilePath> {
        Ok(self.module_info(module)?.path)
    }

    /// How `module` was brought onto this device: path, cubin or PTX, from the disk cache or not,
    /// and the seconds it took (loads it if needed).
    pub fn module_info(&self, module: &str) -> Result<ModuleInfo> {
        Ok(self.modules.embedded(module)?.info())
    }

    /// A zeroed device buffer of `len` elements (`len == 0` gives an empty buffer).
    pub fn zeros<T: GpuScalar>(&self, len: usize) -> Result<CudaSlice<T>> {
        if len == 0 {
            return self.empty();
        }
        self.stream.alloc_zeros(len).map_err(|e| Error::from_alloc(e, len * size_of::<T>()))
    }

    /// A device copy of `host` (an empty slice gives an empty buffer).
    pub fn upload<T: GpuScalar>(&self, host: &[T]) -> Result<CudaSlice<T>> {
        if host.is_empty() {
            return self.empty();
        }
        self.stream.clone_htod(host).map_err(|e| Error::from_alloc(e, std::mem::size_of_val(host)))
    }

    /// An empty buffer. The driver rejects 0-byte allocations (`cuMemAlloc` returns
    /// `CUDA_ERROR_INVALID_VALUE`), so it owns a 1-byte allocation and reports length 0.
    fn empty<T: GpuScalar>(&self) -> Result<CudaSlice<T>> {
        let byte = self.stream.alloc_zeros::<u8>(1).map_err(|e| Error::from_alloc(e, 1))?;
        let ptr = byte.leak();
        // SAFETY: `ptr` is a live allocation of this stream's context that nothing else owns; the
        // returned slice frees it on drop and, with length 0, never reads or writes it.
        Ok(unsafe { self.stream.upgrade_device_ptr(ptr, 0) })
    }

    /// Overwrites `dst` with `host` (lengths must match).
    pub fn write<T: GpuScalar>(&self, host: &[T], dst: &mut CudaSlice<T>) -> Result<()> {
        if host.len() != dst.len() {
            return Err(Error::Invalid(format!(
                "host slice of {} into device buffer of {}",
                host.len(),
                dst.len()
            )));
        }
        if host.is_empty() {
            return Ok(());
        }
        Ok(self.stream.memcpy_htod(host, dst)?)
    }

    /// A host copy of `buf` (waits for queued work).
    pub fn download<T: GpuScalar>(&self, buf: &CudaSlice<T>) -> Result<Vec<T>> {
        if buf.is_empty() {
            return Ok(Vec::new());
        }
        Ok(self.stream.clone_dtoh(buf)?)
    }

    /// Waits for everything queued on this handle's stream.
    pub fn synchronize(&self) -> Result<()> {
        Ok(self.stream.synchronize()?)
    }

    /// Launches `func` with the arguments `push` adds, and reports a launch failure as an error.
    /// The launch itself takes no lock and queries nothing; [`Gpu::kernel`] and [`Gpu::function`]
    /// hand out cached kernels, so looking one up per call is cheap. A [`Kernel`] passes here as
    /// is (it dereferences to the function); [`Kernel::check`] checks a configuration against its
    /// limits. With `HETKIT_SYNC_LAUNCH=1` (read once per process) it also waits and reports
    /// faults of the kernel itself, which pins an asynchronous error on the launch that caused it.
    ///
    /// # Safety
    /// The arguments must match the kernel's parameter list in number, order and type, and every
    /// buffer must be large enough for the indices the kernel computes from them.
    pub unsafe fn launch<'a>(
        &'a self,
        func: &'a CudaFunction,
        cfg: LaunchConfig,
        push: impl FnOnce(&mut LaunchArgs<'a>),
    ) -> Result<()> {
        let mut args = self.stream.launch_builder(func);
        push(&mut args);
        // SAFETY: the caller guarantees the argument list matches the kernel.
        unsafe { args.launch(cfg) }?;
        if sync_launch() {
            self.stream.synchronize()?;
        }
        Ok(())
    }

    /// Number of blocks of `threads` that cover `n` items, capped for grid-stride loops at a
    /// multiple of the SM count that keeps every SM busy.
    pub fn grid_for(&self, n: usize, threads: u32) -> u32 {
        let needed = n.div_ceil(threads as usize).max(1);
        let cap = self.props.sm_count as usize * 32;
        needed.min(cap) as u32
    }
}

/// `HETKIT_SYNC_LAUNCH=1`, read once: reading the environment takes a process-wide lock.
fn sync_launch() -> bool {
    static SYNC: OnceLock<bool> = OnceLock::new();
    *SYNC.get_or_init(|| std::env::var("HETKIT_SYNC_LAUNCH").is_ok_and(|v| v == "1"))
}

fn read_props(ctx: &Arc<CudaContext>) -> Result<DeviceProps> {
    let attr = |a: Attr| ctx.attribute(a).map(|v| v.max(0) as usize);
    let mem_clock_khz = attr(Attr::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE).unwrap_or(0);
    let bus_bits = attr(Attr::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH).unwrap_or(0);
    Ok(DeviceProps {
        name: ctx.name()?,
        compute_capability: ctx.compute_capability()?,
        sm_count: attr(Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32,
        total_memory: ctx.total_mem()?,
        l2_bytes: attr(Attr::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)?,
        shared_per_block: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)?,
        shared_per_block_optin: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?,
        shared_per_sm: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR)?,
        regs_per_block: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK)? as u32,
        max_threads_per_block: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)? as u32,
        warp_size: attr(Attr::CU_DEVICE_ATTRIBUTE_WARP_SIZE)? as u32,
        // DDR: two transfers per clock.
        peak_bandwidth: 2.0 * mem_clock_khz as f64 * 1e3 * bus_bits as f64 / 8.0,
    })
}

/// cudarc allocates with `cuMemAllocAsync` from the device's default memory pool, whose release
/// threshold of 0 hands freed memory back to the driver at every synchronisation; the next
/// call's scratch buffers would then be mapped afresh. Keeping it in the pool makes per-call
/// scratch cost a pool lookup. Best effort: a failure only costs that speed.
fn keep_freed_pool_memory(ctx: &CudaContext) {
    use cudarc::driver::sys;
    if ctx.bind_to_thread().is_err() {
        return;
    }
    let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
    // SAFETY: `pool` is a valid out-pointer and `cu_device` a device of a live context.
    let got = unsafe { sys::cuDeviceGetDefaultMemPool(&mut pool, ctx.cu_device()) };
    if got != sys::CUresult::CUDA_SUCCESS {
        return;
    }
    let mut threshold = u64::MAX;
    // SAFETY: the release threshold attribute takes a pointer to a `cuuint64_t`.
    let set = unsafe {
        sys::cuMemPoolSetAttribute(
            pool,
            sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
            (&mut threshold as *mut u64).cast(),
        )
    };
    if set != sys::CUresult::CUDA_SUCCESS {
        tracing::debug!(?set, "could not raise the memory pool's release threshold");
    }
}
