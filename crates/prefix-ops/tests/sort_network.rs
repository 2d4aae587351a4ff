//! The bitonic comb network and the GPU kernel's schedule, checked by the 0-1 principle
//! (exhaustively at 16 keys) and on random rows up to 2^15 keys.

mod sort_common;

use cuda_kernels::DeviceProps;
use prefix_ops::sort::gpu::{BlockPlan, max_block_len, plan_block};
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

/// What `sort_bmcs.cu` assumes of every block it is launched with: whole warps (the shuffles
/// use the full mask), at most 1024 threads (`__launch_bounds__(1024)`), `n / (4 VT)` threads per
/// row, a power of two, and at least 32 per row when VT = 8 (virtual thread `tp + c np` swaps
/// with `(tp ^ m) + c np` only if every shuffle mask m < 32 stays below np), and exactly the
/// shared memory the kernel indexes: `rows_per_block * n` keys, plus as many u32 tags and values
/// for pairs, needed from 256 keys (shared-memory steps) or for pairs (the value gather).
#[test]
fn block_plans_fit_the_kernel() {
    for limit in [48 * 1024, 100 * 1024, 227 * 1024] {
        for key_bytes in [4usize, 8] {
            for value_bytes in [None, Some(4usize), Some(8)] {
                let mut fits = true;
                for log_n in 0..=16u32 {
                    let row_len = 1usize << log_n;
                    let Some(p) = plan_block(row_len, key_bytes, value_bytes, limit) else {
                        fits = false;
                        continue;
                    };
                    assert!(fits, "a plan for 2^{log_n} after none for a shorter row");
                    check_plan(&p, row_len, key_bytes, value_bytes, limit);
                    // Rows just above a power of two pad to the next one.
                    if row_len > 4 {
                        let q = plan_block(row_len / 2 + 1, key_bytes, value_bytes, limit).unwrap();
                        assert_eq!(q, p, "2^{log_n} / 2 + 1 keys");
                    }
                }
            }
        }
    }
}

fn check_plan(p: &BlockPlan, row_len: usize, key_bytes: usize, value_bytes: Option<usize>, limit: usize) {
    let n = row_len.max(4) as u32;
    let what = format!("{row_len} keys of {key_bytes} B, values {value_bytes:?}, limit {limit}: {p:?}");
    assert_eq!(1u32 << p.log_n, n, "{what}");
    assert!(p.log_n <= 15, "{what}");
    assert_eq!(p.vt, if p.log_n > 12 { 8 } else { 1 }, "{what}");
    let per_row = n / 4 / p.vt;
    assert!(per_row.is_power_of_two(), "{what}");
    assert_eq!(p.threads, p.rows_per_block * per_row, "{what}");
    assert!(p.threads <= 1024 && p.threads.is_multiple_of(32), "{what}");
    assert!(p.vt == 1 || per_row >= 32, "{what}");
    let per_key = key_bytes + value_bytes.map_or(0, |v| 4 + v);
    let needs_shared = p.log_n >= 8 || value_bytes.is_some();
    let want = if needs_shared { p.rows_per_block as usize * n as usize * per_key } else { 0 };
    assert_eq!(p.shared_bytes, want, "{what}");
    assert!(p.shared_bytes <= limit, "{what}");
}

#[test]
fn longest_block_rows_on_an_h100() {
    let h100 = DeviceProps {
        name: "H100 (model)".into(),
        compute_capability: (9, 0),
        sm_count: 132,
        total_memory: 80 << 30,
        l2_bytes: 50 << 20,
        shared_per_block: 48 * 1024,
        shared_per_block_optin: 227 * 1024,
        shared_per_sm: 228 * 1024,
        regs_per_block: 65536,
        max_threads_per_block: 1024,
        warp_size: 32,
        peak_bandwidth: 3.35e12,
    };
    assert_eq!(max_block_len(&h100, 4, None), 1 << 15);
    assert_eq!(max_block_len(&h100, 8, None), 1 << 14);
    assert_eq!(max_block_len(&h100, 4, Some(4)), 1 << 14);
    assert_eq!(max_block_len(&h100, 8, Some(8)), 1 << 13);
}

/// The merge-path merge exactly as `sort_merge` runs it (chunks of 8 outputs, diagonal search,
/// ties from the left run) on top of block-sorted runs, against the stable oracle: runs of 4 to
/// 64 keys, lengths around chunk and run boundaries (a partial last run, a last pair with no
/// right run), many equal keys (stability through the merges), both orders.
#[test]
fn merge_path_model_matches_the_oracle() {
    let mut rng = hetkit_testkit::rng("merge_path_model_matches_the_oracle");
    let lens = [0usize, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 63, 64, 65, 127, 129, 1000, 1031, 4099];
    for run in [4usize, 8, 16, 64] {
        for &n in &lens {
            for shape in [Shape::Random, Shape::FewDistinct, Shape::AllEqual, Shape::Reversed, Shape::Edges] {
                for order in [Order::Ascending, Order::Descending] {
                    let input: Vec<f64> = make(&mut rng, n, shape);
                    let vals: Vec<u32> = (0..n as u32).collect();
                    let (mut wk, mut wv) = (input.clone(), vals.clone());
                    reference_pairs(&mut wk, &mut wv, &[0, n], order);
                    let (mut gk, mut gv) = (input.clone(), vals);
                    emulate::merge_sort(&mut gk, Some(&mut gv), run, order.is_descending());
                    let what = format!("merge model run {run} n {n} {shape:?} {order:?}");
                    assert_same_keys(&gk, &wk, &what);
                    assert_eq!(gv, wv, "{what}: values (stability)");
                    let mut k = input;
                    emulate::merge_sort::<f64, u32>(&mut k, None, run, order.is_descending());
                    assert_same_keys(&k, &wk, &what);
                }
            }
        }
    }
}
