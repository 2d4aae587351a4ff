//! Inputs for the segmented tests: descriptor shapes and the six key distributions of
//! Cederman and Tsigas (after Helman, Bader and JáJá).

#![allow(dead_code)]

use prefix_ops::segmented::Segments;
use rand::Rng;

/// The descriptor shapes every operation is checked on, for `n` elements where the shape
/// allows: no segments, one segment, segments of length 1, regular, irregular with empty
/// segments (leading, trailing and runs), and random lengths.
pub(crate) fn shapes(rng: &mut impl Rng) -> Vec<(String, Segments)> {
    let mut out = vec![
        ("none".into(), Segments::from_offsets(&[0]).unwrap()),
        ("one empty".into(), Segments::from_lengths(&[0]).unwrap()),
        ("empty only".into(), Segments::from_lengths(&[0, 0, 0]).unwrap()),
        ("regular len 0".into(), Segments::regular(0, 4)),
        ("single 1".into(), Segments::from_lengths(&[1]).unwrap()),
        ("single 97".into(), Segments::from_lengths(&[97]).unwrap()),
        ("ones".into(), Segments::regular(1, 53)),
        ("ones irregular".into(), Segments::from_lengths(&[1; 29]).unwrap()),
        ("regular 7x13".into(), Segments::regular(7, 13)),
        ("regular 64x5".into(), Segments::regular(64, 5)),
        ("irregular".into(), Segments::from_lengths(&[0, 3, 0, 0, 1, 17, 2, 0, 131, 5, 0]).unwrap()),
    ];
    for k in 0..3 {
        let lens: Vec<usize> = (0..rng.random_range(1..60))
            .map(|_| if rng.random_bool(0.2) { 0 } else { rng.random_range(1..(8 << (3 * k))) })
            .collect();
        out.push((format!("random {k}"), Segments::from_lengths(&lens).unwrap()));
    }
    out
}

/// The six input distributions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dist {
    /// Uniform over the range.
    Uniform,
    /// The average of four uniform draws.
    Gaussian,
    /// All keys equal.
    Zero,
    /// `p` blocks; block `i`'s `j`-th sub-block of `n / p^2` keys is uniform in the `j`-th of
    /// `p` equal value ranges.
    Bucket,
    /// `p` blocks; block `i < p/2` uniform in value range `2i + 1` of `p`, block `i >= p/2` in
    /// value range `2i - p` (ranges of `M / p`).
    Staggered,
    /// Uniform, then sorted.
    Sorted,
}

/// All six.
pub(crate) const DISTS: [Dist; 6] =
    [Dist::Uniform, Dist::Gaussian, Dist::Zero, Dist::Bucket, Dist::Staggered, Dist::Sorted];

/// `n` keys in `[0, 2^31)` of distribution `d` (p = 8 blocks for bucket and staggered).
pub(crate) fn keys(d: Dist, n: usize, rng: &mut impl Rng) -> Vec<u32> {
    const M: u64 = 1 << 31;
    const P: usize = 8;
    let block = n.div_ceil(P).max(1);
    let uni = |rng: &mut dyn rand::RngCore, lo: u64, hi: u64| rng.random_range(lo..hi.max(lo + 1)) as u32;
    let mut v: Vec<u32> = (0..n)
        .map(|i| match d {
            Dist::Uniform | Dist::Sorted => uni(rng, 0, M),
            Dist::Gaussian => ((0..4).map(|_| uni(rng, 0, M) as u64).sum::<u64>() / 4) as u32,
            Dist::Zero => 7,
            Dist::Bucket => {
                let j = ((i % block) * P / block) as u64;
                uni(rng, j * M / P as u64, (j + 1) * M / P as u64)
            }
            Dist::Staggered => {
                let b = (i / block) as u64;
                let r = if b < P as u64 / 2 { 2 * b + 1 } else { 2 * b - P as u64 };
                uni(rng, r * M / P as u64, (r + 1) * M / P as u64)
            }
        })
        .collect();
    if d == Dist::Sorted {
        v.sort_unstable();
    }
    v
}
