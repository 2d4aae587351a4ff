//! CPU sorts against the standard library's sort on every input shape, key type and order.

mod sort_common;

use prefix_ops::Error;
use prefix_ops::sort::{self, Order};
use rand::Rng;
use sort_common::*;

fn check_rows<K: TestKey>(rng: &mut impl Rng, row_len: usize, nrows: usize) {
    for shape in SHAPES {
        for order in [Order::Ascending, Order::Descending] {
            let input: Vec<K> = make(rng, row_len * nrows, shape);
            let offsets = row_offsets(input.len(), row_len);
            let mut want = input.clone();
            reference(&mut want, &offsets, order);
            let mut got = input.clone();
            sort::rows(&mut got, row_len, order).unwrap();
            assert_same_keys(&got, &want, &format!("rows {row_len} x {nrows} {shape:?} {order:?}"));

            let vals: Vec<u32> = (0..input.len() as u32).collect();
            let (mut wk, mut wv) = (input.clone(), vals.clone());
            reference_pairs(&mut wk, &mut wv, &offsets, order);
            let (mut gk, mut gv) = (input, vals);
            sort::rows_by_key(&mut gk, &mut gv, row_len, order).unwrap();
            assert_same_keys(&gk, &wk, &format!("rows_by_key {row_len} {shape:?} {order:?}"));
            assert_eq!(gv, wv, "rows_by_key values (stability) {row_len} {shape:?} {order:?}");
        }
    }
}

fn all_types(rng: &mut impl Rng, row_len: usize, nrows: usize) {
    check_rows::<u32>(rng, row_len, nrows);
    check_rows::<i32>(rng, row_len, nrows);
    check_rows::<f32>(rng, row_len, nrows);
    check_rows::<u64>(rng, row_len, nrows);
    check_rows::<i64>(rng, row_len, nrows);
    check_rows::<f64>(rng, row_len, nrows);
}

#[test]
fn rows_of_every_length_up_to_64() {
    let mut rng = hetkit_testkit::rng("rows_of_every_length_up_to_64");
    for row_len in 1..=64 {
        all_types(&mut rng, row_len, 5);
    }
}

#[test]
fn rows_of_awkward_lengths() {
    let mut rng = hetkit_testkit::rng("rows_of_awkward_lengths");
    for row_len in [65, 127, 128, 129, 255, 257, 1000, 4095, 4097] {
        all_types(&mut rng, row_len, 3);
    }
}

#[test]
fn few_long_rows_use_the_parallel_sort() {
    let mut rng = hetkit_testkit::rng("few_long_rows_use_the_parallel_sort");
    check_rows::<f32>(&mut rng, 40_000, 2);
    check_rows::<i64>(&mut rng, 33_000, 1);
}

#[test]
fn segments_with_empty_and_long_ones() {
    let mut rng = hetkit_testkit::rng("segments_with_empty_and_long_ones");
    for (n, max_len) in [(0, 4), (1, 1), (1000, 9), (5000, 300), (100_000, 40_000)] {
        for order in [Order::Ascending, Order::Descending] {
            let offsets = random_offsets(&mut rng, n, max_len);
            let input: Vec<f64> = make(&mut rng, n, Shape::Random);
            let mut want = input.clone();
            reference(&mut want, &offsets, order);
            let mut got = input.clone();
            sort::segments(&mut got, &offsets, order).unwrap();
            assert_same_keys(&got, &want, &format!("segments n={n} {order:?}"));

            let vals: Vec<u64> = (0..n as u64).collect();
            let few: Vec<i32> = make(&mut rng, n, Shape::FewDistinct);
            let (mut wk, mut wv) = (few.clone(), vals.clone());
            reference_pairs(&mut wk, &mut wv, &offsets, order);
            let (mut gk, mut gv) = (few, vals);
            sort::segments_by_key(&mut gk, &mut gv, &offsets, order).unwrap();
            assert_same_keys(&gk, &wk, "segments_by_key keys");
            assert_eq!(gv, wv, "segments_by_key values n={n} {order:?}");
        }
    }
}

#[test]
fn whole_arrays_small_and_parallel() {
    let mut rng = hetkit_testkit::rng("whole_arrays_small_and_parallel");
    for n in [0usize, 1, 2, 31, 64, 65, 1025, 50_001] {
        for shape in [Shape::Random, Shape::FewDistinct, Shape::Edges] {
            for order in [Order::Ascending, Order::Descending] {
                let input: Vec<f32> = make(&mut rng, n, shape);
                let offsets = vec![0, n];
                let mut want = input.clone();
                reference(&mut want, &offsets, order);
                let mut got = input.clone();
                sort::whole(&mut got, order);
                assert_same_keys(&got, &want, &format!("whole n={n} {shape:?} {order:?}"));

                let vals: Vec<u32> = (0..n as u32).collect();
                let (mut wk, mut wv) = (input.clone(), vals.clone());
                reference_pairs(&mut wk, &mut wv, &offsets, order);
                let (mut gk, mut gv) = (input, vals);
                sort::whole_by_key(&mut gk, &mut gv, order).unwrap();
                assert_same_keys(&gk, &wk, "whole_by_key keys");
                assert_eq!(gv, wv, "whole_by_key values n={n} {shape:?} {order:?}");
            }
        }
    }
}

#[test]
fn nans_sort_last_and_zeros_in_sign_order() {
    let mut k = vec![f32::NAN, 1.0, -0.0, f32::NEG_INFINITY, 0.0, -f32::NAN, f32::INFINITY, -1.0];
    sort::rows(&mut k, 8, Order::Ascending).unwrap();
    assert_eq!(k[..3], [f32::NEG_INFINITY, -1.0, -0.0]);
    assert!(k[2].is_sign_negative() && k[3].is_sign_positive() && k[3] == 0.0);
    assert_eq!(k[4..6], [1.0, f32::INFINITY]);
    assert!(k[6].is_nan() && k[6].is_sign_positive() && k[7].is_nan() && k[7].is_sign_negative());
    sort::rows(&mut k, 8, Order::Descending).unwrap();
    assert!(k[0].is_nan() && k[1].is_nan() && k[7] == f32::NEG_INFINITY);
}

#[test]
fn bad_input_is_an_error() {
    let mut k = vec![1u32, 2, 3, 4, 5, 6];
    let mut v = vec![0u32; 5];
    assert!(matches!(
        sort::rows_by_key(&mut k, &mut v, 3, Order::Ascending),
        Err(Error::LengthMismatch { .. })
    ));
    assert!(matches!(
        sort::whole_by_key(&mut k, &mut v, Order::Ascending),
        Err(Error::LengthMismatch { .. })
    ));
    assert!(matches!(
        sort::segments_by_key(&mut k, &mut v, &[0, 6], Order::Ascending),
        Err(Error::LengthMismatch { .. })
    ));
    assert!(matches!(
        sort::rows(&mut k, 4, Order::Ascending),
        Err(Error::InvalidRows { len: 6, row_len: 4 })
    ));
    assert!(matches!(sort::rows(&mut k, 0, Order::Ascending), Err(Error::InvalidRows { .. })));
    // The offsets convention of prefix_ops::segments: start at 0, never decrease, end at len.
    for bad in [&[][..], &[0], &[0, 4, 2, 6], &[0, 7], &[2, 6], &[0, 5]] {
        assert!(
            matches!(sort::segments(&mut k, bad, Order::Ascending), Err(Error::InvalidOffsets(_))),
            "{bad:?}"
        );
    }
    assert_eq!(k, [1, 2, 3, 4, 5, 6], "a rejected call leaves the keys alone");
    sort::rows(&mut Vec::<u32>::new(), 0, Order::Ascending).unwrap();
    sort::segments(&mut Vec::<u32>::new(), &[0], Order::Ascending).unwrap();
    sort::segments(&mut Vec::<u32>::new(), &[0, 0, 0], Order::Ascending).unwrap();
}
