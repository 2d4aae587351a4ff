//! spvm `y = Σ_i x[i] · a[ix[i], ..]` split between the CPU (sg-cpu's [`sg_cpu::spvm`]) and the
//! GPU ([`DeviceMatrix`]) by [`hetero_sched::split`]: the work items are the selected rows `i`;
//! each range sums its rows into a private `y` on the device that runs it, and the partial sums
//! are added in range order on the host (thesis Listing 3.8 with the reduction of its `Rows`
//! variant, across devices).

use std::ops::Range;
use std::sync::Arc;

use cuda_kernels::{DeviceBuffer, Gpu};
use hetero_sched::split::{self as hs, BoxError, CpuDevice, Device, DynamicPlan, Piece, Splittable};
use sg_core::SgError;
use sg_cpu::PaddedMatrix;

use crate::config::SpvmConfig;
use crate::device::DeviceReal;
use crate::error::Result;
use crate::split::from_split;
use crate::spvm::DeviceMatrix;

/// A matrix resident on the host (padded rows, for sg-cpu) and, where a GPU is given, on the
/// GPU, whose spvm runs on both at once.
///
/// ```
/// use hetero_sched::split::{CpuDevice, Device, Throttled};
/// use sg_cuda::HeteroSpvm;
/// let a = HeteroSpvm::new(&[1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0], 2, None)?;
/// let fast = CpuDevice::with_threads(1).unwrap();
/// let slow = Throttled::new(CpuDevice::with_threads(1).unwrap(), 2.0).unwrap();
/// let devices: [&dyn Device; 2] = [&fast, &slow];
/// // Rows 0 and 2 with weights 2 and 1: the first on one device, the second on the other.
/// assert_eq!(a.spvm_static(&[2.0, 1.0], &[0, 2], &devices, &[1, 1])?, vec![7.0, 10.0]);
/// assert_eq!(a.spvm(&[2.0, 1.0], &[0, 2])?, vec![7.0, 10.0]);
/// # Ok::<(), sg_cuda::Error>(())
/// ```
#[derive(Debug)]
pub struct HeteroSpvm<T: DeviceReal> {
    host: PaddedMatrix<T>,
    device: Option<Arc<DeviceMatrix<T>>>,
    config: SpvmConfig,
}

impl<T: DeviceReal> HeteroSpvm<T> {
    /// The row-major `rows x cols` matrix `a`, copied for the CPU and, with `gpu`, uploaded.
    ///
    /// # Errors
    /// As [`PaddedMatrix::from_row_major`] and [`DeviceMatrix::upload`].
    pub fn new(a: &[T], cols: usize, gpu: Option<&Gpu>) -> Result<Self> {
        let host = PaddedMatrix::from_row_major(a, cols)?;
        let device = gpu.map(|g| DeviceMatrix::upload(g, a, cols)).transpose()?.map(Arc::new);
        Ok(HeteroSpvm { host, device, config: SpvmConfig::default() })
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.host.rows()
    }

    /// Number of columns (the length of `y`).
    pub fn cols(&self) -> usize {
        self.host.cols()
    }

    /// True when the matrix is also on a GPU.
    pub fn has_gpu(&self) -> bool {
        self.device.is_some()
    }

    /// Sets the GPU launch parameters.
    ///
    /// # Errors
    /// [`Error::Config`](crate::Error::Config).
    pub fn set_config(&mut self, config: SpvmConfig) -> Result<()> {
        config.validate()?;
        self.config = config;
        Ok(())
    }

    /// The product over `x` and `ix` as a [`Splittable`] operation (one item per selected row;
    /// each range's output is its partial `y`), for any schedule of [`hetero_sched::split`];
    /// [`sum_partials`] adds the pieces up.
    ///
    /// # Errors
    /// [`SgError::LengthMismatch`] when `x` and `ix` differ in length,
    /// [`SgError::IndexOutOfRange`] for a row index past the matrix.
    pub fn op<'a>(&'a self, x: &'a [T], ix: &'a [usize]) -> Result<SpvmOp<'a, T>> {
        if x.len() != ix.len() {
            let what = "spvm row indices (one per entry of x)";
            return Err(SgError::LengthMismatch { what, expected: x.len(), got: ix.len() }.into());
        }
        if let Some(&r) = ix.iter().find(|&&r| r >= self.rows()) {
            let (idx, len) = (r as u64, self.rows() as u64);
            return Err(SgError::IndexOutOfRange { what: "spvm matrix row", idx, len }.into());
        }
        Ok(SpvmOp { m: self, x, ix })
    }

    /// `y` on the CPU alone (rayon's global pool): the one-device path.
    ///
    /// # Errors
    /// As [`op`](Self::op).
    pub fn spvm(&self, x: &[T], ix: &[usize]) -> Result<Vec<T>> {
        self.op(x, ix)?;
        Ok(sg_cpu::spvm::spvm(x, ix, &self.host)?)
    }

    /// `y` with device `k` summing the `shares[k]` selected rows after device `k − 1`'s
    /// ([`hetero_sched::split::run_static`]; shares from
    /// [`solve_static`](hetero_sched::split::solve_static) for equal finish time).
    ///
    /// # Errors
    /// As [`op`](Self::op); the scheduler's errors (shares that do not add up, a GPU device
    /// without the matrix on a GPU) as [`Error::Config`](crate::Error::Config); either device's errors.
    pub fn spvm_static(
        &self,
        x: &[T],
        ix: &[usize],
        devices: &[&dyn Device],
        shares: &[usize],
    ) -> Result<Vec<T>> {
        let op = self.op(x, ix)?;
        let pieces = hs::run_static(&op, devices, shares).map_err(from_split)?;
        Ok(sum_partials(self.cols(), pieces))
    }

    /// `y` over the multi-grain queue of `plan` ([`hetero_sched::split::run_dynamic`]).
    ///
    /// # Errors
    /// As [`spvm_static`](Self::spvm_static).
    pub fn spvm_dynamic(
        &self,
        x: &[T],
        ix: &[usize],
        devices: &[&dyn Device],
        plan: &DynamicPlan,
    ) -> Result<Vec<T>> {
        let op = self.op(x, ix)?;
        let pieces = hs::run_dynamic(&op, devices, plan).map_err(from_split)?;
        Ok(sum_partials(self.cols(), pieces))
    }

    /// `y` with a fraction of the selected rows on the CPU (rayon's global pool) and the rest on
    /// the GPU the matrix was uploaded to (two streams); without a GPU, the CPU alone.
    ///
    /// # Errors
    /// As [`spvm_static`](Self::spvm_static); [`Error::Config`](crate::Error::Config) for a fraction outside `[0, 1]`.
    pub fn spvm_split(&self, x: &[T], ix: &[usize], cpu_fraction: f64) -> Result<Vec<T>> {
        let cpu_rows = crate::split::fraction_split(x.len(), cpu_fraction)?;
        let cpu = CpuDevice::global();
        match &self.device {
            None => self.spvm_static(x, ix, &[&cpu], &[x.len()]),
            Some(d) => {
                let gpu = hs::CudaDevice::from_gpu(d.gpu().clone(), 2).map_err(from_split)?;
                self.spvm_static(x, ix, &[&cpu, &gpu], &[cpu_rows, x.len() - cpu_rows])
            }
        }
    }
}

/// `y = Σ` of the pieces' partial `y`s (each `cols` long), added in range order so that the
/// result does not depend on which device finished first.
pub fn sum_partials<T: DeviceReal>(cols: usize, pieces: Vec<Piece<Vec<T>>>) -> Vec<T> {
    let mut y = vec![T::zero(); cols];
    for p in pieces {
        for (y, v) in y.iter_mut().zip(p.output) {
            *y += v;
        }
    }
    y
}

/// spvm over checked `x` and `ix`: one work item per selected row (see [`HeteroSpvm::op`]).
#[derive(Debug, Clone, Copy)]
pub struct SpvmOp<'a, T: DeviceReal> {
    m: &'a HeteroSpvm<T>,
    x: &'a [T],
    ix: &'a [usize],
}

/// One stream of the GPU side and the buffers of the range in flight on it (kept alive until
/// the stream is done with them).
#[derive(Debug)]
pub struct SpvmLane<T: DeviceReal> {
    gpu: Gpu,
    matrix: Arc<DeviceMatrix<T>>,
    pending: Option<(DeviceBuffer<T>, DeviceBuffer<u64>, DeviceBuffer<T>)>,
}

impl<T: DeviceReal> Splittable for SpvmOp<'_, T> {
    type Output = Vec<T>;
    type Lane = SpvmLane<T>;

    fn items(&self) -> usize {
        self.x.len()
    }

    fn run_cpu(&self, r: Range<usize>) -> Result<Vec<T>, BoxError> {
        Ok(sg_cpu::spvm::spvm(&self.x[r.clone()], &self.ix[r], &self.m.host)?)
    }

    fn cpu_splits_itself(&self) -> bool {
        true
    }

    fn has_gpu(&self) -> bool {
        self.m.device.is_some()
    }

    fn open_lane(&self, device: &dyn Device, _lane: usize) -> Result<SpvmLane<T>, BoxError> {
        let matrix = self.m.device.clone().ok_or("the matrix is not on a GPU")?;
        if device.cuda().is_none() {
            return Err(format!("{} is not a CUDA device", device.fingerprint()).into());
        }
        // The matrix's buffers belong to its context: streams come from its handle.
        Ok(SpvmLane { gpu: matrix.gpu().with_new_stream()?, matrix, pending: None })
    }

    fn submit(&self, lane: &mut SpvmLane<T>, r: Range<usize>) -> Result<(), BoxError> {
        let rows: Vec<u64> = self.ix[r.clone()].iter().map(|&i| i as u64).collect();
        let x = lane.gpu.upload(&self.x[r])?;
        let ix = lane.gpu.upload(&rows)?;
        let mut y = lane.gpu.zeros::<T>(lane.matrix.cols())?;
        if !x.is_empty() {
            lane.matrix.spvm_device_on(&lane.gpu, &x, &ix, &mut y, &self.m.config)?;
        }
        lane.pending = Some((x, ix, y));
        Ok(())
    }

    fn complete(&self, lane: &mut SpvmLane<T>) -> Result<Vec<T>, BoxError> {
        let (_x, _ix, y) = lane.pending.take().ok_or("complete without a submitted range")?;
        Ok(lane.gpu.download(&y)?)
    }
}
