//! [`Config`]: where and how a stencil runs.

use crate::cpu::CpuBlocks;
use crate::gpu::GpuParams;

/// Where a sweep runs. Every configuration gives the sequential result: bitwise for the CPU
/// configurations on any input (they evaluate each point in the same order, without fused
/// multiply-adds), and bitwise on the GPU for dyadic inputs; otherwise the GPU is within a few
/// ulps per sweep (it may contract `a * b + c` into a fused multiply-add).
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub(crate) target: Target,
    pub(crate) blocks: Option<CpuBlocks>,
    pub(crate) gpu: Option<GpuParams>,
}

/// The execution target of a [`Config`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target {
    Sequential,
    Cpu,
    Gpu,
    Slabs(usize),
    Auto,
}

impl Config {
    fn of(target: Target) -> Config {
        Config { target, blocks: None, gpu: None }
    }

    /// The reference loop: one point at a time, one thread.
    pub fn sequential() -> Config {
        Config::of(Target::Sequential)
    }

    /// All cores: cache-blocked, vectorised along axis 2, rayon over blocks of planes. Block
    /// sizes come from the tuning cache when `hetkit tune stencil` has run, else the defaults.
    pub fn cpu() -> Config {
        Config::of(Target::Cpu)
    }

    /// The generated 2.5D kernels on GPU 0 (tuned parameters when the tuning cache has them,
    /// else a default); an error when there is no GPU.
    pub fn gpu() -> Config {
        Config::of(Target::Gpu)
    }

    /// The domain cut along axis 0 into `parts` sub-domains of nearly equal thickness, each on
    /// its own thread with its own buffers, exchanging halo planes through a transport as
    /// separate devices would, each computed on the CPU. `parts == 0`, or more parts than the
    /// grid has planes for, is an error when the stencil is applied.
    pub fn slabs(parts: usize) -> Config {
        Config::of(Target::Slabs(parts))
    }

    /// The fastest available: the GPU when there is one, else all cores.
    pub fn auto() -> Config {
        Config::of(Target::Auto)
    }

    /// These CPU block sizes instead of the tuned or default ones (CPU and slab targets).
    pub fn with_cpu_blocks(mut self, blocks: CpuBlocks) -> Config {
        self.blocks = Some(blocks);
        self
    }

    /// These GPU kernel parameters instead of the tuned or default ones.
    pub fn with_gpu_params(mut self, params: GpuParams) -> Config {
        self.gpu = Some(params);
        self
    }
}
