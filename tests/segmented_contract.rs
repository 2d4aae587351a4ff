//! Issue 23's contract, through the facade under the names the issue writes:
//! `hetkit::prefix::segmented::{Segments, reduce, inclusive_scan, exclusive_scan, reverse, sort,
//! sort_by_key, partition, split3, compact}` and the re-exported `Add, Mul, Min, Max, Monoid,
//! Order`, each checked against a per-segment loop written here.

use hetkit::prefix::segmented::{self, Add, Max, Min, Monoid, Mul, Order, Segments};

/// Irregular with empty segments, on 10 elements.
fn irregular() -> Segments {
    Segments::from_offsets(&[0, 3, 3, 4, 10, 10]).unwrap()
}

const XS: [i32; 10] = [4, -2, 7, 5, 9, 1, -3, 8, 0, 2];

#[test]
fn descriptors_and_accessors() -> hetkit::Result<()> {
    let s = irregular();
    assert_eq!((s.num_segments(), s.len()), (5, 10));
    assert_eq!(s.offsets(), [0, 3, 3, 4, 10, 10]);
    assert_eq!(s.lengths(), [3, 0, 1, 6, 0]);
    assert_eq!(s.segment_ids(), [0, 0, 0, 2, 3, 3, 3, 3, 3, 3]);
    assert_eq!(s.head_flags(), [true, false, false, true, true, false, false, false, false, false]);
    assert_eq!(Segments::from_lengths(&[3, 0, 1, 6, 0])?, s);
    let r = Segments::regular(5, 2);
    assert_eq!((r.num_segments(), r.len(), r.offsets()), (2, 10, vec![0, 5, 10]));
    let f = Segments::from_head_flags(&[true, false, false, true, false, true, true, false])?;
    assert_eq!(
        (f.segment_ids(), f.offsets(), f.lengths()),
        (vec![0, 0, 0, 1, 1, 2, 3, 3], vec![0, 3, 5, 6, 8], vec![3, 2, 1, 2])
    );
    // Malformed input is an error, in the facade's one error type.
    let bad: hetkit::Result<Segments> = Segments::from_offsets(&[0, 5, 2]).map_err(Into::into);
    assert!(matches!(bad, Err(hetkit::Error::Prefix(_))));
    assert!(Segments::from_head_flags(&[false]).is_err());
    Ok(())
}

fn per_segment<R>(segs: &Segments, f: impl Fn(&[i32]) -> R) -> Vec<R> {
    segs.offsets().windows(2).map(|w| f(&XS[w[0]..w[1]])).collect()
}

fn fold<M: Monoid<i32>>(op: M) -> impl Fn(&[i32]) -> i32 {
    move |p| p.iter().fold(op.identity(), |a, &x| op.combine(a, x))
}

#[test]
fn the_catalogue_against_per_segment_loops() -> hetkit::Result<()> {
    for segs in [irregular(), Segments::regular(5, 2), Segments::regular(1, 10)] {
        assert_eq!(segmented::reduce(&XS, &segs, Add)?, per_segment(&segs, fold(Add)));
        assert_eq!(segmented::reduce(&XS, &segs, Mul)?, per_segment(&segs, fold(Mul)));
        assert_eq!(segmented::reduce(&XS, &segs, Min)?, per_segment(&segs, fold(Min)));
        assert_eq!(segmented::reduce(&XS, &segs, Max)?, per_segment(&segs, fold(Max)));

        let flat = |parts: Vec<Vec<i32>>| parts.concat();
        let mut xs = XS;
        segmented::inclusive_scan(&mut xs, &segs, Add)?;
        assert_eq!(
            xs.to_vec(),
            flat(per_segment(&segs, |p| p
                .iter()
                .scan(0, |a, &x| {
                    *a += x;
                    Some(*a)
                })
                .collect()))
        );
        let mut xs = XS;
        segmented::exclusive_scan(&mut xs, &segs, Add)?;
        assert_eq!(
            xs.to_vec(),
            flat(per_segment(&segs, |p| p
                .iter()
                .scan(0, |a, &x| {
                    let e = *a;
                    *a += x;
                    Some(e)
                })
                .collect()))
        );
        let mut xs = XS;
        segmented::reverse(&mut xs, &segs)?;
        assert_eq!(xs.to_vec(), flat(per_segment(&segs, |p| p.iter().rev().copied().collect())));
        let mut xs = XS;
        segmented::sort(&mut xs, &segs, Order::Descending)?;
        assert_eq!(
            xs.to_vec(),
            flat(per_segment(&segs, |p| {
                let mut q = p.to_vec();
                q.sort_by(|a, b| b.cmp(a));
                q
            }))
        );

        // Stable key-value sort: keys by parity, values are positions.
        let mut keys: Vec<u32> = XS.iter().map(|&x| x.rem_euclid(2) as u32).collect();
        let mut vals: Vec<usize> = (0..10).collect();
        segmented::sort_by_key(&mut keys, &mut vals, &segs, Order::Ascending)?;
        let want: Vec<usize> = segs
            .offsets()
            .windows(2)
            .flat_map(|w| {
                let mut q: Vec<usize> = (w[0]..w[1]).collect();
                q.sort_by_key(|&i| XS[i].rem_euclid(2));
                q
            })
            .collect();
        assert_eq!(vals, want);

        let mut xs = XS;
        let parts = segmented::partition(&mut xs, &segs, |&x| x > 2)?;
        assert_eq!(parts.num_segments(), 2 * segs.num_segments());
        let want = per_segment(&segs, |p| {
            let (a, b): (Vec<i32>, Vec<i32>) = p.iter().partition(|&&x| x > 2);
            (a, b)
        });
        assert_eq!(
            xs.to_vec(),
            want.iter().flat_map(|(a, b)| a.iter().chain(b).copied()).collect::<Vec<_>>()
        );
        assert_eq!(parts.lengths(), want.iter().flat_map(|(a, b)| [a.len(), b.len()]).collect::<Vec<_>>());

        let pivots: Vec<i32> = (0..segs.num_segments() as i32).collect();
        let mut xs = XS;
        let parts = segmented::split3(&mut xs, &segs, &pivots)?;
        assert_eq!(parts.num_segments(), 3 * segs.num_segments());
        let mut want = Vec::new();
        let mut lens = Vec::new();
        for (s, w) in segs.offsets().windows(2).enumerate() {
            let p = &XS[w[0]..w[1]];
            let class = |x: i32| (x >= pivots[s]) as usize + (x > pivots[s]) as usize;
            for c in 0..3 {
                let part: Vec<i32> = p.iter().copied().filter(|&x| class(x) == c).collect();
                lens.push(part.len());
                want.extend(part);
            }
        }
        assert_eq!((xs.to_vec(), parts.lengths()), (want, lens));

        let keep: Vec<bool> = XS.iter().map(|&x| x >= 0).collect();
        let (kept, ksegs) = segmented::compact(&XS, &keep, &segs)?;
        assert_eq!(kept, XS.iter().copied().filter(|&x| x >= 0).collect::<Vec<_>>());
        assert_eq!(ksegs.lengths(), per_segment(&segs, |p| p.iter().filter(|&&x| x >= 0).count()));
    }
    Ok(())
}

#[test]
fn length_mismatches_are_errors_never_panics() {
    let segs = irregular();
    let mut short = [1i32; 9];
    assert!(segmented::reduce(&short, &segs, Add).is_err());
    assert!(segmented::inclusive_scan(&mut short, &segs, Add).is_err());
    assert!(segmented::exclusive_scan(&mut short, &segs, Add).is_err());
    assert!(segmented::reverse(&mut short, &segs).is_err());
    assert!(segmented::sort(&mut short, &segs, Order::Ascending).is_err());
    assert!(segmented::partition(&mut short, &segs, |_| true).is_err());
    let mut xs = XS;
    assert!(segmented::sort_by_key(&mut xs, &mut [0u8; 9], &segs, Order::Ascending).is_err());
    assert!(segmented::split3(&mut xs, &segs, &[0; 4]).is_err());
    assert!(segmented::compact(&XS, &[true; 9], &segs).is_err());
    assert_eq!(xs, XS);
    let e: hetkit::Error = segmented::reduce(&short, &segs, Add).unwrap_err().into();
    assert!(matches!(e, hetkit::Error::Prefix(_)));
}

/// The recursion-free quicksort written with the contract's calls, as external programs will.
#[test]
fn quicksort_as_a_short_loop() -> hetkit::Result<()> {
    let mut xs = vec![5, 3, 8, 1, 9, 2, 7, 5, 5, 0, 100, -4];
    let mut want = xs.clone();
    want.sort_unstable();
    let mut segs = Segments::from_lengths(&[xs.len()])?;
    let mut active = vec![true];
    while active.iter().any(|&a| a) {
        let lo = segmented::reduce(&xs, &segs, Min)?;
        let hi = segmented::reduce(&xs, &segs, Max)?;
        let pivots: Vec<i32> = lo.iter().zip(&hi).map(|(a, b): (&i32, &i32)| (a + b).div_euclid(2)).collect();
        let parts = segmented::split3(&mut xs, &segs, &pivots)?;
        let lens = parts.lengths();
        active = (0..lens.len()).map(|p| active[p / 3] && p % 3 != 1 && lens[p] > 1).collect();
        segs = parts;
    }
    assert_eq!(xs, want);
    Ok(())
}

/// `Segments::regular(seg_len, nseg)` is listed without `Result`: it cannot fail. A request no
/// data can match (the total overflows, or more than `u32::MAX` segments) gives a descriptor
/// every operation rejects with an error, never a panic.
#[test]
fn regular_is_infallible_and_unmatchable_requests_are_errors() {
    let segs: Segments = Segments::regular(0, 3);
    assert_eq!((segs.num_segments(), segs.len(), segs.lengths()), (3, 0, vec![0, 0, 0]));
    assert_eq!(segmented::reduce(&[] as &[i32], &segs, Add).unwrap(), [0, 0, 0]);
    let huge = Segments::regular(usize::MAX, 2);
    let mut xs = XS;
    assert!(segmented::reduce(&xs, &huge, Add).is_err());
    assert!(segmented::inclusive_scan(&mut xs, &huge, Add).is_err());
    assert!(segmented::split3(&mut xs, &huge, &[0, 0]).is_err());
    assert_eq!(xs, XS);
}
