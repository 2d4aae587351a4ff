//! [`Config`]: where and how a stencil runs.

use crate::cpu::CpuBlocks;
use crate::gpu::GpuParams;

/// Where a sweep runs. Every configuration gives the sequential result: bitwise on inputs
/// where rounding cannot differ (the dyadic oracles), and otherwise bitwise in the
/// [`Order::Exact`] evaluation order and within the bound documented on [`Order::Fast`] in the
/// fast one (see [`Config::order`] for which the multi-core CPU targets use).
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub(crate) target: Target,
    pub(crate) blocks: Option<CpuBlocks>,
    pub(crate) gpu: Option<GpuParams>,
    pub(crate) order: Option<Order>,
}

/// The order in which a constant-coefficient stencil's terms are evaluated on the CPU.
///
/// Stencils with parameter-array coefficients or a bias, Himeno, and the GPU kernels always
/// use the exact order.
///
/// ```
/// use ndarray::Array3;
/// use stencil::{Config, Order, Stencil};
///
/// let s = Stencil::<f32>::twenty_seven_point(0.5, 1.0 / 32.0, 1.0 / 64.0, 1.0 / 64.0);
/// let u = Array3::from_shape_fn((8, 9, 40), |(i, j, k)| ((i * 7 + j * 3 + k) as f32 * 0.37).sin());
/// let fast = s.apply(u.view(), &Config::cpu().with_order(Order::Fast))?;
/// let exact = s.apply(u.view(), &Config::cpu().with_order(Order::Exact))?;
/// assert!(exact == s.apply(u.view(), &Config::sequential())?);
/// assert!(fast == s.apply(u.view(), &Config::sequential().with_order(Order::Fast))?);
/// // |x| <= 1 and sum |w| = 1: within 2 * 27 * 2^-24 (and a hair) of each other.
/// let worst = fast.iter().zip(&exact).map(|(a, b)| (a - b).abs()).fold(0.0, f32::max);
/// assert!(worst <= 55.0 * f32::EPSILON / 2.0);
/// # Ok::<(), stencil::StencilError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Order {
    /// `((w_0 x_0 + w_1 x_1) + ...)` in the order the points were given, without fused
    /// multiply-adds: bitwise the sequential reference on any input. The default of
    /// [`Config::sequential`].
    Exact,
    /// Reassociated: rows of the neighbourhood with the same weights along axis 2 summed
    /// first, then the terms sharing a weight summed and multiplied once (the 13-point
    /// stencil: 3 multiplies and 12 adds per point instead of 13 and 12). The isotropic
    /// 27-point stencil (one weight per number of non-zero offsets) is factored further: each
    /// row's contributions to the outputs on its own row and one row away formed once and
    /// shared (6 multiplies and 12 adds per point instead of 27 and 26). Still no
    /// fused multiply-adds, and one fixed order per point, so the result is the same for every
    /// block size, thread count, slab count and instruction set, and bitwise the exact order's
    /// on the dyadic oracles. Otherwise each sweep's point differs from the exact order's by at
    /// most `2 g_n sum_m |w_m x_m|`, `g_n = n u / (1 - n u)` (`n` points, `u` = 2^-24 for f32,
    /// 2^-53 for f64): each order is within `g_n sum |w x|` of the true sum, since every input
    /// value passes through at most one multiply and `n - 1` adds on its way to the result
    /// (the factored 27-point form: at most 7 roundings on any path). The default of
    /// [`Config::cpu`], [`Config::slabs`] and the CPU side of [`Config::auto`] where it cuts
    /// the loads per point or the tuner chose it (see [`Config::order`]).
    Fast,
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
        Config { target, blocks: None, gpu: None, order: None }
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

    /// Evaluates constant-coefficient stencils on the CPU in `order` (the sequential target
    /// too: `Config::sequential().with_order(Order::Fast)` is the fast order one point at a
    /// time, the reference the vectorised fast kernel equals bitwise).
    pub fn with_order(mut self, order: Order) -> Config {
        self.order = Some(order);
        self
    }

    /// The evaluation order asked for with [`Config::with_order`], if any. Without one, the
    /// sequential target evaluates in the exact order, and the others in the order the tuning
    /// cache holds for the stencil, precision, grid size and machine (`hetkit tune stencil`),
    /// else the built-in rule: the fast order where it cuts the loads per point (the 27-point
    /// stencils, whose rows share partial sums), the exact order where it only cuts multiplies
    /// (the 7- and 13-point stars, where it measured slower on AVX2 and no faster on AVX-512).
    pub fn order(&self) -> Option<Order> {
        self.order
    }

    /// These GPU kernel parameters instead of the tuned or default ones.
    pub fn with_gpu_params(mut self, params: GpuParams) -> Config {
        self.gpu = Some(params);
        self
    }
}
