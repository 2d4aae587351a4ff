//! The thesis's synthetic kernels (digest §4.1, §4.5): a Gauss-Seidel-like update repeated
//! `tsize` times (the task grain) over `DS` doubles (the data grain `dsize`), plus integer
//! fields whose values are known in closed form, so any stale or misplaced neighbour read
//! shows: `a(i, j) = i + j`, `b(i, j) = (i + 1)(j + 1)` in 2D; `a = i + j + k` and the
//! multinomial `c = (i + j + k)! / (i! j! k!)` (wrapping `u64`) in 3D.
//!
//! Beyond the thesis, an integer kernel ([`synthetic_int_2d`]) supplies payload-free training
//! cells (`dsize` 0) whose grain still scales the work, which the float kernel cannot: its grain
//! loop runs over the payload.

use ndarray::{Array2, Array3};

use crate::boundary::{Boundary2, Boundary3};
use crate::config::{Config2, Config3};
use crate::error::Result;
use crate::gpu::GpuKernel2;
use crate::sweep2::run_2d;
use crate::sweep3::run_3d;

/// A synthetic 2D cell: two integers and `DS` doubles (`8 + 8 DS` bytes, the thesis's element).
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(C)]
pub struct Synth<const DS: usize> {
    /// `i + j`: one more than the larger of north and west.
    pub a: i32,
    /// `(i + 1)(j + 1)`: north + west - north-west + 1.
    pub b: i32,
    /// The floating-point payload.
    pub v: [f64; DS],
}

impl<const DS: usize> Synth<DS> {
    /// The boundary cell: `a = -1`, `b = 0`, zeros.
    pub const BOUNDARY: Self = Synth { a: -1, b: 0, v: [0.0; DS] };
}

/// The 2D synthetic kernel with grain `tsize` (inner iterations per double).
///
/// The float update multiplies only by powers of two and has a contraction factor below 1, so
/// values stay bounded, and every executor (and a GPU compiled without FMA contraction) rounds
/// identically.
#[inline]
pub fn synthetic_cell<const DS: usize>(
    tsize: u32,
    n: &Synth<DS>,
    w: &Synth<DS>,
    nw: &Synth<DS>,
) -> Synth<DS> {
    let mut v = [0.0; DS];
    for (q, out) in v.iter_mut().enumerate() {
        let rhs = 1.0 + q as f64;
        let base = rhs + 0.25 * n.v[q] + 0.25 * w.v[q] - 0.125 * nw.v[q];
        let mut x = 0.0f64;
        for _ in 0..tsize {
            x = (base + 0.5 * x) * 0.5;
        }
        *out = x;
    }
    Synth { a: n.a.max(w.a) + 1, b: n.b.wrapping_add(w.b).wrapping_sub(nw.b).wrapping_add(1), v }
}

/// The synthetic 2D table of `rows x cols` cells with grain `tsize`, by `config`.
///
/// # Errors
/// Those of [`run_2d`].
pub fn synthetic_2d<const DS: usize>(
    rows: usize,
    cols: usize,
    tsize: u32,
    config: &Config2,
) -> Result<Array2<Synth<DS>>> {
    run_2d(rows, cols, &Boundary2::constant(Synth::BOUNDARY), config, |_, _, n, w, nw| {
        synthetic_cell(tsize, n, w, nw)
    })
}

// SAFETY: `repr(C)` of two `i32` and `f64`s: no padding (8 + 8 DS bytes, alignment 8), and
// every bit pattern is a valid value.
unsafe impl<const DS: usize> bytemuck::Zeroable for Synth<DS> {}
// SAFETY: as above.
unsafe impl<const DS: usize> bytemuck::Pod for Synth<DS> {}

/// The GPU form of [`synthetic_cell`] for [`crate::run_2d_gpu`]: cell type `wf_synth`, `tsize`
/// passed in `aux`. It rounds exactly like the CPU kernel (`__dadd_rn` / `__dmul_rn` forbid FMA
/// contraction), so tables match bitwise.
pub fn synthetic_gpu_kernel<const DS: usize>(tsize: u32) -> GpuKernel2 {
    let fields = if DS == 0 { String::new() } else { format!("double v[{DS}];") };
    // The payload loop only exists when there is a payload (C has no zero-length arrays).
    let payload = if DS == 0 {
        String::new()
    } else {
        format!(
            r#"
    for (int q = 0; q < {DS}; ++q) {{
        double base = __dadd_rn(__dadd_rn(__dadd_rn(1.0 + q, __dmul_rn(0.25, n.v[q])),
                                          __dmul_rn(0.25, w.v[q])), -__dmul_rn(0.125, nw.v[q]));
        double x = 0.0;
        for (unsigned int t = 0; t < tsize; ++t) x = __dmul_rn(__dadd_rn(base, __dmul_rn(0.5, x)), 0.5);
        out.v[q] = x;
    }}
"#
        )
    };
    let source = format!(
        r#"
struct wf_synth {{ int a; int b; {fields} }};
__device__ wf_synth wf_cell(long long i, long long j, wf_synth n, wf_synth w, wf_synth nw,
                            const unsigned char* aux) {{
    unsigned int tsize = *(const unsigned int*)aux;
    wf_synth out;
    out.a = (n.a > w.a ? n.a : w.a) + 1;
    out.b = (int)((unsigned int)n.b + (unsigned int)w.b - (unsigned int)nw.b + 1u);
{payload}    return out;
}}
"#
    );
    GpuKernel2::new("wf_synth", &source).with_aux(tsize.to_le_bytes().to_vec())
}

/// The integer synthetic kernel (`dsize` 0, one `u32` per cell): the max-plus recurrence of
/// sequence comparison, `max(N, W)` or `NW + 1` on a "match", where whether cell `(i, j)`
/// matches is decided by `rounds` pseudo-random tests (a xorshift hash of the position, each
/// round matching with probability 1/4). The grain `rounds` scales the integer work per cell
/// the way the float kernel's `tsize` scales its float work, so cheap integer cells (tsize
/// 0.3 to a few units, no payload) can be sampled, which the float kernel cannot reach: its
/// payload-free form has no inner loop. Values stay below `min(i, j) + 2`.
#[inline]
pub fn synthetic_int_cell(rounds: u32, i: usize, j: usize, n: &u32, w: &u32, nw: &u32) -> u32 {
    // Truncating the position is fine: it only seeds the hash.
    let mut h = (i as u32).wrapping_mul(0x9E37_79B9) ^ (j as u32).wrapping_mul(0x85EB_CA6B) ^ 0x2545_F491;
    let mut v = *n.max(w);
    for _ in 0..rounds {
        h ^= h << 13;
        h ^= h >> 17;
        h ^= h << 5;
        if h & 3 == 0 {
            v = v.max(nw + 1);
        }
    }
    v
}

/// The integer synthetic table of `rows x cols` cells with grain `rounds`, by `config`
/// (boundary 0).
///
/// # Errors
/// Those of [`run_2d`].
pub fn synthetic_int_2d(rows: usize, cols: usize, rounds: u32, config: &Config2) -> Result<Array2<u32>> {
    run_2d(rows, cols, &Boundary2::constant(0u32), config, |i, j, n, w, nw| {
        synthetic_int_cell(rounds, i, j, n, w, nw)
    })
}

/// A synthetic 3D cell.
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(C)]
pub struct Synth3 {
    /// `i + j + k`.
    pub a: i32,
    /// Lattice paths from the corner: `(i + j + k)! / (i! j! k!)`, wrapping.
    pub c: u64,
    /// The floating-point payload.
    pub v: f64,
}

impl Synth3 {
    /// The boundary cell: `a = -1`, `c = 0` (the corner cell starts the count at 1).
    pub const BOUNDARY: Self = Synth3 { a: -1, c: 0, v: 0.0 };
}

/// The 3D synthetic kernel (north, west and top in place of north, west and north-west).
#[inline]
pub fn synthetic_cell_3d(
    tsize: u32,
    i: usize,
    j: usize,
    k: usize,
    n: &Synth3,
    w: &Synth3,
    t: &Synth3,
) -> Synth3 {
    let base = 1.0 + 0.25 * n.v + 0.25 * w.v + 0.125 * t.v;
    let mut x = 0.0f64;
    for _ in 0..tsize {
        x = (base + 0.5 * x) * 0.5;
    }
    let origin = u64::from(i == 0 && j == 0 && k == 0);
    Synth3 {
        a: n.a.max(w.a).max(t.a) + 1,
        c: n.c.wrapping_add(w.c).wrapping_add(t.c).wrapping_add(origin),
        v: x,
    }
}

/// The synthetic 3D box of `n0 x n1 x n2` cells with grain `tsize`, by `config`.
///
/// # Errors
/// Those of [`run_3d`].
pub fn synthetic_3d(n0: usize, n1: usize, n2: usize, tsize: u32, config: &Config3) -> Result<Array3<Synth3>> {
    run_3d(n0, n1, n2, &Boundary3::constant(Synth3::BOUNDARY), config, |i, j, k, n, w, t| {
        synthetic_cell_3d(tsize, i, j, k, n, w, t)
    })
}
