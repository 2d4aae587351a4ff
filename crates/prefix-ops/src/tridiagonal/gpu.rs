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
//! systems go to TPR or Thomas. Scratch lives in the [`GpuBatch`]'s workspace, allocated on
//! the first call that needs it and kept for the next ones; it is never zeroed, since every
//! kernel writes each scratch value it reads, and only those. [`cost`] counts the launches and
//! bytes moved of one call against the floor (read `a`, `b`, `c`, `d`, write `x`), and
//! [`GpuBatch::launches`] counts what the launch code really did, so a test can hold them equal.
//!
//! **Status:** written and compiled to PTX, not yet run on a GPU; the dispatcher table below is
//! provisional until measured on an H100.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use cuda_kernels::{DeviceBuffer, Gpu, LaunchConfig, PushKernelArg};
use cudarc::driver::{CudaView, CudaViewMut};

use hetero_sched::tune::Fingerprint;
use hetero_sched::tune::dispatch::{self as tuned_dispatch, Tunable};

use super::batch::{Layout, TridiagonalBatch};
pub use super::gpu_cost::{CallCost, cost};
pub use super::gpu_tuning::{GpuTridiagonalTuning, KERNEL as TUNING_KERNEL};
use super::real::Real;
use super::rr::RrNetwork;
use super::solve::Solver;
use crate::{Error, Result};

/// Systems per SM from which one thread per system (Thomas, interleaved) fills the device: half
/// of an SM's 2048 resident threads, the warps that hide a dependent global load's latency. Below
/// it one block per system (CR-PCR, TPR) keeps every SM busy. The untuned default's threshold (a
/// tuning parameter: [`GpuTridiagonalTuning`]'s per-shape `algorithm` overrides the choice).
pub const THOMAS_SYSTEMS_PER_SM: usize = 1024;

/// SMs of an H100 SXM, the device [`choose`] assumes.
const H100_SMS: u32 = 132;

/// The dispatcher for an H100 (132 SMs): [`choose_on`] with `sm_count = 132`.
pub fn choose(m: usize, systems: usize, layout: Layout, elem_bytes: usize) -> Solver {
    choose_on(H100_SMS, m, systems, layout, elem_bytes)
}

/// The dispatcher's table for a device of `sm_count` SMs (provisional until measured on an
/// H100, see the book):
///
/// - interleaved layout with enough systems to fill the device one thread per system, `G` in
///   the power-of-two bucket of [`THOMAS_SYSTEMS_PER_SM`]` * sm_count` or above (`G > 2^17` on an
///   H100): [`Solver::Thomas`] (coalesced loads, `O(m)` work);
/// - `m <= 1024`: [`Solver::CrPcr`] with `pcr_size = 64` (one block per system);
/// - larger `m`: [`Solver::Tpr`] with `S = 1024` for f32 and `512` for f64.
///
/// The threshold compares power-of-two buckets (`"G <= 2^k"`) so that the choice is constant over
/// a tuning bucket.
pub fn choose_on(sm_count: u32, m: usize, systems: usize, layout: Layout, elem_bytes: usize) -> Solver {
    // Saturating buckets: any `systems` or `sm_count` a caller passes gives a choice, never an
    // overflow (a batch that large is rejected later, when it is allocated).
    let bucket = |n: usize| n.checked_next_power_of_two().unwrap_or(usize::MAX);
    let fill = bucket(THOMAS_SYSTEMS_PER_SM.saturating_mul(sm_count.max(1) as usize));
    if layout == Layout::Interleaved && bucket(systems) >= fill {
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
    /// Scratch kept across calls (one buffer per TPR level).
    workspace: Mutex<Workspace<T>>,
    /// Kernel launches made by this batch's calls so far.
    launches: AtomicU64,
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
        Ok(GpuBatch {
            a,
            b,
            c,
            m,
            systems,
            layout,
            dominant: false,
            workspace: Mutex::new(Workspace { levels: Vec::new() }),
            launches: AtomicU64::new(0),
        })
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

    /// Kernel launches this batch's solves have made so far (what [`cost`] predicts per call).
    pub fn launches(&self) -> u64 {
        self.launches.load(Ordering::Relaxed)
    }

    /// Device bytes of scratch this batch keeps for its next calls (0 before the first call
    /// that needs any): the workspace grows to the largest call's need and is never zeroed.
    pub fn workspace_bytes(&self) -> usize {
        let ws = self.workspace.lock().unwrap_or_else(|e| e.into_inner());
        ws.levels.iter().flatten().map(|b| b.len() * std::mem::size_of::<T>()).sum()
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
        let shape = (self.layout, self.m, self.systems, std::mem::size_of::<T>(), gpu.props().sm_count);
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
        let (ss, es) = self.strides();
        let sys = Sys {
            a: self.a.as_view(),
            b: self.b.as_view(),
            c: self.c.as_view(),
            d: d.as_view(),
            m: self.m,
            g: self.systems,
            ss,
            es,
        };
        // A poisoned lock only means a panic mid-call: the buffers are still valid scratch.
        let mut ws = self.workspace.lock().unwrap_or_else(|e| e.into_inner());
        let mut l = Launch { gpu, threads, ws: &mut ws, launches: &self.launches };
        let mut x = x.as_view_mut();
        match solver {
            Solver::Auto => unreachable!("resolved above"),
            Solver::Thomas | Solver::ThomasParallel | Solver::ThomasLanes => l.thomas(&sys, &mut x),
            Solver::PivotingLu => l.pivoting(&sys, &mut x),
            Solver::CyclicReduction => l.cr_pcr(&sys, &mut x, 1),
            Solver::ParallelCyclicReduction => l.cr_pcr(&sys, &mut x, usize::MAX),
            Solver::CrPcr { pcr_size } => l.cr_pcr(&sys, &mut x, pcr_size),
            Solver::RedundantReduction(net) => l.rr(&sys, &mut x, net),
            Solver::WangMou => l.wm(&sys, &mut x),
            Solver::Tpr { slice } => l.tpr(&sys, &mut x, slice, 0),
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

/// Device scratch kept by a [`GpuBatch`] across calls: one buffer per TPR level (level 0 also
/// serves Thomas and the pivoting kernel), grown when a call needs more, never zeroed.
#[derive(Debug)]
struct Workspace<T> {
    levels: Vec<Option<DeviceBuffer<T>>>,
}

impl<T: Real> Workspace<T> {
    /// Takes level `level`'s buffer, at least `len` long, out of the workspace (give it back with
    /// [`put`](Self::put)), so that a nested level can take its own meanwhile.
    fn take(&mut self, gpu: &Gpu, level: usize, len: usize) -> Result<DeviceBuffer<T>> {
        if self.levels.len() <= level {
            self.levels.resize_with(level + 1, || None);
        }
        match self.levels[level].take() {
            Some(buf) if buf.len() >= len => Ok(buf),
            _ => {
                // SAFETY: uninitialised device memory of `len` values; the kernels write every
                // scratch value before they read it (the emulator fills fresh memory with 0xCD
                // bytes, so a value read before it is written shows in the tests).
                let buf = unsafe { gpu.stream().alloc::<T>(len.max(1)) };
                buf.map_err(|e| cuda_kernels::Error::from_alloc(e, len * std::mem::size_of::<T>()).into())
            }
        }
    }

    /// Gives a level's buffer back for the next call.
    fn put(&mut self, level: usize, buf: DeviceBuffer<T>) {
        self.levels[level] = Some(buf);
    }
}

/// One batch of systems on the device, as views: the caller's batch, or a reduced system of TPR.
struct Sys<'v, T> {
    a: CudaView<'v, T>,
    b: CudaView<'v, T>,
    c: CudaView<'v, T>,
    d: CudaView<'v, T>,
    m: usize,
    g: usize,
    /// Distance between systems and between the rows of a system.
    ss: u64,
    es: u64,
}

struct Launch<'g, 'w, T: Real> {
    gpu: &'g Gpu,
    /// Threads per block of the one-thread-per-system kernels.
    threads: u32,
    ws: &'w mut Workspace<T>,
    launches: &'g AtomicU64,
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

fn block_cfg(blocks: usize, threads: u32, shared: usize) -> Result<LaunchConfig> {
    Ok(LaunchConfig {
        grid_dim: (grid_dim(blocks)?, 1, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: shared as u32,
    })
}

impl<T: Real> Launch<'_, '_, T> {
    /// Kernel `name` for `T`, checked for a block of `threads` and `shared` bytes of dynamic
    /// shared memory.
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
        self.launches.fetch_add(1, Ordering::Relaxed);
        Ok(kernel.function().clone())
    }

    fn per_system_cfg(&self, g: usize) -> Result<LaunchConfig> {
        block_cfg(g.div_ceil(self.threads as usize), self.threads, 0)
    }

    fn thomas(&mut self, s: &Sys<'_, T>, x: &mut CudaViewMut<'_, T>) -> Result<()> {
        let f = self.func("tridiag_thomas", "prefix/tridiag_thread", 0, self.threads)?;
        let mut buf = self.ws.take(self.gpu, 0, x.len())?;
        let (m, g) = (s.m as u32, s.g as u64);
        let cfg = self.per_system_cfg(s.g)?;
        let mut w = buf.slice_mut(..x.len());
        // SAFETY: tridiag_thomas_T(a, b, c, d, x, w, u32 m, u64 G, u64 ss, u64 es); every buffer
        // holds m * G elements and the strides address exactly those.
        let r = unsafe {
            self.gpu.launch(&f, cfg, |args| {
                args.arg(&s.a).arg(&s.b).arg(&s.c).arg(&s.d).arg(&mut *x).arg(&mut w);
                args.arg(&m).arg(&g).arg(&s.ss).arg(&s.es);
            })
        };
        self.ws.put(0, buf);
        Ok(r?)
    }

    fn pivoting(&mut self, s: &Sys<'_, T>, x: &mut CudaViewMut<'_, T>) -> Result<()> {
        let f = self.func("tridiag_pivot", "prefix/tridiag_thread", 0, self.threads)?;
        let n = x.len();
        let mut buf = self.ws.take(self.gpu, 0, 3 * n)?;
        let (m, g) = (s.m as u32, s.g as u64);
        let cfg = self.per_system_cfg(s.g)?;
        let (mut inv, mut rest) = buf.split_at_mut(n);
        let (mut du, mut du2) = rest.split_at_mut(n);
        // SAFETY: tridiag_pivot_T(a, b, c, d, x, inv, du, du2, u32 m, u64 G, u64 ss, u64 es);
        // all buffers hold at least m * G elements.
        let r = unsafe {
            self.gpu.launch(&f, cfg, |args| {
                args.arg(&s.a).arg(&s.b).arg(&s.c).arg(&s.d).arg(&mut *x);
                args.arg(&mut inv).arg(&mut du).arg(&mut du2).arg(&m).arg(&g).arg(&s.ss).arg(&s.es);
            })
        };
        self.ws.put(0, buf);
        Ok(r?)
    }

    fn cr_pcr(&mut self, s: &Sys<'_, T>, x: &mut CudaViewMut<'_, T>, pcr_size: usize) -> Result<()> {
        let n = s.m.next_power_of_two();
        let shared = cr_pcr_shared::<T>(n);
        let threads = threads_for(n / 2);
        let f = self.func("tridiag_cr_pcr", "prefix/tridiag_block", shared, threads)?;
        let cfg = block_cfg(s.g, threads, shared)?;
        let (m, n32, p) = (s.m as u32, n as u32, pcr_size.clamp(1, n).next_power_of_two() as u32);
        // SAFETY: tridiag_cr_pcr_T(a, b, c, d, x, u32 m, u32 n, u64 ss, u64 es, u32 pcr_size);
        // one block per system, `shared` bytes as the kernel lays them out.
        unsafe {
            self.gpu.launch(&f, cfg, |args| {
                args.arg(&s.a).arg(&s.b).arg(&s.c).arg(&s.d).arg(&mut *x);
                args.arg(&m).arg(&n32).arg(&s.ss).arg(&s.es).arg(&p);
            })?;
        }
        Ok(())
    }

    fn rr(&mut self, s: &Sys<'_, T>, x: &mut CudaViewMut<'_, T>, net: RrNetwork) -> Result<()> {
        let m = s.m;
        let buffers = if net == RrNetwork::KoggeStone { 2 } else { 1 };
        let shared = buffers * m * 2 * eq_bytes::<T>();
        let threads = threads_for(m);
        let f = self.func("tridiag_rr", "prefix/tridiag_block", shared, threads)?;
        let cfg = block_cfg(s.g, threads, shared)?;
        let (m32, ks) = (m as u32, u32::from(net == RrNetwork::KoggeStone));
        // SAFETY: tridiag_rr_T(a, b, c, d, x, u32 m, u64 ss, u64 es, u32 kogge_stone); shared
        // holds `buffers` arrays of m segments (8 values each).
        unsafe {
            self.gpu.launch(&f, cfg, |args| {
                args.arg(&s.a).arg(&s.b).arg(&s.c).arg(&s.d).arg(&mut *x);
                args.arg(&m32).arg(&s.ss).arg(&s.es).arg(&ks);
            })?;
        }
        Ok(())
    }

    fn wm(&mut self, s: &Sys<'_, T>, x: &mut CudaViewMut<'_, T>) -> Result<()> {
        let n = s.m.next_power_of_two();
        let shared = 2 * n * eq_bytes::<T>();
        let threads = threads_for(n);
        let f = self.func("tridiag_wm", "prefix/tridiag_block", shared, threads)?;
        let cfg = block_cfg(s.g, threads, shared)?;
        let (m, n32) = (s.m as u32, n as u32);
        // SAFETY: tridiag_wm_T(a, b, c, d, x, u32 m, u32 n, u64 ss, u64 es); shared = 2n equations.
        unsafe {
            self.gpu.launch(&f, cfg, |args| {
                args.arg(&s.a).arg(&s.b).arg(&s.c).arg(&s.d).arg(&mut *x);
                args.arg(&m).arg(&n32).arg(&s.ss).arg(&s.es);
            })?;
        }
        Ok(())
    }

    /// TPR at `level` (0 for the caller's batch): stage 1 per slice, the reduced system of
    /// `M = np / S` rows per system (one block per system when it fits shared memory, else
    /// materialised and solved by TPR one level down), stage 3 per slice.
    fn tpr(&mut self, s: &Sys<'_, T>, x: &mut CudaViewMut<'_, T>, slice: usize, level: usize) -> Result<()> {
        if !(2..=2048).contains(&slice) {
            return Err(Error::Invalid(format!("tridiagonal gpu: TPR slice size {slice} outside 2..=2048")));
        }
        let plan = TprPlan::new(s.m, s.g, slice, self.gpu.props().shared_per_block_optin, eq_bytes::<T>());
        let mut buf = self.ws.take(self.gpu, level, plan.workspace_values())?;
        let r = self.tpr_stages(s, x, &plan, &mut buf, level);
        self.ws.put(level, buf);
        r
    }

    fn tpr_stages(
        &mut self,
        s: &Sys<'_, T>,
        x: &mut CudaViewMut<'_, T>,
        plan: &TprPlan,
        buf: &mut DeviceBuffer<T>,
        level: usize,
    ) -> Result<()> {
        let (g, sl, mm) = (s.g, plan.slice, plan.slices);
        let (m32, s32, mm32) = (s.m as u32, sl as u32, mm as u32);
        let (mut w, mut rest) = buf.split_at_mut(4 * g * mm * (sl / 2));
        let (mut tops, mut rest) = rest.split_at_mut(4 * g * mm);
        let (mut xr, mut reduced) = rest.split_at_mut(g * mm);
        let slice_threads = threads_for(sl / 2);

        let sh1 = super::gpu_banks::tpr_stage1_shared(sl, std::mem::size_of::<T>());
        let f1 = self.func("tridiag_tpr_stage1", "prefix/tridiag_tpr", sh1, slice_threads)?;
        // SAFETY: tridiag_tpr_stage1_T(a, b, c, d, TriEq* w, TriEq* tops, u32 m, u32 S, u32 M,
        // u64 ss, u64 es); w holds G*M*S/2 equations, tops G*M; shared as tpr_stage1_shared.
        unsafe {
            self.gpu.launch(&f1, block_cfg(g * mm, slice_threads, sh1)?, |args| {
                args.arg(&s.a).arg(&s.b).arg(&s.c).arg(&s.d).arg(&mut w).arg(&mut tops);
                args.arg(&m32).arg(&s32).arg(&mm32).arg(&s.ss).arg(&s.es);
            })?;
        }

        let (w, tops) = (w.as_view(), tops.as_view());
        if plan.stage2_in_block {
            let sh2 = cr_pcr_shared::<T>(mm);
            let threads2 = threads_for(mm / 2);
            let f2 = self.func("tridiag_tpr_stage2_block", "prefix/tridiag_tpr", sh2, threads2)?;
            let p = 64u32.min(mm32);
            // SAFETY: tridiag_tpr_stage2_block_T(const TriEq* w, const TriEq* tops, T* xr, u32 S,
            // u32 M, u32 pcr_size); one block per system, shared as cr_pcr_shared(M).
            unsafe {
                self.gpu.launch(&f2, block_cfg(g, threads2, sh2)?, |args| {
                    args.arg(&w).arg(&tops).arg(&mut xr).arg(&s32).arg(&mm32).arg(&p);
                })?;
            }
        } else {
            // The reduced rows as a strided batch of G systems of M rows, solved one level down.
            let f2 = self.func("tridiag_tpr_reduced", "prefix/tridiag_tpr", 0, self.threads)?;
            let n2 = g * mm;
            let (mut ra, mut rest) = reduced.split_at_mut(n2);
            let (mut rb, mut rest) = rest.split_at_mut(n2);
            let (mut rc, mut rest) = rest.split_at_mut(n2);
            let (mut rd, _) = rest.split_at_mut(n2);
            let n64 = n2 as u64;
            // SAFETY: tridiag_tpr_reduced_T(const TriEq* w, const TriEq* tops, T* ra, T* rb,
            // T* rc, T* rd, u32 S, u32 M, u64 rows); one thread per reduced row, G*M rows.
            unsafe {
                self.gpu.launch(&f2, self.per_system_cfg(n2)?, |args| {
                    args.arg(&w).arg(&tops).arg(&mut ra).arg(&mut rb).arg(&mut rc).arg(&mut rd);
                    args.arg(&s32).arg(&mm32).arg(&n64);
                })?;
            }
            let sub = Sys {
                a: ra.as_view(),
                b: rb.as_view(),
                c: rc.as_view(),
                d: rd.as_view(),
                m: mm,
                g,
                ss: mm as u64,
                es: 1,
            };
            self.tpr(&sub, &mut xr, sl, level + 1)?;
        }

        let xr = xr.as_view();
        let sh3 = super::gpu_banks::tpr_stage3_shared(sl, std::mem::size_of::<T>());
        let f3 = self.func("tridiag_tpr_stage3", "prefix/tridiag_tpr", sh3, slice_threads)?;
        // SAFETY: tridiag_tpr_stage3_T(a, b, c, d, const TriEq* w, const T* xr, T* x, u32 m,
        // u32 S, u32 M, u64 ss, u64 es); shared as tpr_stage3_shared.
        unsafe {
            self.gpu.launch(&f3, block_cfg(g * mm, slice_threads, sh3)?, |args| {
                args.arg(&s.a).arg(&s.b).arg(&s.c).arg(&s.d).arg(&w).arg(&xr).arg(&mut *x);
                args.arg(&m32).arg(&s32).arg(&mm32).arg(&s.ss).arg(&s.es);
            })?;
        }
        Ok(())
    }
}

/// Bytes of one `TriEq<T>` (a, b, c, d).
fn eq_bytes<T>() -> usize {
    4 * std::mem::size_of::<T>()
}

/// Dynamic shared memory of the CR-PCR block kernel for `n` (a power of two) equations: the
/// levels of CR kept compact with the PCR double buffer after the last (2n equations) and their
/// unknowns (2n values).
pub(crate) fn cr_pcr_shared<T>(n: usize) -> usize {
    2 * n * eq_bytes::<T>() + 2 * n * std::mem::size_of::<T>()
}

/// How TPR splits one level: slices of `slice` rows, `slices` of them per system, and whether
/// the reduced system is solved in one block per system.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TprPlan {
    pub(crate) g: usize,
    pub(crate) slice: usize,
    pub(crate) slices: usize,
    pub(crate) stage2_in_block: bool,
}

impl TprPlan {
    pub(crate) fn new(m: usize, g: usize, slice: usize, shared_optin: usize, eq_bytes: usize) -> Self {
        let np = m.next_power_of_two().max(2);
        let s = slice.next_power_of_two().min(np);
        let slices = np / s;
        let sh2 = 2 * slices * eq_bytes + 2 * slices * (eq_bytes / 4);
        TprPlan { g, slice: s, slices, stage2_in_block: sh2 <= shared_optin && slices <= 2048 }
    }

    /// Values of this level's workspace: the bottom-chain equations (S/2 per slice), the slice
    /// tops, the reduced solution and, when the reduced system goes one level down, its rows.
    pub(crate) fn workspace_values(&self) -> usize {
        let rows = self.g * self.slices;
        let reduced = if self.stage2_in_block { 0 } else { 4 * rows };
        4 * rows * (self.slice / 2) + 4 * rows + rows + reduced
    }
}
