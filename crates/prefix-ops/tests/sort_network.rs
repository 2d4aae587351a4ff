//! The bitonic comb network and the GPU kernel's schedule, checked by the 0-1 principle
//! (exhaustively at 16 keys) and on random rows up to 2^15 keys.

mod sort_common;

use prefix_ops::sort::{Order, emulate, network};
use rand::Rng;
use sort_common::*;

/// All 2^16 binary inputs of 16 keys, through `run`; the 0-1 principle says a comparator
/// network that sorts all of them sorts every input.
fn zero_one_16(run: impl Fn(&mut [u32])) {
    for bits in 0u32..1 << 16 {
        let mut a: Vec<u32> = (0..16).map(|i| (bits >> i) & 1).collect();
        run(&mut a);
        let ones = bits.count_ones() as usize;
        assert!(
            a[..16 - ones].iter().all(|&x| x == 0) && a[16 - ones..].iter().all(|&x| x == 1),
            "input {bits:#06x}: {a:?}"
        );
    }
}

#[test]
fn cpu_network_passes_the_zero_one_principle_at_16() {
    zero_one_16(network::sort_bits::<u32>);
}

#[test]
fn comb_layers_pass_the_zero_one_principle_at_16() {
    let layers = network::comb_layers(4);
    zero_one_16(|a| {
        for layer in &layers {
            for &(i, j) in layer {
                if a[i] > a[j] {
                    a.swap(i, j);
                }
            }
        }
    });
}

#[test]
fn gpu_schedule_passes_the_zero_one_principle_at_16() {
    for tagged in [false, true] {
        zero_one_16(|a| {
            let mut row: Vec<(u32, u32)> = a.iter().enumerate().map(|(i, &x)| (x, i as u32)).collect();
            emulate::bmcs_row(&mut row, tagged);
            for (x, (k, _)) in a.iter_mut().zip(row) {
                *x = k;
            }
        });
    }
}

/// Random 0-1 inputs at the sizes where the shared-memory (radix-2 and radix-4) rounds run:
/// 2^8 (one radix-2 round), 2^9 (one radix-4), 2^10 .. 2^15.
#[test]
fn gpu_schedule_sorts_random_binary_rows_with_shared_rounds() {
    let mut rng = hetkit_testkit::rng("gpu_schedule_sorts_random_binary_rows_with_shared_rounds");
    for log_n in 5..=15u32 {
        let n = 1usize << log_n;
        let trials = if log_n <= 10 { 40 } else { 4 };
        for _ in 0..trials {
            let p: f64 = rng.random_range(0.0..1.0);
            let mut row: Vec<(u32, u32)> = (0..n).map(|i| (rng.random_bool(p) as u32, i as u32)).collect();
            emulate::bmcs_row(&mut row, false);
            assert!(row.windows(2).all(|w| w[0].0 <= w[1].0), "2^{log_n} not sorted");
        }
    }
}

/// The whole per-row procedure of the kernel (padding, descending flip, tags, value gather)
/// against the oracle, for every length 1..=64 and larger awkward ones.
#[test]
fn gpu_kernel_row_model_matches_the_oracle() {
    let mut rng = hetkit_testkit::rng("gpu_kernel_row_model_matches_the_oracle");
    let lens: Vec<usize> = (1..=64).chain([100, 255, 256, 257, 513, 1000, 4095, 4097]).collect();
    for len in lens {
        let log_n = len.max(4).next_power_of_two().trailing_zeros();
        for shape in SHAPES {
            for order in [Order::Ascending, Order::Descending] {
                let input: Vec<f32> = make(&mut rng, len, shape);
                let vals: Vec<u32> = (0..len as u32).collect();
                let (mut wk, mut wv) = (input.clone(), vals.clone());
                reference_pairs(&mut wk, &mut wv, &[0, len], order);
                let (mut gk, mut gv) = (input.clone(), vals);
                emulate::bmcs_kernel_row(&mut gk, Some(&mut gv), log_n, order.is_descending());
                assert_same_keys(&gk, &wk, &format!("model len {len} {shape:?} {order:?}"));
                assert_eq!(gv, wv, "model values (stability) len {len} {shape:?} {order:?}");
                let mut k = input;
                emulate::bmcs_kernel_row::<f32, u32>(&mut k, None, log_n, order.is_descending());
                assert_same_keys(&k, &wk, "model keys only");
            }
        }
    }
}

#[test]
fn gpu_kernel_row_model_on_64_bit_keys_at_the_largest_rows() {
    let mut rng = hetkit_testkit::rng("gpu_kernel_row_model_on_64_bit_keys_at_the_largest_rows");
    for len in [8191usize, 1 << 13, (1 << 15) - 3] {
        let log_n = len.next_power_of_two().trailing_zeros();
        let input: Vec<i64> = make(&mut rng, len, Shape::FewDistinct);
        let vals: Vec<u64> = (0..len as u64).collect();
        let (mut wk, mut wv) = (input.clone(), vals.clone());
        reference_pairs(&mut wk, &mut wv, &[0, len], Order::Descending);
        let (mut gk, mut gv) = (input, vals);
        emulate::bmcs_kernel_row(&mut gk, Some(&mut gv), log_n, true);
        assert_eq!(gk, wk);
        assert_eq!(gv, wv);
    }
}
