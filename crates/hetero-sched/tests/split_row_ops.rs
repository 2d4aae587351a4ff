//! An example adaptor: batched row operations of prefix-ops (row sorts, row scans) as
//! [`Splittable`] operations, one work item per row, split over CPU devices and, where one is
//! present, a GPU. Oracles: std's sort and a sequential prefix sum per row.

use std::ops::Range;

use cuda_kernels::Gpu;
use hetero_sched::split::{
    AffineModel, BoxError, CpuDevice, CudaDevice, Device, DeviceKind, DynamicPlan, Grain, Splittable,
    Throttled, concat, run_dynamic, run_static, solve_static,
};
use hetkit_testkit::{gpu_or_skip, rng};
use prefix_ops::scan::{self, Add};
use prefix_ops::sort::{self, Order};
use rand::Rng;

type CpuFn<K> = fn(&mut [K], usize) -> Result<(), BoxError>;
type GpuFn<K> = fn(&Gpu, &mut [K], usize) -> Result<(), BoxError>;

/// Rows of `row_len` elements of `data`, each transformed on its own by `cpu` or `gpu`.
struct RowBatch<'a, K> {
    data: &'a [K],
    row_len: usize,
    cpu: CpuFn<K>,
    gpu: Option<GpuFn<K>>,
}

/// A stream of the GPU and the result of the rows it was given (the prefix-ops host calls
/// return when done, so `submit` does the work and `complete` hands it over).
struct RowLane<K> {
    gpu: Gpu,
    done: Option<Vec<K>>,
}

impl<K: Copy + Send + Sync> Splittable for RowBatch<'_, K> {
    type Output = Vec<K>;
    type Lane = RowLane<K>;

    fn items(&self) -> usize {
        self.data.len() / self.row_len
    }

    fn run_cpu(&self, r: Range<usize>) -> Result<Vec<K>, BoxError> {
        let mut rows = self.data[r.start * self.row_len..r.end * self.row_len].to_vec();
        (self.cpu)(&mut rows, self.row_len)?;
        Ok(rows)
    }

    fn has_gpu(&self) -> bool {
        self.gpu.is_some()
    }

    fn open_lane(&self, device: &dyn Device, _lane: usize) -> Result<RowLane<K>, BoxError> {
        let gpu = device.cuda().ok_or("not a CUDA device")?.with_new_stream()?;
        Ok(RowLane { gpu, done: None })
    }

    fn submit(&self, lane: &mut RowLane<K>, r: Range<usize>) -> Result<(), BoxError> {
        let mut rows = self.data[r.start * self.row_len..r.end * self.row_len].to_vec();
        (self.gpu.ok_or("no GPU implementation")?)(&lane.gpu, &mut rows, self.row_len)?;
        lane.done = Some(rows);
        Ok(())
    }

    fn complete(&self, lane: &mut RowLane<K>) -> Result<Vec<K>, BoxError> {
        lane.done.take().ok_or_else(|| "complete without submit".into())
    }
}

fn sort_cpu(rows: &mut [i64], row_len: usize) -> Result<(), BoxError> {
    Ok(sort::rows(rows, row_len, Order::Ascending)?)
}

fn sort_gpu(gpu: &Gpu, rows: &mut [i64], row_len: usize) -> Result<(), BoxError> {
    let mut buf = gpu.upload(rows)?;
    sort::gpu::rows(gpu, &mut buf, row_len, Order::Ascending)?;
    rows.copy_from_slice(&gpu.download(&buf)?);
    Ok(())
}

fn scan_cpu(rows: &mut [i64], row_len: usize) -> Result<(), BoxError> {
    Ok(scan::inclusive_rows(rows, row_len, Add)?)
}

fn scan_gpu(gpu: &Gpu, rows: &mut [i64], row_len: usize) -> Result<(), BoxError> {
    Ok(scan::gpu::inclusive_rows(gpu, rows, row_len, Add)?)
}

fn oracle_sort(data: &[i64], row_len: usize) -> Vec<i64> {
    let mut out = data.to_vec();
    for row in out.chunks_mut(row_len) {
        row.sort();
    }
    out
}

fn oracle_scan(data: &[i64], row_len: usize) -> Vec<i64> {
    let mut out = data.to_vec();
    for row in out.chunks_mut(row_len) {
        for i in 1..row.len() {
            row[i] += row[i - 1];
        }
    }
    out
}

fn random_rows(test: &str, rows: usize, row_len: usize) -> Vec<i64> {
    let mut g = rng(test);
    (0..rows * row_len).map(|_| g.random_range(-1000..1000)).collect()
}

/// Both operations, static and dynamic, over `devices`; `gpu` tells whether the GPU paths exist.
fn check_all(test: &str, devices: &[&dyn Device], gpu: bool) {
    for (rows, row_len) in [(1, 1), (97, 33), (1000, 64), (257, 7)] {
        let data = random_rows(test, rows, row_len);
        let sort_op =
            RowBatch { data: &data, row_len, cpu: sort_cpu, gpu: gpu.then_some(sort_gpu as GpuFn<i64>) };
        let scan_op =
            RowBatch { data: &data, row_len, cpu: scan_cpu, gpu: gpu.then_some(scan_gpu as GpuFn<i64>) };
        // Equal models: an even static split.
        let models = vec![AffineModel::new(1e-6, 0.0); devices.len()];
        let shares = solve_static(rows, &models, None).unwrap();
        let grains: Vec<_> = devices
            .iter()
            .map(|d| {
                let items = if d.kind() == DeviceKind::Gpu { 64 } else { 5 };
                (d.kind(), d.workers(), Grain { items, seconds: 1e-4 })
            })
            .collect();
        let plan = DynamicPlan::new(&grains).unwrap();
        let (want_sort, want_scan) = (oracle_sort(&data, row_len), oracle_scan(&data, row_len));
        assert_eq!(concat(run_static(&sort_op, devices, &shares).unwrap()), want_sort, "{rows}x{row_len}");
        assert_eq!(concat(run_dynamic(&sort_op, devices, &plan).unwrap()), want_sort, "{rows}x{row_len}");
        assert_eq!(concat(run_static(&scan_op, devices, &shares).unwrap()), want_scan, "{rows}x{row_len}");
        assert_eq!(concat(run_dynamic(&scan_op, devices, &plan).unwrap()), want_scan, "{rows}x{row_len}");
    }
}

#[test]
fn row_sorts_and_scans_split_over_two_cpus() {
    let fast = CpuDevice::with_threads(2).unwrap();
    let slow = Throttled::new(CpuDevice::with_threads(1).unwrap(), 1.5).unwrap();
    check_all("row_sorts_and_scans_split_over_two_cpus", &[&fast, &slow], false);
}

#[test]
fn row_sorts_and_scans_split_over_cpu_and_gpu() {
    let Some(gpu) = gpu_or_skip("row_sorts_and_scans_split_over_cpu_and_gpu") else { return };
    let cpu = CpuDevice::with_threads(2).unwrap();
    let dev = CudaDevice::from_gpu(gpu, 2).unwrap();
    check_all("row_sorts_and_scans_split_over_cpu_and_gpu", &[&cpu, &dev], true);
}
