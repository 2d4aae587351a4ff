//! Bringing modules onto a device once per process, and kernels out of them once per module.
//!
//! Each device has one slot per embedded module; the module is compiled (or read from the disk
//! cache) the first time any thread asks for it, under that slot's own lock, so compiling one
//! module never blocks launches from another. Kernels are looked up once per (module, name) and
//! kept with their attributes; the dynamic shared memory limit is raised once, to the device's
//! maximum, when the kernel is first looked up, so no launch sets it and two host threads cannot
//! race on it.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::Instant;

use cudarc::driver::sys::{CUfunction_attribute as FnAttr, CUresult};
use cudarc::driver::{CudaContext, CudaFunction, CudaModule, DriverError};
use cudarc::nvrtc::Ptx;

use crate::compile::{self, CudaVersion, NvrtcFailure};
use crate::disk_cache::{CacheKey, ModuleCache};
use crate::error::{Error, Result};
use crate::kernel::{Kernel, KernelAttributes};
use crate::modules::{CompilePath, EmbeddedModule, embedded_modules, force_nvrtc, nvrtc_present};

/// How a module's image was made, and what that cost this process.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModuleInfo {
    /// Whose output the image came from: nvcc's embedded PTX, or NVRTC at run time.
    pub path: CompilePath,
    /// The image is a cubin NVRTC built for the device's own architecture (`true`), or PTX that
    /// the driver compiled for the device (`false`).
    pub nvrtc_cubin: bool,
    /// The image came from the on-disk module cache, compiled by an earlier process.
    pub from_disk_cache: bool,
    /// Seconds this process spent compiling and loading the module.
    pub load_seconds: f64,
}

/// A module loaded on one device, with the kernels looked up from it so far.
pub struct Module {
    module: Arc<CudaModule>,
    info: ModuleInfo,
    name: String,
    kernels: RwLock<HashMap<Box<str>, Kernel>>,
    limits: SharedLimits,
}

impl fmt::Debug for Module {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Module").field("name", &self.name).field("info", &self.info).finish_non_exhaustive()
    }
}

impl Module {
    /// How the module was made.
    pub fn info(&self) -> ModuleInfo {
        self.info
    }

    /// The cudarc module.
    pub fn cuda_module(&self) -> &Arc<CudaModule> {
        &self.module
    }

    /// Kernel `name` with its attributes; looked up (and its dynamic shared memory limit raised
    /// to the device's maximum) on the first call, a read-locked map look-up after that.
    pub fn kernel(&self, name: &str) -> Result<Kernel> {
        if let Some(k) = self.kernels.read().unwrap_or_else(|p| p.into_inner()).get(name) {
            return Ok(k.clone());
        }
        let kernel = self.load_kernel(name)?;
        let mut map = self.kernels.write().unwrap_or_else(|p| p.into_inner());
        Ok(map.entry(name.into()).or_insert(kernel).clone())
    }

    fn load_kernel(&self, name: &str) -> Result<Kernel> {
        if name.contains('\0') {
            return Err(Error::Invalid(format!("kernel name {name:?} contains a NUL byte")));
        }
        let func = self.module.load_function(name).map_err(|e| match e.0 {
            CUresult::CUDA_ERROR_NOT_FOUND => {
                Error::UnknownKernel { module: self.name.clone(), kernel: name.to_string() }
            }
            _ => Error::Driver(e),
        })?;
        let attrs = attributes(&func, self.limits)?;
        Ok(Kernel::new(func, attrs))
    }
}

/// Shared memory per block the device gives without and with opting in.
#[derive(Debug, Clone, Copy)]
struct SharedLimits {
    default: usize,
    optin: usize,
}

fn attributes(func: &CudaFunction, limits: SharedLimits) -> Result<KernelAttributes> {
    let get = |a: FnAttr| func.get_attribute(a).map(|v| v.max(0) as usize);
    let static_shared = get(FnAttr::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)?;
    let wanted = limits.optin.saturating_sub(static_shared);
    if wanted > limits.default {
        let v = i32::try_from(wanted).unwrap_or(i32::MAX);
        if let Err(e) = func.set_attribute(FnAttr::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, v) {
            // The kernel still runs with the default limit; launches above it fail as before.
            tracing::warn!(error = ?e, "could not raise a kernel's dynamic shared memory limit");
        }
    }
    Ok(KernelAttributes {
        max_threads_per_block: get(FnAttr::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)? as u32,
        registers: get(FnAttr::CU_FUNC_ATTRIBUTE_NUM_REGS)? as u32,
        static_shared_bytes: static_shared,
        local_bytes: get(FnAttr::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)?,
        max_dynamic_shared_bytes: get(FnAttr::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)?,
    })
}

/// Why one way of making a module's image did not give a loadable module.
enum Failure {
    /// This way does not work here (and why); the next may.
    Skip(String),
    /// An error no other way avoids (a source error, a broken NVRTC).
    Fatal(Error),
}

/// A module slot: the lock serialises the first load, the cell makes every later look-up lock-free.
#[derive(Default)]
struct Slot {
    init: Mutex<()>,
    loaded: OnceLock<Arc<Module>>,
}

impl Slot {
    fn get_or_load(&self, load: impl FnOnce() -> Result<Module>) -> Result<Arc<Module>> {
        if let Some(m) = self.loaded.get() {
            return Ok(m.clone());
        }
        let _guard = self.init.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(m) = self.loaded.get() {
            return Ok(m.clone());
        }
        let m = Arc::new(load()?);
        Ok(self.loaded.get_or_init(|| m).clone())
    }
}

/// Everything loaded on one device, shared by every [`crate::Gpu`] handle on it.
pub(crate) struct DeviceModules {
    ctx: Arc<CudaContext>,
    cc: (i32, i32),
    driver: CudaVersion,
    limits: SharedLimits,
    disk: Option<ModuleCache>,
    embedded: Box<[Slot]>,
    generated: Mutex<HashMap<String, Arc<Slot>>>,
}

impl fmt::Debug for DeviceModules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeviceModules")
            .field("ordinal", &self.ctx.ordinal())
            .field("cc", &self.cc)
            .field("driver", &self.driver)
            .field("disk", &self.disk)
            .finish_non_exhaustive()
    }
}

/// The modules of device `ctx.ordinal()`, created by the first handle on it.
pub(crate) fn device_modules(
    ctx: &Arc<CudaContext>,
    cc: (i32, i32),
    shared_default: usize,
    shared_optin: usize,
) -> Result<Arc<DeviceModules>> {
    type Registry = Mutex<Vec<Option<Arc<DeviceModules>>>>;
    static DEVICES: OnceLock<Registry> = OnceLock::new();
    let mut devices = DEVICES.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
    let ordinal = ctx.ordinal();
    if devices.len() <= ordinal {
        devices.resize(ordinal + 1, None);
    }
    if let Some(d) = &devices[ordinal] {
        return Ok(d.clone());
    }
    let d = Arc::new(DeviceModules {
        ctx: ctx.clone(),
        cc,
        driver: compile::driver_version()?,
        limits: SharedLimits { default: shared_default, optin: shared_optin.max(shared_default) },
        disk: ModuleCache::from_env(),
        embedded: embedded_modules().iter().map(|_| Slot::default()).collect(),
        generated: Mutex::new(HashMap::new()),
    });
    devices[ordinal] = Some(d.clone());
    Ok(d)
}

impl DeviceModules {
    /// Embedded module `name`, loaded on first use.
    pub(crate) fn embedded(&self, name: &str) -> Result<Arc<Module>> {
        let (i, m) = embedded_modules()
            .iter()
            .enumerate()
            .find(|(_, m)| m.name == name)
            .ok_or_else(|| Error::UnknownModule(name.to_string()))?;
        self.embedded[i].get_or_load(|| self.load_embedded(m))
    }

    /// A module compiled from `source` generated at run time, once per process and source text.
    pub(crate) fn generated(&self, label: &str, source: &str) -> Result<Arc<Module>> {
        let slot = {
            let mut map = self.generated.lock().unwrap_or_else(|p| p.into_inner());
            map.entry(source.to_string()).or_default().clone()
        };
        slot.get_or_load(|| self.load_nvrtc(label, source, Vec::new(), Instant::now()))
    }

    fn load_embedded(&self, m: &EmbeddedModule) -> Result<Module> {
        let start = Instant::now();
        let _span = tracing::info_span!("load_module", module = m.name).entered();
        let mut attempts = Vec::new();
        if let (Some(ptx), false) = (m.ptx, force_nvrtc()) {
            let key = self.key(m.name, "nvcc-ptx-jit", ptx.as_bytes(), &[], &format!("nvcc {}", m.ptx_arch));
            let isa = compile::ptx_isa(ptx).unwrap_or("?");
            let made = self.route(&key, || {
                compile::jit_to_cubin(&self.ctx, ptx.as_bytes()).map_err(|e| {
                    Failure::Skip(format!(
                        "nvcc's PTX (ISA {isa}, {}): driver JIT: {}",
                        m.ptx_arch,
                        describe(&e)
                    ))
                })
            });
            match made {
                Ok((module, cached)) => {
                    return Ok(self.module(m.name, module, CompilePath::NvccPtx, false, cached, start));
                }
                Err(Failure::Skip(why)) => {
                    tracing::warn!(module = m.name, %why, "embedded PTX did not load, trying NVRTC");
                    attempts.push(why);
                }
                Err(Failure::Fatal(e)) => return Err(e),
            }
        }
        if !nvrtc_present() {
            return Err(if attempts.is_empty() {
                Error::NoNvrtc { module: m.name.to_string() }
            } else {
                self.nothing_loads(m.name, attempts)
            });
        }
        self.load_nvrtc(m.name, m.source, attempts, start)
    }

    /// NVRTC's cubin for the device's architecture, else its PTX through the driver's JIT.
    fn load_nvrtc(
        &self,
        name: &str,
        source: &str,
        mut attempts: Vec<String>,
        start: Instant,
    ) -> Result<Module> {
        if !nvrtc_present() {
            return Err(Error::NoNvrtc { module: name.to_string() });
        }
        let nvrtc = compile::nvrtc_version().map_or_else(|| "nvrtc ?".to_string(), |v| format!("nvrtc {v}"));
        let (major, minor) = self.cc;
        let sm = format!("sm_{major}{minor}");
        let opts = compile::nvrtc_options(&sm);
        let key = self.key(name, "nvrtc-cubin", source.as_bytes(), &opts, &nvrtc);
        let made = self.route(&key, || match compile::nvrtc_image(name, source, &opts) {
            Ok((image, true)) => Ok(image),
            // A real architecture gives a cubin; its absence means NVRTC cannot make one here.
            Ok((_, false)) => Err(Failure::Skip(format!("NVRTC's cubin: {nvrtc} made no cubin for {sm}"))),
            Err(NvrtcFailure::UnknownArch) => {
                Err(Failure::Skip(format!("NVRTC's cubin: {nvrtc} does not know {sm}")))
            }
            Err(NvrtcFailure::Other(e)) => Err(Failure::Fatal(e)),
        });
        match made {
            Ok((module, cached)) => {
                return Ok(self.module(name, module, CompilePath::Nvrtc, true, cached, start));
            }
            Err(Failure::Skip(why)) => attempts.push(why),
            Err(Failure::Fatal(e)) => return Err(e),
        }
        // PTX for the device's virtual architecture, or for compute_80 (what nvcc embeds) when
        // NVRTC predates the device: the driver JIT compiles either.
        let mut archs = vec![format!("compute_{major}{minor}")];
        if (major, minor) > (8, 0) {
            archs.push("compute_80".to_string());
        }
        for arch in archs {
            let opts = compile::nvrtc_options(&arch);
            let key = self.key(name, "nvrtc-ptx-jit", source.as_bytes(), &opts, &nvrtc);
            let mut unknown = false;
            let made = self.route(&key, || {
                let ptx = match compile::nvrtc_image(name, source, &opts) {
                    Ok((ptx, _)) => ptx,
                    Err(NvrtcFailure::UnknownArch) => {
                        unknown = true;
                        return Err(Failure::Skip(format!("NVRTC's PTX: {nvrtc} does not know {arch}")));
                    }
                    Err(NvrtcFailure::Other(e)) => return Err(Failure::Fatal(e)),
                };
                let isa = compile::ptx_isa(&String::from_utf8_lossy(&ptx)).unwrap_or("?").to_string();
                compile::jit_to_cubin(&self.ctx, &ptx).map_err(|e| {
                    Failure::Skip(format!("NVRTC's PTX for {arch} (ISA {isa}): driver JIT: {}", describe(&e)))
                })
            });
            match made {
                Ok((module, cached)) => {
                    return Ok(self.module(name, module, CompilePath::Nvrtc, false, cached, start));
                }
                Err(Failure::Skip(why)) => attempts.push(why),
                Err(Failure::Fatal(e)) => return Err(e),
            }
            // Older PTX from the same NVRTC has the same ISA version: only an unknown
            // architecture is worth a second try.
            if !unknown {
                break;
            }
        }
        Err(self.nothing_loads(name, attempts))
    }

    fn nothing_loads(&self, module: &str, attempts: Vec<String>) -> Error {
        Error::NothingLoads {
            module: module.to_string(),
            driver: self.driver,
            nvrtc: compile::nvrtc_version(),
            attempts: attempts.join("; "),
        }
    }

    fn key(&self, module: &str, route: &str, input: &[u8], opts: &[String], compiler: &str) -> CacheKey {
        CacheKey::new(module, route, input, opts, compiler, self.cc, self.driver.as_driver_int())
    }

    /// Loads the cached image for `key`, else `make`'s (and caches it); the flag says it was
    /// cached. A cached image that the driver refuses is dropped and made afresh.
    fn route(
        &self,
        key: &CacheKey,
        make: impl FnOnce() -> std::result::Result<Vec<u8>, Failure>,
    ) -> std::result::Result<(Arc<CudaModule>, bool), Failure> {
        if let Some(disk) = &self.disk
            && let Some(image) = disk.get(key)
        {
            match self.ctx.load_module(Ptx::from_binary(with_nul(image))) {
                Ok(m) => return Ok((m, true)),
                Err(e) => {
                    tracing::warn!(path = %disk.path(key).display(), error = ?e, "cached module does not load");
                    disk.remove(key);
                }
            }
        }
        let image = make()?;
        let module = self.ctx.load_module(Ptx::from_binary(with_nul(image.clone()))).map_err(|e| {
            Failure::Skip(format!("{}: the driver refused it: {}", route_name(key.route()), describe(&e)))
        })?;
        if let Some(disk) = &self.disk {
            disk.put(key, &image);
        }
        Ok((module, false))
    }

    fn module(
        &self,
        name: &str,
        module: Arc<CudaModule>,
        path: CompilePath,
        nvrtc_cubin: bool,
        from_disk_cache: bool,
        start: Instant,
    ) -> Module {
        let info =
            ModuleInfo { path, nvrtc_cubin, from_disk_cache, load_seconds: start.elapsed().as_secs_f64() };
        tracing::info!(module = name, ?info, "module loaded");
        Module {
            module,
            info,
            name: name.to_string(),
            kernels: RwLock::new(HashMap::new()),
            limits: self.limits,
        }
    }
}

/// A driver error as its name and text, e.g. `CUDA_ERROR_INVALID_IMAGE (device kernel image is invalid)`.
fn describe(e: &DriverError) -> String {
    match (e.error_name(), e.error_string()) {
        (Ok(name), Ok(text)) => format!("{} ({})", name.to_string_lossy(), text.to_string_lossy()),
        _ => format!("{:?}", e.0),
    }
}

/// What a cache route's image is, for error messages.
fn route_name(route: &str) -> &'static str {
    match route {
        "nvcc-ptx-jit" => "the JIT's cubin of nvcc's PTX",
        "nvrtc-cubin" => "NVRTC's cubin",
        "nvrtc-ptx-jit" => "the JIT's cubin of NVRTC's PTX",
        _ => "the image",
    }
}

/// The driver reads PTX up to its NUL and cubins by their ELF header; a trailing NUL keeps a
/// (possibly cached) PTX image terminated and is ignored after a cubin.
fn with_nul(mut image: Vec<u8>) -> Vec<u8> {
    if image.last() != Some(&0) {
        image.push(0);
    }
    image
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh set of module slots for device 0 with its disk cache in `dir`, when the device
    /// is the emulator (whose version gate the fallback below relies on).
    fn emulated(dir: &std::path::Path) -> Option<DeviceModules> {
        if !crate::driver_present() || force_nvrtc() {
            return None;
        }
        let gpu = crate::Gpu::new(0).ok()?;
        if !gpu.props().name.contains("CUDA emulator") {
            return None;
        }
        Some(DeviceModules {
            ctx: gpu.context().clone(),
            cc: gpu.props().compute_capability,
            driver: compile::driver_version().ok()?,
            limits: SharedLimits { default: 48 << 10, optin: 227 << 10 },
            disk: Some(ModuleCache::at(dir)),
            embedded: Box::new([]),
            generated: Mutex::new(HashMap::new()),
        })
    }

    fn axpy_with_ptx(ptx: &'static str) -> EmbeddedModule {
        let real = embedded_modules().iter().find(|m| m.name == "blas/axpy").unwrap();
        EmbeddedModule { ptx: Some(ptx), ptx_arch: "compute_80", ..*real }
    }

    /// nvcc's PTX goes through the driver's JIT into a cubin that the next load reads from disk;
    /// PTX of an ISA newer than the driver falls back to NVRTC, and the error path would name it.
    #[test]
    fn nvcc_ptx_is_jitted_cached_and_falls_back_when_too_new() {
        let dir = tempfile::tempdir().unwrap();
        let Some(dev) = emulated(dir.path()) else {
            println!("SKIPPED nvcc_ptx_is_jitted_cached_and_falls_back_when_too_new: needs the emulator");
            return;
        };
        // PTX as nvcc would embed it; the emulator's NVRTC makes it without compiling every `.cu`
        // file, as matching real nvcc PTX against the sources would.
        let axpy = embedded_modules().iter().find(|m| m.name == "blas/axpy").unwrap();
        let ptx = crate::nvrtc_compile_ptx("blas/axpy", axpy.source, (8, 0)).unwrap().to_src();
        let ptx: &'static str = Box::leak(ptx.into_boxed_str());
        let first = dev.load_embedded(&axpy_with_ptx(ptx)).unwrap();
        assert_eq!(
            (first.info.path, first.info.nvrtc_cubin, first.info.from_disk_cache),
            (CompilePath::NvccPtx, false, false)
        );
        first.kernel("axpy_f32").unwrap();
        let second = dev.load_embedded(&axpy_with_ptx(ptx)).unwrap();
        assert_eq!((second.info.path, second.info.from_disk_cache), (CompilePath::NvccPtx, true));

        let too_new = ".version 9.9\n.target sm_80\n.address_size 64\n.visible .entry axpy_f32(\n)\n";
        let m = dev.load_embedded(&axpy_with_ptx(too_new)).unwrap();
        assert_eq!((m.info.path, m.info.nvrtc_cubin), (CompilePath::Nvrtc, true));
        assert!(dev.nothing_loads("blas/axpy", vec!["x".into()]).to_string().contains("CUDA 12.8"));
    }
}
