//! The applications on the segmented catalogue against independent oracles: the quicksort and
//! the bitonic sort against the standard library's sort on the six distributions, the CSR
//! product against a dense loop over the COO triplets.

mod segmented_common;

use hetkit_testkit::rng;
use prefix_ops::Error;
use prefix_ops::segmented::apps::{Csr, bitonic_sort, bitonic_sort_by_key, quicksort, quicksort_with};
use prefix_ops::segmented::{Order, SegmentedTuning};
use rand::Rng;
use segmented_common::{DISTS, keys};

#[test]
fn quicksort_sorts_every_distribution() {
    let mut rng = rng("quicksort_sorts_every_distribution");
    let never_switch = SegmentedTuning { quicksort_switch: usize::MAX, ..SegmentedTuning::DEFAULT };
    let early = SegmentedTuning { quicksort_switch: 4, ..SegmentedTuning::DEFAULT };
    for n in [0usize, 1, 2, 7, 100, 4099] {
        for d in DISTS {
            let ks = keys(d, n, &mut rng);
            let mut want = ks.clone();
            want.sort_unstable();
            let mut got = ks.clone();
            let report = quicksort_with(&mut got, &never_switch).unwrap();
            assert_eq!(got, want, "{d:?} n={n}");
            assert_eq!(report.switched_at, None);
            // Each round at least shrinks every active segment: at most n rounds, and keys
            // in [0, 2^31) halve their range per round.
            assert!(report.rounds <= n.min(33), "{d:?} n={n}: {report:?}");
            let mut got = ks.clone();
            quicksort_with(&mut got, &early).unwrap();
            assert_eq!(got, want, "{d:?} n={n} early switch");
            let mut got: Vec<i64> = ks.iter().map(|&k| k as i64 - (1 << 30)).collect();
            quicksort(&mut got).unwrap();
            assert_eq!(got, want.iter().map(|&k| k as i64 - (1 << 30)).collect::<Vec<_>>());
        }
    }
}

#[test]
fn quicksort_handles_extremes_and_floats() {
    let never = SegmentedTuning { quicksort_switch: usize::MAX, ..SegmentedTuning::DEFAULT };
    let mut ext = vec![u64::MAX, 0, u64::MAX - 1, 1, u64::MAX, 0];
    quicksort_with(&mut ext, &never).unwrap();
    assert_eq!(ext, [0, 0, 1, u64::MAX - 1, u64::MAX, u64::MAX]);
    let mut ints = vec![i32::MAX, i32::MIN, 0, -1, i32::MIN];
    quicksort_with(&mut ints, &never).unwrap();
    assert_eq!(ints, [i32::MIN, i32::MIN, -1, 0, i32::MAX]);
    let mut fs = vec![f32::INFINITY, 1.0, f32::NEG_INFINITY, -0.5, 1.0 + f32::EPSILON, f32::MAX, -f32::MAX];
    let mut want = fs.clone();
    want.sort_by(f32::total_cmp);
    quicksort_with(&mut fs, &never).unwrap();
    assert_eq!(fs, want);
    let mut nan = vec![1.0f64, f64::NAN];
    assert!(matches!(quicksort(&mut nan), Err(Error::Invalid(_))));
}

#[test]
fn bitonic_sorts_powers_of_two_keys_and_pairs() {
    let mut rng = rng("bitonic_sorts_powers_of_two_keys_and_pairs");
    for log_n in 0..=14 {
        let n = 1usize << log_n;
        for d in DISTS {
            let ks = keys(d, n, &mut rng);
            for order in [Order::Ascending, Order::Descending] {
                let mut want = ks.clone();
                want.sort_unstable();
                if order == Order::Descending {
                    want.reverse();
                }
                let mut got = ks.clone();
                bitonic_sort(&mut got, order).unwrap();
                assert_eq!(got, want, "n={n} {d:?} {order:?}");
                // Pairs: keys sorted, and the multiset of (key, value) pairs unchanged.
                let mut k = ks.clone();
                let mut v: Vec<u32> = (0..n as u32).collect();
                bitonic_sort_by_key(&mut k, &mut v, order).unwrap();
                assert_eq!(k, want);
                let mut got_pairs: Vec<(u32, u32)> = k.into_iter().zip(v).collect();
                let mut want_pairs: Vec<(u32, u32)> = ks.iter().copied().zip(0..).collect();
                got_pairs.sort_unstable();
                want_pairs.sort_unstable();
                assert_eq!(got_pairs, want_pairs);
            }
        }
    }
    let mut fs: Vec<f64> = (0..64).map(|_| rng.random_range(-1e3..1e3)).collect();
    let mut want = fs.clone();
    want.sort_by(f64::total_cmp);
    bitonic_sort(&mut fs, Order::Ascending).unwrap();
    assert_eq!(fs, want);
}

#[test]
fn bitonic_rejects_other_lengths() {
    assert!(matches!(bitonic_sort(&mut [3u32, 1, 2], Order::Ascending), Err(Error::Invalid(_))));
    assert!(matches!(
        bitonic_sort_by_key(&mut [3u32, 1], &mut [0u8], Order::Ascending),
        Err(Error::LengthMismatch { .. })
    ));
    let mut empty: [u32; 0] = [];
    bitonic_sort(&mut empty, Order::Ascending).unwrap();
}

/// `y = A x` by a dense loop over the triplets (duplicates add up).
fn dense_oracle(nrows: usize, rows: &[usize], cols: &[usize], vals: &[f64], x: &[f64]) -> Vec<f64> {
    let mut y = vec![0.0; nrows];
    for ((&r, &c), &v) in rows.iter().zip(cols).zip(vals) {
        y[r] += v * x[c];
    }
    y
}

#[test]
fn spmv_matches_a_dense_loop_on_banded_random_and_power_law_rows() {
    let mut rng = rng("spmv_matches_a_dense_loop_on_banded_random_and_power_law_rows");
    let tunings = [
        SegmentedTuning::DEFAULT,
        SegmentedTuning { task_elems: 3, reduce_split: 7, ..SegmentedTuning::DEFAULT },
    ];
    let (nrows, ncols): (usize, usize) = (301, 257);
    let banded: Vec<(usize, usize)> =
        (0..nrows).flat_map(|r| (r.saturating_sub(2)..(r + 3).min(ncols)).map(move |c| (r, c))).collect();
    let random: Vec<(usize, usize)> =
        (0..3000).map(|_| (rng.random_range(0..nrows), rng.random_range(0..ncols))).collect();
    // Power law: row r holds about ncols / (r + 1) entries; some rows are empty.
    let power: Vec<(usize, usize)> =
        (0..nrows).flat_map(|r| (0..ncols / (r + 1)).map(move |c| (r, (c * 7 + r) % ncols))).collect();
    for (name, entries) in [("banded", banded), ("random", random), ("power law", power)] {
        let mut entries = entries;
        // Shuffle the COO order; CSR conversion must not care.
        for i in (1..entries.len()).rev() {
            entries.swap(i, rng.random_range(0..=i));
        }
        let (rows, cols): (Vec<usize>, Vec<usize>) = entries.into_iter().unzip();
        let vals: Vec<f64> = (0..rows.len()).map(|_| rng.random_range(-1.0..1.0)).collect();
        let x: Vec<f64> = (0..ncols).map(|_| rng.random_range(-1.0..1.0)).collect();
        let want = dense_oracle(nrows, &rows, &cols, &vals, &x);
        let a = Csr::from_coo(nrows, ncols, &rows, &cols, &vals).unwrap();
        assert_eq!((a.nrows(), a.ncols(), a.nnz()), (nrows, ncols, rows.len()));
        let b = Csr::new(ncols, &a.rows().offsets(), a.cols().to_vec(), a.vals().to_vec()).unwrap();
        assert_eq!(a, b);
        for t in &tunings {
            let mut y = vec![f64::NAN; nrows];
            a.mul_vec_with(&x, &mut y, t).unwrap();
            for (r, (g, w)) in y.iter().zip(&want).enumerate() {
                assert!((g - w).abs() <= 1e-12 * (1.0 + w.abs()), "{name} row {r}: {g} vs {w}");
            }
        }
        // Integers: exact.
        let ivals: Vec<i64> = vals.iter().map(|v| (v * 100.0) as i64).collect();
        let ix: Vec<i64> = x.iter().map(|v| (v * 100.0) as i64).collect();
        let ai = Csr::from_coo(nrows, ncols, &rows, &cols, &ivals).unwrap();
        let mut iy = vec![0i64; nrows];
        ai.mul_vec(&ix, &mut iy).unwrap();
        let mut iwant = vec![0i64; nrows];
        for ((&r, &c), &v) in rows.iter().zip(&cols).zip(&ivals) {
            iwant[r] += v * ix[c];
        }
        assert_eq!(iy, iwant, "{name}");
    }
}

#[test]
fn spmv_rejects_bad_input() {
    assert!(matches!(Csr::from_coo(2, 2, &[0, 2], &[0, 1], &[1.0f32, 2.0]), Err(Error::Invalid(_))));
    assert!(matches!(Csr::from_coo(2, 2, &[0, 1], &[0, 2], &[1.0f32, 2.0]), Err(Error::Invalid(_))));
    assert!(matches!(Csr::from_coo(2, 2, &[0, 1], &[0], &[1.0f32, 2.0]), Err(Error::LengthMismatch { .. })));
    assert!(matches!(
        Csr::new(2, &[0, 1, 3], vec![0, 1], vec![1.0f32, 2.0]),
        Err(Error::LengthMismatch { .. })
    ));
    assert!(matches!(Csr::new(2, &[0, 2, 1], vec![0, 1], vec![1.0f32, 2.0]), Err(Error::InvalidOffsets(_))));
    let a = Csr::from_coo(2, 3, &[0, 1], &[0, 2], &[1.0f32, 2.0]).unwrap();
    let mut y = [0.0f32; 2];
    assert!(matches!(a.mul_vec(&[1.0, 1.0], &mut y), Err(Error::LengthMismatch { .. })));
    assert!(matches!(a.mul_vec(&[1.0, 1.0, 1.0], &mut [0.0; 3]), Err(Error::LengthMismatch { .. })));
    a.mul_vec(&[1.0, 5.0, 3.0], &mut y).unwrap();
    assert_eq!(y, [1.0, 6.0]);
}
