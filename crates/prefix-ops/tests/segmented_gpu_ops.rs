//! The GPU segmented catalogue beyond reduction (scans, reverse, partition, split3, compact,
//! the descriptor rebuild, sort, the device quicksort) at every granularity against the CPU
//! catalogue: bit for bit for integers, Min/Max and every reordering, within rounding for float
//! sums. Shapes: no segments, empty segments, one segment, length 1, regular and irregular,
//! random; keys of the six Cederman–Tsigas distributions. Skips without a device;
//! `HETKIT_REQUIRE_GPU=1` (as `scripts/cuda-emu.sh` sets it) turns a skip into a failure. Sizes
//! stay small: on the emulator every lane is a CPU fiber.

mod segmented_common;

use cuda_kernels::Gpu;
use hetkit_testkit::{gpu_or_skip, rng};
use prefix_ops::Error;
use prefix_ops::segmented::apps::{QuicksortReport, quicksort_with};
use prefix_ops::segmented::gpu::{self, DeviceSegments, GpuThresholds, Granularity, MAX_LAUNCHES_PER_ROUND};
use prefix_ops::segmented::{self, Add, Max, Min, Mul, Order, SegmentedTuning, Segments};
use rand::Rng;
use segmented_common::{DISTS, keys, shapes};

/// The test shapes the emulator can afford at six granularities, plus one long segment among
/// short ones (multi-block parts of unequal work).
fn gpu_shapes(rng: &mut impl Rng) -> Vec<(String, Segments)> {
    let mut all: Vec<_> = shapes(rng).into_iter().filter(|(name, _)| name != "random 2").collect();
    all.push(("long".into(), Segments::from_lengths(&[3, 1500, 0, 1]).unwrap()));
    all
}

fn ints(n: usize, rng: &mut impl Rng) -> Vec<i64> {
    (0..n).map(|_| rng.random_range(-1000..1000)).collect()
}

#[test]
fn segmented_gpu_scans_match_the_cpu_at_every_granularity() {
    let Some(g) = gpu_or_skip("segmented_gpu_scans_match_the_cpu_at_every_granularity") else { return };
    let mut rng = rng("segmented_gpu_scans_match_the_cpu_at_every_granularity");
    for (name, segs) in gpu_shapes(&mut rng) {
        let xs = ints(segs.len(), &mut rng);
        let us: Vec<u32> = xs.iter().map(|&x| x as u32).collect();
        let fs: Vec<f32> = xs.iter().map(|&x| x as f32 * 0.25).collect();
        let ds: Vec<f64> = xs.iter().map(|&x| x as f64 * 1e-3).collect();
        for gran in Granularity::ALL.map(Some).into_iter().chain([None]) {
            let ctx = format!("{name} {gran:?}");
            for exclusive in [false, true] {
                let scan_gpu = |g: &Gpu, v: &mut Vec<i64>| {
                    if exclusive {
                        gpu::exclusive_scan(g, v, &segs, Add, gran)
                    } else {
                        gpu::inclusive_scan(g, v, &segs, Add, gran)
                    }
                };
                let (mut got, mut want) = (xs.clone(), xs.clone());
                scan_gpu(&g, &mut got).unwrap();
                if exclusive {
                    segmented::exclusive_scan(&mut want, &segs, Add).unwrap();
                } else {
                    segmented::inclusive_scan(&mut want, &segs, Add).unwrap();
                }
                assert_eq!(got, want, "{ctx} exclusive={exclusive}");
            }
            let (mut got, mut want) = (us.clone(), us.clone());
            gpu::inclusive_scan(&g, &mut got, &segs, Mul, gran).unwrap();
            segmented::inclusive_scan(&mut want, &segs, Mul).unwrap();
            assert_eq!(got, want, "{ctx} u32 Mul");
            let (mut got, mut want) = (fs.clone(), fs.clone());
            gpu::exclusive_scan(&g, &mut got, &segs, Max, gran).unwrap();
            segmented::exclusive_scan(&mut want, &segs, Max).unwrap();
            assert_eq!(
                got.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                want.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                "{ctx} f32 Max"
            );
            let (mut got, mut want) = (fs.clone(), fs.clone());
            gpu::inclusive_scan(&g, &mut got, &segs, Min, gran).unwrap();
            segmented::inclusive_scan(&mut want, &segs, Min).unwrap();
            assert_eq!(got, want, "{ctx} f32 Min");
            let (mut got, mut want) = (ds.clone(), ds.clone());
            gpu::inclusive_scan(&g, &mut got, &segs, Add, gran).unwrap();
            segmented::inclusive_scan(&mut want, &segs, Add).unwrap();
            for (a, b) in got.iter().zip(&want) {
                assert!((a - b).abs() <= 1e-9 * (1.0 + b.abs()), "{ctx}: {a} vs {b}");
            }
        }
    }
}

#[test]
fn segmented_gpu_reorderings_match_the_cpu_at_every_granularity() {
    let Some(g) = gpu_or_skip("segmented_gpu_reorderings_match_the_cpu_at_every_granularity") else { return };
    let mut rng = rng("segmented_gpu_reorderings_match_the_cpu_at_every_granularity");
    for (name, segs) in gpu_shapes(&mut rng) {
        let xs = ints(segs.len(), &mut rng);
        let fs: Vec<f32> = xs.iter().map(|&x| x as f32).collect();
        let keep: Vec<bool> = (0..xs.len()).map(|_| rng.random_bool(0.4)).collect();
        // Pivots drawn from each segment (or arbitrary for an empty one), so every class occurs.
        let pivots: Vec<i64> = (0..segs.num_segments())
            .map(|s| {
                let r = segs.segment(s).unwrap();
                if r.is_empty() { 0 } else { xs[rng.random_range(r)] }
            })
            .collect();
        for gran in Granularity::ALL.map(Some).into_iter().chain([None]) {
            let ctx = format!("{name} {gran:?}");
            let (mut got, mut want) = (xs.clone(), xs.clone());
            gpu::reverse(&g, &mut got, &segs, gran).unwrap();
            segmented::reverse(&mut want, &segs).unwrap();
            assert_eq!(got, want, "{ctx} reverse");
            let (mut got, mut want) = (fs.clone(), fs.clone());
            gpu::reverse(&g, &mut got, &segs, gran).unwrap();
            segmented::reverse(&mut want, &segs).unwrap();
            assert_eq!(got, want, "{ctx} reverse f32");

            let (mut got, mut want) = (xs.clone(), xs.clone());
            let got_parts = gpu::partition(&g, &mut got, &segs, |&x| x % 3 == 0, gran).unwrap();
            let want_parts = segmented::partition(&mut want, &segs, |&x| x % 3 == 0).unwrap();
            assert_eq!((got, got_parts), (want, want_parts), "{ctx} partition");

            let (mut got, mut want) = (xs.clone(), xs.clone());
            let got_parts = gpu::split3(&g, &mut got, &segs, &pivots, gran).unwrap();
            let want_parts = segmented::split3(&mut want, &segs, &pivots).unwrap();
            assert_eq!((got, got_parts), (want, want_parts), "{ctx} split3");

            let got = gpu::compact(&g, &fs, &keep, &segs, gran).unwrap();
            let want = segmented::compact(&fs, &keep, &segs).unwrap();
            assert_eq!(got, want, "{ctx} compact");
        }
    }
}

#[test]
fn segmented_gpu_split3_is_stable_on_the_six_distributions() {
    let Some(g) = gpu_or_skip("segmented_gpu_split3_is_stable_on_the_six_distributions") else { return };
    let mut rng = rng("segmented_gpu_split3_is_stable_on_the_six_distributions");
    let segs = Segments::from_lengths(&[0, 1, 37, 300, 2, 0, 129]).unwrap();
    for d in DISTS {
        let ks = keys(d, segs.len(), &mut rng);
        let pivots: Vec<u32> =
            (0..segs.num_segments()).map(|s| segs.segment(s).unwrap().next().map_or(7, |i| ks[i])).collect();
        // Pairs (key, position) in u64 so that stability shows: equal keys keep their order.
        let tagged: Vec<u64> = ks.iter().enumerate().map(|(i, &k)| (k as u64) << 32 | i as u64).collect();
        for gran in Granularity::ALL {
            let (mut got, mut want) = (ks.clone(), ks.clone());
            let parts = gpu::split3(&g, &mut got, &segs, &pivots, Some(gran)).unwrap();
            assert_eq!(parts, segmented::split3(&mut want, &segs, &pivots).unwrap(), "{d:?} {gran:?}");
            assert_eq!(got, want, "{d:?} {gran:?}");
            let (mut got, mut want) = (tagged.clone(), tagged.clone());
            gpu::partition(&g, &mut got, &segs, |&x| x >> 32 < 1 << 30, Some(gran)).unwrap();
            segmented::partition(&mut want, &segs, |&x| x >> 32 < 1 << 30).unwrap();
            assert_eq!(got, want, "{d:?} {gran:?} partition");
        }
    }
}

#[test]
fn segmented_gpu_the_descriptor_is_rebuilt_on_the_device() {
    let Some(g) = gpu_or_skip("segmented_gpu_the_descriptor_is_rebuilt_on_the_device") else { return };
    let mut rng = rng("segmented_gpu_the_descriptor_is_rebuilt_on_the_device");
    // The thesis's Fig. 5.7.
    let fig = [1u32, 0, 0, 1, 0, 1, 1, 0];
    let d = DeviceSegments::from_head_flags(&g, &g.upload(&fig).unwrap()).unwrap();
    let host = d.to_host(&g).unwrap();
    assert_eq!((host.offsets(), host.lengths()), (vec![0, 3, 5, 6, 8], vec![3, 2, 1, 2]));
    assert_eq!(g.download(&d.segment_ids(&g).unwrap()).unwrap(), [0, 0, 0, 1, 1, 2, 3, 3]);
    for n in [1usize, 2, 31, 1000] {
        let mut flags: Vec<bool> = (0..n).map(|_| rng.random_bool(0.2)).collect();
        flags[0] = true;
        let want = Segments::from_head_flags(&flags).unwrap();
        let raw: Vec<u32> = flags.iter().map(|&f| u32::from(f)).collect();
        let d = DeviceSegments::from_head_flags(&g, &g.upload(&raw).unwrap()).unwrap();
        assert_eq!(d.to_host(&g).unwrap(), want, "n={n}");
        assert_eq!(g.download(&d.segment_ids(&g).unwrap()).unwrap(), want.segment_ids(), "n={n}");
    }
    let empty = DeviceSegments::from_head_flags(&g, &g.upload::<u32>(&[]).unwrap()).unwrap();
    assert_eq!((empty.num_segments(), empty.len()), (0, 0));
    let bad = DeviceSegments::from_head_flags(&g, &g.upload(&[0u32, 1, 0]).unwrap());
    assert!(matches!(bad, Err(Error::Invalid(_))));
    // Ids of a descriptor with empty segments, uploaded from the host.
    let segs = Segments::from_lengths(&[0, 3, 0, 0, 2, 0]).unwrap();
    let d = DeviceSegments::upload(&g, &segs).unwrap();
    assert_eq!(g.download(&d.segment_ids(&g).unwrap()).unwrap(), segs.segment_ids());
}

#[test]
fn segmented_sort_matches_the_cpu() {
    let Some(g) = gpu_or_skip("segmented_sort_matches_the_cpu") else { return };
    let mut rng = rng("segmented_sort_matches_the_cpu");
    for (name, segs) in gpu_shapes(&mut rng) {
        for d in DISTS {
            let ks = keys(d, segs.len(), &mut rng);
            for order in [Order::Ascending, Order::Descending] {
                let (mut got, mut want) = (ks.clone(), ks.clone());
                gpu::sort(&g, &mut got, &segs, order).unwrap();
                segmented::sort(&mut want, &segs, order).unwrap();
                assert_eq!(got, want, "{name} {d:?} {order:?}");
            }
            let vals: Vec<u32> = (0..ks.len() as u32).collect();
            let (mut gk, mut gv, mut wk, mut wv) = (ks.clone(), vals.clone(), ks.clone(), vals.clone());
            gpu::sort_by_key(&g, &mut gk, &mut gv, &segs, Order::Ascending).unwrap();
            segmented::sort_by_key(&mut wk, &mut wv, &segs, Order::Ascending).unwrap();
            assert_eq!((gk, gv), (wk, wv), "{name} {d:?} by key");
        }
    }
}

fn never_switch() -> GpuThresholds {
    GpuThresholds { quicksort_switch: usize::MAX, ..GpuThresholds::DEFAULT }
}

/// Runs the CPU loop with the same (never) switch: the GPU runs the same rounds.
fn cpu_rounds(ks: &[u32]) -> QuicksortReport {
    let mut v = ks.to_vec();
    quicksort_with(&mut v, &SegmentedTuning { quicksort_switch: usize::MAX, ..SegmentedTuning::DEFAULT })
        .unwrap()
}

#[test]
fn segmented_gpu_the_device_quicksort_sorts_the_six_distributions() {
    let Some(g) = gpu_or_skip("segmented_gpu_the_device_quicksort_sorts_the_six_distributions") else {
        return;
    };
    let mut rng = rng("segmented_gpu_the_device_quicksort_sorts_the_six_distributions");
    for n in [0usize, 1, 2, 7, 300] {
        for d in DISTS {
            let ks = keys(d, n, &mut rng);
            let mut want = ks.clone();
            want.sort_unstable();
            let mut dk = g.upload(&ks).unwrap();
            let report = gpu::quicksort_device_with(&g, &mut dk, &never_switch()).unwrap();
            assert_eq!(g.download(&dk).unwrap(), want, "{d:?} n={n}");
            assert_eq!(report.rounds, cpu_rounds(&ks).rounds, "{d:?} n={n}");
            // A switch after the first rounds: the block-level sort finishes.
            let early = GpuThresholds { quicksort_switch: 3, ..GpuThresholds::DEFAULT };
            let mut dk = g.upload(&ks).unwrap();
            gpu::quicksort_device_with(&g, &mut dk, &early).unwrap();
            assert_eq!(g.download(&dk).unwrap(), want, "{d:?} n={n} early switch");
            let mut fs: Vec<f64> = ks.iter().map(|&k| k as f64 * -0.5).collect();
            let mut want_f = fs.clone();
            want_f.sort_by(f64::total_cmp);
            gpu::quicksort(&g, &mut fs).unwrap();
            assert_eq!(fs, want_f, "{d:?} n={n} f64");
        }
    }
    let mut ext = vec![i32::MAX, i32::MIN, 0, -1, i32::MIN, 5];
    gpu::quicksort(&g, &mut ext).unwrap();
    assert_eq!(ext, [i32::MIN, i32::MIN, -1, 0, 5, i32::MAX]);
    let mut nan = vec![1.0f32, f32::NAN, 0.0];
    assert!(matches!(gpu::quicksort(&g, &mut nan), Err(Error::Invalid(_))));
    let mut dnan = g.upload(&[1.0f32, f32::NAN, 0.0]).unwrap();
    assert!(matches!(gpu::quicksort_device(&g, &mut dnan), Err(Error::Invalid(_))));
}

/// The rounds stay on the device: per round a bounded number of launches and one read-back of
/// two scalars (16 bytes), never the keys; the block-level switch reads back only offsets.
#[test]
fn segmented_gpu_the_device_quicksort_reads_back_scalars_only() {
    let Some(g) = gpu_or_skip("segmented_gpu_the_device_quicksort_reads_back_scalars_only") else { return };
    let mut rng = rng("segmented_gpu_the_device_quicksort_reads_back_scalars_only");
    let n = 2000;
    let ks = keys(segmented_common::Dist::Uniform, n, &mut rng);
    let mut dk = g.upload(&ks).unwrap();
    let r = gpu::quicksort_device_with(&g, &mut dk, &never_switch()).unwrap();
    let rounds = r.rounds as u64;
    assert_eq!(r.rounds, cpu_rounds(&ks).rounds);
    assert!(rounds >= 2, "{r:?}");
    assert_eq!(r.counters.readbacks, rounds, "{r:?}");
    assert_eq!(r.counters.readback_bytes, 16 * rounds, "{r:?}: keys are {} bytes", 4 * n);
    assert!(
        r.counters.launches >= 10 * rounds && r.counters.launches <= MAX_LAUNCHES_PER_ROUND * rounds,
        "{r:?}"
    );
    // With a switch point: the rounds until it, then one read-back of the offsets.
    let t = GpuThresholds { quicksort_switch: 16, ..GpuThresholds::DEFAULT };
    let mut dk = g.upload(&ks).unwrap();
    let r = gpu::quicksort_device_with(&g, &mut dk, &t).unwrap();
    let segs = r.switched_at.expect("2000 uniform keys make 16 segments") as u64;
    assert!(segs >= 16);
    assert_eq!(r.counters.readbacks, r.rounds as u64 + 1, "{r:?}");
    assert_eq!(r.counters.readback_bytes, 16 * r.rounds as u64 + 8 * (segs + 1), "{r:?}");
    let mut want = ks.clone();
    want.sort_unstable();
    assert_eq!(g.download(&dk).unwrap(), want);
}

#[test]
fn segmented_gpu_lengths_that_disagree_are_errors() {
    let Some(g) = gpu_or_skip("segmented_gpu_lengths_that_disagree_are_errors") else { return };
    let segs = Segments::from_lengths(&[2, 3]).unwrap();
    let mut xs = vec![1i32, 2, 3, 4];
    let mismatch = |r: Result<(), Error>| assert!(matches!(r, Err(Error::LengthMismatch { .. })), "{r:?}");
    mismatch(gpu::inclusive_scan(&g, &mut xs, &segs, Add, None));
    mismatch(gpu::reverse(&g, &mut xs, &segs, None));
    mismatch(gpu::partition(&g, &mut xs, &segs, |&x| x > 1, None).map(drop));
    mismatch(gpu::split3(&g, &mut xs, &segs, &[1, 2], None).map(drop));
    mismatch(gpu::compact(&g, &xs, &[true; 4], &segs, None).map(drop));
    mismatch(gpu::sort(&g, &mut xs, &segs, Order::Ascending));
    let mut ys = vec![1i32, 2, 3, 4, 5];
    mismatch(gpu::split3(&g, &mut ys, &segs, &[1], None).map(drop));
    mismatch(gpu::compact(&g, &ys, &[true; 4], &segs, None).map(drop));
    assert_eq!(ys, [1, 2, 3, 4, 5]);
    let d = DeviceSegments::upload(&g, &segs).unwrap();
    let mut short = g.upload(&[1i32; 4]).unwrap();
    mismatch(gpu::scan_device(&g, &mut short, &d, Add, false, None));
    mismatch(gpu::reverse_device(&g, &mut short, &d, None));
    let mut dy = g.upload(&[1i32; 5]).unwrap();
    let bad_pivots = g.upload(&[1i32]).unwrap();
    mismatch(gpu::split3_device(&g, &mut dy, &d, &bad_pivots, None).map(drop));
    assert!(matches!(DeviceSegments::upload(&g, &Segments::regular(usize::MAX, 2)), Err(Error::Invalid(_))));
}
