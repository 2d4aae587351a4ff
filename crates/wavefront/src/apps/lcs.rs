//! Longest common subsequence: `F(i,j) = F(i-1,j-1) + 1` if `a_i = b_j`, else
//! `max(F(i-1,j), F(i,j-1))` (the thesis's sequence-comparison kernel).
//!
//! The fast path is bit-parallel (Allison-Dix / Hyyrö): one bit per row of `a` holds whether
//! the column's `F` steps up there, so a column costs one add-with-carry per 64 rows. Rows go
//! to strips of 64-bit words (one per core); a strip passes each column's carry out of its top
//! word to the strip above, the wavefront pattern at tile grain.

use std::ops::Range;

use crate::apps::strips::{run_strips, split};
use crate::boundary::Boundary2;
use crate::config::Config2;
use crate::error::Result;
use crate::gpu::{GpuKernel2, run_2d_gpu};
use crate::sweep2::run_2d;

/// The LCS cell on the GPU; `aux` is `m` (8 bytes, little-endian), then `a`, then `b`.
const LCS_CU: &str = r#"
__device__ unsigned int wf_cell(long long i, long long j, unsigned int n, unsigned int w,
                                unsigned int nw, const unsigned char* aux) {
    long long m = *(const long long*)aux;
    const unsigned char* a = aux + 8;
    const unsigned char* b = a + m;
    return a[i] == b[j] ? nw + 1 : (n > w ? n : w);
}
"#;

/// [`lcs_length`] through [`run_2d_gpu`]: with `Config2::hybrid(tile, band)` and `band >= 0`
/// the central diagonals run on the GPU (4 bytes per cell of table kept).
///
/// # Errors
/// Those of [`run_2d_gpu`] (no GPU for a GPU band, invalid configuration, ...).
pub fn lcs_length_gpu(a: &[u8], b: &[u8], config: &Config2) -> Result<usize> {
    if a.is_empty() || b.is_empty() {
        return Ok(0);
    }
    let mut aux = (a.len() as u64).to_le_bytes().to_vec();
    aux.extend_from_slice(a);
    aux.extend_from_slice(b);
    let gk = GpuKernel2::new("unsigned int", LCS_CU).with_aux(aux);
    let table = run_2d_gpu(
        a.len(),
        b.len(),
        &Boundary2::constant(0u32),
        config,
        |i, j, n, w, nw| {
            if a[i] == b[j] { nw + 1 } else { *n.max(w) }
        },
        &gk,
    )?;
    Ok(table[[a.len() - 1, b.len() - 1]] as usize)
}

/// Length of a longest common subsequence of `a` and `b` (any bytes), on all cores.
///
/// ```
/// // The thesis's example: LCS("TATGAC", "GCATGA") = "ATGA".
/// assert_eq!(wavefront::apps::lcs_length(b"TATGAC", b"GCATGA"), 4);
/// ```
pub fn lcs_length(a: &[u8], b: &[u8]) -> usize {
    if a.is_empty() || b.is_empty() {
        return 0;
    }
    bit_parallel(a, b, rayon::current_num_threads() > 1)
}

/// [`lcs_length`] through [`run_2d`] with `config`: the generic closure path (4 bytes per cell
/// of table kept).
///
/// # Errors
/// Those of [`run_2d`] (invalid configuration, a table too large).
pub fn lcs_length_with(a: &[u8], b: &[u8], config: &Config2) -> Result<usize> {
    if a.is_empty() || b.is_empty() {
        return Ok(0);
    }
    let table = run_2d(a.len(), b.len(), &Boundary2::constant(0u32), config, |i, j, n, w, nw| {
        if a[i] == b[j] { nw + 1 } else { *n.max(w) }
    })?;
    Ok(table[[a.len() - 1, b.len() - 1]] as usize)
}

/// One strip of 64-row words: the bit vector and the match masks of its rows.
struct Strip {
    words: Range<usize>,
    v: Vec<u64>,
    /// `peq[c * len + w]`: bit `r` set where row `64 w + r` of the strip holds byte `c`.
    peq: Vec<u64>,
}

fn bit_parallel(a: &[u8], b: &[u8], parallel: bool) -> usize {
    let m = a.len();
    let words = m.div_ceil(64);
    let parts = if parallel { rayon::current_num_threads().min(words / 4).max(1) } else { 1 };
    let states = split(words, parts)
        .into_iter()
        .map(|words| {
            let len = words.len();
            let mut peq = vec![0u64; 256 * len];
            for (w, word) in words.clone().enumerate() {
                for r in 0..64 {
                    if let Some(&c) = a.get(64 * word + r) {
                        peq[c as usize * len + w] |= 1 << r;
                    }
                }
            }
            Strip { v: vec![!0u64; len], words, peq }
        })
        .collect();
    let chunk = 1024.max(b.len() / 64);
    let states = run_strips(
        states,
        b.len(),
        chunk,
        parallel,
        |st: &mut Strip, _, cols, carries: Option<&Vec<u64>>| columns(st, &b[cols], carries),
    );
    // F(m-1, n-1) is the number of steps: zero bits among the m real rows.
    let mut steps = 0;
    for st in &states {
        for (w, word) in st.words.clone().enumerate() {
            let real = (m - 64 * word).min(64);
            let mask = if real == 64 { !0 } else { (1u64 << real) - 1 };
            steps += (!st.v[w] & mask).count_ones() as usize;
        }
    }
    steps
}

/// The strip over the columns of `b`, taking the carries into its lowest word from below;
/// returns the carries out of its top word (one bit per column).
fn columns(st: &mut Strip, b: &[u8], carries: Option<&Vec<u64>>) -> Vec<u64> {
    let len = st.v.len();
    let mut out = vec![0u64; b.len().div_ceil(64)];
    for (jj, &c) in b.iter().enumerate() {
        let mut carry = carries.map_or(0, |cs| (cs[jj / 64] >> (jj % 64)) & 1);
        let peq = &st.peq[c as usize * len..][..len];
        for (v, &p) in st.v.iter_mut().zip(peq) {
            let u = *v & p;
            let (s1, c1) = v.overflowing_add(u);
            let (s2, c2) = s1.overflowing_add(carry);
            carry = u64::from(c1 | c2);
            *v = s2 | (*v & !u);
        }
        out[jj / 64] |= carry << (jj % 64);
    }
    out
}
