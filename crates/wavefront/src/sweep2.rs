//! The 2D sweep on the CPU: the table, the row loop every executor shares, and the executors.

use std::ops::RangeInclusive;

use ndarray::Array2;

use crate::boundary::Boundary2;
use crate::config::{Config2, Executor};
use crate::dataflow::{TileGrid, sweep_parallel, sweep_sequential};
use crate::error::{Result, WavefrontError};
use crate::geom;

/// Computes a `rows x cols` table where cell `(i, j)` is
/// `kernel(i, j, &north, &west, &north_west)` of its neighbours `(i-1, j)`, `(i, j-1)` and
/// `(i-1, j-1)`, with neighbours outside the table taken from `boundary`.
///
/// # Errors
/// An empty table, boundary vectors of the wrong length, invalid configuration parameters, a
/// table too large to allocate, or a GPU band without a GPU or a GPU form of the kernel.
///
/// ```
/// use wavefront::{Boundary2, Config2, run_2d};
/// // Number of monotone lattice paths from the corner: binomial coefficients.
/// let t = run_2d(4, 5, &Boundary2 { north: vec![1; 5], west: vec![1; 4], corner: 0u64 },
///                &Config2::cpu(2), |_, _, n, w, _| n + w)?;
/// assert_eq!(t[[3, 4]], 126); // C(9, 4)
/// # Ok::<(), wavefront::WavefrontError>(())
/// ```
pub fn run_2d<T, K>(
    rows: usize,
    cols: usize,
    boundary: &Boundary2<T>,
    config: &Config2,
    kernel: K,
) -> Result<Array2<T>>
where
    T: Copy + Send + Sync,
    K: Fn(usize, usize, &T, &T, &T) -> T + Sync,
{
    check_shape(rows, cols)?;
    boundary.check(rows, cols)?;
    config.validate()?;
    let mut data = alloc(rows * cols, boundary.corner)?;
    let table = Table2 { ptr: SendPtr(data.as_mut_ptr()), rows, cols, boundary };
    let full = 0..=geom::diag_count(rows, cols) - 1;
    match config.executor() {
        Executor::Sequential => table.block(0..rows, 0..cols, full, &kernel),
        Executor::Tiled { tile } => table.tiles(tile, full, false, &kernel),
        Executor::Cpu { tile } => config.install(|| table.tiles(tile, full, true, &kernel))?,
        Executor::Hybrid { tile, band } => match geom::band_diagonals(rows, cols, band) {
            None => config.install(|| table.tiles(tile, full, true, &kernel))?,
            Some(_) => {
                crate::gpu_check::require_gpu()?;
                return Err(WavefrontError::NoGpuKernel { band });
            }
        },
    }
    Ok(Array2::from_shape_vec((rows, cols), data).expect("rows * cols values"))
}

pub(crate) fn check_shape(rows: usize, cols: usize) -> Result<()> {
    if rows == 0 {
        return Err(WavefrontError::EmptyGrid { axis: "rows" });
    }
    if cols == 0 {
        return Err(WavefrontError::EmptyGrid { axis: "cols" });
    }
    if rows.checked_mul(cols).is_none() {
        return Err(WavefrontError::TooLarge { cells: rows as u128 * cols as u128 });
    }
    Ok(())
}

/// A vector of `len` copies of `fill`, or an error when it cannot be allocated.
pub(crate) fn alloc<T: Copy>(len: usize, fill: T) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| WavefrontError::TooLarge { cells: len as u128 })?;
    v.resize(len, fill);
    Ok(v)
}

/// A raw pointer the tile tasks share.
#[derive(Clone, Copy)]
pub(crate) struct SendPtr<T>(pub(crate) *mut T);
// SAFETY: the executors write each cell from exactly one task and read a cell only after the
// task that wrote it has finished (dependency counters with acquire/release ordering).
unsafe impl<T: Send> Send for SendPtr<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for SendPtr<T> {}

/// The table being filled, row-major, and its boundary.
pub(crate) struct Table2<'a, T> {
    pub(crate) ptr: SendPtr<T>,
    pub(crate) rows: usize,
    pub(crate) cols: usize,
    pub(crate) boundary: &'a Boundary2<T>,
}

impl<T: Copy + Send + Sync> Table2<'_, T> {
    #[inline(always)]
    fn get(&self, i: usize, j: usize) -> T {
        debug_assert!(i < self.rows && j < self.cols);
        // SAFETY: in bounds; the cell was written by a finished task (see `SendPtr`).
        unsafe { self.ptr.0.add(i * self.cols + j).read() }
    }

    #[inline(always)]
    fn put(&self, i: usize, j: usize, v: T) {
        debug_assert!(i < self.rows && j < self.cols);
        // SAFETY: in bounds; only the task that owns this cell writes it, and nobody reads it yet.
        unsafe { self.ptr.0.add(i * self.cols + j).write(v) }
    }

    /// Cells of `rows x cols` on the diagonals `diags`, row by row.
    pub(crate) fn block<K>(
        &self,
        rows: std::ops::Range<usize>,
        cols: std::ops::Range<usize>,
        diags: RangeInclusive<usize>,
        kernel: &K,
    ) where
        K: Fn(usize, usize, &T, &T, &T) -> T,
    {
        for i in rows {
            let ja = cols.start.max(diags.start().saturating_sub(i));
            let jb = cols.end.min((diags.end() + 1).saturating_sub(i));
            if ja < jb {
                self.row(i, ja, jb, kernel);
            }
        }
    }

    /// Cells `(i, ja..jb)`; west and north-west ride along in registers.
    #[inline(always)]
    fn row<K>(&self, i: usize, ja: usize, jb: usize, kernel: &K)
    where
        K: Fn(usize, usize, &T, &T, &T) -> T,
    {
        let b = self.boundary;
        let (mut west, mut nw) = if ja == 0 {
            (b.west_at(i), if i == 0 { b.corner } else { b.west_at(i - 1) })
        } else {
            (self.get(i, ja - 1), if i == 0 { b.north_at(ja - 1) } else { self.get(i - 1, ja - 1) })
        };
        if i == 0 {
            for j in ja..jb {
                let n = b.north_at(j);
                let v = kernel(i, j, &n, &west, &nw);
                self.put(i, j, v);
                (west, nw) = (v, n);
            }
        } else {
            for j in ja..jb {
                let n = self.get(i - 1, j);
                let v = kernel(i, j, &n, &west, &nw);
                self.put(i, j, v);
                (west, nw) = (v, n);
            }
        }
    }

    /// `tile x tile` blocks clipped to `diags`, in dependency order, on this thread or as tasks.
    pub(crate) fn tiles<K>(&self, tile: usize, diags: RangeInclusive<usize>, parallel: bool, kernel: &K)
    where
        K: Fn(usize, usize, &T, &T, &T) -> T + Sync,
    {
        let grid = TileGrid { dims: [self.rows.div_ceil(tile), self.cols.div_ceil(tile), 1] };
        let span = |c: [usize; 3]| {
            let (i0, j0) = (c[0] * tile, c[1] * tile);
            (i0..(i0 + tile).min(self.rows), j0..(j0 + tile).min(self.cols))
        };
        let active = |c: [usize; 3]| {
            let (r, k) = span(c);
            r.start + k.start <= *diags.end() && r.end + k.end - 2 >= *diags.start()
        };
        let run = |c: [usize; 3]| {
            let (r, k) = span(c);
            self.block(r, k, diags.clone(), kernel);
        };
        if parallel { sweep_parallel(grid, active, run) } else { sweep_sequential(grid, active, run) }
    }
}
