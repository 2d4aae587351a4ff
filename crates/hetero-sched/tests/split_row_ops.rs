//! Example adaptors: batched row operations of prefix-ops (row sorts, row scans) and batched
//! tridiagonal solves as [`Splittable`] operations, one work item per row or system, split over CPU devices and, where one is
//! present, a GPU. Oracles: std's sort and a sequential prefix sum per row; the residual of every
//! equation for the solves.

use std::ops::Range;

use cuda_kernels::Gpu;
use hetero_sched::split::{
    AffineModel, BoxError, CpuDevice, CudaDevice, Device, DeviceKind, DynamicPlan, Grain, Splittable,
    Throttled, concat, run_dynamic, run_static, solve_static,
};
use hetkit_testkit::{gpu_or_skip, rng};
use prefix_ops::scan::{self, Add};
use prefix_ops::sort::{self, Order};
use prefix_ops::tridiagonal::{self, Layout, Real, TridiagonalBatch};
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

/// Batched tridiagonal solves (prefix-ops, strided layout), one work item per system.
struct Systems<'a, T> {
    a: &'a [T],
    b: &'a [T],
    c: &'a [T],
    d: &'a [T],
    m: usize,
    gpu: bool,
}

impl<'a, T: Real> Systems<'a, T> {
    fn batch(&self, r: &Range<usize>) -> Result<(TridiagonalBatch<'a, T>, Vec<T>), BoxError> {
        let s = r.start * self.m..r.end * self.m;
        let batch =
            TridiagonalBatch::strided(&self.a[s.clone()], &self.b[s.clone()], &self.c[s.clone()], self.m)?;
        Ok((batch, self.d[s].to_vec()))
    }
}

impl<T: Real> Splittable for Systems<'_, T> {
    type Output = Vec<T>;
    type Lane = RowLane<T>;

    fn items(&self) -> usize {
        self.b.len() / self.m
    }

    fn run_cpu(&self, r: Range<usize>) -> Result<Vec<T>, BoxError> {
        let (batch, mut x) = self.batch(&r)?;
        batch.solve(&mut x)?;
        Ok(x)
    }

    fn has_gpu(&self) -> bool {
        self.gpu
    }

    fn open_lane(&self, device: &dyn Device, _lane: usize) -> Result<RowLane<T>, BoxError> {
        let gpu = device.cuda().ok_or("not a CUDA device")?.with_new_stream()?;
        Ok(RowLane { gpu, done: None })
    }

    fn submit(&self, lane: &mut RowLane<T>, r: Range<usize>) -> Result<(), BoxError> {
        let (batch, mut x) = self.batch(&r)?;
        let solver = tridiagonal::gpu::choose(self.m, r.len(), Layout::Strided, size_of::<T>());
        batch.solve_gpu(&lane.gpu, solver, &mut x)?;
        lane.done = Some(x);
        Ok(())
    }

    fn complete(&self, lane: &mut RowLane<T>) -> Result<Vec<T>, BoxError> {
        lane.done.take().ok_or_else(|| "complete without submit".into())
    }
}

/// Largest residual `|a x_{k-1} + b x_k + c x_{k+1} − d_k|` over all systems, in f64.
fn max_residual<T: Real>(sys: &Systems<'_, T>, x: &[T]) -> f64 {
    let f = |v: T| v.wide();
    let mut worst = 0.0f64;
    for (g, xs) in x.chunks(sys.m).enumerate() {
        for k in 0..sys.m {
            let i = g * sys.m + k;
            let mut r = f(sys.b[i]) * f(xs[k]) - f(sys.d[i]);
            if k > 0 {
                r += f(sys.a[i]) * f(xs[k - 1]);
            }
            if k + 1 < sys.m {
                r += f(sys.c[i]) * f(xs[k + 1]);
            }
            worst = worst.max(r.abs());
        }
    }
    worst
}

fn check_systems<T: Real>(test: &str, devices: &[&dyn Device], gpu: bool, tol: f64) {
    let mut g = rng(test);
    for (systems, m) in [(1, 1), (33, 17), (200, 64), (5, 1000)] {
        let n = systems * m;
        let mut draw =
            |lo: f64, hi: f64| -> Vec<T> { (0..n).map(|_| T::of(g.random_range(lo..hi))).collect() };
        // Strictly diagonally dominant: every solver of the batch is stable on it.
        let (a, c, d) = (draw(-1.0, 1.0), draw(-1.0, 1.0), draw(-10.0, 10.0));
        let b = draw(2.5, 4.0);
        let op = Systems { a: &a, b: &b, c: &c, d: &d, m, gpu };
        let models = vec![AffineModel::new(1e-6, 0.0); devices.len()];
        let shares = solve_static(systems, &models, None).unwrap();
        let plan = DynamicPlan::new(
            &devices
                .iter()
                .map(|dv| (dv.kind(), dv.workers(), Grain { items: 3, seconds: 1e-4 }))
                .collect::<Vec<_>>(),
        )
        .unwrap();
        for x in [
            concat(run_static(&op, devices, &shares).unwrap()),
            concat(run_dynamic(&op, devices, &plan).unwrap()),
        ] {
            assert_eq!(x.len(), n);
            let res = max_residual(&op, &x);
            assert!(res <= tol, "{systems} systems of {m}: residual {res}");
        }
    }
}

#[test]
fn tridiagonal_batches_split_over_two_cpus() {
    let fast = CpuDevice::with_threads(2).unwrap();
    let slow = Throttled::new(CpuDevice::with_threads(1).unwrap(), 1.5).unwrap();
    check_systems::<f64>("tridiagonal_batches_split_over_two_cpus/f64", &[&fast, &slow], false, 1e-11);
    check_systems::<f32>("tridiagonal_batches_split_over_two_cpus/f32", &[&fast, &slow], false, 1e-3);
}

#[test]
fn tridiagonal_batches_split_over_cpu_and_gpu() {
    let Some(gpu) = gpu_or_skip("tridiagonal_batches_split_over_cpu_and_gpu") else { return };
    let cpu = CpuDevice::with_threads(2).unwrap();
    let dev = CudaDevice::from_gpu(gpu, 2).unwrap();
    check_systems::<f64>("tridiagonal_batches_split_over_cpu_and_gpu/f64", &[&cpu, &dev], true, 1e-11);
    check_systems::<f32>("tridiagonal_batches_split_over_cpu_and_gpu/f32", &[&cpu, &dev], true, 1e-3);
}
