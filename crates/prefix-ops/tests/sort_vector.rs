//! The vectorised CPU sort paths against the standard library's stable sort: the register
//! network of 64, 128 and 256 keys and the AVX2 quicksort above it (32-bit keys; 64-bit keys and
//! CPUs without AVX2 take the other paths, which these tests cover too), and the whole-array
//! sort's most-significant-digit scatter with skewed, narrow and constant keys. On AVX-512 CPUs
//! these run the AVX-512 network and partition; `HETKIT_SORT_ISA=avx2` (or `scalar`) runs the
//! same tests on the fallbacks.

mod sort_common;

use prefix_ops::sort::{self, Order, RADIX_PAR_MIN, SortTuning};
use proptest::prelude::*;
use rand::Rng;
use sort_common::*;

const ORDERS: [Order; 2] = [Order::Ascending, Order::Descending];

/// `sort::rows`, `sort::segments` and `sort::rows_by_key` against the oracle.
fn check_rows<K: TestKey>(rng: &mut impl Rng, row_len: usize, nrows: usize, shapes: &[Shape]) {
    for &shape in shapes {
        for order in ORDERS {
            let input: Vec<K> = make(rng, row_len * nrows, shape);
            let offsets = row_offsets(input.len(), row_len);
            let what = format!("{} rows {row_len} x {nrows} {shape:?} {order:?}", std::any::type_name::<K>());
            let mut want = input.clone();
            reference(&mut want, &offsets, order);
            let mut got = input.clone();
            sort::rows(&mut got, row_len, order).unwrap();
            assert_same_keys(&got, &want, &what);
            let mut seg = input.clone();
            sort::segments(&mut seg, &offsets, order).unwrap();
            assert_same_keys(&seg, &want, &format!("segments: {what}"));

            let vals: Vec<u32> = (0..input.len() as u32).collect();
            let (mut wk, mut wv) = (input.clone(), vals.clone());
            reference_pairs(&mut wk, &mut wv, &offsets, order);
            let (mut gk, mut gv) = (input, vals);
            sort::rows_by_key(&mut gk, &mut gv, row_len, order).unwrap();
            assert_same_keys(&gk, &wk, &what);
            assert_eq!(gv, wv, "values (stability): {what}");
        }
    }
}

#[test]
fn register_network_sizes_and_their_edges() {
    let mut rng = hetkit_testkit::rng("register_network_sizes_and_their_edges");
    for row_len in [33, 47, 63, 64, 65, 97, 127, 128, 129, 191, 251, 255, 256] {
        check_rows::<u32>(&mut rng, row_len, 3, &SHAPES);
        check_rows::<i32>(&mut rng, row_len, 3, &SHAPES);
        check_rows::<f32>(&mut rng, row_len, 3, &SHAPES);
    }
    check_rows::<f64>(&mut rng, 256, 2, &SHAPES);
    check_rows::<u64>(&mut rng, 97, 2, &SHAPES);
}

#[test]
fn quicksort_rows_above_the_network() {
    let mut rng = hetkit_testkit::rng("quicksort_rows_above_the_network");
    for row_len in [257, 263, 512, 1031, 4096] {
        check_rows::<u32>(&mut rng, row_len, 2, &SHAPES);
        check_rows::<i32>(&mut rng, row_len, 2, &SHAPES);
        check_rows::<f32>(&mut rng, row_len, 2, &SHAPES);
    }
    check_rows::<i64>(&mut rng, 1031, 2, &SHAPES);
}

/// `sort::rows_with` under every AVX-512 network threshold of the tuning space (on CPUs without
/// AVX-512 the threshold is ignored, and the same lengths cover the AVX2 paths).
#[test]
fn every_wide_network_threshold_sorts_rows() {
    let mut rng = hetkit_testkit::rng("every_wide_network_threshold_sorts_rows");
    for wide_net_min in [2, 65, 129, 193, 257] {
        let tuning = SortTuning { wide_net_min, ..SortTuning::DEFAULT };
        for row_len in [65, 96, 100, 128, 129, 192, 200, 256, 1031] {
            for &shape in &SHAPES {
                for order in ORDERS {
                    let input: Vec<f32> = make(&mut rng, row_len * 3, shape);
                    let mut want = input.clone();
                    reference(&mut want, &row_offsets(input.len(), row_len), order);
                    let mut got = input;
                    sort::rows_with(&mut got, row_len, order, &tuning).unwrap();
                    assert_same_keys(
                        &got,
                        &want,
                        &format!("wide {wide_net_min}, rows {row_len} {shape:?} {order:?}"),
                    );
                }
            }
        }
    }
}

/// Whole arrays past `RADIX_PAR_MIN` of `n` keys built by `f` from a random `u64` and the
/// position, against the oracle, keys and key-value.
fn check_whole<K: TestKey>(rng: &mut impl Rng, n: usize, what: &str, f: impl Fn(u64, usize) -> K) {
    for order in ORDERS {
        let input: Vec<K> = (0..n).map(|i| f(rng.random(), i)).collect();
        let what = format!("{} whole n={n} {what} {order:?}", std::any::type_name::<K>());
        let mut want = input.clone();
        reference(&mut want, &[0, n], order);
        let mut got = input.clone();
        sort::whole(&mut got, order);
        assert_same_keys(&got, &want, &what);

        let vals: Vec<u32> = (0..n as u32).collect();
        let (mut wk, mut wv) = (input.clone(), vals.clone());
        reference_pairs(&mut wk, &mut wv, &[0, n], order);
        let (mut gk, mut gv) = (input, vals);
        sort::whole_by_key(&mut gk, &mut gv, order).unwrap();
        assert_same_keys(&gk, &wk, &what);
        assert_eq!(gv, wv, "values (stability): {what}");
    }
}

#[test]
fn whole_arrays_skewed_narrow_and_constant() {
    let mut rng = hetkit_testkit::rng("whole_arrays_skewed_narrow_and_constant");
    let n = 2 * RADIX_PAR_MIN + 13;
    // Half the keys in one value: one bucket past the in-cache limit.
    check_whole::<u32>(&mut rng, n, "skewed", |r, i| if i % 2 == 0 { 7 } else { r as u32 });
    check_whole::<f32>(&mut rng, n, "skewed", |r, i| if i % 2 == 0 { -0.0 } else { (r as i32) as f32 });
    // Only the low bits vary: the digit moves down to them.
    check_whole::<u32>(&mut rng, n, "narrow", |r, _| 0x8000_0000 + (r % 5000) as u32);
    check_whole::<i64>(&mut rng, n, "narrow", |r, _| -3 - (r % 70_000) as i64);
    check_whole::<f32>(&mut rng, n, "constant", |_, _| 2.5);
    // Float bits skewed towards the top exponent: the scatter balances its buckets on 16 bits.
    let unit = |r: u64| (r >> 11) as f64 / (1u64 << 53) as f64;
    check_whole::<f32>(&mut rng, n, "uniform in [-1e6, 1e6)", |r, _| (unit(r) * 2e6 - 1e6) as f32);
    check_whole::<f64>(&mut rng, n, "uniform in [0, 1e6)", |r, _| unit(r) * 1e6);
    check_whole::<f32>(
        &mut rng,
        n,
        "few exponents",
        |r, i| if i % 3 == 0 { 1.0 } else { (r % 1000) as f32 * 1e-3 },
    );
    check_whole::<f64>(&mut rng, n, "edges", |r, _| f64::edges()[r as usize % f64::edges().len()]);
    check_whole::<i32>(&mut rng, n, "random", |r, _| r as i32);
    check_whole::<u64>(&mut rng, n, "random", |r, _| r);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn rows_of_tricky_f32_match_the_oracle(
        picks in prop::collection::vec(0usize..10, 0..1200),
        row_len in 33usize..600,
    ) {
        let edges = f32::edges();
        let n = picks.len() / row_len * row_len;
        let keys: Vec<f32> = picks[..n].iter().map(|&p| edges[p]).collect();
        for order in ORDERS {
            let mut want = keys.clone();
            reference(&mut want, &row_offsets(n, row_len), order);
            let mut got = keys.clone();
            sort::rows(&mut got, row_len, order).unwrap();
            prop_assert!(got.iter().zip(&want).all(|(g, w)| g.same(w)), "row_len {}", row_len);
        }
    }
}
