//! Turning kernel text into a device image: NVRTC (cubin for the device's own architecture, or
//! PTX), the driver's JIT of PTX into a cubin, and the CUDA versions that decide which of them
//! the driver accepts.

use std::ffi::{CStr, CString, c_char};
use std::fmt;
use std::sync::Arc;

use cudarc::driver::{CudaContext, DriverError, sys as cu};
use cudarc::nvrtc::result as nvrtc;
use cudarc::nvrtc::sys::{self as nvrtc_sys, nvrtcResult};

use crate::error::{Error, Result};

/// A CUDA release, as the driver (`cuDriverGetVersion`, e.g. 12080) or NVRTC (`nvrtcVersion`,
/// e.g. 12.8) reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CudaVersion {
    /// Major release, e.g. 12.
    pub major: i32,
    /// Minor release, e.g. 8.
    pub minor: i32,
}

impl CudaVersion {
    /// From the driver's encoding `1000 * major + 10 * minor`.
    pub fn from_driver_int(v: i32) -> CudaVersion {
        CudaVersion { major: v / 1000, minor: (v % 1000) / 10 }
    }

    /// The driver's encoding `1000 * major + 10 * minor`.
    pub fn as_driver_int(self) -> i32 {
        1000 * self.major + 10 * self.minor
    }
}

impl fmt::Display for CudaVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// The newest CUDA version the loaded driver supports. Needs `libcuda` (check
/// [`crate::driver_present`] first: cudarc panics when it cannot load the library).
pub fn driver_version() -> Result<CudaVersion> {
    let mut v = 0;
    // SAFETY: `v` is a valid out-pointer; the call needs no context.
    unsafe { cu::cuDriverGetVersion(&mut v) }.result()?;
    Ok(CudaVersion::from_driver_int(v))
}

/// The version of the loaded NVRTC, or `None` when `libnvrtc` cannot be loaded.
pub fn nvrtc_version() -> Option<CudaVersion> {
    if !crate::nvrtc_present() {
        return None;
    }
    let (mut major, mut minor) = (0, 0);
    // SAFETY: two valid out-pointers.
    let r = unsafe { nvrtc_sys::nvrtcVersion(&mut major, &mut minor) };
    (r == nvrtcResult::NVRTC_SUCCESS).then_some(CudaVersion { major, minor })
}

/// The options every hetkit kernel is compiled with, for NVRTC architecture `arch`
/// (`sm_90` gives a cubin, `compute_90` PTX).
pub(crate) fn nvrtc_options(arch: &str) -> Vec<String> {
    vec![
        format!("--gpu-architecture={arch}"),
        "-std=c++17".to_string(),
        "-lineinfo".to_string(),
        "-DHETKIT_NVRTC=1".to_string(),
    ]
}

/// What an NVRTC compile can end in, short of an image.
#[derive(Debug)]
pub(crate) enum NvrtcFailure {
    /// NVRTC does not know the architecture (it predates the device).
    UnknownArch,
    /// Anything else: a source error (with NVRTC's log) or an NVRTC failure.
    Other(Error),
}

/// An NVRTC program that is destroyed on drop.
struct Program(nvrtc_sys::nvrtcProgram);

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: created by `create_program` and destroyed only here.
        let _ = unsafe { nvrtc::destroy_program(self.0) };
    }
}

/// Compiles `source` with `options`; returns the cubin when the architecture is a real one
/// (`sm_XY`) and NVRTC made one, else the NUL-terminated PTX, with a flag saying which.
pub(crate) fn nvrtc_image(
    name: &str,
    source: &str,
    options: &[String],
) -> std::result::Result<(Vec<u8>, bool), NvrtcFailure> {
    let fail = |what: &str, e: nvrtc::NvrtcError| {
        NvrtcFailure::Other(Error::Compile { module: name.to_string(), message: format!("{what}: {e:?}") })
    };
    let (src, label) =
        match (CString::new(source), CString::new(format!("{}.cu", name.replace(['/', ' '], "_")))) {
            (Ok(s), Ok(l)) => (s, l),
            _ => {
                return Err(NvrtcFailure::Other(Error::Invalid(format!(
                    "source of `{name}` contains a NUL byte"
                ))));
            }
        };
    let prog = Program(nvrtc::create_program(&src, Some(&label)).map_err(|e| fail("nvrtcCreateProgram", e))?);
    let opts: Vec<&str> = options.iter().map(String::as_str).collect();
    // SAFETY: `prog` is live; the options are NUL-free strings.
    if let Err(e) = unsafe { nvrtc::compile_program(prog.0, &opts) } {
        if e.0 == nvrtcResult::NVRTC_ERROR_INVALID_OPTION {
            return Err(NvrtcFailure::UnknownArch);
        }
        // SAFETY: `prog` is live and was compiled.
        let log = unsafe { nvrtc::get_program_log(prog.0) }.map(|l| c_text(&l)).unwrap_or_default();
        return Err(NvrtcFailure::Other(Error::Compile {
            module: name.to_string(),
            message: if log.trim().is_empty() { format!("{e:?}") } else { log },
        }));
    }
    let mut size = 0usize;
    // SAFETY: `prog` is live and compiled; `size` is a valid out-pointer.
    unsafe { nvrtc_sys::nvrtcGetCUBINSize(prog.0, &mut size) }
        .result()
        .map_err(|e| fail("nvrtcGetCUBINSize", e))?;
    if size > 0 {
        let mut cubin = vec![0u8; size];
        // SAFETY: `cubin` has the `size` bytes NVRTC asked for.
        unsafe { nvrtc_sys::nvrtcGetCUBIN(prog.0, cubin.as_mut_ptr().cast()) }
            .result()
            .map_err(|e| fail("nvrtcGetCUBIN", e))?;
        return Ok((cubin, true));
    }
    // SAFETY: `prog` is live and compiled.
    let ptx = unsafe { nvrtc::get_ptx(prog.0) }.map_err(|e| fail("nvrtcGetPTX", e))?;
    Ok((ptx.into_iter().map(|c| c as u8).collect(), false))
}

fn c_text(chars: &[c_char]) -> String {
    let bytes: Vec<u8> = chars.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// A driver link session that is destroyed on drop.
struct Link(cu::CUlinkState);

impl Drop for Link {
    fn drop(&mut self) {
        // SAFETY: created by cuLinkCreate and destroyed only here.
        let _ = unsafe { cu::cuLinkDestroy(self.0) };
    }
}

/// The driver's JIT of `ptx` into a cubin for `ctx`'s device (what `cuModuleLoadData` does
/// internally, but with the cubin handed back so it can be cached).
pub(crate) fn jit_to_cubin(ctx: &Arc<CudaContext>, ptx: &[u8]) -> std::result::Result<Vec<u8>, DriverError> {
    ctx.bind_to_thread()?;
    let text = CStr::from_bytes_until_nul(ptx)
        .map(CStr::to_owned)
        .or_else(|_| CString::new(ptx.to_vec()))
        .map_err(|_| DriverError(cu::CUresult::CUDA_ERROR_INVALID_PTX))?;
    let mut state: cu::CUlinkState = std::ptr::null_mut();
    // SAFETY: no options; `state` is a valid out-pointer.
    unsafe { cu::cuLinkCreate_v2(0, std::ptr::null_mut(), std::ptr::null_mut(), &mut state) }.result()?;
    let link = Link(state);
    let bytes = text.as_bytes_with_nul();
    // SAFETY: `bytes` is NUL-terminated PTX that outlives the link session's use of it.
    unsafe {
        cu::cuLinkAddData_v2(
            link.0,
            cu::CUjitInputType::CU_JIT_INPUT_PTX,
            bytes.as_ptr() as *mut _,
            bytes.len(),
            c"hetkit.ptx".as_ptr(),
            0,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    }
    .result()?;
    let (mut cubin, mut size) = (std::ptr::null_mut(), 0usize);
    // SAFETY: valid out-pointers; the image belongs to the link session until it is destroyed.
    unsafe { cu::cuLinkComplete(link.0, &mut cubin, &mut size) }.result()?;
    if cubin.is_null() || size == 0 {
        return Err(DriverError(cu::CUresult::CUDA_ERROR_INVALID_IMAGE));
    }
    // SAFETY: the driver says `cubin` holds `size` bytes, alive until `link` drops below.
    let image = unsafe { std::slice::from_raw_parts(cubin as *const u8, size) }.to_vec();
    drop(link);
    Ok(image)
}

/// The PTX ISA version a PTX text declares (`.version 8.7`), for error messages.
pub(crate) fn ptx_isa(ptx: &str) -> Option<&str> {
    let at = ptx.find(".version")?;
    ptx[at + 8..].split_whitespace().next()
}
