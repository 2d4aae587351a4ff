//! Himeno on the GPU: one thread per point, the residual `ss^2` reduced per block in shared
//! memory (in double) and written as one partial per block, summed on the host in block order
//! (HiDP's fused reduction, thesis Fig. 6.7).

use std::time::Instant;

use cuda_kernels::{LaunchConfig, PushKernelArg};
use ndarray::Array3;

use crate::element::Element;
use crate::error::Result;
use crate::gpu::{GpuParams, device};
use crate::himeno::Himeno;

const BX: u32 = 32;
const BY: u32 = 4;

fn source<T: Element>() -> String {
    format!(
        "typedef {t} T;
#define BX {BX}
#define BY {BY}
// co holds a0 a1 a2 a3 b0 b1 b2 c0 c1 c2 wrk1 bnd, n values each.
extern \"C\" __global__ void __launch_bounds__({threads}) himeno_sweep(const T* __restrict__ p, T* __restrict__ wrk2,
    const T* __restrict__ co, long long n, T omega, int imax, int jmax, int kmax, double* __restrict__ partial) {{
  __shared__ double red[BX * BY];
  const int tid = threadIdx.y * BX + threadIdx.x;
  const int k = 1 + blockIdx.x * BX + threadIdx.x, j = 1 + blockIdx.y * BY + threadIdx.y, i = 1 + blockIdx.z;
  double g = 0.0;
  if (k < kmax - 1 && j < jmax - 1) {{
    const long long sj = kmax, si = (long long)jmax * kmax;
    const long long at = i * si + j * sj + k;
#define C(q) co[(q) * n + at]
    const T s0 = C(0) * p[at + si] + C(1) * p[at + sj] + C(2) * p[at + 1]
      + C(4) * (p[at + si + sj] - p[at + si - sj] - p[at - si + sj] + p[at - si - sj])
      + C(5) * (p[at + sj + 1] - p[at - sj + 1] - p[at + sj - 1] + p[at - sj - 1])
      + C(6) * (p[at + si + 1] - p[at - si + 1] - p[at + si - 1] + p[at - si - 1])
      + C(7) * p[at - si] + C(8) * p[at - sj] + C(9) * p[at - 1] + C(10);
    const T ss = (s0 * C(3) - p[at]) * C(11);
    g = (double)ss * (double)ss;
    wrk2[at] = p[at] + omega * ss;
  }}
  red[tid] = g;
  __syncthreads();
  for (int s = BX * BY / 2; s > 0; s >>= 1) {{
    if (tid < s) red[tid] += red[tid + s];
    __syncthreads();
  }}
  if (tid == 0) partial[(blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x] = red[0];
}}
",
        t = T::C_NAME,
        threads = BX * BY
    )
}

/// `iterations` on GPU 0: the last `gosa`, the seconds, and the final pressure.
pub(crate) fn himeno<T: Element>(
    h: &Himeno<T>,
    iterations: usize,
    _params: Option<GpuParams>,
) -> Result<(f64, f64, Array3<T>)> {
    let gpu = device()?;
    let [imax, jmax, kmax] = h.dims();
    let n = imax * jmax * kmax;
    let module = gpu.module_from_source(&format!("stencil/himeno-{}", T::NAME), &source::<T>())?;
    let kernel = module.kernel("himeno_sweep")?;
    let mut co: Vec<T> = Vec::with_capacity(12 * n);
    for a in h.a.iter().chain(&h.b).chain(&h.c).chain([&h.wrk1, &h.bnd]) {
        co.extend_from_slice(a.as_slice().expect("standard layout"));
    }
    let co = gpu.upload(&co)?;
    let p0 = h.p.as_slice().expect("standard layout");
    let mut p = gpu.upload(p0)?;
    let mut wrk2 = gpu.upload(p0)?;
    let cfg = LaunchConfig {
        grid_dim: (
            (kmax - 2).div_ceil(BX as usize) as u32,
            (jmax - 2).div_ceil(BY as usize) as u32,
            (imax - 2) as u32,
        ),
        block_dim: (BX, BY, 1),
        shared_mem_bytes: 0,
    };
    kernel.check(&cfg)?;
    let blocks = (cfg.grid_dim.0 * cfg.grid_dim.1 * cfg.grid_dim.2) as usize;
    let mut partial = gpu.zeros::<f64>(blocks)?;
    let (nn, omega) = (n as i64, h.omega);
    let (im, jm, km) = (imax as i32, jmax as i32, kmax as i32);
    gpu.synchronize()?;
    let t0 = Instant::now();
    for _ in 0..iterations {
        // SAFETY: himeno_sweep(const T* p, T* wrk2, const T* co, long long n, T omega, int imax,
        // int jmax, int kmax, double* partial): p and wrk2 hold n values, co 12 n, partial one
        // per block; threads outside the interior only write their block's partial.
        unsafe {
            gpu.launch(&kernel, cfg, |args| {
                args.arg(&p)
                    .arg(&mut wrk2)
                    .arg(&co)
                    .arg(&nn)
                    .arg(&omega)
                    .arg(&im)
                    .arg(&jm)
                    .arg(&km)
                    .arg(&mut partial);
            })?;
        }
        std::mem::swap(&mut p, &mut wrk2);
    }
    let partials = gpu.download(&partial)?;
    let seconds = t0.elapsed().as_secs_f64();
    let gosa = partials.iter().sum();
    let field = Array3::from_shape_vec((imax, jmax, kmax), gpu.download(&p)?).expect("n values");
    Ok((gosa, seconds, field))
}
