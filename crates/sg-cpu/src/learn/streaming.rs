//! The unified streaming algorithm (thesis §7.1, Algs. 4–5) on the CPU.
//!
//! Every grid function is evaluated at every data point, so the cost is `O(N·m·d)`, but the
//! inner loop is branch-free and runs over a block of `LANES` data points at once, which the
//! compiler turns into SIMD code. A function is stored in the unified form
//! `s·max(0, 1 − |l'·x − i'|)` of thesis Table 7.1, so the linear and the modified linear basis
//! share the kernel; factors with `l' = 0` (the constant level-1 modified function) are left
//! out of the point's factor list.

use ndarray::ArrayView2;
use rayon::prelude::*;
use sg_core::{AdaptiveGrid, Basis};

use super::tuning::StreamTuning;
use super::{check_len, check_operator_input};
use crate::error::Result;

/// `B` and `Bᵀ` by unified streaming, for one data set and one grid.
#[derive(Debug, Clone)]
pub struct StreamingOperator {
    d: usize,
    m: usize,
    n: usize,
    /// Data in blocks of `LANES` points, dimension-major inside a block (padded with 0.5).
    blocks: Vec<f64>,
    lanes: usize,
    /// Per grid point, its range of active factors in `dims`, `factor` and `shift`.
    start: Vec<u32>,
    dims: Vec<u16>,
    factor: Vec<f64>,
    shift: Vec<f64>,
    scale: Vec<f64>,
    tuning: StreamTuning,
}

impl StreamingOperator {
    /// The operator for the rows of `x` (each in `[0, 1]^d`) on `grid`.
    ///
    /// # Errors
    /// Column count different from the grid's dimension, an empty grid or data set, a
    /// coordinate that is not finite or outside `[0, 1]`, unusable tuning parameters.
    pub fn new(
        grid: &AdaptiveGrid,
        basis: Basis,
        x: ArrayView2<'_, f64>,
        tuning: StreamTuning,
    ) -> Result<Self> {
        check_operator_input(grid, x)?;
        tuning.check()?;
        let (d, m, n) = (grid.dim(), x.nrows(), grid.len());
        let lanes = tuning.lanes;
        let nblocks = m.div_ceil(lanes);
        let mut blocks = vec![0.5; nblocks * d * lanes];
        for (j, row) in x.rows().into_iter().enumerate() {
            let (b, lane) = (j / lanes, j % lanes);
            for (k, &v) in row.iter().enumerate() {
                blocks[(b * d + k) * lanes + lane] = v;
            }
        }
        let mut op = StreamingOperator {
            d,
            m,
            n,
            blocks,
            lanes,
            start: Vec::with_capacity(n + 1),
            dims: Vec::new(),
            factor: Vec::new(),
            shift: Vec::new(),
            scale: Vec::with_capacity(n),
            tuning,
        };
        op.start.push(0);
        for g in 0..n {
            let mut s = 1.0;
            for (k, (&l, &i)) in grid.levels_of(g).iter().zip(grid.indices_of(g)).enumerate() {
                let u = basis.unified(l, i);
                s *= u.scale;
                if u.level_factor != 0.0 {
                    op.dims.push(k as u16);
                    op.factor.push(u.level_factor);
                    op.shift.push(u.index_shift);
                }
            }
            op.scale.push(s);
            op.start.push(op.dims.len() as u32);
        }
        Ok(op)
    }

    /// `N`.
    pub fn grid_len(&self) -> usize {
        self.n
    }

    /// `m`.
    pub fn data_len(&self) -> usize {
        self.m
    }

    /// `out = B α`.
    ///
    /// # Errors
    /// `alpha.len() != N` or `out.len() != m`.
    pub fn mult(&self, alpha: &[f64], out: &mut [f64]) -> Result<()> {
        check_len("alpha", self.n, alpha.len())?;
        check_len("output (B alpha)", self.m, out.len())?;
        let scaled: Vec<f64> = alpha.iter().zip(&self.scale).map(|(a, s)| a * s).collect();
        match self.lanes {
            8 => self.mult_lanes::<8>(&scaled, out),
            16 => self.mult_lanes::<16>(&scaled, out),
            _ => self.mult_lanes::<32>(&scaled, out),
        }
        Ok(())
    }

    fn mult_lanes<const L: usize>(&self, alpha: &[f64], out: &mut [f64]) {
        let chunk = self.tuning.data_chunk.div_ceil(L) * L;
        out.par_chunks_mut(chunk).enumerate().for_each(|(c, out)| {
            for (b_local, out) in out.chunks_mut(L).enumerate() {
                let b = c * (chunk / L) + b_local;
                let xb = &self.blocks[b * self.d * L..(b + 1) * self.d * L];
                let acc = self.block_mult::<L>(alpha, xb);
                out.copy_from_slice(&acc[..out.len()]);
            }
        });
    }

    /// `Σ_g α_g φ_g(x)` for the `L` points of one block.
    #[inline]
    fn block_mult<const L: usize>(&self, alpha: &[f64], xb: &[f64]) -> [f64; L] {
        let mut acc = [0.0; L];
        for g in 0..self.n {
            let mut t = [alpha[g]; L];
            for e in self.start[g] as usize..self.start[g + 1] as usize {
                let k = self.dims[e] as usize;
                let (lf, sh) = (self.factor[e], self.shift[e]);
                let xs = &xb[k * L..(k + 1) * L];
                for lane in 0..L {
                    t[lane] *= (1.0 - (lf * xs[lane] - sh).abs()).max(0.0);
                }
            }
            for lane in 0..L {
                acc[lane] += t[lane];
            }
        }
        acc
    }

    /// `out = Bᵀ v`.
    ///
    /// # Errors
    /// `v.len() != m` or `out.len() != N`.
    pub fn mult_transpose(&self, v: &[f64], out: &mut [f64]) -> Result<()> {
        check_len("v", self.m, v.len())?;
        check_len("output (B^T v)", self.n, out.len())?;
        let mut padded = vec![0.0; self.blocks.len() / self.d];
        padded[..self.m].copy_from_slice(v);
        match self.lanes {
            8 => self.transpose_lanes::<8>(&padded, out),
            16 => self.transpose_lanes::<16>(&padded, out),
            _ => self.transpose_lanes::<32>(&padded, out),
        }
        Ok(())
    }

    fn transpose_lanes<const L: usize>(&self, v: &[f64], out: &mut [f64]) {
        let nblocks = v.len() / L;
        out.par_chunks_mut(self.tuning.grid_chunk).enumerate().for_each(|(c, out)| {
            for (g_local, o) in out.iter_mut().enumerate() {
                let g = c * self.tuning.grid_chunk + g_local;
                let range = self.start[g] as usize..self.start[g + 1] as usize;
                let mut acc = [0.0; L];
                for b in 0..nblocks {
                    let xb = &self.blocks[b * self.d * L..(b + 1) * self.d * L];
                    let mut t: [f64; L] = v[b * L..(b + 1) * L].try_into().expect("L values");
                    for e in range.clone() {
                        let k = self.dims[e] as usize;
                        let (lf, sh) = (self.factor[e], self.shift[e]);
                        let xs = &xb[k * L..(k + 1) * L];
                        for lane in 0..L {
                            t[lane] *= (1.0 - (lf * xs[lane] - sh).abs()).max(0.0);
                        }
                    }
                    for lane in 0..L {
                        acc[lane] += t[lane];
                    }
                }
                *o = self.scale[g] * acc.iter().sum::<f64>();
            }
        });
    }
}
