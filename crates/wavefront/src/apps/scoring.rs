//! Substitution scores and affine gap penalties for the alignment applications.

use crate::error::{Result, WavefrontError};

/// The letters of [`Scoring::blosum62`], in the matrix's order.
const BLOSUM62_ALPHABET: &[u8; 24] = b"ARNDCQEGHILKMFPSTWYVBZX*";

/// Largest magnitude accepted for a score or penalty: keeps every path sum of sequences up to
/// [`MAX_LEN_SUM`] residues inside `i32`.
const MAX_PARAM: i32 = 1000;
/// Largest `a.len() + b.len()` accepted (scores stay below `2^31` with `|params| <= 1000`).
pub(crate) const MAX_LEN_SUM: usize = 1_000_000;

/// How residue pairs and gaps score: a substitution matrix (or match/mismatch), and affine gaps
/// where a gap of length `k` costs `open + (k - 1) * extend` (parasail's convention).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scoring {
    subst: Subst,
    open: i32,
    extend: i32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Subst {
    Blosum62,
    Simple { match_: i32, mismatch: i32 },
}

/// Two sequences as indices into a dense `size x size` score matrix.
#[derive(Debug)]
pub(crate) struct Encoded {
    pub(crate) a: Vec<u8>,
    pub(crate) b: Vec<u8>,
    pub(crate) size: usize,
    /// Row-major `size x size`: `matrix[x * size + y]` scores letter `x` of `a` against `y`.
    pub(crate) matrix: Vec<i32>,
    pub(crate) open: i32,
    pub(crate) extend: i32,
}

impl Encoded {
    /// Score of `a`'s letter `x` against `b`'s letter `y`.
    #[inline(always)]
    pub(crate) fn score(&self, x: u8, y: u8) -> i32 {
        self.matrix[x as usize * self.size + y as usize]
    }
}

impl Scoring {
    /// BLOSUM62 over the upper-case one-letter codes `ARNDCQEGHILKMFPSTWYVBZX*` with gap open
    /// `open` and extension `extend` (both positive penalties, e.g. 11 and 1).
    pub fn blosum62(open: i32, extend: i32) -> Self {
        Scoring { subst: Subst::Blosum62, open, extend }
    }

    /// `match_` for equal bytes, `mismatch` (usually negative) for different ones, any bytes.
    pub fn simple(match_: i32, mismatch: i32, open: i32, extend: i32) -> Self {
        Scoring { subst: Subst::Simple { match_, mismatch }, open, extend }
    }

    /// The gap open penalty (cost of a gap of length 1).
    pub fn open(&self) -> i32 {
        self.open
    }

    /// The gap extension penalty (cost of each further gap position).
    pub fn extend(&self) -> i32 {
        self.extend
    }

    /// Checks the parameters and maps both sequences to matrix indices.
    pub(crate) fn encode(&self, a: &[u8], b: &[u8]) -> Result<Encoded> {
        let bad = |what: String| Err(WavefrontError::InvalidScoring(what));
        if !(0..=MAX_PARAM).contains(&self.open) || !(0..=MAX_PARAM).contains(&self.extend) {
            return bad(format!(
                "gap penalties open {} and extend {} must be in 0..={MAX_PARAM}",
                self.open, self.extend
            ));
        }
        if a.len() + b.len() > MAX_LEN_SUM {
            return bad(format!("sequences of {} + {} residues exceed {MAX_LEN_SUM}", a.len(), b.len()));
        }
        match self.subst {
            Subst::Blosum62 => {
                let mut map = [u8::MAX; 256];
                for (i, &c) in BLOSUM62_ALPHABET.iter().enumerate() {
                    map[c as usize] = i as u8;
                }
                let matrix = BLOSUM62.iter().flatten().map(|&s| i32::from(s)).collect();
                Ok(Encoded {
                    a: map_seq(a, &map, 'a')?,
                    b: map_seq(b, &map, 'b')?,
                    size: 24,
                    matrix,
                    open: self.open,
                    extend: self.extend,
                })
            }
            Subst::Simple { match_, mismatch } => {
                if match_.abs() > MAX_PARAM || mismatch.abs() > MAX_PARAM {
                    return bad(format!("scores {match_} and {mismatch} must be within +-{MAX_PARAM}"));
                }
                // Only the letters present get an index: the score matrix stays small.
                let mut map = [u8::MAX; 256];
                let mut size = 0usize;
                for &c in a.iter().chain(b) {
                    if map[c as usize] == u8::MAX && size < 255 {
                        map[c as usize] = size as u8;
                        size += 1;
                    }
                }
                if a.iter().chain(b).any(|&c| map[c as usize] == u8::MAX) {
                    return bad("more than 255 distinct bytes".into());
                }
                let matrix =
                    (0..size * size).map(|k| if k / size == k % size { match_ } else { mismatch }).collect();
                Ok(Encoded {
                    a: map_seq(a, &map, 'a')?,
                    b: map_seq(b, &map, 'b')?,
                    size: size.max(1),
                    matrix,
                    open: self.open,
                    extend: self.extend,
                })
            }
        }
    }
}

fn map_seq(s: &[u8], map: &[u8; 256], seq: char) -> Result<Vec<u8>> {
    s.iter()
        .enumerate()
        .map(|(pos, &byte)| match map[byte as usize] {
            u8::MAX => Err(WavefrontError::UnknownResidue { seq, pos, byte, shown: byte as char }),
            x => Ok(x),
        })
        .collect()
}

/// BLOSUM62 (Henikoff & Henikoff 1992), rows and columns in `BLOSUM62_ALPHABET` order.
#[rustfmt::skip]
const BLOSUM62: [[i8; 24]; 24] = [
    [4, -1, -2, -2, 0, -1, -1, 0, -2, -1, -1, -1, -1, -2, -1, 1, 0, -3, -2, 0, -2, -1, 0, -4],
    [-1, 5, 0, -2, -3, 1, 0, -2, 0, -3, -2, 2, -1, -3, -2, -1, -1, -3, -2, -3, -1, 0, -1, -4],
    [-2, 0, 6, 1, -3, 0, 0, 0, 1, -3, -3, 0, -2, -3, -2, 1, 0, -4, -2, -3, 3, 0, -1, -4],
    [-2, -2, 1, 6, -3, 0, 2, -1, -1, -3, -4, -1, -3, -3, -1, 0, -1, -4, -3, -3, 4, 1, -1, -4],
    [0, -3, -3, -3, 9, -3, -4, -3, -3, -1, -1, -3, -1, -2, -3, -1, -1, -2, -2, -1, -3, -3, -2, -4],
    [-1, 1, 0, 0, -3, 5, 2, -2, 0, -3, -2, 1, 0, -3, -1, 0, -1, -2, -1, -2, 0, 3, -1, -4],
    [-1, 0, 0, 2, -4, 2, 5, -2, 0, -3, -3, 1, -2, -3, -1, 0, -1, -3, -2, -2, 1, 4, -1, -4],
    [0, -2, 0, -1, -3, -2, -2, 6, -2, -4, -4, -2, -3, -3, -2, 0, -2, -2, -3, -3, -1, -2, -1, -4],
    [-2, 0, 1, -1, -3, 0, 0, -2, 8, -3, -3, -1, -2, -1, -2, -1, -2, -2, 2, -3, 0, 0, -1, -4],
    [-1, -3, -3, -3, -1, -3, -3, -4, -3, 4, 2, -3, 1, 0, -3, -2, -1, -3, -1, 3, -3, -3, -1, -4],
    [-1, -2, -3, -4, -1, -2, -3, -4, -3, 2, 4, -2, 2, 0, -3, -2, -1, -2, -1, 1, -4, -3, -1, -4],
    [-1, 2, 0, -1, -3, 1, 1, -2, -1, -3, -2, 5, -1, -3, -1, 0, -1, -3, -2, -2, 0, 1, -1, -4],
    [-1, -1, -2, -3, -1, 0, -2, -3, -2, 1, 2, -1, 5, 0, -2, -1, -1, -1, -1, 1, -3, -1, -1, -4],
    [-2, -3, -3, -3, -2, -3, -3, -3, -1, 0, 0, -3, 0, 6, -4, -2, -2, 1, 3, -1, -3, -3, -1, -4],
    [-1, -2, -2, -1, -3, -1, -1, -2, -2, -3, -3, -1, -2, -4, 7, -1, -1, -4, -3, -2, -2, -1, -2, -4],
    [1, -1, 1, 0, -1, 0, 0, 0, -1, -2, -2, 0, -1, -2, -1, 4, 1, -3, -2, -2, 0, 0, 0, -4],
    [0, -1, 0, -1, -1, -1, -1, -2, -2, -1, -1, -1, -1, -2, -1, 1, 5, -2, -2, 0, -1, -1, 0, -4],
    [-3, -3, -4, -4, -2, -2, -3, -2, -2, -3, -2, -3, -1, 1, -4, -3, -2, 11, 2, -3, -4, -3, -2, -4],
    [-2, -2, -2, -3, -2, -1, -2, -3, 2, -1, -1, -2, -1, 3, -3, -2, -2, 2, 7, -1, -3, -2, -1, -4],
    [0, -3, -3, -3, -1, -2, -2, -3, -3, 3, 1, -2, 1, -1, -2, -2, 0, -3, -1, 4, -3, -2, -1, -4],
    [-2, -1, 3, 4, -3, 0, 1, -1, 0, -3, -4, 0, -3, -3, -2, 0, -1, -4, -3, -3, 4, 1, -1, -4],
    [-1, 0, 0, 1, -3, 3, 4, -2, 0, -3, -3, 1, -1, -3, -1, 0, -1, -3, -2, -2, 1, 4, -1, -4],
    [0, -1, -1, -1, -2, -1, -1, -1, -1, -1, -1, -1, -1, -1, -2, 0, 0, -2, -1, -1, -1, -1, -1, -4],
    [-4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, 1],
];
