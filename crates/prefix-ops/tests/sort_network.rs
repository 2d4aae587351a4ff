//! The bitonic comb network and the GPU kernel's schedule, checked by the 0-1 principle
//! (exhaustively at 16 keys) and on random rows up to 2^15 keys.

mod sort_common;

use cuda_kernels::DeviceProps;
use prefix_ops::sort::gpu::{BlockPlan, max_block_len, plan_block, plan_segments};
use prefix_ops::sort::{Order, SortValue, emulate, network};
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

/// Rows sorted by fewer threads than groups of four keys (each thread takes its groups in turn,
/// as the kernel does for a tuned block or rows above 4096 keys): every legal threads-per-row
/// from 32 up, tagged and not, random keys with many ties, against std's stable sort.
#[test]
fn gpu_schedule_with_fewer_threads_than_groups() {
    let mut rng = hetkit_testkit::rng("gpu_schedule_with_fewer_threads_than_groups");
    for log_n in 7..=13u32 {
        let n = 1usize << log_n;
        let mut np = 32;
        while np <= n / 4 {
            for tagged in [false, true] {
                let row: Vec<(u32, u32)> = (0..n).map(|i| (rng.random_range(0..50u32), i as u32)).collect();
                let mut want = row.clone();
                if tagged {
                    want.sort();
                } else {
                    want.sort_by_key(|p| p.0);
                }
                let mut got = row;
                emulate::bmcs_row_threads(&mut got, np, tagged);
                if tagged {
                    assert_eq!(got, want, "2^{log_n} keys, {np} threads, tagged");
                } else {
                    let keys = |r: &[(u32, u32)]| r.iter().map(|p| p.0).collect::<Vec<_>>();
                    assert_eq!(keys(&got), keys(&want), "2^{log_n} keys, {np} threads");
                }
            }
            np *= 2;
        }
    }
}

/// The schedule with the padding skipped, as the kernel skips it (groups of compare-exchanges
/// wholly at or beyond the row's length): every binary row of up to 16 keys padded to 16, by
/// the 0-1 principle, with and without tags.
#[test]
fn gpu_schedule_skipping_the_padding_passes_the_zero_one_principle() {
    for len in 1..=16usize {
        for tagged in [false, true] {
            for bits in 0u32..1 << len {
                let mut row: Vec<(u32, u32)> =
                    (0..16).map(|i| (if i < len { (bits >> i) & 1 } else { u32::MAX }, i as u32)).collect();
                emulate::bmcs_row_len(&mut row, 4, len, tagged);
                let ones = bits.count_ones() as usize;
                let keys: Vec<u32> = row.iter().map(|r| r.0).collect();
                assert!(
                    keys[..len - ones].iter().all(|&k| k == 0)
                        && keys[len - ones..len].iter().all(|&k| k == 1)
                        && keys[len..].iter().all(|&k| k == u32::MAX),
                    "len {len} input {bits:#06x} tagged {tagged}: {keys:?}"
                );
            }
        }
    }
}

/// A row of `2^k + 1` keys padded to `2^(k+1)` runs about half the padded network, not all of
/// it: what the padding still costs is the flips pairing real keys with it. Rows of at most 256
/// keys skip nothing (a warp's 128 keys hold a real one, and the one shared step pairs real keys
/// with padding); they are a few instructions, and share blocks.
/// Printed for the book: `cargo test -p prefix-ops --test sort_network padding_work -- --nocapture`.
#[test]
fn gpu_schedule_padding_work() {
    for log_n in [3u32, 7, 8, 10, 13, 15] {
        let n = 1usize << log_n;
        let full = emulate::bmcs_work(n, log_n);
        assert_eq!(full.executed, full.network, "a full row skips nothing");
        for len in [n / 2 + 1, 3 * n / 4] {
            let w = emulate::bmcs_work(len, log_n);
            let ratio = w.executed as f64 / w.network as f64;
            println!("| {n} | {len} | {} | {} | {ratio:.3} |", w.network, w.executed);
            if log_n <= 8 {
                assert_eq!(w.executed, w.network, "n {n} len {len}: nothing to skip");
            } else {
                // 0.62 at 513 of 1024 keys, 0.51 at 16385 of 32768: about the real keys' share.
                assert!(ratio < len as f64 / n as f64 + 0.125, "n {n} len {len}: {w:?}");
            }
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

/// What `sort_bmcs.cuh` assumes of every block it is launched with: whole warps (the shuffles
/// use the full mask), at most 1024 threads (`__launch_bounds__(1024)`), `min(n / 4, 1024)`
/// threads per row, a power of two (a thread whose virtual threads are `tp + c np` swaps with
/// `(tp ^ m) + c np` only if every shuffle mask m < 32 stays below np, so np >= 32 whenever a row
/// has more than one group per thread), and exactly the shared memory the kernel indexes:
/// `rows_per_block * n` keys, plus as many u32 tags and values for pairs.
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
    let per_row = (n / 4).min(1024);
    assert_eq!(p.threads_per_row, per_row, "{what}");
    assert!(per_row.is_power_of_two(), "{what}");
    assert_eq!(p.threads, p.rows_per_block * per_row, "{what}");
    assert!(p.threads <= 1024 && p.threads.is_multiple_of(32), "{what}");
    assert!(per_row == n / 4 || per_row >= 32, "{what}");
    let per_key = key_bytes + value_bytes.map_or(0, |v| 4 + v);
    assert_eq!(p.shared_bytes, p.rows_per_block as usize * n as usize * per_key, "{what}");
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

/// The radix kernels' arithmetic (tiles from the plan's words, stable ranks, look-back prefix,
/// destination of each slot) through `emulate::radix_long`, against the stable oracle: long
/// segments of one to several tiles with partial last tiles, between short segments that must
/// come back untouched, many equal keys (stability through eight passes), both orders, 32- and
/// 64-bit keys with values.
#[test]
fn radix_model_matches_the_oracle() {
    let mut rng = hetkit_testkit::rng("radix_model_matches_the_oracle");
    // A 4 KiB block limit: rows of 256 4-byte keys fit a block, longer ones take the radix path.
    let limit = 4096;
    for order in [Order::Ascending, Order::Descending] {
        for lens in [vec![5000usize], vec![3, 9000, 0, 257, 1, 4096, 4097, 100], vec![8193, 2048, 2049, 300]]
        {
            let mut offsets = vec![0usize];
            for l in &lens {
                offsets.push(offsets.last().unwrap() + l);
            }
            let n = *offsets.last().unwrap();
            let keys: Vec<f32> = make(&mut rng, n, Shape::FewDistinct);
            let vals: Vec<u32> = (0..n as u32).collect();
            check_radix(&keys, &vals, &offsets, limit, order);
            let keys: Vec<i64> = make(&mut rng, n, Shape::Edges);
            let vals: Vec<u64> = (0..n as u64).collect();
            check_radix(&keys, &vals, &offsets, limit, order);
        }
    }
}

fn check_radix<K: TestKey, V: SortValue + PartialEq + std::fmt::Debug>(
    keys: &[K],
    vals: &[V],
    offsets: &[usize],
    limit: usize,
    order: Order,
) {
    let plan = plan_segments(offsets, size_of::<K>(), Some(size_of::<V>()), limit).unwrap();
    assert!(!plan.long.is_empty());
    let (mut wk, mut wv) = (keys.to_vec(), vals.to_vec());
    let long_offsets: Vec<usize> = std::iter::once(0)
        .chain(plan.long.iter().flat_map(|&(b, l)| [b, b + l]))
        .chain([keys.len()])
        .collect();
    // The oracle sorts the long segments only (the gaps between them are sorted "segments" of
    // the complement, which the oracle would sort too: restore them after).
    reference_pairs(&mut wk, &mut wv, &long_offsets, order);
    let mut gaps_k = keys.to_vec();
    let mut gaps_v = vals.to_vec();
    for &(b, l) in &plan.long {
        gaps_k[b..b + l].copy_from_slice(&wk[b..b + l]);
        gaps_v[b..b + l].copy_from_slice(&wv[b..b + l]);
    }
    let (mut gk, mut gv) = (keys.to_vec(), vals.to_vec());
    emulate::radix_long(&mut gk, Some(&mut gv), &plan, order.is_descending());
    assert_same_keys(&gk, &gaps_k, &format!("radix model keys {order:?}"));
    assert_eq!(gv, gaps_v, "radix model values (stability) {order:?}");
    let mut ko = keys.to_vec();
    emulate::radix_long::<K, V>(&mut ko, None, &plan, order.is_descending());
    assert_same_keys(&ko, &gaps_k, "radix model keys only");
}

/// The segmented sort's launch plan: one upload, one launch per size class, every long segment
/// in one radix sequence (zeroing, histogram, one launch per digit), and the byte model's
/// passes per 2^28 keys: about 9 for 4-byte keys against the 31 of the merge path it replaced.
#[test]
fn segment_plans_count_launches_and_bytes() {
    let h100 = 227 * 1024;
    // 10k medium segments (1000 keys) and 3 long ones: 1 class launch + 2 + 4 radix launches.
    let mut offsets = vec![0usize];
    for i in 0..10_003 {
        let len = if i % 5000 == 1 { 100_000 } else { 1000 };
        offsets.push(offsets.last().unwrap() + len);
    }
    let p = plan_segments(&offsets, 4, None, h100).unwrap();
    assert_eq!(p.classes.len(), 1);
    assert_eq!(p.long.len(), 3);
    let m = p.bytes(4, None);
    assert_eq!((m.launches, m.uploads), (1 + 2 + 4, 1));
    // Whole arrays of 2^28 keys: passes over the data = moved / (n * key bytes).
    let n = 1usize << 28;
    for (kb, vb, most) in [(4usize, None, 10.5), (8, None, 19.5), (4, Some(4usize), 10.0)] {
        let p = plan_segments(&[0, n], kb, vb, h100).unwrap();
        let m = p.bytes(kb, vb);
        let passes = m.moved as f64 / (n * (kb + vb.unwrap_or(0))) as f64;
        assert!(passes < most, "{kb}-byte keys, values {vb:?}: {passes:.2} passes");
        assert!(passes > 2.0 * kb as f64, "{kb}-byte keys: {passes:.2} passes below 2 per digit");
        assert_eq!(m.floor, 2 * (n * (kb + vb.unwrap_or(0))) as u64);
        assert_eq!(m.launches, 2 + kb as u64);
    }
    // Short segments move exactly their floor (padding lives in shared memory only).
    let p = plan_segments(&[0, 3, 100, 1000, 1001], 8, Some(8), h100).unwrap();
    let m = p.bytes(8, Some(8));
    assert_eq!(m.moved, m.floor);
    assert_eq!(m.launches, 3);
}
