//! The GPU band of the hybrid executor: the thesis's three phases (CPU tiles, a band of
//! central anti-diagonals on the GPU, CPU tiles) for kernels that come with a GPU form, a CUDA C
//! device function compiled by NVRTC at run time.
//!
//! The band lives on the device in diagonal-major order, preceded by the two diagonals it
//! reads. It goes up once (with phase 1's last two diagonals filled in) and comes down once.
//! Long diagonals get one launch each; runs of short ones share one launch of a single block
//! that steps from diagonal to diagonal with `__syncthreads()`.

use ndarray::Array2;

use crate::boundary::Boundary2;
use crate::config::{Config2, Executor};
use crate::error::{Result, WavefrontError};
use crate::geom::{band_diagonals, diag_count, diag_i_min, diag_len, diag_offset};
use crate::sweep2::{SendPtr, Table2, alloc, check_shape};
use cuda_kernels::{Gpu, LaunchConfig, PushKernelArg};

/// Threads per block of the band kernel.
const THREADS: u32 = 256;
/// Diagonals at most this long share a single-block launch.
const SHORT: usize = 4 * THREADS as usize;
/// The most diagonals one single-block launch steps through.
const PER_LAUNCH: usize = 64;

/// A cell kernel's GPU form: CUDA C source that defines the cell type `cell_type` (a `struct`
/// with the Rust cell's `#[repr(C)]` layout, or a scalar type) and the device function
///
/// ```c
/// __device__ CELL wf_cell(long long i, long long j, CELL north, CELL west, CELL north_west,
///                         const unsigned char* aux);
/// ```
///
/// where `aux` points to the read-only bytes given by [`GpuKernel2::with_aux`] (sequences,
/// parameters). The device function must compute what the CPU kernel computes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuKernel2 {
    cell_type: String,
    source: String,
    aux: Vec<u8>,
}

impl GpuKernel2 {
    /// The device function in `source` over cells of C type `cell_type`.
    pub fn new(cell_type: &str, source: &str) -> Self {
        GpuKernel2 { cell_type: cell_type.to_string(), source: source.to_string(), aux: Vec::new() }
    }

    /// Read-only bytes uploaded once and passed to every `wf_cell` call as `aux`.
    pub fn with_aux(mut self, aux: Vec<u8>) -> Self {
        self.aux = aux;
        self
    }

    /// The whole NVRTC program: the user's source and the band kernels around it.
    fn program(&self) -> String {
        format!("{}\n{}", self.source, BAND_KERNELS.replace("WF_CELL_T", &self.cell_type))
    }
}

/// The band kernels; `WF_CELL_T` is replaced by the cell type.
const BAND_KERNELS: &str = r#"
typedef WF_CELL_T wf_T;

/* Cells on the diagonals before d of a rows x cols table (geom::diag_offset). */
__device__ long long wf_tri(long long x) { return x > 0 ? x * (x + 1) / 2 : 0; }
__device__ long long wf_doff(long long rows, long long cols, long long d) {
    return wf_tri(d) - wf_tri(d - rows) - wf_tri(d - cols) + wf_tri(d - rows - cols);
}
__device__ long long wf_imin(long long cols, long long d) { return d > cols - 1 ? d - (cols - 1) : 0; }

extern "C" __global__ void wf_cell_size(unsigned long long* out) { *out = sizeof(wf_T); }

/* Diagonals d_first .. d_first + d_count - 1 of the band buffer `buf`, which starts at
   diagonal d_lo. With d_count > 1 the launch is one block. */
extern "C" __global__ void wf_band(wf_T* buf, const wf_T* bn, const wf_T* bw, const wf_T* bc,
                                   long long rows, long long cols, long long d_lo,
                                   long long d_first, long long d_count, const unsigned char* aux) {
    long long base = wf_doff(rows, cols, d_lo);
    for (long long d = d_first; d < d_first + d_count; ++d) {
        long long imin = wf_imin(cols, d);
        long long imax = d < rows - 1 ? d : rows - 1;
        long long len = imax - imin + 1;
        long long off = wf_doff(rows, cols, d) - base;
        long long off1 = wf_doff(rows, cols, d - 1) - base, imin1 = wf_imin(cols, d - 1);
        long long off2 = wf_doff(rows, cols, d - 2) - base, imin2 = wf_imin(cols, d - 2);
        for (long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x; p < len;
             p += (long long)gridDim.x * blockDim.x) {
            long long i = imin + p, j = d - i;
            wf_T n = i > 0 ? buf[off1 + (i - 1 - imin1)] : bn[j];
            wf_T w = j > 0 ? buf[off1 + (i - imin1)] : bw[i];
            wf_T nw = (i > 0 && j > 0) ? buf[off2 + (i - 1 - imin2)]
                    : (i > 0 ? bw[i - 1] : (j > 0 ? bn[j - 1] : bc[0]));
            buf[off + p] = wf_cell(i, j, n, w, nw, aux);
        }
        if (d_count > 1) __syncthreads();
    }
}
"#;

/// [`crate::run_2d`] for a kernel with a GPU form: with `Config2::hybrid(tile, band)` and
/// `band >= 0` the central `2 band + 1` diagonals run on GPU 0 through `gpu_kernel` (NVRTC), the
/// rest on the CPU; every other configuration runs `kernel` on the CPU alone. The table is the
/// same as `Config2::sequential()`'s when the two forms compute the same function.
///
/// # Errors
/// Those of [`crate::run_2d`]; for a GPU band, no GPU (a CUDA error), a device function that
/// does not compile, or a C cell type whose size differs from `T`'s.
pub fn run_2d_gpu<T, K>(
    rows: usize,
    cols: usize,
    boundary: &Boundary2<T>,
    config: &Config2,
    kernel: K,
    gpu_kernel: &GpuKernel2,
) -> Result<Array2<T>>
where
    T: bytemuck::Pod + Send + Sync,
    K: Fn(usize, usize, &T, &T, &T) -> T + Sync,
{
    let Executor::Hybrid { tile, band } = config.executor() else {
        return crate::run_2d(rows, cols, boundary, config, kernel);
    };
    let Some(diags) = band_diagonals(rows, cols, band) else {
        return crate::run_2d(rows, cols, boundary, config, kernel);
    };
    check_shape(rows, cols)?;
    boundary.check(rows, cols)?;
    config.validate()?;
    let gpu = Gpu::new(0)?;
    let mut data = alloc(rows * cols, boundary.corner)?;
    let table = Table2 { ptr: SendPtr(data.as_mut_ptr()), rows, cols, boundary };
    let last = diag_count(rows, cols) - 1;
    let (ds, de) = (*diags.start(), *diags.end());
    if ds > 0 {
        config.install(|| table.tiles(tile, 0..=ds - 1, true, &kernel))?;
    }
    band_on_gpu(&gpu, &mut data, rows, cols, boundary, ds, de, gpu_kernel)?;
    let table = Table2 { ptr: SendPtr(data.as_mut_ptr()), rows, cols, boundary };
    if de < last {
        config.install(|| table.tiles(tile, de + 1..=last, true, &kernel))?;
    }
    Ok(Array2::from_shape_vec((rows, cols), data).expect("rows * cols values"))
}

/// Phase 2: diagonals `ds ..= de` of the row-major `data` on the GPU.
fn band_on_gpu<T: bytemuck::Pod>(
    gpu: &Gpu,
    data: &mut [T],
    rows: usize,
    cols: usize,
    boundary: &Boundary2<T>,
    ds: usize,
    de: usize,
    gk: &GpuKernel2,
) -> Result<()> {
    let module = gpu.module_from_source("wavefront/band", &gk.program())?;
    check_cell_size::<T>(gpu, &module)?;
    let band = module.kernel("wf_band")?;
    let d_lo = ds.saturating_sub(2);
    let base = diag_offset(rows, cols, d_lo);
    let cell = |i: usize, j: usize| data[i * cols + j];
    // The buffer: diagonals d_lo .. ds - 1 from phase 1, then room for the band.
    let mut host: Vec<T> = Vec::with_capacity(diag_offset(rows, cols, de + 1) - base);
    for d in d_lo..=de {
        let i0 = diag_i_min(cols, d);
        for p in 0..diag_len(rows, cols, d) {
            host.push(if d < ds { cell(i0 + p, d - i0 - p) } else { boundary.corner });
        }
    }
    let stream = gpu.stream();
    let bytes = |v: &[T]| bytemuck::cast_slice::<T, u8>(v).to_vec();
    let north: Vec<T> = (0..cols).map(|j| boundary.north_at(j)).collect();
    let west: Vec<T> = (0..rows).map(|i| boundary.west_at(i)).collect();
    let up = |b: Vec<u8>| -> Result<cuda_kernels::DeviceBuffer<u8>> {
        let b = if b.is_empty() { vec![0u8] } else { b };
        let len = b.len();
        Ok(stream.clone_htod(&b).map_err(|e| cuda_kernels::Error::from_alloc(e, len))?)
    };
    let mut buf = up(bytes(&host))?;
    let (bn, bw, bc, aux) =
        (up(bytes(&north))?, up(bytes(&west))?, up(bytes(&[boundary.corner]))?, up(gk.aux.clone())?);
    let (r, c, lo) = (rows as i64, cols as i64, d_lo as i64);
    let mut d = ds;
    while d <= de {
        // A run of short diagonals shares one single-block launch; a long one gets its own grid.
        let mut count = 1;
        let len = diag_len(rows, cols, d);
        if len <= SHORT {
            while count < PER_LAUNCH && d + count <= de && diag_len(rows, cols, d + count) <= SHORT {
                count += 1;
            }
        }
        let blocks = if count > 1 { 1 } else { gpu.grid_for(len, THREADS) };
        let cfg = LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (THREADS, 1, 1), shared_mem_bytes: 0 };
        let (first, n) = (d as i64, count as i64);
        // SAFETY: wf_band(wf_T* buf, const wf_T* bn, const wf_T* bw, const wf_T* bc, i64 rows,
        // i64 cols, i64 d_lo, i64 d_first, i64 d_count, const u8* aux); `buf` holds diagonals
        // d_lo ..= de, `bn` cols and `bw` rows cells, `bc` one, all of the checked cell size.
        unsafe {
            gpu.launch(&band, cfg, |a| {
                a.arg(&mut buf)
                    .arg(&bn)
                    .arg(&bw)
                    .arg(&bc)
                    .arg(&r)
                    .arg(&c)
                    .arg(&lo)
                    .arg(&first)
                    .arg(&n)
                    .arg(&aux);
            })?;
        }
        d += count;
    }
    let back: Vec<u8> = stream.clone_dtoh(&buf).map_err(cuda_kernels::Error::from)?;
    let mut cells = vec![boundary.corner; host.len()];
    bytemuck::cast_slice_mut::<T, u8>(&mut cells).copy_from_slice(&back);
    let mut at = diag_offset(rows, cols, ds) - base;
    for d in ds..=de {
        let i0 = diag_i_min(cols, d);
        for p in 0..diag_len(rows, cols, d) {
            data[(i0 + p) * cols + d - i0 - p] = cells[at];
            at += 1;
        }
    }
    Ok(())
}

fn check_cell_size<T>(gpu: &Gpu, module: &cuda_kernels::Module) -> Result<()> {
    let size_kernel = module.kernel("wf_cell_size")?;
    let mut out = gpu.zeros::<u64>(1)?;
    let cfg = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (1, 1, 1), shared_mem_bytes: 0 };
    // SAFETY: wf_cell_size(u64* out) writes one value.
    unsafe {
        gpu.launch(&size_kernel, cfg, |a| {
            a.arg(&mut out);
        })?
    };
    let size = gpu.download(&out)?[0];
    if size != size_of::<T>() as u64 {
        return Err(WavefrontError::InvalidConfig(format!(
            "the GPU cell type has {size} bytes, the Rust cell {}",
            size_of::<T>()
        )));
    }
    Ok(())
}
