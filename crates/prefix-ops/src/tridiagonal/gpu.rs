//! Tridiagonal solvers on the GPU (kernels in `cuda-kernels/prefix/tridiag_*.cu`) and the
//! dispatcher that picks one by `(m, G, layout, type)`.
//!
//! | Solver | Kernel(s) | Mapping |
//! |---|---|---|
//! | [`Solver::Thomas`] | `tridiag_thomas_T` | one thread per system (coalesced for interleaved) |
//! | [`Solver::PivotingLu`] | `tridiag_pivot_T` | one thread per system, `gtsv` pivoting; singular → NaN |
//! | [`Solver::CyclicReduction`], [`Solver::ParallelCyclicReduction`], [`Solver::CrPcr`] | `tridiag_cr_pcr_T` | one block per system, shared memory |
//! | [`Solver::RedundantReduction`] | `tridiag_rr_T` | one block per system (opt-in, unstable) |
//! | [`Solver::WangMou`] | `tridiag_wm_T` | one block per system |
//! | [`Solver::Tpr`] | `tridiag_tpr_stage1_T`, `_stage2_block_T` / `_stage2_thread_T`, `_stage3_T` | one block per slice |
//!
//! Block solvers hold the whole (padded) system in shared memory, so they are limited by the
//! device's opt-in shared memory per block (about `m <= 2048` in f64 on an H100); larger
//! systems go to TPR or Thomas. Workspace is allocated per call.
//!
//! **Status:** written and compiled to PTX, not yet run on a GPU; the dispatcher table below is
//! provisional until measured on an H100.

use cuda_kernels::{DeviceBuffer, Gpu, LaunchConfig, PushKernelArg};

use hetero_sched::tune::Fingerprint;
use hetero_sched::tune::dispatch::{self as tuned_dispatch, Tunable};

use super::batch::{Layout, TridiagonalBatch};
pub use super::gpu_tuning::{GpuTridiagonalTuning, KERNEL as TUNING_KERNEL};
use super::real::Real;
use super::rr::RrNetwork;
use super::solve::Solver;
use crate::{Error, Result};

/// The provisional dispatcher table (to be measured on an H100, see the book):
///
/// - interleaved layout with `G >= 4096`: [`Solver::Thomas`] (one thread per system,
///   coalesced loads, `O(m)` work);
/// - `m <= 1024`: [`Solver::CrPcr`] with `pcr_size = 64` (one block per system);
/// - larger `m`: [`Solver::Tpr`] with `S = 1024` for f32 and `512` for f64.
pub fn choose(m: usize, systems: usize, layout: Layout, elem_bytes: usize) -> Solver {
    if layout == Layout::Interleaved && systems >= 4096 {
        Solver::Thomas
    } else if m <= 1024 {
        Solver::CrPcr { pcr_size: 64 }
    } else {
        Solver::Tpr { slice: if elem_bytes <= 4 { 1024 } else { 512 } }
    }
}

/// A batch whose diagonals live on the device.
///
/// Its data cannot be checked for diagonal dominance on the host, so [`Solver::Auto`] pivots
/// (the `gtsv` kernel, one thread per system) unless the batch is
/// [declared dominant](GpuBatch::assume_diagonally_dominant); then `Auto` is the dispatcher
/// [`choose`]. [`TridiagonalBatch::solve_gpu`] checks host data and declares it for you.
#[derive(Debug)]
pub struct GpuBatch<'a, T: Real> {
    a: &'a DeviceBuffer<T>,
    b: &'a DeviceBuffer<T>,
    c: &'a DeviceBuffer<T>,
    m: usize,
    systems: usize,
    layout: Layout,
    dominant: bool,
}

impl<'a, T: Real> GpuBatch<'a, T> {
    /// Device diagonals in `layout` (same validation as [`TridiagonalBatch::new`]).
    pub fn new(
        a: &'a DeviceBuffer<T>,
        b: &'a DeviceBuffer<T>,
        c: &'a DeviceBuffer<T>,
        m: usize,
        layout: Layout,
    ) -> Result<Self> {
        let n = b.len();
        super::batch::check_len("a (sub-diagonal)", a.len(), n)?;
        super::batch::check_len("c (super-diagonal)", c.len(), n)?;
        let systems = crate::segments::check_rows(n, m)?;
        if m > u32::MAX as usize {
            return Err(Error::Invalid(format!("tridiagonal gpu: system size {m} above 2^32 - 1")));
        }
        Ok(GpuBatch { a, b, c, m, systems, layout, dominant: false })
    }

    /// Declares every system diagonally dominant by rows in the sense of
    /// [`Dominance`](super::Dominance) (`Weak` or `Strict`), so that [`Solver::Auto`] may take
    /// the dispatcher's fast solvers, which do not pivot. The declaration is not checked: on a
    /// batch that is not dominant, those solvers can return wrong values, NaN or infinity
    /// without an error.
    pub fn assume_diagonally_dominant(mut self) -> Self {
        self.dominant = true;
        self
    }

    /// Solves into `x` (device memory, same length as `d`) with `solver`. [`Solver::Auto`] on
    /// a dominant batch runs the configuration tuned for this device, type and shape
    /// ([`tuning`](Self::tuning)); the one-thread-per-system kernels use its block size.
    pub fn solve_into(
        &self,
        gpu: &Gpu,
        solver: Solver,
        d: &DeviceBuffer<T>,
        x: &mut DeviceBuffer<T>,
    ) -> Result<()> {
        let tuning = self.tuning(gpu);
        let solver = match solver {
            Solver::Auto if self.dominant => tuning.solver,
            Solver::Auto => Solver::PivotingLu,
            s => s,
        };
        self.run(gpu, solver, tuning.threads, d, x)
    }

    /// What [`Solver::Auto`] runs on this batch once declared dominant: the configuration
    /// tuned for `gpu`, the element type, layout and shape in the tuning cache (read once per
    /// process), else [`GpuTridiagonalTuning::default_for`].
    pub fn tuning(&self, gpu: &Gpu) -> GpuTridiagonalTuning {
        let shape = (self.layout, self.m, self.systems, std::mem::size_of::<T>());
        GpuTridiagonalTuning::tuned_on::<T>(tuned_dispatch::global(), &Fingerprint::gpu(gpu), shape)
    }

    /// Solves into `x` with explicit tuning parameters, whatever the cache holds (what the
    /// tuner measures). The solver is run as named, without pivoting: for dominant batches.
    pub fn solve_into_tuned(
        &self,
        gpu: &Gpu,
        tuning: &GpuTridiagonalTuning,
        d: &DeviceBuffer<T>,
        x: &mut DeviceBuffer<T>,
    ) -> Result<()> {
        if GpuTridiagonalTuning::from_config(&tuning.to_config()) != Some(*tuning) {
            return Err(Error::Invalid(format!("tridiagonal gpu: unusable tuning {tuning:?}")));
        }
        self.run(gpu, tuning.solver, tuning.threads, d, x)
    }

    fn run(
        &self,
        gpu: &Gpu,
        solver: Solver,
        threads: u32,
        d: &DeviceBuffer<T>,
        x: &mut DeviceBuffer<T>,
    ) -> Result<()> {
        let n = self.b.len();
        super::batch::check_len("d (right-hand side)", d.len(), n)?;
        super::batch::check_len("x (solution)", x.len(), n)?;
        if n == 0 {
            return Ok(());
        }
        let _span = tracing::debug_span!("tridiagonal_gpu", ?solver, m = self.m, g = self.systems).entered();
        let l = Launch { gpu, batch: self, d, threads };
        match solver {
            Solver::Auto => unreachable!("resolved above"),
            Solver::Thomas | Solver::ThomasParallel | Solver::ThomasLanes => l.thomas(x),
            Solver::PivotingLu => l.pivoting(x),
            Solver::CyclicReduction => l.cr_pcr(x, 1),
            Solver::ParallelCyclicReduction => l.cr_pcr(x, usize::MAX),
            Solver::CrPcr { pcr_size } => l.cr_pcr(x, pcr_size),
            Solver::RedundantReduction(net) => l.rr(x, net),
            Solver::WangMou => l.wm(x),
            Solver::Tpr { slice } => l.tpr(x, slice),
        }
    }

    fn strides(&self) -> (u64, u64) {
        match self.layout {
            Layout::Strided => (self.m as u64, 1),
            Layout::Interleaved => (1, self.systems as u64),
        }
    }
}

impl<T: Real> TridiagonalBatch<'_, T> {
    /// Uploads the batch and `d`, solves on `gpu` with `solver`, and downloads the solution
    /// into `d`. Convenient for tests and one-off solves; keep data resident with [`GpuBatch`].
    /// With [`Solver::Auto`] the host data are checked for [dominance](Self::dominance) first:
    /// dominant batches go to the dispatcher [`choose`], the others to the pivoting kernel.
    pub fn solve_gpu(&self, gpu: &Gpu, solver: Solver, d: &mut [T]) -> Result<()> {
        self.check_rhs("d (right-hand side)", d.len())?;
        // Nothing to solve, and nothing to upload: the driver refuses zero-byte allocations.
        if d.is_empty() {
            return Ok(());
        }
        let (a, b, c) = (gpu.upload(self.a)?, gpu.upload(self.b)?, gpu.upload(self.c)?);
        let dd = gpu.upload(d)?;
        let mut x = gpu.zeros::<T>(d.len())?;
        let mut batch = GpuBatch::new(&a, &b, &c, self.m, self.layout)?;
        if solver == Solver::Auto && self.dominance() != super::Dominance::None {
            batch = batch.assume_diagonally_dominant();
        }
        batch.solve_into(gpu, solver, &dd, &mut x)?;
        d.copy_from_slice(&gpu.download(&x)?);
        Ok(())
    }
}

struct Launch<'g, 'b, T: Real> {
    gpu: &'g Gpu,
    batch: &'g GpuBatch<'b, T>,
    d: &'g DeviceBuffer<T>,
    /// Threads per block of the one-thread-per-system kernels.
    threads: u32,
}

fn threads_for(work: usize) -> u32 {
    (work.clamp(32, 1024).div_ceil(32) * 32) as u32
}

/// `blocks` as a grid dimension (gridDim.x is limited to 2^31 - 1).
fn grid_dim(blocks: usize) -> Result<u32> {
    u32::try_from(blocks)
        .ok()
        .filter(|&b| b <= i32::MAX as u32)
        .ok_or_else(|| Error::Invalid(format!("tridiagonal gpu: {blocks} blocks do not fit one grid")))
}

impl<T: Real> Launch<'_, '_, T> {
    /// Kernel `name` for `T`, checked for a block of `threads` and raised to `shared` bytes of
    /// dynamic shared memory.
    fn func(
        &self,
        name: &str,
        module: &str,
        shared: usize,
        threads: u32,
    ) -> Result<cuda_kernels::CudaFunction> {
        // Cached per process, with the dynamic shared memory limit raised once to the device's
        // maximum (per-call opt-ins to one call's size race between host threads).
        let kernel = self.gpu.kernel(module, &format!("{name}_{}", T::SUFFIX))?;
        // Block kernels carry __launch_bounds__(1024); a block this function cannot run is an
        // error here rather than CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES at the launch.
        let max_threads = kernel.attributes().max_threads_per_block;
        if threads > max_threads {
            return Err(Error::Invalid(format!(
                "tridiagonal gpu: {name} runs at most {max_threads} threads per block, {threads} asked"
            )));
        }
        let limit = kernel.attributes().max_dynamic_shared_bytes;
        if shared > limit {
            return Err(Error::Invalid(format!(
                "tridiagonal gpu: {name} needs {shared} B of shared memory, the device allows {limit} B; \
                 use Tpr or Thomas for systems this large"
            )));
        }
        let f = kernel.function().clone();
        Ok(f)
    }

    fn eq_bytes() -> usize {
        4 * std::mem::size_of::<T>()
    }

    fn per_system_cfg(&self) -> Result<LaunchConfig> {
        Ok(LaunchConfig {
            grid_dim: (grid_dim(self.batch.systems.div_ceil(self.threads as usize))?, 1, 1),
            block_dim: (self.threads, 1, 1),
            shared_mem_bytes: 0,
        })
    }

    fn thomas(&self, x: &mut DeviceBuffer<T>) -> Result<()> {
        let f = self.func("tridiag_thomas", "prefix/tridiag_thread", 0, self.threads)?;
        let mut w = self.gpu.zeros::<T>(x.len())?;
        let (ss, es) = self.batch.strides();
        let (m, g) = (self.batch.m as u32, self.batch.systems as u64);
        let bt = self.batch;
        // SAFETY: tridiag_thomas_T(a, b, c, d, x, w, u32 m, u64 G, u64 ss, u64 es); every buffer
        // holds m * G elements and the strides address exactly those.
        unsafe {
            self.gpu.launch(&f, self.per_system_cfg()?, |args| {
                args.arg(bt.a)
                    .arg(bt.b)
                    .arg(bt.c)
                    .arg(self.d)
                    .arg(x)
                    .arg(&mut w)
                    .arg(&m)
                    .arg(&g)
                    .arg(&ss)
                    .arg(&es);
            })?;
        }
        Ok(())
    }

    fn pivoting(&self, x: &mut DeviceBuffer<T>) -> Result<()> {
        let f = self.func("tridiag_pivot", "prefix/tridiag_thread", 0, self.threads)?;
        let (mut dd, mut du, mut du2) =
            (self.gpu.zeros::<T>(x.len())?, self.gpu.zeros::<T>(x.len())?, self.gpu.zeros::<T>(x.len())?);
        let (ss, es) = self.batch.strides();
        let (m, g) = (self.batch.m as u32, self.batch.systems as u64);
        let bt = self.batch;
        // SAFETY: tridiag_pivot_T(a, b, c, d, x, dd, du, du2, u32 m, u64 G, u64 ss, u64 es);
        // all buffers hold m * G elements.
        unsafe {
            self.gpu.launch(&f, self.per_system_cfg()?, |args| {
                args.arg(bt.a).arg(bt.b).arg(bt.c).arg(self.d).arg(x);
                args.arg(&mut dd).arg(&mut du).arg(&mut du2).arg(&m).arg(&g).arg(&ss).arg(&es);
            })?;
        }
        Ok(())
    }

    fn cr_pcr(&self, x: &mut DeviceBuffer<T>, pcr_size: usize) -> Result<()> {
        let n = self.batch.m.next_power_of_two();
        let shared = 3 * n * Self::eq_bytes() + n * std::mem::size_of::<T>();
        let threads = threads_for(n / 2);
        let f = self.func("tridiag_cr_pcr", "prefix/tridiag_block", shared, threads)?;
        let cfg = LaunchConfig {
            grid_dim: (grid_dim(self.batch.systems)?, 1, 1),
            block_dim: (threads, 1, 1),
            shared_mem_bytes: shared as u32,
        };
        let (ss, es) = self.batch.strides();
        let (m, n32, p) = (self.batch.m as u32, n as u32, pcr_size.clamp(1, n).next_power_of_two() as u32);
        let bt = self.batch;
        // SAFETY: tridiag_cr_pcr_T(a, b, c, d, x, u32 m, u32 n, u64 ss, u64 es, u32 pcr_size);
        // one block per system, `shared` bytes = 3n equations + n unknowns as the kernel expects.
        unsafe {
            self.gpu.launch(&f, cfg, |args| {
                args.arg(bt.a)
                    .arg(bt.b)
                    .arg(bt.c)
                    .arg(self.d)
                    .arg(x)
                    .arg(&m)
                    .arg(&n32)
                    .arg(&ss)
                    .arg(&es)
                    .arg(&p);
            })?;
        }
        Ok(())
    }

    fn rr(&self, x: &mut DeviceBuffer<T>, net: RrNetwork) -> Result<()> {
        let m = self.batch.m;
        let buffers = if net == RrNetwork::KoggeStone { 2 } else { 1 };
        let shared = buffers * m * 2 * Self::eq_bytes();
        let threads = threads_for(m);
        let f = self.func("tridiag_rr", "prefix/tridiag_block", shared, threads)?;
        let cfg = LaunchConfig {
            grid_dim: (grid_dim(self.batch.systems)?, 1, 1),
            block_dim: (threads, 1, 1),
            shared_mem_bytes: shared as u32,
        };
        let (ss, es) = self.batch.strides();
        let (m32, ks) = (m as u32, u32::from(net == RrNetwork::KoggeStone));
        let bt = self.batch;
        // SAFETY: tridiag_rr_T(a, b, c, d, x, u32 m, u64 ss, u64 es, u32 kogge_stone); shared
        // holds `buffers` arrays of m segments (8 values each).
        unsafe {
            self.gpu.launch(&f, cfg, |args| {
                args.arg(bt.a).arg(bt.b).arg(bt.c).arg(self.d).arg(x).arg(&m32).arg(&ss).arg(&es).arg(&ks);
            })?;
        }
        Ok(())
    }

    fn wm(&self, x: &mut DeviceBuffer<T>) -> Result<()> {
        let n = self.batch.m.next_power_of_two();
        let shared = 2 * n * Self::eq_bytes();
        let threads = threads_for(n);
        let f = self.func("tridiag_wm", "prefix/tridiag_block", shared, threads)?;
        let cfg = LaunchConfig {
            grid_dim: (grid_dim(self.batch.systems)?, 1, 1),
            block_dim: (threads, 1, 1),
            shared_mem_bytes: shared as u32,
        };
        let (ss, es) = self.batch.strides();
        let (m, n32) = (self.batch.m as u32, n as u32);
        let bt = self.batch;
        // SAFETY: tridiag_wm_T(a, b, c, d, x, u32 m, u32 n, u64 ss, u64 es); shared = 2n equations.
        unsafe {
            self.gpu.launch(&f, cfg, |args| {
                args.arg(bt.a).arg(bt.b).arg(bt.c).arg(self.d).arg(x).arg(&m).arg(&n32).arg(&ss).arg(&es);
            })?;
        }
        Ok(())
    }

    fn tpr(&self, x: &mut DeviceBuffer<T>, slice: usize) -> Result<()> {
        if !(2..=2048).contains(&slice) {
            return Err(Error::Invalid(format!("tridiagonal gpu: TPR slice size {slice} outside 2..=2048")));
        }
        let np = self.batch.m.next_power_of_two().max(2);
        let s = slice.next_power_of_two().min(np);
        let slices = np / s;
        let g = self.batch.systems;
        let eq = Self::eq_bytes();
        let mut w = self.gpu.zeros::<T>(4 * g * np)?;
        let mut tops = self.gpu.zeros::<T>(4 * g * slices)?;
        let mut xr = self.gpu.zeros::<T>(g * slices)?;
        let (ss, es) = self.batch.strides();
        let (m32, s32, mm) = (self.batch.m as u32, s as u32, slices as u32);
        let bt = self.batch;
        let blocks = grid_dim(g * slices)?;
        let slice_threads = threads_for(s / 2);

        let sh1 = 2 * s * eq;
        let f1 = self.func("tridiag_tpr_stage1", "prefix/tridiag_tpr", sh1, slice_threads)?;
        let cfg1 = LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (slice_threads, 1, 1),
            shared_mem_bytes: sh1 as u32,
        };
        // SAFETY: tridiag_tpr_stage1_T(a, b, c, d, TriEq* w, TriEq* tops, u32 m, u32 S, u32 M,
        // u64 ss, u64 es); w holds G*np equations, tops G*M; shared = 2S equations.
        unsafe {
            self.gpu.launch(&f1, cfg1, |args| {
                args.arg(bt.a).arg(bt.b).arg(bt.c).arg(self.d).arg(&mut w).arg(&mut tops);
                args.arg(&m32).arg(&s32).arg(&mm).arg(&ss).arg(&es);
            })?;
        }

        let sh2 = 3 * slices * eq + slices * std::mem::size_of::<T>();
        if sh2 <= self.gpu.props().shared_per_block_optin && slices <= 2048 {
            let threads2 = threads_for(slices / 2);
            let f2 = self.func("tridiag_tpr_stage2_block", "prefix/tridiag_tpr", sh2, threads2)?;
            let cfg2 = LaunchConfig {
                grid_dim: (grid_dim(g)?, 1, 1),
                block_dim: (threads2, 1, 1),
                shared_mem_bytes: sh2 as u32,
            };
            let p = 64u32.min(mm);
            // SAFETY: tridiag_tpr_stage2_block_T(const TriEq* w, const TriEq* tops, T* xr, u32 S,
            // u32 M, u32 pcr_size); one block per system, shared = 3M equations + M unknowns.
            unsafe {
                self.gpu.launch(&f2, cfg2, |args| {
                    args.arg(&w).arg(&tops).arg(&mut xr).arg(&s32).arg(&mm).arg(&p);
                })?;
            }
        } else {
            let f2 = self.func("tridiag_tpr_stage2_thread", "prefix/tridiag_tpr", 0, self.threads)?;
            let mut cp = self.gpu.zeros::<T>(g * slices)?;
            let g64 = g as u64;
            // SAFETY: tridiag_tpr_stage2_thread_T(w, tops, xr, cp, u32 S, u32 M, u64 G); xr and
            // cp hold G*M values; one thread per system.
            unsafe {
                self.gpu.launch(&f2, self.per_system_cfg()?, |args| {
                    args.arg(&w).arg(&tops).arg(&mut xr).arg(&mut cp).arg(&s32).arg(&mm).arg(&g64);
                })?;
            }
        }

        let sh3 = s * std::mem::size_of::<T>();
        let f3 = self.func("tridiag_tpr_stage3", "prefix/tridiag_tpr", sh3, slice_threads)?;
        let cfg3 = LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (slice_threads, 1, 1),
            shared_mem_bytes: sh3 as u32,
        };
        // SAFETY: tridiag_tpr_stage3_T(a, b, c, d, const TriEq* w, const T* xr, T* x, u32 m,
        // u32 S, u32 M, u64 ss, u64 es); shared = S unknowns.
        unsafe {
            self.gpu.launch(&f3, cfg3, |args| {
                args.arg(bt.a).arg(bt.b).arg(bt.c).arg(self.d).arg(&w).arg(&xr).arg(x);
                args.arg(&m32).arg(&s32).arg(&mm).arg(&ss).arg(&es);
            })?;
        }
        Ok(())
    }
}
