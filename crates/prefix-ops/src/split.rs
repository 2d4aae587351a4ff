//! Batched prefix operations as [`Splittable`] operations of `hetero_sched::split`: row sorts,
//! row scans and batched tridiagonal solves, one work item per row or system, so that the
//! scheduler can run them on the CPU and a GPU at once (a static split for equal finish time or
//! the dynamic multi-grain queue).
//!
//! Every range's CPU half calls the crate's CPU entry point ([`sort::rows`],
//! [`scan::inclusive_rows`] / [`scan::exclusive_rows`], [`TridiagonalBatch::solve_with`]) and its
//! GPU half the GPU entry point ([`sort::gpu::rows`], [`scan::gpu::inclusive_rows`] /
//! [`scan::gpu::exclusive_rows`], [`TridiagonalBatch::solve_gpu`]) on a stream of its own. The
//! GPU entry points are host round trips that return when their results are downloaded, so
//! [`submit`](Splittable::submit) does a range's work and [`complete`](Splittable::complete)
//! hands it over; lanes of one device still run on separate streams.
//!
//! Outputs are one `Vec` per range holding that range's rows (or solutions) in order:
//! [`hetero_sched::split::concat`] of a schedule's pieces is the whole result.
//!
//! ```
//! use hetero_sched::split::{CpuDevice, Device, Throttled, concat, run_static};
//! use prefix_ops::sort::Order;
//! use prefix_ops::split::RowSorts;
//! let data = [3i32, 1, 2, 9, 7, 8, 6, 4, 5];
//! let op = RowSorts::new(&data, 3, Order::Ascending)?;
//! let fast = CpuDevice::with_threads(1)?;
//! let slow = Throttled::new(CpuDevice::with_threads(1)?, 2.0)?;
//! let devices: [&dyn Device; 2] = [&fast, &slow];
//! let sorted = concat(run_static(&op, &devices, &[2, 1])?);
//! assert_eq!(sorted, [1, 2, 3, 7, 8, 9, 4, 5, 6]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::ops::Range;

use cuda_kernels::{Gpu, GpuScalar};
use hetero_sched::split::{BoxError, Device, Splittable};

use crate::scan::{self, BuiltinOp};
use crate::sort::{self, Order, SortKey};
use crate::tridiagonal::{Real, Solver, TridiagonalBatch};
use crate::{Error, Result};

/// One stream of a GPU and the output of the range last submitted on it.
#[derive(Debug)]
pub struct Lane<T> {
    gpu: Gpu,
    done: Option<Vec<T>>,
}

impl<T> Lane<T> {
    /// A new stream on `device`'s GPU.
    fn open(device: &dyn Device) -> Result<Self, BoxError> {
        let gpu = device.cuda().ok_or_else(|| format!("{} is not a CUDA device", device.fingerprint()))?;
        Ok(Lane { gpu: gpu.with_new_stream()?, done: None })
    }

    fn take(&mut self) -> Result<Vec<T>, BoxError> {
        self.done.take().ok_or_else(|| "complete without a submitted range".into())
    }
}

/// Rows of `row_len` elements one after another: the number of rows, or
/// [`Error::InvalidRows`] when the data do not form whole rows of a positive length.
fn row_count(len: usize, row_len: usize) -> Result<usize> {
    if row_len == 0 || !len.is_multiple_of(row_len) {
        return Err(Error::InvalidRows { len, row_len });
    }
    Ok(len / row_len)
}

/// The elements of rows `r` of `row_len` each, copied.
fn rows_of<T: Copy>(data: &[T], row_len: usize, r: &Range<usize>) -> Vec<T> {
    data[r.start * row_len..r.end * row_len].to_vec()
}

/// Sorts every row of a batch on its own ([`sort::rows`] on the CPU, [`sort::gpu::rows`] on a
/// GPU): one work item per row.
#[derive(Debug, Clone, Copy)]
pub struct RowSorts<'a, K> {
    data: &'a [K],
    row_len: usize,
    order: Order,
}

impl<'a, K: SortKey> RowSorts<'a, K> {
    /// The rows of `row_len` keys of `data`, to be sorted in `order`.
    ///
    /// # Errors
    /// [`Error::InvalidRows`] when `row_len` is 0 or does not divide `data.len()`.
    pub fn new(data: &'a [K], row_len: usize, order: Order) -> Result<Self> {
        row_count(data.len(), row_len)?;
        Ok(RowSorts { data, row_len, order })
    }
}

impl<K: SortKey> Splittable for RowSorts<'_, K> {
    type Output = Vec<K>;
    type Lane = Lane<K>;

    fn items(&self) -> usize {
        self.data.len() / self.row_len
    }

    fn run_cpu(&self, r: Range<usize>) -> Result<Vec<K>, BoxError> {
        let mut rows = rows_of(self.data, self.row_len, &r);
        sort::rows(&mut rows, self.row_len, self.order)?;
        Ok(rows)
    }

    fn has_gpu(&self) -> bool {
        true
    }

    fn open_lane(&self, device: &dyn Device, _lane: usize) -> Result<Lane<K>, BoxError> {
        Lane::open(device)
    }

    fn submit(&self, lane: &mut Lane<K>, r: Range<usize>) -> Result<(), BoxError> {
        let rows = rows_of(self.data, self.row_len, &r);
        let mut buf = lane.gpu.upload(&rows)?;
        sort::gpu::rows(&lane.gpu, &mut buf, self.row_len, self.order)?;
        lane.done = Some(lane.gpu.download(&buf)?);
        Ok(())
    }

    fn complete(&self, lane: &mut Lane<K>) -> Result<Vec<K>, BoxError> {
        lane.take()
    }
}

/// Scans every row of a batch on its own, inclusive or exclusive, with a built-in operator
/// ([`scan::inclusive_rows`] / [`scan::exclusive_rows`] on the CPU, their [`scan::gpu`]
/// counterparts on a GPU): one work item per row.
#[derive(Debug, Clone, Copy)]
pub struct RowScans<'a, T, M> {
    data: &'a [T],
    row_len: usize,
    op: M,
    exclusive: bool,
}

impl<'a, T: GpuScalar + Send + Sync, M: BuiltinOp<T>> RowScans<'a, T, M> {
    /// Inclusive scans of the rows of `row_len` elements of `data` under `op`.
    ///
    /// # Errors
    /// [`Error::InvalidRows`] when `row_len` is 0 or does not divide `data.len()`.
    pub fn inclusive(data: &'a [T], row_len: usize, op: M) -> Result<Self> {
        row_count(data.len(), row_len)?;
        Ok(RowScans { data, row_len, op, exclusive: false })
    }

    /// Exclusive scans of the rows (see [`inclusive`](Self::inclusive)).
    ///
    /// # Errors
    /// As [`inclusive`](Self::inclusive).
    pub fn exclusive(data: &'a [T], row_len: usize, op: M) -> Result<Self> {
        row_count(data.len(), row_len)?;
        Ok(RowScans { data, row_len, op, exclusive: true })
    }
}

impl<T: GpuScalar + Send + Sync, M: BuiltinOp<T>> Splittable for RowScans<'_, T, M> {
    type Output = Vec<T>;
    type Lane = Lane<T>;

    fn items(&self) -> usize {
        self.data.len() / self.row_len
    }

    fn run_cpu(&self, r: Range<usize>) -> Result<Vec<T>, BoxError> {
        let mut rows = rows_of(self.data, self.row_len, &r);
        if self.exclusive {
            scan::exclusive_rows(&mut rows, self.row_len, self.op)?;
        } else {
            scan::inclusive_rows(&mut rows, self.row_len, self.op)?;
        }
        Ok(rows)
    }

    fn has_gpu(&self) -> bool {
        true
    }

    fn open_lane(&self, device: &dyn Device, _lane: usize) -> Result<Lane<T>, BoxError> {
        Lane::open(device)
    }

    fn submit(&self, lane: &mut Lane<T>, r: Range<usize>) -> Result<(), BoxError> {
        let mut rows = rows_of(self.data, self.row_len, &r);
        if self.exclusive {
            scan::gpu::exclusive_rows(&lane.gpu, &mut rows, self.row_len, self.op)?;
        } else {
            scan::gpu::inclusive_rows(&lane.gpu, &mut rows, self.row_len, self.op)?;
        }
        lane.done = Some(rows);
        Ok(())
    }

    fn complete(&self, lane: &mut Lane<T>) -> Result<Vec<T>, BoxError> {
        lane.take()
    }
}

/// Solves a batch of tridiagonal systems of `m` unknowns stored one after another (the strided
/// layout of [`TridiagonalBatch::strided`]): one work item per system. Each range is a batch of
/// its own, solved with the given [`Solver`] ([`Solver::Auto`] by default: partial pivoting
/// unless the range is proven diagonally dominant), so a [`Error::ZeroPivot`] names the system
/// by its index within the failing range.
#[derive(Debug, Clone, Copy)]
pub struct TridiagonalSolves<'a, T> {
    a: &'a [T],
    b: &'a [T],
    c: &'a [T],
    d: &'a [T],
    m: usize,
    solver: Solver,
}

impl<'a, T: Real> TridiagonalSolves<'a, T> {
    /// The systems of `m` unknowns whose sub-, main and super-diagonals are `a`, `b`, `c` and
    /// right-hand sides `d` (all `systems · m` long, system after system; `a`'s first and `c`'s
    /// last entry of each system are ignored).
    ///
    /// # Errors
    /// As [`TridiagonalBatch::strided`] for the diagonals; [`Error::LengthMismatch`] when `d`
    /// does not match them.
    pub fn new(a: &'a [T], b: &'a [T], c: &'a [T], d: &'a [T], m: usize) -> Result<Self> {
        TridiagonalBatch::strided(a, b, c, m)?;
        if d.len() != b.len() {
            return Err(Error::LengthMismatch {
                what: "d (right-hand sides)",
                got: d.len(),
                expected: b.len(),
            });
        }
        Ok(TridiagonalSolves { a, b, c, d, m, solver: Solver::Auto })
    }

    /// The same systems solved with `solver` on both devices.
    pub fn with_solver(mut self, solver: Solver) -> Self {
        self.solver = solver;
        self
    }

    /// Systems `r` as a batch of their own, and a copy of their right-hand sides.
    fn range(&self, r: &Range<usize>) -> Result<(TridiagonalBatch<'a, T>, Vec<T>), BoxError> {
        let s = r.start * self.m..r.end * self.m;
        let batch =
            TridiagonalBatch::strided(&self.a[s.clone()], &self.b[s.clone()], &self.c[s.clone()], self.m)?;
        Ok((batch, self.d[s].to_vec()))
    }
}

impl<T: Real> Splittable for TridiagonalSolves<'_, T> {
    type Output = Vec<T>;
    type Lane = Lane<T>;

    fn items(&self) -> usize {
        self.b.len().checked_div(self.m).unwrap_or(0)
    }

    fn run_cpu(&self, r: Range<usize>) -> Result<Vec<T>, BoxError> {
        let (batch, mut x) = self.range(&r)?;
        batch.solve_with(self.solver, &mut x)?;
        Ok(x)
    }

    fn has_gpu(&self) -> bool {
        true
    }

    fn open_lane(&self, device: &dyn Device, _lane: usize) -> Result<Lane<T>, BoxError> {
        Lane::open(device)
    }

    fn submit(&self, lane: &mut Lane<T>, r: Range<usize>) -> Result<(), BoxError> {
        let (batch, mut x) = self.range(&r)?;
        batch.solve_gpu(&lane.gpu, self.solver, &mut x)?;
        lane.done = Some(x);
        Ok(())
    }

    fn complete(&self, lane: &mut Lane<T>) -> Result<Vec<T>, BoxError> {
        lane.take()
    }
}

#[cfg(test)]
mod tests {
    use hetero_sched::split::{
        AffineModel, CpuDevice, CudaDevice, Device, DeviceKind, DynamicPlan, Grain, Piece, Throttled, concat,
        run_dynamic, run_static, solve_static,
    };
    use hetkit_testkit::{gpu_or_skip, rng};
    use rand::Rng;

    use super::*;
    use crate::scan::{Add, Max};

    /// Batch shapes `(items, item_len)`: one item, primes, many short items, few long ones.
    const SHAPES: [(usize, usize); 5] = [(1, 1), (97, 33), (1000, 16), (257, 7), (3, 600)];

    /// A fast CPU pool and a CPU pool slowed 3x: two unequal devices on one machine.
    fn two_cpus() -> (CpuDevice, Throttled<CpuDevice>) {
        let fast = CpuDevice::with_threads(2).unwrap();
        let slow = Throttled::new(CpuDevice::with_threads(1).unwrap(), 3.0).unwrap();
        (fast, slow)
    }

    /// Unequal static shares (the first device twice as fast) and a dynamic plan of small
    /// grains (large ones on a GPU).
    fn schedules(items: usize, devices: &[&dyn Device]) -> (Vec<usize>, DynamicPlan) {
        let models: Vec<_> =
            (0..devices.len()).map(|i| AffineModel::new(1e-6 * (i + 1) as f64, 1e-6)).collect();
        let shares = solve_static(items, &models, None).unwrap();
        let grains: Vec<_> = devices
            .iter()
            .map(|d| {
                let items = if d.kind() == DeviceKind::Gpu { 64 } else { 5 };
                (d.kind(), d.workers(), Grain { items, seconds: 1e-4 })
            })
            .collect();
        (shares, DynamicPlan::new(&grains).unwrap())
    }

    /// Every item exactly once: the pieces, sorted by the scheduler, tile `0..items` without gap
    /// or overlap, and each piece's output holds `item_len` values per item. Returns the
    /// concatenated output.
    fn exactly_once<T>(pieces: Vec<Piece<Vec<T>>>, items: usize, item_len: usize) -> Vec<T> {
        let mut next = 0;
        for p in &pieces {
            assert_eq!(p.range.start, next, "gap or overlap before {:?}", p.range);
            assert!(!p.range.is_empty(), "empty piece {:?}", p.range);
            assert_eq!(p.output.len(), p.range.len() * item_len, "output of {:?}", p.range);
            next = p.range.end;
        }
        assert_eq!(next, items, "items left out");
        concat(pieces)
    }

    /// Runs `op` statically and dynamically over `devices` and checks both against `want`.
    fn check_split<S, T>(op: &S, devices: &[&dyn Device], item_len: usize, want: &[T], what: &str)
    where
        S: Splittable<Output = Vec<T>>,
        T: PartialEq + std::fmt::Debug,
    {
        let (shares, plan) = schedules(op.items(), devices);
        let stat = exactly_once(run_static(op, devices, &shares).unwrap(), op.items(), item_len);
        assert_eq!(stat, want, "static split of {what}");
        let dynamic = exactly_once(run_dynamic(op, devices, &plan).unwrap(), op.items(), item_len);
        assert_eq!(dynamic, want, "dynamic split of {what}");
    }

    fn random_rows(test: &str, n: usize) -> Vec<i64> {
        let mut g = rng(test);
        (0..n).map(|_| g.random_range(-1000..1000)).collect()
    }

    /// Row sorts and scans against the one-device path (the CPU entry point on the whole batch)
    /// and an independent oracle (std's sort, a sequential running sum / maximum).
    fn check_rows(test: &str, devices: &[&dyn Device]) {
        for (rows, row_len) in SHAPES {
            let data = random_rows(test, rows * row_len);
            let what = format!("{rows} rows of {row_len}");

            let mut one = data.clone();
            sort::rows(&mut one, row_len, Order::Descending).unwrap();
            let mut oracle = data.clone();
            oracle.chunks_mut(row_len).for_each(|r| r.sort_by(|a, b| b.cmp(a)));
            assert_eq!(one, oracle);
            check_split(
                &RowSorts::new(&data, row_len, Order::Descending).unwrap(),
                devices,
                row_len,
                &one,
                &what,
            );

            let mut one = data.clone();
            scan::inclusive_rows(&mut one, row_len, Add).unwrap();
            let mut oracle = data.clone();
            for r in oracle.chunks_mut(row_len) {
                for i in 1..r.len() {
                    r[i] += r[i - 1];
                }
            }
            assert_eq!(one, oracle);
            check_split(&RowScans::inclusive(&data, row_len, Add).unwrap(), devices, row_len, &one, &what);

            let mut one = data.clone();
            scan::exclusive_rows(&mut one, row_len, Max).unwrap();
            let mut oracle = Vec::with_capacity(data.len());
            for r in data.chunks(row_len) {
                let mut acc = i64::MIN;
                for &v in r {
                    oracle.push(acc);
                    acc = acc.max(v);
                }
            }
            assert_eq!(one, oracle);
            check_split(&RowScans::exclusive(&data, row_len, Max).unwrap(), devices, row_len, &one, &what);
        }
    }

    #[test]
    fn split_row_sorts_and_scans_over_two_unequal_cpus() {
        let (fast, slow) = two_cpus();
        check_rows("split_row_sorts_and_scans_over_two_unequal_cpus", &[&fast, &slow]);
    }

    #[test]
    fn split_row_sorts_and_scans_over_cpu_and_gpu() {
        let Some(gpu) = gpu_or_skip("split_row_sorts_and_scans_over_cpu_and_gpu") else { return };
        let (_, slow) = two_cpus();
        let dev = CudaDevice::from_gpu(gpu, 2).unwrap();
        check_rows("split_row_sorts_and_scans_over_cpu_and_gpu", &[&slow, &dev]);
    }

    /// Largest residual `|a x_{k-1} + b x_k + c x_{k+1} − d_k|` over all systems, in f64.
    fn max_residual<T: Real>(a: &[T], b: &[T], c: &[T], d: &[T], m: usize, x: &[T]) -> f64 {
        let mut worst = 0.0f64;
        for i in 0..x.len() {
            let k = i % m;
            let mut r = b[i].wide() * x[i].wide() - d[i].wide();
            if k > 0 {
                r += a[i].wide() * x[i - 1].wide();
            }
            if k + 1 < m {
                r += c[i].wide() * x[i + 1].wide();
            }
            worst = worst.max(r.abs());
        }
        worst
    }

    /// Strictly diagonally dominant systems against the one-device path (the CPU solver on the
    /// whole batch) and the residual of every equation.
    fn check_systems<T: Real>(test: &str, devices: &[&dyn Device], tol: f64) {
        let mut g = rng(test);
        for (systems, m) in SHAPES {
            let n = systems * m;
            let mut draw =
                |lo: f64, hi: f64| -> Vec<T> { (0..n).map(|_| T::of(g.random_range(lo..hi))).collect() };
            let (a, c, d) = (draw(-1.0, 1.0), draw(-1.0, 1.0), draw(-10.0, 10.0));
            let b = draw(2.5, 4.0);
            let mut one = d.clone();
            TridiagonalBatch::strided(&a, &b, &c, m).unwrap().solve(&mut one).unwrap();
            let res = max_residual(&a, &b, &c, &d, m, &one);
            assert!(res <= tol, "one device, {systems} systems of {m}: residual {res}");
            let op = TridiagonalSolves::new(&a, &b, &c, &d, m).unwrap();
            let (shares, plan) = schedules(systems, devices);
            for (how, pieces) in
                [("static", run_static(&op, devices, &shares)), ("dynamic", run_dynamic(&op, devices, &plan))]
            {
                let x = exactly_once(pieces.unwrap(), systems, m);
                let res = max_residual(&a, &b, &c, &d, m, &x);
                assert!(res <= tol, "{how}, {systems} systems of {m}: residual {res}");
                // `Solver::Auto` picks its algorithm by batch size, so a range may be solved by
                // another algorithm than the whole batch: equal within rounding, not bitwise.
                let diff = x.iter().zip(&one).map(|(a, b)| (a.wide() - b.wide()).abs()).fold(0.0, f64::max);
                assert!(diff <= tol, "{how}, {systems} systems of {m}: {diff} from the one-device solve");
            }
        }
    }

    #[test]
    fn split_tridiagonal_solves_over_two_unequal_cpus() {
        let (fast, slow) = two_cpus();
        let test = "split_tridiagonal_solves_over_two_unequal_cpus";
        check_systems::<f64>(test, &[&fast, &slow], 1e-11);
        check_systems::<f32>(test, &[&fast, &slow], 1e-3);
    }

    #[test]
    fn split_tridiagonal_solves_over_cpu_and_gpu() {
        let Some(gpu) = gpu_or_skip("split_tridiagonal_solves_over_cpu_and_gpu") else { return };
        let (_, slow) = two_cpus();
        let dev = CudaDevice::from_gpu(gpu, 2).unwrap();
        let test = "split_tridiagonal_solves_over_cpu_and_gpu";
        check_systems::<f64>(test, &[&slow, &dev], 1e-11);
        check_systems::<f32>(test, &[&slow, &dev], 1e-3);
    }

    #[test]
    fn split_rejects_bad_shapes_and_gpu_less_devices() {
        let data = [1i32, 2, 3];
        assert!(matches!(RowSorts::new(&data, 0, Order::Ascending), Err(Error::InvalidRows { .. })));
        assert!(matches!(RowSorts::new(&data, 2, Order::Ascending), Err(Error::InvalidRows { .. })));
        assert!(matches!(RowScans::inclusive(&data, 2, Add), Err(Error::InvalidRows { .. })));
        assert!(matches!(RowScans::exclusive(&data, 0, Add), Err(Error::InvalidRows { .. })));
        let x = [1.0f64, 2.0, 3.0, 4.0];
        assert!(TridiagonalSolves::new(&x, &x, &x, &x[..3], 2).is_err());
        assert!(TridiagonalSolves::new(&x, &x, &x[..3], &x, 2).is_err());
        assert!(TridiagonalSolves::new(&x, &x, &x, &x, 3).is_err());
        // No rows at all: nothing to do, an empty result.
        let empty: [i32; 0] = [];
        let op = RowSorts::new(&empty, 4, Order::Ascending).unwrap();
        let cpu = CpuDevice::with_threads(1).unwrap();
        assert!(run_static(&op, &[&cpu], &[0]).unwrap().is_empty());
        // A CPU device asked for a GPU lane is an error, never a panic.
        let op = RowSorts::new(&data, 1, Order::Ascending).unwrap();
        assert!(op.open_lane(&cpu, 0).is_err());
    }
}
