//! Each CPU sort path against the standard library's stable sort: the AVX2 register network
//! (groups of eight rows and the leftover rows), the one-thread radix sort per row (around
//! `RADIX_ROW_MIN`), the parallel radix sort (around `RADIX_PAR_MIN`, on more threads than the
//! machine has, so chunks and buckets split unevenly), and the key-value variants (values riding
//! with their keys, and large values gathered by position).

mod sort_common;

use prefix_ops::sort::{self, COARSE_MIN_LEN, NETWORK_MAX_LEN, Order, RADIX_PAR_MIN, RADIX_ROW_MIN};
use proptest::prelude::*;
use rand::Rng;
use sort_common::*;

const ORDERS: [Order; 2] = [Order::Ascending, Order::Descending];

/// `sort::rows` and `sort::rows_by_key` against the oracle on every shape and order.
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

/// `sort::whole` and both `sort::whole_by_key` paths (small values ride along; values larger
/// than a `u64` are gathered by position) against the oracle.
fn check_whole<K: TestKey>(rng: &mut impl Rng, n: usize, shapes: &[Shape]) {
    for &shape in shapes {
        for order in ORDERS {
            let input: Vec<K> = make(rng, n, shape);
            let offsets = vec![0, n];
            let what = format!("{} whole n={n} {shape:?} {order:?}", std::any::type_name::<K>());
            let mut want = input.clone();
            reference(&mut want, &offsets, order);
            let mut got = input.clone();
            sort::whole(&mut got, order);
            assert_same_keys(&got, &want, &what);

            let small: Vec<u32> = (0..n as u32).collect();
            let (mut wk, mut wv) = (input.clone(), small.clone());
            reference_pairs(&mut wk, &mut wv, &offsets, order);
            let (mut gk, mut gv) = (input.clone(), small);
            sort::whole_by_key(&mut gk, &mut gv, order).unwrap();
            assert_same_keys(&gk, &wk, &what);
            assert_eq!(gv, wv, "small values (stability): {what}");

            let large: Vec<[u64; 3]> = (0..n as u64).map(|i| [i, !i, i * 3]).collect();
            let (mut gk, mut gl) = (input, large);
            sort::whole_by_key(&mut gk, &mut gl, order).unwrap();
            assert_same_keys(&gk, &wk, &what);
            assert!(gl.iter().zip(&wv).all(|(l, &v)| *l == [v as u64, !(v as u64), v as u64 * 3]), "{what}");
        }
    }
}

/// Runs `f` on a pool of `threads` threads (more than the test machine's cores, so the parallel
/// sort's chunks are uneven and small).
fn on_threads(threads: usize, f: impl FnOnce() + Send) {
    rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(f);
}

#[test]
fn register_network_groups_of_eight_rows_and_leftovers() {
    let mut rng = hetkit_testkit::rng("register_network_groups_of_eight_rows_and_leftovers");
    for row_len in 1..=NETWORK_MAX_LEN {
        // 19 rows: two groups of eight, three rows through the scalar network.
        check_rows::<u32>(&mut rng, row_len, 19, &SHAPES);
        check_rows::<i32>(&mut rng, row_len, 19, &SHAPES);
        check_rows::<f32>(&mut rng, row_len, 19, &SHAPES);
    }
    // Many rows: several rayon tasks of whole groups.
    check_rows::<f32>(&mut rng, 32, 2000, &[Shape::Random, Shape::Edges]);
    check_rows::<u64>(&mut rng, 17, 100, &[Shape::Random, Shape::Edges]);
}

#[test]
fn radix_sort_per_row_around_its_threshold() {
    let mut rng = hetkit_testkit::rng("radix_sort_per_row_around_its_threshold");
    for row_len in [RADIX_ROW_MIN - 1, RADIX_ROW_MIN, RADIX_ROW_MIN + 1, 3 * RADIX_ROW_MIN + 5] {
        check_rows::<u32>(&mut rng, row_len, 4, &SHAPES);
        check_rows::<i32>(&mut rng, row_len, 4, &SHAPES);
        check_rows::<f32>(&mut rng, row_len, 4, &SHAPES);
        check_rows::<u64>(&mut rng, row_len, 4, &SHAPES);
        check_rows::<i64>(&mut rng, row_len, 4, &SHAPES);
        check_rows::<f64>(&mut rng, row_len, 4, &SHAPES);
    }
}

#[test]
fn parallel_radix_sort_of_whole_arrays() {
    let shapes = [Shape::Random, Shape::Sorted, Shape::AllEqual, Shape::FewDistinct, Shape::Edges];
    on_threads(3, || {
        let mut rng = hetkit_testkit::rng("parallel_radix_sort_of_whole_arrays");
        for n in [RADIX_PAR_MIN - 1, RADIX_PAR_MIN, 2 * RADIX_PAR_MIN + 7] {
            check_whole::<u32>(&mut rng, n, &shapes);
            check_whole::<i32>(&mut rng, n, &shapes);
            check_whole::<f32>(&mut rng, n, &shapes);
            check_whole::<u64>(&mut rng, n, &shapes);
            check_whole::<i64>(&mut rng, n, &shapes);
            check_whole::<f64>(&mut rng, n, &shapes);
        }
    });
}

/// Whole arrays long enough for the coarse scatter (2^8 buckets, each sorted in L2 by a second
/// digit), on more threads than the machine has, every shape and both orders; floats uniform in
/// `[-1e6, 1e6]` (skewed: balanced buckets) and `[0, 1)` with a few NaNs.
#[test]
fn coarse_scatter_of_long_whole_arrays() {
    on_threads(3, || {
        let mut rng = hetkit_testkit::rng("coarse_scatter_of_long_whole_arrays");
        let n = COARSE_MIN_LEN + 12_345;
        for order in ORDERS {
            for shape in SHAPES {
                check_keys::<u32>(make(&mut rng, n, shape), order);
            }
            check_keys::<i32>(make(&mut rng, n, Shape::Random), order);
            check_keys::<f32>(make(&mut rng, n, Shape::Edges), order);
            check_keys::<f32>((0..n).map(|_| rng.random_range(-1.0e6f32..1.0e6)).collect(), order);
            let unit = (0..n).map(|i| if i % 997 == 0 { f32::NAN } else { rng.random::<f32>() });
            check_keys::<f32>(unit.collect(), order);
        }
    });
}

/// `sort::whole` of `input` against the oracle.
fn check_keys<K: TestKey>(input: Vec<K>, order: Order) {
    let n = input.len();
    let mut want = input.clone();
    reference(&mut want, &[0, n], order);
    let mut got = input;
    sort::whole(&mut got, order);
    assert_same_keys(&got, &want, &format!("{} whole n={n} {order:?}", std::any::type_name::<K>()));
}

/// Keys whose top varying digit leaves most of them in one bucket: floats spread uniformly over
/// `[0, 1e6)` (half of them share one exponent), and integers of which nine in ten share their
/// top twelve bits; the big buckets are scattered again on the digits below.
#[test]
fn skewed_whole_arrays_sort_their_big_buckets_by_lower_digits() {
    on_threads(3, || {
        let mut rng = hetkit_testkit::rng("skewed_whole_arrays");
        let n = 300_007;
        let floats: Vec<f32> = (0..n).map(|_| rng.random_range(0.0f32..1.0e6)).collect();
        let ints: Vec<u64> = (0..n)
            .map(|i| {
                let low: u64 = rng.random_range(0..1u64 << 40);
                if i % 10 == 0 { rng.random() } else { 0xABC0_0000_0000_0000 | low }
            })
            .collect();
        for order in [Order::Ascending, Order::Descending] {
            let mut got = floats.clone();
            sort::whole(&mut got, order);
            let mut want = floats.clone();
            want.sort_by(f32::total_cmp);
            if order.is_descending() {
                want.reverse();
            }
            assert!(got.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()), "f32 {order:?}");
            let mut got = ints.clone();
            sort::whole(&mut got, order);
            let mut want = ints.clone();
            want.sort_unstable();
            if order.is_descending() {
                want.reverse();
            }
            assert_eq!(got, want, "u64 {order:?}");
        }
    });
}

#[test]
fn few_long_rows_and_segments_sort_in_parallel() {
    on_threads(2, || {
        let mut rng = hetkit_testkit::rng("few_long_rows_and_segments_sort_in_parallel");
        check_rows::<f32>(&mut rng, RADIX_PAR_MIN + 3, 2, &[Shape::Random, Shape::Edges]);
        check_rows::<i64>(&mut rng, RADIX_PAR_MIN, 1, &[Shape::Random, Shape::FewDistinct]);
        let n = 3 * RADIX_PAR_MIN;
        let offsets = [0, 5, RADIX_PAR_MIN + 9, RADIX_PAR_MIN + 300, n - 1, n];
        for order in ORDERS {
            let input: Vec<f64> = make(&mut rng, n, Shape::Edges);
            let mut want = input.clone();
            reference(&mut want, &offsets, order);
            let mut got = input;
            sort::segments(&mut got, &offsets, order).unwrap();
            assert_same_keys(&got, &want, &format!("segments {order:?}"));
        }
    });
}

/// Keys drawn from a small pool with NaNs of both signs, both zeros and infinities, so that
/// short random vectors are full of ties.
fn tricky_f64() -> impl Strategy<Value = f64> {
    prop::sample::select(vec![
        f64::NAN,
        -f64::NAN,
        -0.0,
        0.0,
        1.0,
        -1.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        2.5,
    ])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn whole_by_key_matches_the_stable_oracle(keys in prop::collection::vec(tricky_f64(), 0..100), desc: bool) {
        let order = if desc { Order::Descending } else { Order::Ascending };
        let n = keys.len();
        let vals: Vec<u16> = (0..n as u16).collect();
        let (mut wk, mut wv) = (keys.clone(), vals.clone());
        reference_pairs(&mut wk, &mut wv, &[0, n], order);
        let (mut gk, mut gv) = (keys, vals);
        sort::whole_by_key(&mut gk, &mut gv, order).unwrap();
        assert_same_keys(&gk, &wk, "proptest whole_by_key");
        prop_assert_eq!(gv, wv);
    }

    #[test]
    fn rows_of_u32_match_the_oracle(bits in prop::collection::vec(0u32..6, 0..100), row_len in 1usize..40) {
        let n = bits.len() / row_len * row_len;
        let keys: Vec<u32> = bits[..n].iter().map(|&b| b.wrapping_mul(0x9E37_79B9)).collect();
        for order in ORDERS {
            let mut want = keys.clone();
            reference(&mut want, &row_offsets(n, row_len), order);
            let mut got = keys.clone();
            sort::rows(&mut got, row_len, order).unwrap();
            prop_assert_eq!(&got, &want);
        }
    }
}
