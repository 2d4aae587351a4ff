//! The kernel files embedded by `build.rs`, and NVRTC compiles of sources to PTX.

use cudarc::nvrtc::sys::nvrtcResult;
use cudarc::nvrtc::{CompileError, CompileOptions, Ptx};

use crate::error::{Error, Result};

mod entry_points;

/// One `.cu` file of the crate as the build embedded it.
#[derive(Debug, Clone, Copy)]
pub struct EmbeddedModule {
    /// Path below `cuda-kernels/` without the extension, e.g. `"blas/axpy"`.
    pub name: &'static str,
    /// The source with its quoted `#include`s inlined (for NVRTC).
    pub source: &'static str,
    /// PTX from `nvcc`, when it was found at build time.
    pub ptx: Option<&'static str>,
    /// The virtual architecture the PTX targets.
    pub ptx_arch: &'static str,
}

impl EmbeddedModule {
    /// The `extern "C" __global__` entry points the module defines, in source order: the
    /// kernels [`crate::Gpu::function`] can find in it. Read from the source by a small C
    /// preprocessor (the kernels are instantiated by macros), so no compiler or device is needed;
    /// a construct it does not model is an [`Error::Invalid`], never a wrong list.
    pub fn entry_points(&self) -> Result<Vec<String>> {
        entry_points::entry_points(self.source)
    }
}

static EMBEDDED: &[EmbeddedModule] = include!(concat!(env!("OUT_DIR"), "/embedded_modules.rs"));

/// Every kernel file of the build.
pub fn embedded_modules() -> &'static [EmbeddedModule] {
    EMBEDDED
}

/// True when the build found `nvcc` and embedded PTX.
pub fn nvcc_ptx_embedded() -> bool {
    EMBEDDED.iter().any(|m| m.ptx.is_some())
}

/// How a module reached the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompilePath {
    /// PTX compiled by `nvcc` at build time.
    NvccPtx,
    /// Source compiled by NVRTC at run time for the device (a cubin for its architecture, or PTX).
    Nvrtc,
}

/// `HETKIT_FORCE_NVRTC=1` skips embedded PTX, so one build can test both paths.
pub(crate) fn force_nvrtc() -> bool {
    std::env::var("HETKIT_FORCE_NVRTC").is_ok_and(|v| v == "1")
}

/// Compiles `module`'s embedded source with NVRTC for compute capability `cc` and returns the PTX
/// text. Needs only `libnvrtc`, no driver or device, so machines without a GPU can check that every
/// kernel source compiles on the run-time path.
pub fn nvrtc_compile_source(module: &EmbeddedModule, cc: (i32, i32)) -> Result<String> {
    let ptx = nvrtc_compile(module, cc)?;
    Ok(ptx.to_src())
}

/// Compiles CUDA C `source` with NVRTC to a cubin for the real architecture `sm_XY` of `cc`, with
/// the options the runtime uses; `Ok(None)` when this NVRTC does not know the architecture. Needs
/// only `libnvrtc` (no driver or device).
pub fn nvrtc_compile_cubin(name: &str, source: &str, (major, minor): (i32, i32)) -> Result<Option<Vec<u8>>> {
    if !nvrtc_present() {
        return Err(Error::NoNvrtc { module: name.to_string() });
    }
    let opts = crate::compile::nvrtc_options(&format!("sm_{major}{minor}"));
    match crate::compile::nvrtc_image(name, source, &opts) {
        Ok((cubin, true)) => Ok(Some(cubin)),
        Ok((_, false)) | Err(crate::compile::NvrtcFailure::UnknownArch) => Ok(None),
        Err(crate::compile::NvrtcFailure::Other(e)) => Err(e),
    }
}

/// True when `libnvrtc` can be loaded on this machine.
pub fn nvrtc_present() -> bool {
    // SAFETY: only probes whether the shared library can be opened.
    unsafe { cudarc::nvrtc::sys::is_culib_present() }
}

fn nvrtc_compile(module: &EmbeddedModule, cc: (i32, i32)) -> Result<Ptx> {
    nvrtc_compile_ptx(module.name, module.source, cc)
}

/// Compiles CUDA C `source` (no quoted includes left: NVRTC gets no include paths) with NVRTC
/// for compute capability `cc`, with the options every hetkit kernel is built with (`-std=c++17`,
/// `-lineinfo`, `-DHETKIT_NVRTC=1`). `name` labels the program in errors and logs. For sources
/// generated at run time (user-defined operators); embedded modules go through [`crate::Gpu::function`].
pub fn nvrtc_compile_ptx(name: &str, source: &str, (major, minor): (i32, i32)) -> Result<Ptx> {
    // cudarc panics on an interior NUL; report it instead.
    if source.contains('\0') || name.contains('\0') {
        return Err(Error::Invalid(format!("source of `{name}` contains a NUL byte")));
    }
    if !nvrtc_present() {
        return Err(Error::NoNvrtc { module: name.to_string() });
    }
    let _span = tracing::info_span!("nvrtc_compile", module = name).entered();
    let compile = |arch: String| {
        let opts = CompileOptions {
            options: crate::compile::nvrtc_options(&arch),
            name: Some(format!("{}.cu", name.replace(['/', ' '], "_"))),
            ..Default::default()
        };
        cudarc::nvrtc::compile_ptx_with_opts(source, opts)
    };
    match compile(format!("compute_{major}{minor}")) {
        // An NVRTC older than the device does not know its architecture: PTX for the oldest
        // one the kernels need (what nvcc embeds) still runs, through the driver's JIT.
        Err(CompileError::CompileError { nvrtc, .. })
            if nvrtc.0 == nvrtcResult::NVRTC_ERROR_INVALID_OPTION && (major, minor) > (8, 0) =>
        {
            tracing::warn!(
                module = name,
                "NVRTC does not know compute_{major}{minor}; compiling for compute_80"
            );
            compile("compute_80".to_string()).map_err(|e| Error::compile(name, e))
        }
        other => other.map_err(|e| Error::compile(name, e)),
    }
}
