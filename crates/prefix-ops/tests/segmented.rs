//! The segmented catalogue against per-segment sequential loops written here: every shape of
//! descriptor (none, empty, one, length 1, regular, irregular with empty segments, random),
//! integer results bit for bit, float reductions within a tolerance, the six key
//! distributions, the thesis's worked examples (Fig. 5.7, the quicksort trace), and bad input.

mod segmented_common;

use hetkit_testkit::rng;
use prefix_ops::Error;
use prefix_ops::segmented::{self, Add, Max, Min, Monoid, Mul, Order, SegmentedTuning, Segments};
use rand::Rng;
use segmented_common::{DISTS, keys, shapes};

/// The elements of each segment, from the offsets (the oracle's own view of the descriptor).
fn pieces<T: Copy>(xs: &[T], segs: &Segments) -> Vec<Vec<T>> {
    segs.offsets().windows(2).map(|w| xs[w[0]..w[1]].to_vec()).collect()
}

/// Tunings that force every CPU path on small inputs: tiny tasks and splits, and the defaults.
fn tunings() -> [SegmentedTuning; 3] {
    let tiny = SegmentedTuning { task_elems: 3, reduce_split: 5, reorder_split: 5, quicksort_switch: 2 };
    let no_split = SegmentedTuning { reduce_split: usize::MAX, ..tiny };
    [SegmentedTuning::DEFAULT, tiny, no_split]
}

fn random_i64(n: usize, rng: &mut impl Rng) -> Vec<i64> {
    (0..n).map(|_| rng.random_range(-1000..1000)).collect()
}

#[test]
fn fig_5_7_worked_example() {
    let flags = [true, false, false, true, false, true, true, false];
    let s = Segments::from_head_flags(&flags).unwrap();
    assert_eq!(s.num_segments(), 4);
    assert_eq!(s.len(), 8);
    assert_eq!(s.segment_ids(), [0, 0, 0, 1, 1, 2, 3, 3]);
    assert_eq!(s.offsets(), [0, 3, 5, 6, 8]);
    assert_eq!(s.lengths(), [3, 2, 1, 2]);
    assert_eq!(s.head_flags(), flags);
}

#[test]
fn descriptor_properties_on_random_flags() {
    let mut rng = rng("descriptor_properties_on_random_flags");
    for n in [1usize, 2, 3, 31, 1000, 70_001] {
        let mut flags: Vec<bool> = (0..n).map(|_| rng.random_bool(0.3)).collect();
        flags[0] = true;
        let s = Segments::from_head_flags(&flags).unwrap();
        let (off, len, ids) = (s.offsets(), s.lengths(), s.segment_ids());
        assert_eq!(len.iter().sum::<usize>(), n);
        assert_eq!(off[0], 0);
        assert!(off.windows(2).all(|w| w[0] < w[1]), "flags give no empty segments");
        for (seg, &o) in off[..s.num_segments()].iter().enumerate() {
            assert_eq!(ids[o] as usize, seg);
        }
        // The Fig. 5.7 rule: ids are the inclusive scan of the flags minus one.
        let mut acc = 0u32;
        for (i, &f) in flags.iter().enumerate() {
            acc += u32::from(f);
            assert_eq!(ids[i], acc - 1);
        }
        assert_eq!(s.head_flags(), flags);
        assert_eq!(Segments::from_offsets(&off).unwrap(), s);
        assert_eq!(Segments::from_lengths(&len).unwrap(), s);
    }
}

#[test]
fn descriptor_forms_agree() {
    let r = Segments::regular(3, 4);
    assert_eq!(r.as_regular(), Some((3, 4)));
    assert_eq!(r.offsets(), [0, 3, 6, 9, 12]);
    assert_eq!(r.lengths(), [3; 4]);
    assert_eq!(r.segment_ids(), [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]);
    assert_eq!(r, Segments::from_lengths(&[3, 3, 3, 3]).unwrap());
    assert_ne!(r, Segments::from_lengths(&[3, 3, 6]).unwrap());
    let e = Segments::from_lengths(&[0, 2, 0]).unwrap();
    assert_eq!((e.num_segments(), e.len()), (3, 2));
    assert_eq!(e.head_flags(), [true, false], "empty segments leave no flag");
    assert_eq!(e.segment_ids(), [1, 1]);
    assert_eq!(e.segment(1), Some(0..2));
    assert_eq!(e.segment(3), None);
    let z = Segments::regular(0, 5);
    assert_eq!((z.num_segments(), z.len(), z.offsets()), (5, 0, vec![0; 6]));
    let none = Segments::from_head_flags(&[]).unwrap();
    assert_eq!((none.num_segments(), none.len()), (0, 0));
    assert!(none.is_empty());
}

#[test]
fn malformed_descriptors_are_errors() {
    assert!(matches!(Segments::from_offsets(&[]), Err(Error::InvalidOffsets(_))));
    assert!(matches!(Segments::from_offsets(&[1, 3]), Err(Error::InvalidOffsets(_))));
    assert!(matches!(Segments::from_offsets(&[0, 4, 2]), Err(Error::InvalidOffsets(_))));
    assert!(matches!(Segments::from_head_flags(&[false, true]), Err(Error::Invalid(_))));
    assert!(Segments::from_lengths(&[usize::MAX, 1]).is_err());
}

/// `regular` cannot fail (the contract has no `Result`): a request no data can match gives a
/// descriptor every operation rejects, with empty views and a saturated length.
#[test]
fn unmatchable_regular_descriptors_are_rejected_by_every_operation() {
    for segs in [Segments::regular(usize::MAX, 2), Segments::regular(0, u32::MAX as usize + 1)] {
        assert!(segs.offsets().is_empty() && segs.lengths().is_empty() && segs.segment_ids().is_empty());
        assert_eq!(segs.segment(0), None);
        let mut xs = vec![1u32; 4];
        let invalid = |r: Result<(), Error>| assert!(matches!(r, Err(Error::Invalid(_))), "{r:?}");
        invalid(segmented::reduce(&xs, &segs, Add).map(drop));
        invalid(segmented::inclusive_scan(&mut xs, &segs, Add));
        invalid(segmented::reverse(&mut xs, &segs));
        invalid(segmented::sort(&mut xs, &segs, Order::Ascending));
        invalid(segmented::partition(&mut xs, &segs, |&x| x > 1).map(drop));
        invalid(segmented::compact(&xs, &[true; 4], &segs).map(drop));
        assert_eq!(xs, [1; 4], "a rejected call leaves the data as it was");
    }
    assert_eq!(Segments::regular(usize::MAX, 2).len(), usize::MAX);
    assert_ne!(Segments::regular(usize::MAX, 2), Segments::regular(usize::MAX, 3));
}

fn check_reduce<T: Copy + Send + Sync + PartialEq + std::fmt::Debug, M: Monoid<T> + std::fmt::Debug>(
    xs: &[T],
    segs: &Segments,
    op: M,
    name: &str,
) {
    let want: Vec<T> =
        pieces(xs, segs).iter().map(|p| p.iter().fold(op.identity(), |a, &x| op.combine(a, x))).collect();
    assert_eq!(segmented::reduce(xs, segs, op).unwrap(), want, "{name} {op:?}");
    for t in tunings() {
        assert_eq!(segmented::reduce_with(xs, segs, op, &t).unwrap(), want, "{name} {op:?} {t:?}");
    }
}

#[test]
fn reduce_matches_per_segment_loops() {
    let mut rng = rng("reduce_matches_per_segment_loops");
    for (name, segs) in shapes(&mut rng) {
        let xs = random_i64(segs.len(), &mut rng);
        check_reduce(&xs, &segs, Add, &name);
        check_reduce(&xs, &segs, Mul, &name);
        check_reduce(&xs, &segs, Min, &name);
        check_reduce(&xs, &segs, Max, &name);
        let us: Vec<u32> = xs.iter().map(|&x| x as u32).collect();
        check_reduce(&us, &segs, Add, &name);
        check_reduce(&us, &segs, Max, &name);
        let is: Vec<i32> = xs.iter().map(|&x| x as i32).collect();
        check_reduce(&is, &segs, Min, &name);
        let ls: Vec<u64> = xs.iter().map(|&x| x as u64).collect();
        check_reduce(&ls, &segs, Mul, &name);
        // Float min/max are exact whatever the association.
        let fs: Vec<f32> = xs.iter().map(|&x| x as f32 * 0.37).collect();
        check_reduce(&fs, &segs, Min, &name);
        check_reduce(&fs, &segs, Max, &name);
        // Float sums of integers below 2^24 are exact in any order.
        let ds: Vec<f64> = xs.iter().map(|&x| x as f64).collect();
        check_reduce(&ds, &segs, Add, &name);
    }
}

#[test]
fn float_sums_agree_within_rounding() {
    let mut rng = rng("float_sums_agree_within_rounding");
    let segs = Segments::from_lengths(&[0, 1, 5, 1000, 0, 33, 4097]).unwrap();
    let xs: Vec<f32> = (0..segs.len()).map(|_| rng.random_range(-1.0..1.0)).collect();
    let want: Vec<f64> = pieces(&xs, &segs).iter().map(|p| p.iter().map(|&x| x as f64).sum()).collect();
    for t in tunings() {
        let got = segmented::reduce_with(&xs, &segs, Add, &t).unwrap();
        for (g, w) in got.iter().zip(&want) {
            assert!((*g as f64 - w).abs() <= 1e-4 * (1.0 + w.abs()), "{g} vs {w} under {t:?}");
        }
    }
    // The identity of an empty float sum is -0.0, exact under addition.
    assert_eq!(segmented::reduce(&xs, &segs, Add).unwrap()[0].to_bits(), (-0.0f32).to_bits());
}

/// A non-commutative monoid: reductions must keep the order inside each segment.
#[derive(Debug, Clone, Copy)]
struct Compose;
impl Monoid<(i64, i64)> for Compose {
    fn identity(&self) -> (i64, i64) {
        (1, 0)
    }
    fn combine(&self, f: (i64, i64), g: (i64, i64)) -> (i64, i64) {
        (g.0.wrapping_mul(f.0), g.0.wrapping_mul(f.1).wrapping_add(g.1))
    }
}

#[test]
fn user_monoids_keep_segment_order() {
    let mut rng = rng("user_monoids_keep_segment_order");
    for (name, segs) in shapes(&mut rng) {
        let xs: Vec<(i64, i64)> =
            (0..segs.len()).map(|_| (rng.random_range(-3..4), rng.random_range(-9..10))).collect();
        check_reduce(&xs, &segs, Compose, &name);
        let mut got = xs.clone();
        segmented::inclusive_scan(&mut got, &segs, Compose).unwrap();
        let want: Vec<(i64, i64)> = pieces(&xs, &segs)
            .iter()
            .flat_map(|p| {
                p.iter()
                    .scan(Compose.identity(), |a, &x| {
                        *a = Compose.combine(*a, x);
                        Some(*a)
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
        assert_eq!(got, want, "{name}");
    }
}

#[test]
fn scans_match_per_segment_loops() {
    let mut rng = rng("scans_match_per_segment_loops");
    let mut all = shapes(&mut rng);
    // One long segment among many short ones: short on average, so the per-segment loops
    // run, and the long one goes to all threads.
    let mut lens = vec![1usize; 3000];
    lens[1700] = 70_001;
    all.push(("long among short".into(), Segments::from_lengths(&lens).unwrap()));
    all.push(("long regular".into(), Segments::regular(65_537, 2)));
    all.push(("regular 200x3".into(), Segments::regular(200, 3)));
    for (name, segs) in all {
        let xs = random_i64(segs.len(), &mut rng);
        let (mut inc, mut exc) = (Vec::new(), Vec::new());
        for p in pieces(&xs, &segs) {
            let mut acc = 0i64;
            for x in p {
                exc.push(acc);
                acc = acc.wrapping_add(x);
                inc.push(acc);
            }
        }
        let mut got = xs.clone();
        segmented::inclusive_scan(&mut got, &segs, Add).unwrap();
        assert_eq!(got, inc, "inclusive {name}");
        let mut got = xs.clone();
        segmented::exclusive_scan(&mut got, &segs, Add).unwrap();
        assert_eq!(got, exc, "exclusive {name}");
    }
}

/// The scan oracle: a plain fold over each segment from `id`, with `f` as the operator.
fn seq_scan<T: Copy>(xs: &[T], segs: &Segments, id: T, f: impl Fn(T, T) -> T, exclusive: bool) -> Vec<T> {
    let mut out = Vec::with_capacity(xs.len());
    for p in pieces(xs, segs) {
        let mut acc = id;
        for x in p {
            let next = f(acc, x);
            out.push(if exclusive { acc } else { next });
            acc = next;
        }
    }
    out
}

/// Shapes for the scans beyond the common ones: inputs long enough for the threaded tiled path
/// (one giant segment, segments crossing tiles), runs of the 4- and 8-element kernels off the
/// tiles' alignment, prime lengths with empty segments, and one-element segments in whole
/// tiles, with and without an empty segment spoiling the run.
fn scan_shapes(rng: &mut impl Rng) -> Vec<(String, Segments)> {
    let mut all = shapes(rng);
    let cycle = |pattern: &[usize], total: usize| -> Vec<usize> {
        let mut lens = Vec::new();
        let mut n = 0;
        for &l in pattern.iter().cycle() {
            if n >= total {
                break;
            }
            lens.push(l);
            n += l;
        }
        lens
    };
    let mut ones = vec![1usize; 200_003];
    all.push(("ones in whole tiles".into(), Segments::from_lengths(&ones).unwrap()));
    ones[70_000] = 0;
    ones[70_001] = 2;
    all.push(("ones with an empty segment".into(), Segments::from_lengths(&ones).unwrap()));
    // Equal lengths in every tile but not overall: the per-tile progressions, not the
    // descriptor's equal length.
    let mut near = vec![1usize; 200_003];
    near.push(2);
    all.push(("ones, then one two".into(), Segments::from_lengths(&near).unwrap()));
    let mut eights_ones = vec![8usize; 20_000];
    eights_ones.extend([1; 70_001]);
    eights_ones.push(100_003);
    all.push(("eights, ones, one long".into(), Segments::from_lengths(&eights_ones).unwrap()));
    all.push(("one giant".into(), Segments::from_lengths(&[300_007]).unwrap()));
    all.push(("giant regular".into(), Segments::regular(150_001, 2)));
    all.push(("regular 8".into(), Segments::regular(8, 20_011)));
    all.push(("regular 4".into(), Segments::regular(4, 40_009)));
    all.push((
        "eights off alignment".into(),
        Segments::from_lengths(&cycle(&[3, 8, 8, 8, 4, 4, 0, 5], 170_000)).unwrap(),
    ));
    all.push((
        "primes and empties".into(),
        Segments::from_lengths(&cycle(&[2, 3, 5, 7, 0, 11, 13, 0, 0, 17, 19, 23, 29, 31, 37, 1021], 190_000))
            .unwrap(),
    ));
    all.push((
        "long among short".into(),
        Segments::from_lengths(&cycle(&[1, 8, 70_001, 2, 4, 64], 290_000)).unwrap(),
    ));
    all
}

/// Offsets whose lengths are all equal scan bit for bit as the `regular` descriptor of that
/// length (floats included: the same path), whichever constructor built them, and match the
/// per-segment loop.
#[test]
fn equal_length_offsets_scan_like_regular() {
    for (len, nseg) in [(1usize, 300_001), (8, 40_003), (3, 70_001), (64, 5_003), (1, 7), (13, 1)] {
        let n = len * nseg;
        let reg = Segments::regular(len, nseg);
        let offsets: Vec<usize> = (0..=nseg).map(|s| s * len).collect();
        let flags: Vec<bool> = (0..n).map(|i| i % len == 0).collect();
        let forms = [
            Segments::from_lengths(&vec![len; nseg]).unwrap(),
            Segments::from_offsets(&offsets).unwrap(),
            Segments::from_head_flags(&flags).unwrap(),
        ];
        let fs: Vec<f32> = (0..n).map(|i| ((i as f32) * 0.731).sin() * 1e3).collect();
        let is: Vec<i32> = (0..n as i32).map(|i| i.wrapping_mul(-1_640_531_535) >> 9).collect();
        for segs in &forms {
            assert_eq!(segs, &reg);
            for ex in [false, true] {
                let ctx = format!("{len} x {nseg} exclusive {ex}");
                assert_eq!(
                    bits(&lib_scan(&fs, segs, Add, ex), f32::to_bits),
                    bits(&lib_scan(&fs, &reg, Add, ex), f32::to_bits),
                    "{ctx} f32 Add"
                );
                assert_eq!(
                    lib_scan(&is, segs, Add, ex),
                    seq_scan(&is, segs, 0, i32::wrapping_add, ex),
                    "{ctx}"
                );
                assert_eq!(
                    lib_scan(&is, segs, Min, ex),
                    seq_scan(&is, segs, i32::MAX, i32::min, ex),
                    "{ctx}"
                );
            }
        }
    }
}

/// Bit patterns, so that floats compare exactly (NaN payloads and the sign of zero included).
fn bits<T: Copy, B: PartialEq + std::fmt::Debug>(xs: &[T], f: impl Fn(T) -> B) -> Vec<B> {
    xs.iter().map(|&x| f(x)).collect()
}

/// The library's scan of a copy of `xs`.
fn lib_scan<T: Copy + Send + Sync + 'static, M: Monoid<T> + 'static>(
    xs: &[T],
    segs: &Segments,
    op: M,
    exclusive: bool,
) -> Vec<T> {
    let mut got = xs.to_vec();
    if exclusive {
        segmented::exclusive_scan(&mut got, segs, op).unwrap();
    } else {
        segmented::inclusive_scan(&mut got, segs, op).unwrap();
    }
    got
}

/// Inclusive and exclusive scans of every element type against [`seq_scan`]: integers
/// (wrapping) and `Min`/`Max` bit for bit; float sums bit for bit on small integer values,
/// where every order of additions is exact, and within rounding on random values.
#[test]
fn scans_of_every_type_match_sequential_loops() {
    let mut rng = rng("scans_of_every_type_match_sequential_loops");
    for (name, segs) in scan_shapes(&mut rng) {
        let n = segs.len();
        let is: Vec<i32> = (0..n).map(|_| rng.random()).collect();
        let us: Vec<u64> = (0..n).map(|_| rng.random()).collect();
        let small: Vec<f32> = (0..n).map(|_| rng.random_range(-8i32..=8) as f32).collect();
        let fs: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0f32..1.0)).collect();
        let ds: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0f64..1.0)).collect();
        for ex in [false, true] {
            let ctx = format!("{name} exclusive {ex}");
            assert_eq!(
                lib_scan(&is, &segs, Add, ex),
                seq_scan(&is, &segs, 0, i32::wrapping_add, ex),
                "{ctx} i32"
            );
            assert_eq!(
                lib_scan(&us, &segs, Add, ex),
                seq_scan(&us, &segs, 0, u64::wrapping_add, ex),
                "{ctx} u64"
            );
            assert_eq!(lib_scan(&us, &segs, Max, ex), seq_scan(&us, &segs, 0, u64::max, ex), "{ctx} u64 Max");
            let (got, want) =
                (lib_scan(&small, &segs, Add, ex), seq_scan(&small, &segs, -0.0, |a, b| a + b, ex));
            assert_eq!(bits(&got, f32::to_bits), bits(&want, f32::to_bits), "{ctx} f32 Add, exact values");
            let (got, want) =
                (lib_scan(&fs, &segs, Min, ex), seq_scan(&fs, &segs, f32::INFINITY, f32::min, ex));
            assert_eq!(bits(&got, f32::to_bits), bits(&want, f32::to_bits), "{ctx} f32 Min");
            // Float sums: within a few ulps of each element's running sum of magnitudes.
            let (got, want) = (lib_scan(&ds, &segs, Add, ex), seq_scan(&ds, &segs, -0.0, |a, b| a + b, ex));
            let mags = seq_scan(&bits(&ds, f64::abs), &segs, 0.0, |a, b| a + b, ex);
            for (i, ((g, w), m)) in got.iter().zip(&want).zip(&mags).enumerate() {
                assert!((g - w).abs() <= 1e-13 * (1.0 + m), "{ctx} f64 Add at {i}: {g} vs {w}");
            }
            let (got, want) = (lib_scan(&fs, &segs, Add, ex), seq_scan(&fs, &segs, -0.0, |a, b| a + b, ex));
            let mags = seq_scan(&bits(&fs, f32::abs), &segs, 0.0, |a, b| a + b, ex);
            for (i, ((g, w), m)) in got.iter().zip(&want).zip(&mags).enumerate() {
                assert!((g - w).abs() <= 1e-5 * (1.0 + m), "{ctx} f32 Add at {i}: {g} vs {w}");
            }
        }
    }
}

#[test]
fn reverse_matches_per_segment_loops() {
    let mut rng = rng("reverse_matches_per_segment_loops");
    let mut all = shapes(&mut rng);
    // Long segments take the multi-threaded path (longer than the default split).
    all.push(("long".into(), Segments::from_lengths(&[3, 70_001, 0, 5, 65_536]).unwrap()));
    all.push(("long regular".into(), Segments::regular(65_537, 2)));
    for (name, segs) in all {
        let xs = random_i64(segs.len(), &mut rng);
        let want: Vec<i64> = pieces(&xs, &segs).into_iter().flat_map(|p| p.into_iter().rev()).collect();
        let mut got = xs.clone();
        segmented::reverse(&mut got, &segs).unwrap();
        assert_eq!(got, want, "{name}");
    }
}

#[test]
fn sorts_match_per_segment_sorts_on_every_distribution() {
    let mut rng = rng("sorts_match_per_segment_sorts_on_every_distribution");
    for (name, segs) in shapes(&mut rng) {
        for d in DISTS {
            let ks = keys(d, segs.len(), &mut rng);
            for order in [Order::Ascending, Order::Descending] {
                let want: Vec<u32> = pieces(&ks, &segs)
                    .into_iter()
                    .flat_map(|mut p| {
                        p.sort_unstable();
                        if order == Order::Descending {
                            p.reverse();
                        }
                        p
                    })
                    .collect();
                let mut got = ks.clone();
                segmented::sort(&mut got, &segs, order).unwrap();
                assert_eq!(got, want, "{name} {d:?} {order:?}");
                // Stable key-value: values are positions; equal keys keep ascending positions.
                let mut k = ks.clone();
                let mut v: Vec<u32> = (0..ks.len() as u32).collect();
                segmented::sort_by_key(&mut k, &mut v, &segs, order).unwrap();
                let want_pairs: Vec<(u32, u32)> = pieces(&ks, &segs)
                    .into_iter()
                    .zip(segs.offsets())
                    .flat_map(|(p, o)| {
                        let mut q: Vec<(u32, u32)> = p.into_iter().zip(o as u32..).collect();
                        q.sort_by_key(
                            |&(key, _)| if order == Order::Ascending { key as i64 } else { -(key as i64) },
                        );
                        q
                    })
                    .collect();
                assert_eq!(k.into_iter().zip(v).collect::<Vec<_>>(), want_pairs, "{name} {d:?} {order:?}");
            }
        }
    }
}

/// The oracle of a stable k-way split: each segment's classes in order, and the part lengths.
fn split_oracle<T: Copy>(
    xs: &[T],
    segs: &Segments,
    classes: usize,
    class: impl Fn(usize, &T) -> usize,
) -> (Vec<T>, Vec<usize>) {
    let (mut out, mut lens) = (Vec::new(), Vec::new());
    for (s, p) in pieces(xs, segs).into_iter().enumerate() {
        for c in 0..classes {
            let part: Vec<T> = p.iter().copied().filter(|x| class(s, x) == c).collect();
            lens.push(part.len());
            out.extend(part);
        }
    }
    (out, lens)
}

#[test]
fn partition_and_split3_are_stable_splits() {
    let mut rng = rng("partition_and_split3_are_stable_splits");
    let mut all = shapes(&mut rng);
    all.push(("long".into(), Segments::from_lengths(&[3, 70_001, 0, 65_536, 2]).unwrap()));
    for (name, segs) in all {
        for d in DISTS {
            let ks = keys(d, segs.len(), &mut rng);
            // Tag with positions so stability is visible.
            let xs: Vec<(u32, u32)> = ks.iter().copied().zip(0..).collect();
            let pred = |x: &(u32, u32)| x.0.is_multiple_of(3);
            let (want, lens) = split_oracle(&xs, &segs, 2, |_, x| usize::from(!pred(x)));
            let mut got = xs.clone();
            let parts = segmented::partition(&mut got, &segs, pred).unwrap();
            assert_eq!(got, want, "partition {name} {d:?}");
            assert_eq!(parts.lengths(), lens, "partition {name} {d:?}");
            assert_eq!(parts.len(), segs.len());

            // Pivots: a segment's own element where it has one, else anything.
            let pivots: Vec<(u32, u32)> = pieces(&xs, &segs)
                .iter()
                .map(
                    |p| if p.is_empty() { (5, 0) } else { (p[rng.random_range(0..p.len())].0, u32::MAX / 2) },
                )
                .collect();
            let key_class = |s: usize, x: &(u32, u32)| match x.0.cmp(&pivots[s].0) {
                std::cmp::Ordering::Less => 0,
                std::cmp::Ordering::Equal => 1,
                std::cmp::Ordering::Greater => 2,
            };
            // Split on keys alone: pair the pivot key with each element's own tag.
            let keys_only: Vec<u32> = ks.clone();
            let key_pivots: Vec<u32> = pivots.iter().map(|p| p.0).collect();
            let (want, lens) = split_oracle(&xs, &segs, 3, key_class);
            let mut got_keys = keys_only;
            let parts = segmented::split3(&mut got_keys, &segs, &key_pivots).unwrap();
            assert_eq!(got_keys, want.iter().map(|x| x.0).collect::<Vec<_>>(), "split3 {name} {d:?}");
            assert_eq!(parts.lengths(), lens, "split3 {name} {d:?}");
            // Stability through a PartialOrd type that compares keys only.
            let mut tagged: Vec<ByKey> = xs.iter().map(|&(k, t)| ByKey(k, t)).collect();
            let tagged_pivots: Vec<ByKey> = key_pivots.iter().map(|&k| ByKey(k, 0)).collect();
            segmented::split3(&mut tagged, &segs, &tagged_pivots).unwrap();
            assert_eq!(
                tagged.iter().map(|b| (b.0, b.1)).collect::<Vec<_>>(),
                want,
                "split3 stable {name} {d:?}"
            );
        }
    }
}

/// A key with a tag that comparisons ignore.
#[derive(Debug, Clone, Copy)]
struct ByKey(u32, u32);
impl PartialEq for ByKey {
    fn eq(&self, o: &Self) -> bool {
        self.0 == o.0
    }
}
impl PartialOrd for ByKey {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        self.0.partial_cmp(&o.0)
    }
}

#[test]
fn split3_sends_nan_to_the_third_part() {
    let mut xs = [1.0f64, f64::NAN, 0.5, 2.0];
    let parts = segmented::split3(&mut xs, &Segments::regular(4, 1), &[1.0]).unwrap();
    assert_eq!(parts.lengths(), [1, 1, 2]);
    assert_eq!((xs[0], xs[1]), (0.5, 1.0));
    assert!(xs[2].is_nan() && xs[3] == 2.0);
}

#[test]
fn compact_keeps_order_and_segments() {
    let mut rng = rng("compact_keeps_order_and_segments");
    let mut all = shapes(&mut rng);
    all.push(("long".into(), Segments::from_lengths(&[70_001, 0, 65_536, 2]).unwrap()));
    for (name, segs) in all {
        for p_keep in [0.0, 0.3, 1.0] {
            let xs = random_i64(segs.len(), &mut rng);
            let keep: Vec<bool> = (0..xs.len()).map(|_| rng.random_bool(p_keep)).collect();
            let (mut want, mut lens) = (Vec::new(), Vec::new());
            for (p, k) in pieces(&xs, &segs).into_iter().zip(pieces(&keep, &segs)) {
                let kept: Vec<i64> = p.into_iter().zip(k).filter(|(_, k)| *k).map(|(x, _)| x).collect();
                lens.push(kept.len());
                want.extend(kept);
            }
            let (got, out_segs) = segmented::compact(&xs, &keep, &segs).unwrap();
            assert_eq!(got, want, "{name} {p_keep}");
            assert_eq!(out_segs.lengths(), lens, "{name} {p_keep}");
        }
    }
}

#[test]
fn mismatched_lengths_are_errors_and_leave_data_alone() {
    let segs = Segments::from_lengths(&[2, 0, 3]).unwrap();
    let mut xs = vec![1i32, 2, 3, 4];
    let before = xs.clone();
    let mismatch = |r: Result<(), Error>| assert!(matches!(r, Err(Error::LengthMismatch { .. })), "{r:?}");
    mismatch(segmented::reduce(&xs, &segs, Add).map(drop));
    mismatch(segmented::inclusive_scan(&mut xs, &segs, Add));
    mismatch(segmented::exclusive_scan(&mut xs, &segs, Add));
    mismatch(segmented::reverse(&mut xs, &segs));
    mismatch(segmented::sort(&mut xs, &segs, Order::Ascending));
    mismatch(segmented::partition(&mut xs, &segs, |&x| x > 1).map(drop));
    mismatch(segmented::split3(&mut xs, &segs, &[1, 2, 3]).map(drop));
    mismatch(segmented::compact(&xs, &[true; 4], &segs).map(drop));
    assert_eq!(xs, before);
    // Right data length, wrong companion lengths.
    let mut ys = vec![5i32, 4, 3, 2, 1];
    mismatch(segmented::split3(&mut ys, &segs, &[1, 2]).map(drop));
    mismatch(segmented::compact(&ys, &[true; 4], &segs).map(drop));
    mismatch(segmented::sort_by_key(&mut ys, &mut [0u8; 4], &segs, Order::Ascending));
    assert_eq!(ys, [5, 4, 3, 2, 1]);
}

/// The digest's quicksort trace, written with the contract's calls exactly as a user would.
#[test]
fn quicksort_trace_with_the_catalogue() {
    let mut xs = vec![5, 3, 8, 1, 9, 2, 7];
    let segs = Segments::from_lengths(&[7]).unwrap();
    let pivot = |segs: &Segments, xs: &[i32]| -> Vec<i32> {
        let lo = segmented::reduce(xs, segs, Min).unwrap();
        let hi = segmented::reduce(xs, segs, Max).unwrap();
        lo.iter().zip(&hi).map(|(a, b)| (a + b).div_euclid(2)).collect()
    };
    assert_eq!(pivot(&segs, &xs), [5]);
    let round1 = segmented::split3(&mut xs, &segs, &[5]).unwrap();
    assert_eq!(xs, [3, 1, 2, 5, 8, 9, 7]);
    assert_eq!(round1.lengths(), [3, 1, 3]);
    // Round 2 splits the active segments (less and greater); `equal` is done.
    let active = Segments::from_lengths(&[3, 1, 3]).unwrap();
    let p = pivot(&active, &xs);
    assert_eq!((p[0], p[2]), (2, 8));
    let round2 = segmented::split3(&mut xs, &active, &[p[0], 5, p[2]]).unwrap();
    assert_eq!(xs, [1, 2, 3, 5, 7, 8, 9]);
    assert_eq!(round2.lengths(), [1, 1, 1, 0, 1, 0, 1, 1, 1]);
    // The empty-equal case: [1, 4] has pivot 2, which it does not hold.
    let mut ys = vec![1, 4];
    let one = Segments::from_lengths(&[2]).unwrap();
    assert_eq!(pivot(&one, &ys), [2]);
    let parts = segmented::split3(&mut ys, &one, &[2]).unwrap();
    assert_eq!(parts.lengths(), [1, 0, 1]);
    assert_eq!(ys, [1, 4]);
}
