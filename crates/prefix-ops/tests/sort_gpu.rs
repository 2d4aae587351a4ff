//! GPU sorts against the same oracles as the CPU tests. They skip without a device (and fail
//! with `HETKIT_REQUIRE_GPU=1`). The sorts work in place, so the data cannot be poisoned;
//! instead keys outside the sorted segments are sentinels that must come back untouched, and
//! every result is compared bit for bit with the oracle (a lost or duplicated key fails).

mod sort_common;

use cuda_kernels::Gpu;
use prefix_ops::Error;
use prefix_ops::sort::{self, Order, SortValue, gpu};
use rand::Rng;
use sort_common::*;

fn gpu_rows<K: TestKey>(dev: &Gpu, rng: &mut impl Rng, row_len: usize, nrows: usize) {
    for shape in SHAPES {
        for order in [Order::Ascending, Order::Descending] {
            let input: Vec<K> = make(rng, row_len * nrows, shape);
            let offsets = row_offsets(input.len(), row_len);
            let mut want = input.clone();
            reference(&mut want, &offsets, order);
            let mut buf = dev.upload(&input).unwrap();
            gpu::rows(dev, &mut buf, row_len, order).unwrap();
            let what =
                format!("gpu rows {row_len} x {nrows} {shape:?} {order:?} {}", std::any::type_name::<K>());
            assert_same_keys(&dev.download(&buf).unwrap(), &want, &what);
            gpu_rows_pairs::<K, u32>(dev, &input, row_len, order);
            gpu_rows_pairs::<K, u64>(dev, &input, row_len, order);
        }
    }
}

fn gpu_rows_pairs<K: TestKey, V: SortValue + TryFrom<usize> + PartialEq + std::fmt::Debug>(
    dev: &Gpu,
    input: &[K],
    row_len: usize,
    order: Order,
) {
    let vals: Vec<V> = (0..input.len()).map(|i| V::try_from(i).ok().unwrap()).collect();
    let (mut wk, mut wv) = (input.to_vec(), vals.clone());
    reference_pairs(&mut wk, &mut wv, &row_offsets(input.len(), row_len), order);
    let mut kb = dev.upload(input).unwrap();
    let mut vb = dev.upload(&vals).unwrap();
    gpu::rows_by_key(dev, &mut kb, &mut vb, row_len, order).unwrap();
    assert_same_keys(&dev.download(&kb).unwrap(), &wk, &format!("gpu rows_by_key {row_len} {order:?}"));
    assert_eq!(dev.download(&vb).unwrap(), wv, "gpu rows_by_key values (stability) {row_len} {order:?}");
}

fn all_types(dev: &Gpu, rng: &mut impl Rng, row_len: usize, nrows: usize) {
    gpu_rows::<u32>(dev, rng, row_len, nrows);
    gpu_rows::<i32>(dev, rng, row_len, nrows);
    gpu_rows::<f32>(dev, rng, row_len, nrows);
    gpu_rows::<u64>(dev, rng, row_len, nrows);
    gpu_rows::<i64>(dev, rng, row_len, nrows);
    gpu_rows::<f64>(dev, rng, row_len, nrows);
}

#[test]
fn gpu_rows_of_every_length_up_to_64() {
    let Some(dev) = hetkit_testkit::gpu_or_skip("gpu_rows_of_every_length_up_to_64") else { return };
    let mut rng = hetkit_testkit::rng("gpu_rows_of_every_length_up_to_64");
    for row_len in 1..=64 {
        // 37 rows: a partial last block for every rows-per-block choice.
        all_types(&dev, &mut rng, row_len, 37);
    }
}

#[test]
fn gpu_rows_of_awkward_lengths_up_to_the_block_limit() {
    let Some(dev) = hetkit_testkit::gpu_or_skip("gpu_rows_of_awkward_lengths_up_to_the_block_limit") else {
        return;
    };
    let mut rng = hetkit_testkit::rng("gpu_rows_of_awkward_lengths_up_to_the_block_limit");
    // 4097 and 8192: eight keys per virtual thread at 256 threads; 10_000: 512 threads;
    // 16_385 and 32_768: 1024 threads (the register-limited blocks).
    for row_len in
        [65, 127, 128, 129, 255, 256, 257, 511, 1000, 2048, 4095, 4097, 8192, 10_000, 16_385, 32_768]
    {
        all_types(&dev, &mut rng, row_len, 3);
    }
}

#[test]
fn gpu_rows_longer_than_a_block_take_the_radix_path() {
    let Some(dev) = hetkit_testkit::gpu_or_skip("gpu_rows_longer_than_a_block_take_the_radix_path") else {
        return;
    };
    let mut rng = hetkit_testkit::rng("gpu_rows_longer_than_a_block_take_the_radix_path");
    // Every key type and both value types through the radix kernels (40_001 > 32_768, the
    // longest block row of any type; several tiles, a partial last one).
    all_types(&dev, &mut rng, 40_001, 2);
    gpu_rows::<f64>(&dev, &mut rng, 70_000, 1);
}

#[test]
fn gpu_segments_short_long_and_empty() {
    let Some(dev) = hetkit_testkit::gpu_or_skip("gpu_segments_short_long_and_empty") else { return };
    let mut rng = hetkit_testkit::rng("gpu_segments_short_long_and_empty");
    for (n, max_len) in [(1000, 9), (20_000, 300), (300_000, 4096), (300_000, 100_000)] {
        for order in [Order::Ascending, Order::Descending] {
            let offsets = random_offsets(&mut rng, n, max_len);
            let input: Vec<f32> = make(&mut rng, n, Shape::Edges);
            let mut want = input.clone();
            reference(&mut want, &offsets, order);
            let mut buf = dev.upload(&input).unwrap();
            gpu::segments(&dev, &mut buf, &offsets, order).unwrap();
            assert_same_keys(&dev.download(&buf).unwrap(), &want, &format!("gpu segments n={n} {order:?}"));

            let keys: Vec<u64> = make(&mut rng, n, Shape::FewDistinct);
            let vals: Vec<u32> = (0..n as u32).collect();
            let (mut wk, mut wv) = (keys.clone(), vals.clone());
            reference_pairs(&mut wk, &mut wv, &offsets, order);
            let mut kb = dev.upload(&keys).unwrap();
            let mut vb = dev.upload(&vals).unwrap();
            gpu::segments_by_key(&dev, &mut kb, &mut vb, &offsets, order).unwrap();
            assert_eq!(dev.download(&kb).unwrap(), wk, "gpu segments_by_key keys n={n}");
            assert_eq!(dev.download(&vb).unwrap(), wv, "gpu segments_by_key values n={n} {order:?}");
        }
    }
}

/// One call of a segmented sort: one upload of its plan, one launch per size class of short
/// segments, and every long segment in one radix sequence (zeroing, histogram, a launch per
/// digit), counted by the sort's launch counter and equal to the plan's byte model.
#[test]
fn gpu_segments_launch_counts() {
    let Some(dev) = hetkit_testkit::gpu_or_skip("gpu_segments_launch_counts") else { return };
    let mut rng = hetkit_testkit::rng("gpu_segments_launch_counts");
    // Ten size classes (2..=1024 keys pad to 4..=1024) and three long segments.
    let lens = [2usize, 7, 9, 20, 33, 100, 200, 300, 600, 1000, 40_000, 5, 50_000, 33_000];
    let mut offsets = vec![0usize];
    for l in lens {
        offsets.push(offsets.last().unwrap() + l);
    }
    let n = *offsets.last().unwrap();
    let input: Vec<u32> = make(&mut rng, n, Shape::FewDistinct);
    let vals: Vec<u64> = (0..n as u64).collect();
    let (mut wk, mut wv) = (input.clone(), vals.clone());
    reference_pairs(&mut wk, &mut wv, &offsets, Order::Descending);
    let mut kb = dev.upload(&input).unwrap();
    let mut vb = dev.upload(&vals).unwrap();
    let before = gpu::launch_counts();
    gpu::segments_by_key(&dev, &mut kb, &mut vb, &offsets, Order::Descending).unwrap();
    let after = gpu::launch_counts();
    assert_eq!(dev.download(&kb).unwrap(), wk);
    assert_eq!(dev.download(&vb).unwrap(), wv);
    let limit = dev.props().shared_per_block_optin.max(dev.props().shared_per_block);
    let plan = gpu::plan_segments(&offsets, 4, Some(8), limit).unwrap();
    let model = plan.bytes(4, Some(8));
    assert_eq!(plan.long.len(), 3);
    assert_eq!(after.launches - before.launches, model.launches);
    assert_eq!(after.uploads - before.uploads, 1);
    assert_eq!(model.launches, plan.classes.len() as u64 + 2 + 4);
}

#[test]
fn gpu_whole_arrays() {
    let Some(dev) = hetkit_testkit::gpu_or_skip("gpu_whole_arrays") else { return };
    let mut rng = hetkit_testkit::rng("gpu_whole_arrays");
    for n in [0usize, 1, 2, 3, 4096, 32_769, (1 << 20) + 3] {
        for shape in [Shape::Random, Shape::Reversed, Shape::FewDistinct, Shape::Edges] {
            let order = if rng.random_bool(0.5) { Order::Ascending } else { Order::Descending };
            let input: Vec<f64> = make(&mut rng, n, shape);
            let mut want = input.clone();
            reference(&mut want, &[0, n], order);
            // cuda-kernels gives empty buffers a 1-byte allocation, so n = 0 reaches the sort.
            let mut buf = dev.upload(&input).unwrap();
            gpu::whole(&dev, &mut buf, order).unwrap();
            assert_same_keys(&dev.download(&buf).unwrap(), &want, &format!("gpu whole n={n} {shape:?}"));

            let keys: Vec<i32> = make(&mut rng, n, shape);
            let vals: Vec<u64> = (0..n as u64).collect();
            let (mut wk, mut wv) = (keys.clone(), vals.clone());
            reference_pairs(&mut wk, &mut wv, &[0, n], order);
            let mut kb = dev.upload(&keys).unwrap();
            let mut vb = dev.upload(&vals).unwrap();
            gpu::whole_by_key(&dev, &mut kb, &mut vb, order).unwrap();
            assert_eq!(dev.download(&kb).unwrap(), wk, "gpu whole_by_key keys n={n}");
            assert_eq!(dev.download(&vb).unwrap(), wv, "gpu whole_by_key values n={n} {shape:?}");
        }
    }
}

#[test]
fn gpu_matches_cpu_on_a_batch() {
    let Some(dev) = hetkit_testkit::gpu_or_skip("gpu_matches_cpu_on_a_batch") else { return };
    let mut rng = hetkit_testkit::rng("gpu_matches_cpu_on_a_batch");
    let input: Vec<f32> = make(&mut rng, 1 << 18, Shape::Random);
    let mut cpu = input.clone();
    sort::rows(&mut cpu, 256, Order::Ascending).unwrap();
    let mut buf = dev.upload(&input).unwrap();
    gpu::rows(&dev, &mut buf, 256, Order::Ascending).unwrap();
    assert_same_keys(&dev.download(&buf).unwrap(), &cpu, "gpu vs cpu rows of 256");
}

#[test]
fn gpu_bad_input_is_an_error() {
    let Some(dev) = hetkit_testkit::gpu_or_skip("gpu_bad_input_is_an_error") else { return };
    let mut k = dev.upload(&[3u32, 2, 1, 0, 5, 4]).unwrap();
    let mut v = dev.upload(&[0u32; 5]).unwrap();
    assert!(matches!(
        gpu::rows_by_key(&dev, &mut k, &mut v, 3, Order::Ascending),
        Err(Error::LengthMismatch { .. })
    ));
    assert!(matches!(
        gpu::whole_by_key(&dev, &mut k, &mut v, Order::Ascending),
        Err(Error::LengthMismatch { .. })
    ));
    assert!(matches!(gpu::rows(&dev, &mut k, 4, Order::Ascending), Err(Error::InvalidRows { .. })));
    for bad in [&[][..], &[1, 6], &[0, 5]] {
        assert!(matches!(gpu::segments(&dev, &mut k, bad, Order::Ascending), Err(Error::InvalidOffsets(_))));
    }
    assert!(matches!(
        gpu::segments(&dev, &mut k, &[0, 3, 2], Order::Ascending),
        Err(Error::InvalidOffsets(_))
    ));
    assert!(matches!(gpu::segments(&dev, &mut k, &[0, 9], Order::Ascending), Err(Error::InvalidOffsets(_))));
    assert_eq!(dev.download(&k).unwrap(), [3, 2, 1, 0, 5, 4]);
}
