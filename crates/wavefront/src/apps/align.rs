//! Pairwise alignment with affine gaps (Gotoh): Smith-Waterman (local: score and end) and
//! Needleman-Wunsch (global score, end gaps penalised).
//!
//! With `H` the best score of an alignment ending at `(i, j)`, `E` one ending in a gap in `a`
//! (horizontal) and `F` one ending in a gap in `b` (vertical):
//! `E(i,j) = max(E(i,j-1) - extend, H(i,j-1) - open)`,
//! `F(i,j) = max(F(i-1,j) - extend, H(i-1,j) - open)`,
//! `H(i,j) = max(H(i-1,j-1) + s(a_i, b_j), E(i,j), F(i,j)[, 0 for local])`.

use std::ops::Range;

use crate::apps::scoring::{Encoded, Scoring};
use crate::apps::strips::{pipeline_chunk, run_strips, split};
use crate::boundary::Boundary2;
use crate::config::Config2;
use crate::error::Result;
use crate::sweep2::run_2d;

/// "Minus infinity" that survives subtracting penalties without overflow.
pub(crate) const NEG: i32 = i32::MIN / 4;

/// The best local alignment: its score and where it ends.
///
/// Among cells with the best score the one with the smallest `end_b`, then the smallest
/// `end_a`, is reported (parasail's rule with `a` as its query). With score 0 (nothing aligns
/// positively, or an empty sequence) both ends are 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Alignment {
    /// The alignment score.
    pub score: i32,
    /// 0-based position in `a` of the last aligned residue.
    pub end_a: usize,
    /// 0-based position in `b` of the last aligned residue.
    pub end_b: usize,
}

impl Alignment {
    const ZERO: Alignment = Alignment { score: 0, end_a: 0, end_b: 0 };

    /// The better of two candidates under the tie rule above.
    pub(crate) fn better(self, other: Alignment) -> Alignment {
        let key = |x: &Alignment| (std::cmp::Reverse(x.score), x.end_b, x.end_a);
        if key(&other) < key(&self) { other } else { self }
    }
}

/// Local alignment score and end of `a` against `b` (Smith-Waterman, affine gaps), on all cores
/// with SIMD lanes where the CPU has AVX2: 8-bit lanes first, 16-bit ones when the score
/// reaches 255, 32-bit scalar code when it reaches 65 535 (or without AVX2).
///
/// # Errors
/// A byte outside the scoring matrix, negative or huge penalties, sequences too long for `i32`
/// scores.
///
/// ```
/// use wavefront::apps::{Scoring, smith_waterman};
/// let al = smith_waterman(b"HEAGAWGHEE", b"PAWHEAE", &Scoring::blosum62(11, 1))?;
/// assert_eq!((al.score, al.end_a, al.end_b), (17, 8, 4));
/// # Ok::<(), wavefront::WavefrontError>(())
/// ```
pub fn smith_waterman(a: &[u8], b: &[u8], scoring: &Scoring) -> Result<Alignment> {
    let enc = scoring.encode(a, b)?;
    if a.is_empty() || b.is_empty() {
        return Ok(Alignment::ZERO);
    }
    let parallel = rayon::current_num_threads() > 1;
    if let Some(al) = crate::apps::sw_simd::smith_waterman_simd(&enc, parallel) {
        return Ok(al);
    }
    Ok(gotoh_strips(&enc, true, parallel).0)
}

/// Global alignment score of `a` against `b` (Needleman-Wunsch, affine gaps, end gaps cost
/// like inner ones), on all cores.
///
/// # Errors
/// As [`smith_waterman`].
///
/// ```
/// use wavefront::apps::{Scoring, needleman_wunsch};
/// // five matches, one mismatch, one gap of length 1: 5 - 1 - 3
/// assert_eq!(needleman_wunsch(b"GATTACA", b"GATCCA", &Scoring::simple(1, -1, 3, 1))?, 1);
/// # Ok::<(), wavefront::WavefrontError>(())
/// ```
pub fn needleman_wunsch(a: &[u8], b: &[u8], scoring: &Scoring) -> Result<i32> {
    let enc = scoring.encode(a, b)?;
    if a.is_empty() || b.is_empty() {
        return Ok(end_gap(&enc, a.len().max(b.len())));
    }
    Ok(gotoh_strips(&enc, false, rayon::current_num_threads() > 1).1)
}

/// The cost of a gap of `len` positions as a (non-positive) score.
fn end_gap(enc: &Encoded, len: usize) -> i32 {
    if len == 0 { 0 } else { -(enc.open + (len as i32 - 1) * enc.extend) }
}

/// One cell of the Gotoh recurrence, for the generic executors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Cell {
    h: i32,
    e: i32,
    f: i32,
}

/// [`smith_waterman`] through [`run_2d`] with `config`: the generic closure path, whose every
/// executor must give the fast path's answer. Keeps the whole table (12 bytes per cell).
///
/// # Errors
/// As [`smith_waterman`], and those of [`run_2d`].
pub fn smith_waterman_with(a: &[u8], b: &[u8], scoring: &Scoring, config: &Config2) -> Result<Alignment> {
    let enc = scoring.encode(a, b)?;
    if a.is_empty() || b.is_empty() {
        return Ok(Alignment::ZERO);
    }
    let boundary = Boundary2::constant(Cell { h: 0, e: NEG, f: NEG });
    let table =
        run_2d(a.len(), b.len(), &boundary, config, |i, j, n, w, nw| gotoh_cell(&enc, true, i, j, n, w, nw))?;
    let mut best = Alignment::ZERO;
    // Column by column, rows ascending: the first strictly better cell wins the ties.
    for j in 0..b.len() {
        for i in 0..a.len() {
            if table[[i, j]].h > best.score {
                best = Alignment { score: table[[i, j]].h, end_a: i, end_b: j };
            }
        }
    }
    Ok(best)
}

/// [`needleman_wunsch`] through [`run_2d`] with `config` (whole table kept).
///
/// # Errors
/// As [`needleman_wunsch`], and those of [`run_2d`].
pub fn needleman_wunsch_with(a: &[u8], b: &[u8], scoring: &Scoring, config: &Config2) -> Result<i32> {
    let enc = scoring.encode(a, b)?;
    if a.is_empty() || b.is_empty() {
        return Ok(end_gap(&enc, a.len().max(b.len())));
    }
    let boundary = Boundary2 {
        north: (0..b.len()).map(|j| Cell { h: end_gap(&enc, j + 1), e: NEG, f: NEG }).collect(),
        west: (0..a.len()).map(|i| Cell { h: end_gap(&enc, i + 1), e: NEG, f: NEG }).collect(),
        corner: Cell { h: 0, e: NEG, f: NEG },
    };
    let table = run_2d(a.len(), b.len(), &boundary, config, |i, j, n, w, nw| {
        gotoh_cell(&enc, false, i, j, n, w, nw)
    })?;
    Ok(table[[a.len() - 1, b.len() - 1]].h)
}

#[inline(always)]
fn gotoh_cell(enc: &Encoded, local: bool, i: usize, j: usize, n: &Cell, w: &Cell, nw: &Cell) -> Cell {
    let e = (w.e - enc.extend).max(w.h - enc.open);
    let f = (n.f - enc.extend).max(n.h - enc.open);
    let h = (nw.h + enc.score(enc.a[i], enc.b[j])).max(e).max(f);
    Cell { h: if local { h.max(0) } else { h }, e, f }
}

/// A row strip of the scalar Gotoh tiles: `H` and `E` of column `j - 1` for each row.
struct Strip {
    rows: Range<usize>,
    h: Vec<i32>,
    e: Vec<i32>,
    /// `H(rows.start - 1, j - 1)`: the north-west of the strip's first row.
    corner: i32,
    best: Alignment,
}

/// Scalar 32-bit Gotoh over row strips (one per core when `parallel`); returns the best local
/// alignment (`local`) and the bottom-right `H` (global).
pub(crate) fn gotoh_strips(enc: &Encoded, local: bool, parallel: bool) -> (Alignment, i32) {
    let (m, n) = (enc.a.len(), enc.b.len());
    let parts = if parallel { rayon::current_num_threads().min(m / 64).max(1) } else { 1 };
    let states = split(m, parts)
        .into_iter()
        .map(|rows| Strip {
            h: rows.clone().map(|i| if local { 0 } else { end_gap(enc, i + 1) }).collect(),
            e: vec![NEG; rows.len()],
            corner: if local || rows.start == 0 { 0 } else { end_gap(enc, rows.start) },
            rows,
            best: Alignment::ZERO,
        })
        .collect();
    let states = run_strips(
        states,
        n,
        pipeline_chunk(n),
        parallel,
        |st: &mut Strip, _, cols, top: Option<&Vec<(i32, i32)>>| gotoh_tile(enc, local, st, cols, top),
    );
    let best = states.iter().fold(Alignment::ZERO, |acc, s| acc.better(s.best));
    let last = states.last().and_then(|s| s.h.last().copied()).unwrap_or(0);
    (best, last)
}

/// One tile, column by column; returns the strip's bottom `(H, F)` on these columns.
fn gotoh_tile(
    enc: &Encoded,
    local: bool,
    st: &mut Strip,
    cols: Range<usize>,
    top: Option<&Vec<(i32, i32)>>,
) -> Vec<(i32, i32)> {
    let (open, ext) = (enc.open, enc.extend);
    let floor = if local { 0 } else { i32::MIN };
    let a = &enc.a[st.rows.clone()];
    let mut bottom = Vec::with_capacity(cols.len());
    for (jj, j) in cols.clone().enumerate() {
        let (th, tf) = match top {
            Some(t) => t[jj],
            None if local => (0, NEG),
            None => (end_gap(enc, j + 1), NEG),
        };
        let mut f = (tf - ext).max(th - open);
        let mut diag = std::mem::replace(&mut st.corner, th);
        let row_scores = &enc.matrix[..];
        let y = enc.b[j] as usize;
        let mut f_last = f;
        for (k, &x) in a.iter().enumerate() {
            let e = (st.e[k] - ext).max(st.h[k] - open);
            let h = (diag + row_scores[x as usize * enc.size + y]).max(e).max(f).max(floor);
            diag = st.h[k];
            st.h[k] = h;
            st.e[k] = e;
            if h > st.best.score {
                st.best = Alignment { score: h, end_a: st.rows.start + k, end_b: j };
            }
            f_last = f;
            f = (f - ext).max(h - open);
        }
        bottom.push((*st.h.last().expect("strips are not empty"), f_last));
    }
    bottom
}
