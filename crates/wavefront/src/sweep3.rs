//! The 3D sweep on the CPU: cell `(i, j, k)` from north `(i-1, j, k)`, west `(i, j-1, k)` and
//! top `(i, j, k-1)`, by planes `s = i + j + k`.

use std::ops::{Range, RangeInclusive};

use ndarray::Array3;

use crate::boundary::Boundary3;
use crate::config::{Config3, Executor};
use crate::dataflow::{TileGrid, sweep_parallel, sweep_sequential};
use crate::error::{Result, WavefrontError};
use crate::geom;
use crate::sweep2::{SendPtr, alloc};

/// Computes an `n0 x n1 x n2` box where cell `(i, j, k)` is
/// `kernel(i, j, k, &north, &west, &top)` of `(i-1, j, k)`, `(i, j-1, k)` and `(i, j, k-1)`,
/// with neighbours outside the box taken from `boundary`.
///
/// # Errors
/// As [`crate::run_2d`]: an empty box, wrong boundary lengths, invalid parameters, a box too
/// large, a GPU band without a GPU or a GPU form of the kernel.
///
/// ```
/// use wavefront::{Boundary3, Config3, run_3d};
/// // a(i, j, k) = i + j + k: the longest path from the corner.
/// let t = run_3d(3, 4, 5, &Boundary3::constant(-1i32), &Config3::cpu(2),
///                |_, _, _, n, w, t| *n.max(w).max(t) + 1)?;
/// assert_eq!(t[[2, 3, 4]], 9);
/// # Ok::<(), wavefront::WavefrontError>(())
/// ```
pub fn run_3d<T, K>(
    n0: usize,
    n1: usize,
    n2: usize,
    boundary: &Boundary3<T>,
    config: &Config3,
    kernel: K,
) -> Result<Array3<T>>
where
    T: Copy + Send + Sync,
    K: Fn(usize, usize, usize, &T, &T, &T) -> T + Sync,
{
    for (axis, n) in [("n0", n0), ("n1", n1), ("n2", n2)] {
        if n == 0 {
            return Err(WavefrontError::EmptyGrid { axis });
        }
    }
    let cells = n0.checked_mul(n1).and_then(|x| x.checked_mul(n2));
    let Some(cells) = cells else {
        return Err(WavefrontError::TooLarge { cells: (n0 as u128).saturating_mul(n1 as u128 * n2 as u128) });
    };
    boundary.check(n0, n1, n2)?;
    config.validate()?;
    let mut data = alloc(cells, boundary.fill)?;
    let table = Table3 { ptr: SendPtr(data.as_mut_ptr()), n: [n0, n1, n2], boundary };
    let full = 0..=geom::plane_count(n0, n1, n2) - 1;
    match config.executor() {
        Executor::Sequential => table.block([0..n0, 0..n1, 0..n2], full, &kernel),
        Executor::Tiled { tile } => table.tiles(tile, full, false, &kernel),
        Executor::Cpu { tile } => config.install(|| table.tiles(tile, full, true, &kernel))?,
        Executor::Hybrid { tile, band } => match geom::band_planes(n0, n1, n2, band) {
            None => config.install(|| table.tiles(tile, full, true, &kernel))?,
            Some(_) => {
                crate::gpu_check::require_gpu()?;
                return Err(WavefrontError::NoGpuKernel { band });
            }
        },
    }
    Ok(Array3::from_shape_vec((n0, n1, n2), data).expect("n0 * n1 * n2 values"))
}

struct Table3<'a, T> {
    ptr: SendPtr<T>,
    n: [usize; 3],
    boundary: &'a Boundary3<T>,
}

impl<T: Copy + Send + Sync> Table3<'_, T> {
    #[inline(always)]
    fn idx(&self, i: usize, j: usize, k: usize) -> usize {
        (i * self.n[1] + j) * self.n[2] + k
    }

    #[inline(always)]
    fn get(&self, idx: usize) -> T {
        // SAFETY: in bounds; written by a finished task (see `SendPtr`).
        unsafe { self.ptr.0.add(idx).read() }
    }

    #[inline(always)]
    fn put(&self, idx: usize, v: T) {
        // SAFETY: in bounds; this task owns the cell.
        unsafe { self.ptr.0.add(idx).write(v) }
    }

    /// Cells of the block on the planes `planes`, `k` fastest; top rides along in a register.
    fn block<K>(&self, span: [Range<usize>; 3], planes: RangeInclusive<usize>, kernel: &K)
    where
        K: Fn(usize, usize, usize, &T, &T, &T) -> T,
    {
        let [_, n1, n2] = self.n;
        let b = self.boundary;
        let [ri, rj, rk] = span;
        for i in ri {
            for j in rj.clone() {
                let ka = rk.start.max(planes.start().saturating_sub(i + j));
                let kb = rk.end.min((planes.end() + 1).saturating_sub(i + j));
                if ka >= kb {
                    continue;
                }
                let mut top = if ka == 0 { b.top_at(i * n1 + j) } else { self.get(self.idx(i, j, ka - 1)) };
                for k in ka..kb {
                    let north = if i == 0 { b.north_at(j * n2 + k) } else { self.get(self.idx(i - 1, j, k)) };
                    let west = if j == 0 { b.west_at(i * n2 + k) } else { self.get(self.idx(i, j - 1, k)) };
                    let v = kernel(i, j, k, &north, &west, &top);
                    self.put(self.idx(i, j, k), v);
                    top = v;
                }
            }
        }
    }

    fn tiles<K>(&self, tile: usize, planes: RangeInclusive<usize>, parallel: bool, kernel: &K)
    where
        K: Fn(usize, usize, usize, &T, &T, &T) -> T + Sync,
    {
        let grid = TileGrid { dims: self.n.map(|n| n.div_ceil(tile)) };
        let span = |c: [usize; 3]| {
            let mut s = [0..0, 0..0, 0..0];
            for a in 0..3 {
                s[a] = c[a] * tile..(c[a] * tile + tile).min(self.n[a]);
            }
            s
        };
        let active = |c: [usize; 3]| {
            let s = span(c);
            let lo: usize = s.iter().map(|r| r.start).sum();
            let hi: usize = s.iter().map(|r| r.end - 1).sum();
            lo <= *planes.end() && hi >= *planes.start()
        };
        let run = |c: [usize; 3]| self.block(span(c), planes.clone(), kernel);
        if parallel { sweep_parallel(grid, active, run) } else { sweep_sequential(grid, active, run) }
    }
}
