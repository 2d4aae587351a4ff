//! An LU/SOR-like 3D sweep (digest §4.6): the shape of NPB LU's lower-triangular solve BLTS
//! with five unknowns per point. Cell `(i, j, k)` solves
//! `D v = r - omega (Lz v_top + Ly v_west + Lx v_north)` with 5x5 blocks; the blocks and right-hand side are pseudo-random but fixed
//! per point (a seeded hash), and `D` is diagonally dominant, so Gaussian elimination without
//! pivoting is stable as in NPB. A documented stand-in, not NPB's JACLD.

use ndarray::Array3;

use crate::boundary::Boundary3;
use crate::config::Config3;
use crate::error::Result;
use crate::sweep3::run_3d;

/// NPB LU's relaxation factor.
pub const OMEGA: f64 = 1.2;

/// Five unknowns per point.
pub type Vec5 = [f64; 5];

/// A 5x5 block, row-major.
pub type Block5 = [[f64; 5]; 5];

fn mix(mut x: u64) -> u64 {
    // splitmix64: a fixed, portable hash so the blocks need no storage.
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// A value in `[-0.5, 0.5)` for `(seed, i, j, k, slot)`.
fn unit(seed: u64, i: usize, j: usize, k: usize, slot: usize) -> f64 {
    let h = mix(seed
        ^ mix((i as u64) << 42 ^ (j as u64) << 21 ^ k as u64)
        ^ (slot as u64).wrapping_mul(0x1000_0000_01B3));
    (h >> 11) as f64 / (1u64 << 53) as f64 - 0.5
}

/// The blocks of point `(i, j, k)`: `[D, Lx (north), Ly (west), Lz (top)]` and the right side.
pub fn blocks(seed: u64, i: usize, j: usize, k: usize) -> ([Block5; 4], Vec5) {
    let mut m = [[[0.0; 5]; 5]; 4];
    for (b, block) in m.iter_mut().enumerate() {
        for r in 0..5 {
            for c in 0..5 {
                block[r][c] = 0.1 * unit(seed, i, j, k, 25 * b + 5 * r + c);
            }
        }
    }
    for r in 0..5 {
        m[0][r][r] += 2.0; // dominant diagonal of D
    }
    let rhs = std::array::from_fn(|r| unit(seed, i, j, k, 100 + r));
    (m, rhs)
}

/// The point update: assemble `t = r - omega (Lx n + Ly w + Lz top)` and solve `D v = t`.
pub fn lt_cell(seed: u64, i: usize, j: usize, k: usize, north: &Vec5, west: &Vec5, top: &Vec5) -> Vec5 {
    let ([d, lx, ly, lz], rhs) = blocks(seed, i, j, k);
    let mut t = rhs;
    for r in 0..5 {
        let mut s = 0.0;
        for c in 0..5 {
            s += lz[r][c] * top[c];
        }
        for c in 0..5 {
            s += ly[r][c] * west[c] + lx[r][c] * north[c];
        }
        t[r] -= OMEGA * s;
    }
    solve5(d, t)
}

/// Gaussian elimination without pivoting (as NPB's BLTS) and back substitution.
pub fn solve5(mut a: Block5, mut b: Vec5) -> Vec5 {
    for p in 0..5 {
        for r in p + 1..5 {
            let f = a[r][p] / a[p][p];
            for c in p..5 {
                a[r][c] -= f * a[p][c];
            }
            b[r] -= f * b[p];
        }
    }
    let mut x = [0.0; 5];
    for r in (0..5).rev() {
        let mut s = b[r];
        for c in r + 1..5 {
            s -= a[r][c] * x[c];
        }
        x[r] = s / a[r][r];
    }
    x
}

/// One forward sweep over an `n0 x n1 x n2` box with zero boundary, by `config`.
///
/// # Errors
/// Those of [`run_3d`].
pub fn lt_sweep(n0: usize, n1: usize, n2: usize, seed: u64, config: &Config3) -> Result<Array3<Vec5>> {
    run_3d(n0, n1, n2, &Boundary3::constant([0.0; 5]), config, |i, j, k, n, w, t| {
        lt_cell(seed, i, j, k, n, w, t)
    })
}
