//! Sequence comparison against plain dynamic programming written here: LCS, Smith-Waterman and
//! Needleman-Wunsch with affine gaps, on random sequences, through the fast paths (one and
//! several strips, 16-bit and 32-bit) and the generic executors.

use rand::Rng;
use wavefront::apps::{
    Alignment, Scoring, lcs_length, lcs_length_with, needleman_wunsch, needleman_wunsch_with, smith_waterman,
    smith_waterman_with,
};
use wavefront::{Config2, WavefrontError};

const PROTEIN: &[u8] = b"ARNDCQEGHILKMFPSTWYV";

fn random_seq(rng: &mut impl Rng, len: usize, alphabet: &[u8]) -> Vec<u8> {
    (0..len).map(|_| alphabet[rng.random_range(0..alphabet.len())]).collect()
}

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap()
}

fn lcs_oracle(a: &[u8], b: &[u8]) -> usize {
    let mut f = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            f[i][j] = if a[i - 1] == b[j - 1] { f[i - 1][j - 1] + 1 } else { f[i - 1][j].max(f[i][j - 1]) };
        }
    }
    f[a.len()][b.len()]
}

/// Gotoh over the full `(m+1) x (n+1)` matrices: the textbook formulation.
fn gotoh_oracle(
    a: &[u8],
    b: &[u8],
    s: impl Fn(u8, u8) -> i32,
    open: i32,
    ext: i32,
    local: bool,
) -> (i32, usize, usize) {
    let (m, n) = (a.len(), b.len());
    let neg = i32::MIN / 4;
    let gap = |k: usize| if local || k == 0 { 0 } else { -(open + (k as i32 - 1) * ext) };
    let mut h = vec![vec![0i32; n + 1]; m + 1];
    let mut e = vec![vec![neg; n + 1]; m + 1];
    let mut f = vec![vec![neg; n + 1]; m + 1];
    for i in 0..=m {
        h[i][0] = gap(i);
    }
    for j in 0..=n {
        h[0][j] = gap(j);
    }
    let mut best = (0, 0, 0);
    for j in 1..=n {
        for i in 1..=m {
            e[i][j] = (e[i][j - 1] - ext).max(h[i][j - 1] - open);
            f[i][j] = (f[i - 1][j] - ext).max(h[i - 1][j] - open);
            let mut v = (h[i - 1][j - 1] + s(a[i - 1], b[j - 1])).max(e[i][j]).max(f[i][j]);
            if local {
                v = v.max(0);
            }
            h[i][j] = v;
            // Column-major scan, strict: smallest end_b, then smallest end_a, wins ties.
            if v > best.0 {
                best = (v, i - 1, j - 1);
            }
        }
    }
    if local { best } else { (h[m][n], 0, 0) }
}

/// BLOSUM62 entry `s(x, y)`, read back through one-residue global alignments (with gaps too
/// dear to use, the score is `s(x, y)`); `blosum62_spot_values` checks the table against the
/// published one, and the parasail test checks whole alignments.
fn blosum(x: u8, y: u8) -> i32 {
    BLOSUM.with(|t| t[x as usize][y as usize])
}

thread_local! {
    static BLOSUM: Vec<Vec<i32>> = {
        let sc = Scoring::blosum62(1000, 1000);
        let mut t = vec![vec![0; 256]; 256];
        for &x in b"ARNDCQEGHILKMFPSTWYVBZX*" {
            for &y in b"ARNDCQEGHILKMFPSTWYVBZX*" {
                t[x as usize][y as usize] = needleman_wunsch(&[x], &[y], &sc).unwrap();
            }
        }
        t
    };
}

#[test]
fn blosum62_spot_values() {
    // Henikoff & Henikoff's table: diagonal, a few off-diagonal entries, symmetry.
    for (x, y, s) in [
        (b'A', b'A', 4),
        (b'W', b'W', 11),
        (b'C', b'C', 9),
        (b'A', b'R', -1),
        (b'W', b'F', 1),
        (b'D', b'E', 2),
        (b'I', b'V', 3),
        (b'G', b'I', -4),
        (b'*', b'*', 1),
        (b'*', b'A', -4),
        (b'B', b'D', 4),
    ] {
        assert_eq!(blosum(x, y), s, "{}{}", x as char, y as char);
    }
    for &x in PROTEIN {
        for &y in PROTEIN {
            assert_eq!(blosum(x, y), blosum(y, x));
        }
    }
}

#[test]
fn lcs_against_dp() {
    let mut rng = hetkit_testkit::rng("lcs_against_dp");
    for (m, n, alpha) in [
        (1, 1, 2),
        (1, 50, 4),
        (63, 64, 4),
        (64, 65, 2),
        (129, 77, 20),
        (300, 301, 4),
        (1100, 900, 4),
        (2100, 700, 26),
    ] {
        let alphabet: Vec<u8> = (b'A'..b'A' + alpha).collect();
        let a = random_seq(&mut rng, m, &alphabet);
        let b = random_seq(&mut rng, n, &alphabet);
        let want = lcs_oracle(&a, &b);
        for threads in [1, 2, 3] {
            assert_eq!(pool(threads).install(|| lcs_length(&a, &b)), want, "{m}x{n} threads {threads}");
        }
        if m * n <= 200_000 {
            for cfg in [Config2::sequential(), Config2::cpu(7), Config2::tiled(16)] {
                assert_eq!(lcs_length_with(&a, &b, &cfg).unwrap(), want);
            }
        }
    }
    assert_eq!(lcs_length(b"", b"ABC"), 0);
    assert_eq!(lcs_length(b"TATGAC", b"GCATGA"), 4);
}

#[test]
fn smith_waterman_against_dp() {
    let mut rng = hetkit_testkit::rng("smith_waterman_against_dp");
    let cases =
        [(1, 1), (1, 40), (40, 1), (17, 16), (16, 17), (100, 37), (257, 300), (1200, 700), (700, 1300)];
    for (m, n) in cases {
        let a = random_seq(&mut rng, m, PROTEIN);
        // Half the cases share a planted segment, so long alignments and big scores occur.
        let mut b = random_seq(&mut rng, n, PROTEIN);
        if m > 20 && n > 20 && rng.random_bool(0.5) {
            let len = m.min(n) / 2;
            let (sa, sb) = (rng.random_range(0..=m - len), rng.random_range(0..=n - len));
            b[sb..sb + len].copy_from_slice(&a[sa..sa + len]);
        }
        for (open, ext) in [(11, 1), (10, 2), (5, 5), (3, 0)] {
            let sc = Scoring::blosum62(open, ext);
            let (s, ea, eb) = gotoh_oracle(&a, &b, blosum, open, ext, true);
            let want = Alignment { score: s, end_a: ea, end_b: eb };
            for threads in [1, 2, 3] {
                let got = pool(threads).install(|| smith_waterman(&a, &b, &sc)).unwrap();
                assert_eq!(got, want, "{m}x{n} open {open} ext {ext} threads {threads}");
            }
            if m * n <= 100_000 {
                for cfg in [Config2::sequential(), Config2::cpu(5)] {
                    assert_eq!(smith_waterman_with(&a, &b, &sc, &cfg).unwrap(), want);
                }
            }
        }
    }
}

/// Penalties the striped pass does not take (extend > open) and scores beyond 16 bits go the
/// 32-bit way and still match.
#[test]
fn smith_waterman_scalar_and_saturating_paths() {
    let mut rng = hetkit_testkit::rng("smith_waterman_scalar_and_saturating_paths");
    let a = random_seq(&mut rng, 333, b"ACGT");
    let b = random_seq(&mut rng, 251, b"ACGT");
    let sc = Scoring::simple(2, -3, 1, 2);
    let (s, ea, eb) = gotoh_oracle(&a, &b, |x, y| if x == y { 2 } else { -3 }, 1, 2, true);
    for threads in [1, 2] {
        assert_eq!(
            pool(threads).install(|| smith_waterman(&a, &b, &sc)).unwrap(),
            Alignment { score: s, end_a: ea, end_b: eb }
        );
    }
    // 600 matches of 100 each: 60000 > i16::MAX.
    let a = random_seq(&mut rng, 600, b"ACGT");
    let sc = Scoring::simple(100, -100, 300, 10);
    let got = smith_waterman(&a, &a, &sc).unwrap();
    assert_eq!(got, Alignment { score: 60_000, end_a: 599, end_b: 599 });
}

#[test]
fn needleman_wunsch_against_dp() {
    let mut rng = hetkit_testkit::rng("needleman_wunsch_against_dp");
    for (m, n) in [(1, 1), (1, 9), (9, 1), (31, 29), (200, 150), (900, 1000)] {
        let a = random_seq(&mut rng, m, PROTEIN);
        let b = random_seq(&mut rng, n, PROTEIN);
        for (open, ext) in [(11, 1), (4, 4)] {
            let sc = Scoring::blosum62(open, ext);
            let want = gotoh_oracle(&a, &b, blosum, open, ext, false).0;
            for threads in [1, 3] {
                assert_eq!(pool(threads).install(|| needleman_wunsch(&a, &b, &sc)).unwrap(), want, "{m}x{n}");
            }
            if m * n <= 100_000 {
                assert_eq!(needleman_wunsch_with(&a, &b, &sc, &Config2::cpu(8)).unwrap(), want);
            }
        }
    }
    let sc = Scoring::blosum62(11, 1);
    assert_eq!(needleman_wunsch(b"", b"AAAA", &sc).unwrap(), -(11 + 3));
    assert_eq!(needleman_wunsch(b"", b"", &sc).unwrap(), 0);
}

#[test]
fn alignment_errors() {
    let sc = Scoring::blosum62(11, 1);
    assert!(matches!(
        smith_waterman(b"ACDx", b"ACD", &sc),
        Err(WavefrontError::UnknownResidue { seq: 'a', pos: 3, byte: b'x', .. })
    ));
    assert!(matches!(
        needleman_wunsch(b"ACD", b"AJD", &sc),
        Err(WavefrontError::UnknownResidue { seq: 'b', pos: 1, .. })
    ));
    assert!(matches!(
        smith_waterman(b"A", b"A", &Scoring::blosum62(-1, 1)),
        Err(WavefrontError::InvalidScoring(_))
    ));
    assert!(matches!(
        smith_waterman(b"A", b"A", &Scoring::simple(1, -1, 2, -1)),
        Err(WavefrontError::InvalidScoring(_))
    ));
    assert!(matches!(
        smith_waterman(b"A", b"A", &Scoring::simple(5000, -1, 2, 1)),
        Err(WavefrontError::InvalidScoring(_))
    ));
    assert_eq!(smith_waterman(b"", b"A", &sc).unwrap(), Alignment { score: 0, end_a: 0, end_b: 0 });
}
