//! The GPU path: kernel parameters, the padded device layout, generated kernels compiled by
//! NVRTC through the cuda-kernels layer, and the Himeno kernel with its fused residual.

mod codegen;
mod himeno;

use std::sync::Arc;

use cuda_kernels::{DeviceBuffer, Gpu, Kernel, LaunchConfig, PushKernelArg};
use ndarray::Array3;

use crate::element::Element;
use crate::error::{Result, StencilError};
use crate::plan::{Coef, Plan};
use crate::stencil::Stencil;

pub(crate) use codegen::Shape;
pub(crate) use himeno::himeno;

/// The tuned parameters of a generated GPU kernel (thesis §4.4.1): the tile a thread block
/// computes (`size_x` along axis 2, `size_y` along axis 1), its threads (`dim_x x dim_y`, each
/// dividing the tile, so each thread owns `size / dim` points per plane), and whether the input
/// goes through the read-only data cache (`__ldg`, the successor of the thesis's texture path).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GpuParams {
    /// Tile width along axis 2 (contiguous).
    pub size_x: u32,
    /// Tile height along axis 1.
    pub size_y: u32,
    /// Threads along axis 2; divides `size_x`.
    pub dim_x: u32,
    /// Threads along axis 1; divides `size_y`.
    pub dim_y: u32,
    /// Input loads through the read-only data cache.
    pub read_only: bool,
}

impl Default for GpuParams {
    /// 64 x 4 points, 32 x 4 threads (two points per thread along axis 2), plain loads: the
    /// shape most of the thesis's Table 4.3 optima share.
    fn default() -> Self {
        GpuParams { size_x: 64, size_y: 4, dim_x: 32, dim_y: 4, read_only: false }
    }
}

/// The static shared memory a kernel may use (larger needs dynamic shared memory).
pub const STATIC_SHARED_LIMIT: usize = 48 * 1024;

impl GpuParams {
    /// Bytes of shared memory the generated kernel declares for a stencil with this halo.
    pub fn shared_bytes(&self, halo: [usize; 3], corners: bool, element_bytes: usize) -> usize {
        let planes = if corners { 2 * halo[0] + 1 } else { 1 };
        planes * (self.size_x as usize + 2 * halo[2]) * (self.size_y as usize + 2 * halo[1]) * element_bytes
    }

    /// An error unless the dimensions divide the sizes, nothing is zero, the block has at most
    /// `max_threads` threads and the shared memory fits in `shared_limit` bytes.
    pub fn check(
        &self,
        halo: [usize; 3],
        corners: bool,
        element_bytes: usize,
        max_threads: u32,
        shared_limit: usize,
    ) -> Result<()> {
        let bad = |why: String| Err(StencilError::Config(format!("GPU parameters {self:?}: {why}")));
        if self.size_x == 0 || self.size_y == 0 || self.dim_x == 0 || self.dim_y == 0 {
            return bad("sizes and dimensions must be positive".into());
        }
        if !self.size_x.is_multiple_of(self.dim_x) || !self.size_y.is_multiple_of(self.dim_y) {
            return bad("the thread dimensions must divide the tile sizes".into());
        }
        if self.dim_x * self.dim_y > max_threads {
            return bad(format!("{} threads per block exceed {max_threads}", self.dim_x * self.dim_y));
        }
        let bytes = self.shared_bytes(halo, corners, element_bytes);
        if bytes > shared_limit {
            return bad(format!("{bytes} B of shared memory exceed {shared_limit} B"));
        }
        Ok(())
    }
}

/// GPU 0, opened once per process (opening a context is slow).
pub(crate) fn device() -> Result<Gpu> {
    static GPU: std::sync::OnceLock<Option<Gpu>> = std::sync::OnceLock::new();
    match GPU.get_or_init(|| Gpu::new(0).ok()) {
        Some(g) => Ok(g.clone()),
        // Ask again for the reason (cheap when there is no driver).
        None => Err(Gpu::new(0)
            .err()
            .map_or_else(|| StencilError::Config("GPU 0 was unavailable".into()), Into::into)),
    }
}

/// The padded device layout (thesis §4.4.1): rows padded to a multiple of 32 elements, the
/// origin shifted so that the first interior element of each row is 32-aligned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Layout {
    pub(crate) shape: [usize; 3],
    pub(crate) pitch: usize,
    pub(crate) shift: usize,
}

impl Layout {
    pub(crate) fn new(shape: [usize; 3], halo_x: usize) -> Layout {
        Layout { shape, pitch: shape[2].div_ceil(32) * 32, shift: (32 - halo_x % 32) % 32 }
    }

    pub(crate) fn len(&self) -> usize {
        self.shape[0] * self.shape[1] * self.pitch + self.shift
    }

    pub(crate) fn pack<T: Element>(&self, a: &Array3<T>, out: &mut Vec<T>) {
        out.clear();
        out.resize(self.len(), T::ZERO);
        let n2 = self.shape[2];
        for (r, row) in a.as_slice().expect("standard layout").chunks_exact(n2).enumerate() {
            let at = self.shift + r * self.pitch;
            out[at..at + n2].copy_from_slice(row);
        }
    }

    pub(crate) fn unpack<T: Element>(&self, data: &[T], a: &mut Array3<T>) {
        let n2 = self.shape[2];
        for (r, row) in a.as_slice_mut().expect("standard layout").chunks_exact_mut(n2).enumerate() {
            let at = self.shift + r * self.pitch;
            row.copy_from_slice(&data[at..at + n2]);
        }
    }
}

/// A plan on the device: both field buffers, coefficients, the compiled kernel.
pub(crate) struct DevicePlan<T: cuda_kernels::GpuScalar> {
    gpu: Gpu,
    kernel: Kernel,
    layout: Layout,
    params: GpuParams,
    halo: [usize; 3],
    pub(crate) a: DeviceBuffer<T>,
    pub(crate) b: DeviceBuffer<T>,
    coef: DeviceBuffer<T>,
    fields: DeviceBuffer<T>,
}

impl<T: Element> DevicePlan<T> {
    /// Compiles the kernel for `plan` and `params` and uploads `field` (twice: the boundary
    /// layer must be in both buffers) and the coefficients.
    pub(crate) fn new(
        gpu: &Gpu,
        plan: &Plan<T>,
        field: &Array3<T>,
        params: GpuParams,
    ) -> Result<DevicePlan<T>> {
        let shape = Shape::of(plan);
        let props = gpu.props();
        params.check(
            plan.halo,
            shape.corners,
            std::mem::size_of::<T>(),
            props.max_threads_per_block,
            STATIC_SHARED_LIMIT.min(props.shared_per_block),
        )?;
        let kernel = compile::<T>(gpu, &shape, &params)?;
        let layout = Layout::new(plan.shape, plan.halo[2]);
        let mut host = Vec::new();
        layout.pack(field, &mut host);
        let a = gpu.upload(&host)?;
        let b = gpu.upload(&host)?;
        let mut uniform: Vec<T> = Vec::new();
        let mut fields: Vec<T> = Vec::new();
        for c in plan.coefs.iter().chain(plan.bias.iter()) {
            match c {
                Coef::Uniform(v) => uniform.push(*v),
                Coef::Field(f) => {
                    layout.pack(f, &mut host);
                    fields.extend_from_slice(&host);
                }
            }
        }
        // Kernels always get a valid pointer, even when they never read it.
        uniform.push(T::ZERO);
        fields.push(T::ZERO);
        let coef = gpu.upload(&uniform)?;
        let fields = gpu.upload(&fields)?;
        Ok(DevicePlan { gpu: gpu.clone(), kernel, layout, params, halo: plan.halo, a, b, coef, fields })
    }

    /// One sweep from `a` into `b`, then the two swap roles.
    pub(crate) fn sweep(&mut self) -> Result<()> {
        let [n0, n1, n2] = self.layout.shape.map(|n| n as i32);
        let [_, hy, hx] = self.halo;
        let p = self.params;
        let cfg = LaunchConfig {
            grid_dim: (
                (self.layout.shape[2] - 2 * hx).div_ceil(p.size_x as usize) as u32,
                (self.layout.shape[1] - 2 * hy).div_ceil(p.size_y as usize) as u32,
                1,
            ),
            block_dim: (p.dim_x, p.dim_y, 1),
            shared_mem_bytes: 0,
        };
        self.kernel.check(&cfg)?;
        let (pitch, shift) = (self.layout.pitch as i32, self.layout.shift as i32);
        let fstride = self.layout.len() as i64;
        // SAFETY: the generated signature is (const T* in, T* out, const T* coef, const T* fields,
        // int n0, int n1, int n2, int pitch, int shift, long long fstride); `a` and `b` hold the
        // padded layout, `coef` one value per uniform coefficient, `fields` one padded grid per
        // field coefficient, and every index the kernel forms is clamped into the grid.
        unsafe {
            self.gpu.launch(&self.kernel, cfg, |args| {
                args.arg(&self.a)
                    .arg(&mut self.b)
                    .arg(&self.coef)
                    .arg(&self.fields)
                    .arg(&n0)
                    .arg(&n1)
                    .arg(&n2)
                    .arg(&pitch)
                    .arg(&shift)
                    .arg(&fstride);
            })?;
        }
        std::mem::swap(&mut self.a, &mut self.b);
        Ok(())
    }

    /// The current field (`a`) into `field`.
    pub(crate) fn download(&self, field: &mut Array3<T>) -> Result<()> {
        let host = self.gpu.download(&self.a)?;
        self.layout.unpack(&host, field);
        Ok(())
    }
}

fn compile<T: Element>(gpu: &Gpu, shape: &Shape, params: &GpuParams) -> Result<Kernel> {
    let source = codegen::source::<T>(shape, params);
    let label = format!("stencil/generated-{}-{:016x}", T::NAME, fnv(&source));
    let module: Arc<_> = gpu.module_from_source(&label, &source)?;
    Ok(module.kernel(codegen::ENTRY)?)
}

/// FNV-1a: a stable name for a generated source.
fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3))
}

/// The generated source of `stencil` for `params` (to inspect or count resources).
pub fn generated_source<T: Element>(
    stencil: &Stencil<T>,
    shape: [usize; 3],
    params: &GpuParams,
) -> Result<String> {
    let plan = stencil.plan(&shape)?;
    Ok(codegen::source::<T>(&Shape::of(&plan), params))
}

/// `sweeps` sweeps on GPU 0 with `params`, or the tuned or default ones.
pub(crate) fn iterate<T: Element>(
    stencil: &Stencil<T>,
    plan: &Plan<T>,
    field: &mut Array3<T>,
    sweeps: usize,
    params: Option<GpuParams>,
) -> Result<()> {
    let gpu = device()?;
    let params = params.unwrap_or_else(|| crate::tuning::gpu_params_for(&gpu, stencil, plan.shape));
    let mut dev = DevicePlan::new(&gpu, plan, field, params)?;
    for _ in 0..sweeps {
        dev.sweep()?;
    }
    dev.download(field)
}
