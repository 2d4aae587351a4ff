//! Which module and entry point a configuration runs, and the launch geometry.

use cuda_kernels::{Gpu, GpuScalar, Kernel, LaunchConfig};

use super::config::{LearnKernel, MAX_SPLIT, StreamConfig};
use crate::error::{Error, Result};

/// The embedded module of the learning kernels.
pub(crate) const LEARN_MODULE: &str = "sg/sg_learn";

/// Largest `gridDim.y`.
const MAX_GRID_Y: u32 = 65_535;

/// Entry point of `kernel` for `T`.
pub(crate) fn entry<T: GpuScalar>(kernel: LearnKernel) -> String {
    format!("sg_learn_{}_{}", kernel.stem(), T::SUFFIX)
}

/// The `#define`s a configuration needs at dimension `d`, or `None` when the embedded module
/// (the `.cu` file's defaults) is that kernel already.
pub(crate) fn defines(kernel: LearnKernel, d: usize, cfg: &StreamConfig) -> Option<String> {
    let dim = if cfg.specialize { d } else { 0 };
    let unroll = if dim == 0 && cfg.unroll == 0 { 1 } else { cfg.unroll };
    if dim == 0 && unroll == 1 && cfg.block == kernel.embedded_block() {
        return None;
    }
    let mut defs = format!("#define LEARN_DIM {dim}\n#define LEARN_UNROLL {unroll}\n");
    match kernel {
        LearnKernel::Mult => defs.push_str(&format!("#define LEARN_DATA_BLOCK {}\n", cfg.block)),
        LearnKernel::Transposed => defs.push_str(&format!("#define LEARN_GRID_BLOCK {}\n", cfg.block)),
        LearnKernel::Mass => {}
    }
    Some(defs)
}

/// The kernel a configuration runs at dimension `d`: from the embedded module, or from the
/// embedded source compiled by NVRTC with the configuration's `#define`s. Without NVRTC (a
/// machine with nvcc's PTX only) a compiled variant falls back to the embedded kernel, with a
/// warning, rather than failing.
pub(crate) fn kernel<T: GpuScalar>(
    gpu: &Gpu,
    kernel: LearnKernel,
    d: usize,
    cfg: &StreamConfig,
) -> Result<Kernel> {
    let name = entry::<T>(kernel);
    let Some(defs) = defines(kernel, d, cfg) else {
        return Ok(gpu.kernel(LEARN_MODULE, &name)?);
    };
    let source = cuda_kernels::embedded_modules()
        .iter()
        .find(|m| m.name == LEARN_MODULE)
        .ok_or_else(|| cuda_kernels::Error::UnknownModule(LEARN_MODULE.into()))?
        .source;
    let label = format!("{LEARN_MODULE} [{}]", defs.trim_end().replace('\n', "; "));
    match gpu.module_from_source(&label, &format!("{defs}{source}")) {
        Ok(module) => Ok(module.kernel(&name)?),
        Err(cuda_kernels::Error::NoNvrtc { .. }) => {
            tracing::warn!(kernel = %name, "no NVRTC to compile {label}; running the embedded kernel");
            Ok(gpu.kernel(LEARN_MODULE, &name)?)
        }
        Err(e) => Err(e.into()),
    }
}

/// Launch geometry of `kernel`: `rows` outputs at `per_thread` per thread along x, and the
/// streamed range of `streamed` items cut into `gridDim.y` slices. Returns the configuration
/// and the slice length.
pub(crate) fn geometry(
    gpu: &Gpu,
    kernel: &Kernel,
    cfg: &StreamConfig,
    rows: usize,
    per_thread: u32,
    streamed: usize,
    shared_bytes: usize,
) -> Result<(LaunchConfig, u64)> {
    let per_block = cfg.block_size as usize * per_thread as usize;
    let blocks_x = crate::launch::grid_x(rows.div_ceil(per_block), "learning operator")?;
    let split = if cfg.split == 0 { auto_split(gpu, blocks_x, streamed, cfg.prefetch) } else { cfg.split };
    let per = streamed.div_ceil(split as usize).max(1);
    // Slices of `per` items: no empty trailing block row when `split` does not divide.
    let blocks_y = streamed.div_ceil(per).clamp(1, MAX_GRID_Y as usize) as u32;
    let shared = u32::try_from(shared_bytes)
        .map_err(|_| Error::Config(format!("{shared_bytes} B of shared memory per block")))?;
    let launch = LaunchConfig {
        grid_dim: (blocks_x, blocks_y, 1),
        block_dim: (cfg.block_size, 1, 1),
        shared_mem_bytes: shared,
    };
    kernel.check(&launch).map_err(|e| Error::Config(e.to_string()))?;
    Ok((launch, per as u64))
}

/// The smallest power-of-two split that gives the device four blocks per SM, while every slice
/// keeps at least two refills of `prefetch` items.
fn auto_split(gpu: &Gpu, blocks_x: u32, streamed: usize, prefetch: u32) -> u32 {
    let target = 4 * gpu.props().sm_count.max(1);
    let mut split = 1u32;
    while split < MAX_SPLIT
        && blocks_x.saturating_mul(split) < target
        && streamed / (2 * split as usize) >= 2 * prefetch as usize
    {
        split *= 2;
    }
    split
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_defaults_need_no_defines() {
        for k in [LearnKernel::Mult, LearnKernel::Transposed, LearnKernel::Mass] {
            assert_eq!(defines(k, 7, &StreamConfig::generic(k)), None);
            let d = defines(k, 7, &StreamConfig::default_for(k)).unwrap();
            assert!(d.contains("#define LEARN_DIM 7\n") && d.contains("#define LEARN_UNROLL 0\n"), "{d}");
        }
        let mult = StreamConfig { block: 8, ..StreamConfig::generic(LearnKernel::Mult) };
        assert_eq!(
            defines(LearnKernel::Mult, 3, &mult).as_deref(),
            Some("#define LEARN_DIM 0\n#define LEARN_UNROLL 1\n#define LEARN_DATA_BLOCK 8\n")
        );
        // Full unroll without a compiled-in dimension is no unroll: still the embedded kernel.
        let t = StreamConfig { unroll: 0, ..StreamConfig::generic(LearnKernel::Transposed) };
        assert_eq!(defines(LearnKernel::Transposed, 3, &t), None);
        assert_eq!(entry::<f32>(LearnKernel::Transposed), "sg_learn_mult_t_f32");
    }
}
