//! The GPU segmented reduction at every granularity against the CPU reference (bit for bit for
//! integers and Min/Max, within rounding for float sums), on the descriptor shapes of the CPU
//! tests (empty segments, length 1, regular, irregular, random). Skips without a device;
//! `HETKIT_REQUIRE_GPU=1` (as `scripts/cuda-emu.sh` sets it) turns a skip into a failure.
//! Sizes stay small: on the emulator every lane is a CPU thread.

mod segmented_common;

use hetkit_testkit::{gpu_or_skip, rng};
use prefix_ops::Error;
use prefix_ops::segmented::gpu::{self, DeviceSegments, GpuThresholds, Granularity, choose};
use prefix_ops::segmented::{self, Add, Max, Min, Mul, Segments};
use rand::Rng;
use segmented_common::shapes;

#[test]
fn segmented_gpu_every_granularity_matches_the_cpu() {
    let Some(g) = gpu_or_skip("segmented_gpu_every_granularity_matches_the_cpu") else { return };
    let mut rng = rng("segmented_gpu_every_granularity_matches_the_cpu");
    // Emulated lanes are CPU fibers: the largest random shape is left to the CPU tests.
    let mut all: Vec<_> = shapes(&mut rng).into_iter().filter(|(name, _)| name != "random 2").collect();
    all.push(("long".into(), Segments::from_lengths(&[3, 3000, 0, 1]).unwrap()));
    for (name, segs) in all {
        let xs: Vec<i64> = (0..segs.len()).map(|_| rng.random_range(-1000..1000)).collect();
        let us: Vec<u32> = xs.iter().map(|&x| x as u32).collect();
        let fs: Vec<f32> = xs.iter().map(|&x| x as f32 * 0.25).collect();
        let ds: Vec<f64> = xs.iter().map(|&x| x as f64 * 1e-3).collect();
        for gran in Granularity::ALL {
            let ctx = format!("{name} {gran:?}");
            assert_eq!(
                gpu::reduce(&g, &xs, &segs, Add, Some(gran)).unwrap(),
                segmented::reduce(&xs, &segs, Add).unwrap(),
                "{ctx}"
            );
            assert_eq!(
                gpu::reduce(&g, &us, &segs, Mul, Some(gran)).unwrap(),
                segmented::reduce(&us, &segs, Mul).unwrap(),
                "{ctx}"
            );
            assert_eq!(
                gpu::reduce(&g, &fs, &segs, Min, Some(gran)).unwrap(),
                segmented::reduce(&fs, &segs, Min).unwrap(),
                "{ctx}"
            );
            assert_eq!(
                gpu::reduce(&g, &fs, &segs, Max, Some(gran)).unwrap(),
                segmented::reduce(&fs, &segs, Max).unwrap(),
                "{ctx}"
            );
            let got = gpu::reduce(&g, &ds, &segs, Add, Some(gran)).unwrap();
            let want = segmented::reduce(&ds, &segs, Add).unwrap();
            for (a, b) in got.iter().zip(&want) {
                assert!((a - b).abs() <= 1e-9 * (1.0 + b.abs()), "{ctx}: {a} vs {b}");
            }
        }
        // The selector's own choice.
        assert_eq!(
            gpu::reduce(&g, &xs, &segs, Add, None).unwrap(),
            segmented::reduce(&xs, &segs, Add).unwrap(),
            "{name}"
        );
    }
}

#[test]
fn segmented_gpu_the_device_descriptor_is_reused_across_calls() {
    let Some(g) = gpu_or_skip("segmented_gpu_the_device_descriptor_is_reused_across_calls") else { return };
    let segs = Segments::from_lengths(&[4, 0, 2, 9]).unwrap();
    let d = DeviceSegments::upload(&g, &segs).unwrap();
    assert_eq!((d.num_segments(), d.len()), (4, 15));
    let xs: Vec<i32> = (1..=15).collect();
    let dx = g.upload(&xs).unwrap();
    let sums = g.download(&gpu::reduce_device(&g, &dx, &d, Add, None).unwrap()).unwrap();
    let maxs = g.download(&gpu::reduce_device(&g, &dx, &d, Max, Some(Granularity::Warp)).unwrap()).unwrap();
    assert_eq!(sums, [10, 0, 11, 99]);
    assert_eq!(maxs, [4, i32::MIN, 6, 15]);
    let short = g.upload(&xs[..14]).unwrap();
    assert!(matches!(gpu::reduce_device(&g, &short, &d, Add, None), Err(Error::LengthMismatch { .. })));
}

#[test]
fn segmented_gpu_the_selector_follows_segment_length() {
    let t = GpuThresholds::DEFAULT;
    assert_eq!(choose(1 << 20, 1 << 20, 132, &t), Granularity::Thread);
    assert_eq!(choose(1 << 20, 1 << 16, 132, &t), Granularity::Lanes4);
    assert_eq!(choose(1 << 20, 1 << 15, 132, &t), Granularity::Lanes8);
    assert_eq!(choose(1 << 20, 1 << 13, 132, &t), Granularity::Warp);
    assert_eq!(choose(1 << 24, 1 << 10, 132, &t), Granularity::Block);
    assert_eq!(choose(1 << 24, 4, 132, &t), Granularity::MultiBlock);
    assert_eq!(choose(0, 0, 132, &t), Granularity::Thread);
}
