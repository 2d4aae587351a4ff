//! GPU scans against the sequential reference (integers, exact-valued floats) and against the
//! CPU emulation of the GPU order (real-valued floats, bit for bit). Outputs are poisoned
//! before every run. Skips without a device; `HETKIT_REQUIRE_GPU=1` turns a skip into a failure.
//! The 2^26 cases are ignored in debug runs:
//! `cargo test --release -p prefix-ops --test scan_gpu -- --ignored`.

mod scan_common;

use cuda_kernels::{Gpu, GpuScalar};
use hetkit_testkit::{gpu_or_skip, rng};
use prefix_ops::scan::dispatch::{Kernel, ScanOptions};
use prefix_ops::scan::emulate::{self, Network, Shape};
use prefix_ops::scan::gpu::{self, Layout, UserOp};
use prefix_ops::scan::{Add, BuiltinOp, Max, Min, Mul, reference};
use rand::Rng;
use scan_common::{
    Kind, SIZES, Sample, heads_of, random_offsets, random_vec, reference_scan, reference_segments,
};

/// A value no correct scan writes (NaN for floats, a marker for integers).
trait Poison: GpuScalar + Sample {
    fn poison() -> Self;
}
macro_rules! poison {
    ($($t:ty => $v:expr),*) => {$( impl Poison for $t { fn poison() -> Self { $v } } )*};
}
poison!(f32 => f32::NAN, f64 => f64::NAN, i32 => 0x5a5a5a5a, u32 => 0xa5a5a5a5, i64 => 0x5a5a5a5a5a5a5a5a, u64 => 0xa5a5a5a5a5a5a5a5);

fn run<T: Poison, M: BuiltinOp<T>>(
    gpu: &Gpu,
    xs: &[T],
    layout: Layout<'_>,
    op: M,
    exclusive: bool,
    opts: &ScanOptions,
) -> Vec<T> {
    let src = gpu.upload(xs).unwrap();
    let mut dst = gpu.upload(&vec![T::poison(); xs.len()]).unwrap();
    gpu::scan_into_device(gpu, &src, &mut dst, layout, op, exclusive, opts).unwrap();
    gpu.download(&dst).unwrap()
}

fn bits<T: Copy + std::fmt::Debug>(v: &[T]) -> Vec<String> {
    v.iter().map(|x| format!("{x:?}")).collect()
}

fn check_array<T: Poison, M: BuiltinOp<T>>(gpu: &Gpu, xs: &[T], op: M) {
    for exclusive in [false, true] {
        let want = reference_scan(xs, op, exclusive);
        let got = run(gpu, xs, Layout::Array, op, exclusive, &ScanOptions::default());
        assert_eq!(bits(&got), bits(&want), "{op:?} {} n={} excl={exclusive}", T::SUFFIX, xs.len());
    }
}

fn all_ops<T: Poison>(gpu: &Gpu, test: &str, sizes: &[usize])
where
    Add: BuiltinOp<T>,
    Mul: BuiltinOp<T>,
    Min: BuiltinOp<T>,
    Max: BuiltinOp<T>,
{
    let mut rng = rng(test);
    for &n in sizes {
        check_array(gpu, &random_vec::<T>(&mut rng, n, Kind::Add), Add);
        check_array(gpu, &random_vec::<T>(&mut rng, n, Kind::Mul), Mul);
        check_array(gpu, &random_vec::<T>(&mut rng, n, Kind::MinMax), Min);
        check_array(gpu, &random_vec::<T>(&mut rng, n, Kind::MinMax), Max);
    }
}

macro_rules! gpu_array_tests {
    ($($name:ident: $t:ty),*) => {$(
        #[test]
        fn $name() {
            let Some(gpu) = gpu_or_skip(stringify!($name)) else { return };
            all_ops::<$t>(&gpu, stringify!($name), &SIZES);
        }
    )*};
}
gpu_array_tests!(gpu_arrays_i32: i32, gpu_arrays_u32: u32, gpu_arrays_i64: i64, gpu_arrays_u64: u64, gpu_arrays_f32: f32, gpu_arrays_f64: f64);

#[test]
#[ignore = "large: cargo test --release -p prefix-ops --test scan_gpu -- --ignored"]
fn gpu_arrays_2_pow_26() {
    let Some(gpu) = gpu_or_skip("gpu_arrays_2_pow_26") else { return };
    all_ops::<f32>(&gpu, "gpu_arrays_2_pow_26", &[1 << 26]);
    all_ops::<u64>(&gpu, "gpu_arrays_2_pow_26", &[1 << 26]);
}

/// Real-valued floats: bit-identical to the emulated GPU order, for every network, and
/// identical across two runs.
#[test]
fn gpu_float_order_is_deterministic_and_emulated() {
    let Some(gpu) = gpu_or_skip("gpu_float_order_is_deterministic_and_emulated") else { return };
    let mut rng = rng("gpu_float_order_is_deterministic_and_emulated");
    for n in [1usize, 33, 4097, (1 << 20) + 7] {
        let xs: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0f32..1.0)).collect();
        for net in [Network::KoggeStone, Network::Sklansky, Network::LadnerFischer] {
            let opts = ScanOptions { kernel: Some(Kernel::Lookback), network: net };
            for exclusive in [false, true] {
                let mut want = xs.clone();
                emulate::lookback(&mut want, Add, Shape { network: net, ..Shape::lookback(4) }, exclusive);
                let a = run(&gpu, &xs, Layout::Array, Add, exclusive, &opts);
                let b = run(&gpu, &xs, Layout::Array, Add, exclusive, &opts);
                assert_eq!(bits(&a), bits(&b), "two runs differ: n={n} {net:?}");
                assert_eq!(bits(&a), bits(&want), "GPU vs emulation: n={n} {net:?} excl={exclusive}");
            }
        }
        let xs64: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
        let mut want = xs64.clone();
        emulate::lookback(&mut want, Add, Shape::lookback(8), false);
        assert_eq!(bits(&run(&gpu, &xs64, Layout::Array, Add, false, &ScanOptions::default())), bits(&want));
    }
}

/// Every batched kernel on awkward G x N, against the reference (exact) and the emulation (floats).
#[test]
fn gpu_batched_rows_every_kernel() {
    let Some(gpu) = gpu_or_skip("gpu_batched_rows_every_kernel") else { return };
    let mut rng = rng("gpu_batched_rows_every_kernel");
    let kernels = [
        None,
        Some(Kernel::LookbackRows),
        Some(Kernel::RowsWarpSmall),
        Some(Kernel::RowsWarpLarge),
        Some(Kernel::RowsBlock),
    ];
    for (g, n) in
        [(1, 1), (7, 1), (3, 31), (5, 33), (64, 32), (2, 1023), (9, 1025), (3, 5000), (1000, 17), (600, 4096)]
    {
        let xs = random_vec::<i64>(&mut rng, g * n, Kind::Add);
        let xf: Vec<f32> = (0..g * n).map(|_| rng.random_range(-1.0f32..1.0)).collect();
        for kernel in kernels {
            let opts = ScanOptions { kernel, network: Network::KoggeStone };
            for exclusive in [false, true] {
                let mut want = xs.clone();
                for r in want.chunks_mut(n) {
                    if exclusive { reference::exclusive(r, Add) } else { reference::inclusive(r, Add) }
                }
                let got = run(&gpu, &xs, Layout::Rows { row_len: n }, Add, exclusive, &opts);
                assert_eq!(got, want, "G={g} N={n} {kernel:?} excl={exclusive}");
                let mut want = xf.clone();
                let shape = Shape::lookback(4);
                match kernel {
                    Some(Kernel::RowsWarpSmall) => {
                        emulate::rows_warp(&mut want, n, Add, 4, Network::KoggeStone, exclusive)
                    }
                    Some(Kernel::RowsWarpLarge) => {
                        emulate::rows_warp(&mut want, n, Add, 16, Network::KoggeStone, exclusive)
                    }
                    Some(Kernel::RowsBlock) => emulate::rows_block(&mut want, n, Add, shape, exclusive),
                    Some(Kernel::LookbackRows) => {
                        emulate::lookback_heads(&mut want, |i| i % n == 0, Add, shape, exclusive)
                    }
                    _ => continue,
                }
                let got = run(&gpu, &xf, Layout::Rows { row_len: n }, Add, exclusive, &opts);
                assert_eq!(bits(&got), bits(&want), "f32 G={g} N={n} {kernel:?} excl={exclusive}");
            }
        }
    }
}

#[test]
fn gpu_segments_load_balanced() {
    let Some(gpu) = gpu_or_skip("gpu_segments_load_balanced") else { return };
    let mut rng = rng("gpu_segments_load_balanced");
    for &n in &SIZES {
        for segs in [1usize, 2, n / 3 + 1, n + 5] {
            let offsets = random_offsets(&mut rng, n, segs);
            let xs = random_vec::<u32>(&mut rng, n, Kind::Add);
            for exclusive in [false, true] {
                let want = reference_segments(&xs, &offsets, Add, exclusive);
                let mut got = xs.clone();
                gpu::scan_segments(&gpu, &mut got, &offsets, Add, exclusive).unwrap();
                assert_eq!(got, want, "n={n} segs={segs} excl={exclusive}");
            }
        }
    }
    // One huge segment and many empty ones.
    let n = (1 << 20) + 7;
    let xs = random_vec::<i64>(&mut rng, n, Kind::Add);
    for offsets in [vec![0, n], vec![0, 0, 0, n, n]] {
        let mut want = xs.clone();
        reference::inclusive_segments(&mut want, &offsets, Add);
        let mut got = xs.clone();
        gpu::scan_segments(&gpu, &mut got, &offsets, Add, false).unwrap();
        assert_eq!(got, want);
    }
}

#[test]
fn gpu_compaction_and_partition() {
    let Some(gpu) = gpu_or_skip("gpu_compaction_and_partition") else { return };
    let mut rng = rng("gpu_compaction_and_partition");
    for &n in &SIZES {
        let xs = random_vec::<f64>(&mut rng, n, Kind::MinMax);
        let keep: Vec<bool> = (0..n).map(|_| rng.random::<bool>()).collect();
        let kept: Vec<f64> = xs.iter().zip(&keep).filter(|(_, k)| **k).map(|(x, _)| *x).collect();
        let rest: Vec<f64> = xs.iter().zip(&keep).filter(|(_, k)| !**k).map(|(x, _)| *x).collect();
        assert_eq!(gpu::compact(&gpu, &xs, &keep).unwrap(), kept);
        let (all, k) = gpu::partition(&gpu, &xs, &keep).unwrap();
        assert_eq!(k, kept.len());
        assert_eq!(all, [kept, rest].concat());
    }
    // Flags other than 0/1 are a caller error, reported (and never written out of range).
    let src = gpu.upload(&[1.0f32, 2.0, 3.0, 4.0]).unwrap();
    let flags = gpu.upload(&[3u32, 3, 3, 3]).unwrap();
    let mut dst = gpu.zeros::<f32>(4).unwrap();
    let r = gpu::select_device(&gpu, &src, &flags, &mut dst, true);
    assert!(matches!(r, Err(prefix_ops::Error::Invalid(_))), "{r:?}");
}

#[test]
fn gpu_user_operator_by_nvrtc() {
    let Some(gpu) = gpu_or_skip("gpu_user_operator_by_nvrtc") else { return };
    let mut rng = rng("gpu_user_operator_by_nvrtc");
    // Not commutative: "a then b" keeps b's high half.
    let op = UserOp::new("(b & 0xffff0000ull) | ((a + b) & 0xffffull)", "0ull");
    #[derive(Clone, Copy)]
    struct Cpu;
    impl prefix_ops::scan::Monoid<u64> for Cpu {
        fn identity(&self) -> u64 {
            0
        }
        fn combine(&self, a: u64, b: u64) -> u64 {
            (b & 0xffff0000) | (a.wrapping_add(b) & 0xffff)
        }
    }
    for &n in &SIZES {
        let xs: Vec<u64> = (0..n).map(|_| rng.random::<u64>() & 0xffff_ffff).collect();
        let mut want = xs.clone();
        reference::inclusive(&mut want, Cpu);
        let mut got = xs.clone();
        gpu::user_inclusive(&gpu, &mut got, &op).unwrap();
        assert_eq!(got, want, "n={n}");
    }
    let bad = UserOp::new("a +* b", "0");
    assert!(matches!(gpu::user_inclusive(&gpu, &mut [1u32, 2], &bad), Err(prefix_ops::Error::Gpu(_))));
}

#[test]
fn gpu_bad_input_is_an_error() {
    let Some(gpu) = gpu_or_skip("gpu_bad_input_is_an_error") else { return };
    let mut xs = vec![1.0f32; 10];
    assert!(gpu::inclusive_rows(&gpu, &mut xs, 3, Add).is_err());
    assert!(gpu::scan_segments(&gpu, &mut xs, &[0, 5, 4, 10], Add, false).is_err());
    let src = gpu.upload(&xs).unwrap();
    let mut short = gpu.zeros::<f32>(9).unwrap();
    assert!(
        gpu::scan_into_device(&gpu, &src, &mut short, Layout::Array, Add, false, &ScanOptions::default())
            .is_err()
    );
    let mut e: Vec<f32> = vec![];
    gpu::inclusive(&gpu, &mut e, Add).unwrap();
}

/// Rows reference: every row scanned on its own by the sequential loop.
fn rows_reference<T: Copy, M: prefix_ops::scan::Monoid<T>>(
    xs: &[T],
    n: usize,
    op: M,
    exclusive: bool,
) -> Vec<T> {
    let mut want = xs.to_vec();
    for r in want.chunks_mut(n.max(1)) {
        if exclusive { reference::exclusive(r, op) } else { reference::inclusive(r, op) }
    }
    want
}

/// Every operator on rows and segments for one type, against the reference: the (value, head)
/// pairs of the look-back kernels have a different layout for 4- and 8-byte types.
fn rows_and_segments_all_ops<T: Poison>(gpu: &Gpu, test: &str)
where
    Add: BuiltinOp<T>,
    Mul: BuiltinOp<T>,
    Min: BuiltinOp<T>,
    Max: BuiltinOp<T>,
{
    fn one<T: Poison, M: BuiltinOp<T>>(gpu: &Gpu, xs: &[T], g: usize, n: usize, offsets: &[usize], op: M) {
        for kernel in [None, Some(Kernel::LookbackRows), Some(Kernel::RowsWarpSmall), Some(Kernel::RowsBlock)]
        {
            let opts = ScanOptions { kernel, network: Network::KoggeStone };
            for exclusive in [false, true] {
                let want = rows_reference(xs, n, op, exclusive);
                let got = run(gpu, xs, Layout::Rows { row_len: n }, op, exclusive, &opts);
                assert_eq!(
                    bits(&got),
                    bits(&want),
                    "{op:?} {} G={g} N={n} {kernel:?} excl={exclusive}",
                    T::SUFFIX
                );
            }
        }
        for exclusive in [false, true] {
            let want = reference_segments(xs, offsets, op, exclusive);
            let got = run(gpu, xs, Layout::Segments(offsets), op, exclusive, &ScanOptions::default());
            assert_eq!(
                bits(&got),
                bits(&want),
                "{op:?} {} segments n={} excl={exclusive}",
                T::SUFFIX,
                xs.len()
            );
        }
    }
    let mut rng = rng(test);
    for (g, n) in [(1, 1), (5, 1), (3, 33), (7, 129), (2, 2049), (3, 4097)] {
        let offsets = random_offsets(&mut rng, g * n, g + 3);
        one(gpu, &random_vec::<T>(&mut rng, g * n, Kind::Add), g, n, &offsets, Add);
        one(gpu, &random_vec::<T>(&mut rng, g * n, Kind::Mul), g, n, &offsets, Mul);
        one(gpu, &random_vec::<T>(&mut rng, g * n, Kind::MinMax), g, n, &offsets, Min);
        one(gpu, &random_vec::<T>(&mut rng, g * n, Kind::MinMax), g, n, &offsets, Max);
    }
}

macro_rules! gpu_rows_segments_tests {
    ($($name:ident: $t:ty),*) => {$(
        #[test]
        fn $name() {
            let Some(gpu) = gpu_or_skip(stringify!($name)) else { return };
            rows_and_segments_all_ops::<$t>(&gpu, stringify!($name));
        }
    )*};
}
gpu_rows_segments_tests!(gpu_rows_segments_i32: i32, gpu_rows_segments_u32: u32, gpu_rows_segments_f32: f32, gpu_rows_segments_i64: i64, gpu_rows_segments_u64: u64, gpu_rows_segments_f64: f64);

/// A forced row kernel on one array: the look-back with heads scans (value, head) pairs, whose
/// scratch is twice as large for 8-byte types as the plain look-back's (it used to be sized by
/// the layout and overflowed).
#[test]
fn gpu_forced_kernels_on_one_array() {
    let Some(gpu) = gpu_or_skip("gpu_forced_kernels_on_one_array") else { return };
    let mut rng = rng("gpu_forced_kernels_on_one_array");
    for n in [1usize, 2049, 3 * 2048 + 5, 1 << 17] {
        let xs: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
        let xi = random_vec::<i64>(&mut rng, n, Kind::Add);
        for kernel in [Kernel::LookbackRows, Kernel::RowsWarpSmall, Kernel::RowsWarpLarge, Kernel::RowsBlock]
        {
            let opts = ScanOptions { kernel: Some(kernel), network: Network::KoggeStone };
            for exclusive in [false, true] {
                let got = run(&gpu, &xi, Layout::Array, Add, exclusive, &opts);
                assert_eq!(
                    got,
                    rows_reference(&xi, n, Add, exclusive),
                    "i64 n={n} {kernel:?} excl={exclusive}"
                );
                let mut want = xs.clone();
                match kernel {
                    Kernel::LookbackRows => {
                        emulate::lookback_heads(&mut want, |i| i == 0, Add, Shape::lookback(8), exclusive)
                    }
                    Kernel::RowsWarpSmall => {
                        emulate::rows_warp(&mut want, n, Add, 2, Network::KoggeStone, exclusive)
                    }
                    Kernel::RowsWarpLarge => {
                        emulate::rows_warp(&mut want, n, Add, 8, Network::KoggeStone, exclusive)
                    }
                    _ => emulate::rows_block(&mut want, n, Add, Shape::lookback(8), exclusive),
                }
                let got = run(&gpu, &xs, Layout::Array, Add, exclusive, &opts);
                assert_eq!(bits(&got), bits(&want), "f64 n={n} {kernel:?} excl={exclusive}");
            }
        }
    }
}

/// Real-valued f64 rows and segments: the 16-byte (value, head) pairs, bit for bit.
#[test]
fn gpu_f64_heads_match_emulation() {
    let Some(gpu) = gpu_or_skip("gpu_f64_heads_match_emulation") else { return };
    let mut rng = rng("gpu_f64_heads_match_emulation");
    for (g, n) in [(3, 1000), (2, 5000), (1, 70_001)] {
        let xs: Vec<f64> = (0..g * n).map(|_| rng.random_range(-1.0..1.0)).collect();
        let offsets = random_offsets(&mut rng, g * n, 40);
        let heads = heads_of(&offsets, g * n);
        for exclusive in [false, true] {
            let opts = ScanOptions { kernel: Some(Kernel::LookbackRows), network: Network::KoggeStone };
            let mut want = xs.clone();
            emulate::lookback_heads(&mut want, |i| i % n == 0, Add, Shape::lookback(8), exclusive);
            let got = run(&gpu, &xs, Layout::Rows { row_len: n }, Add, exclusive, &opts);
            assert_eq!(bits(&got), bits(&want), "rows G={g} N={n} excl={exclusive}");
            let mut want = xs.clone();
            emulate::lookback_heads(&mut want, |i| heads[i], Add, Shape::lookback(8), exclusive);
            let got = run(&gpu, &xs, Layout::Segments(&offsets), Add, exclusive, &ScanOptions::default());
            assert_eq!(bits(&got), bits(&want), "segments n={} excl={exclusive}", g * n);
        }
    }
}

/// The network study kernels of the batched warp scan, bit for bit against the emulation.
#[test]
fn gpu_rows_networks_match_emulation() {
    let Some(gpu) = gpu_or_skip("gpu_rows_networks_match_emulation") else { return };
    let mut rng = rng("gpu_rows_networks_match_emulation");
    for (g, n) in [(9, 33), (5, 1025), (3, 4096)] {
        let xs: Vec<f32> = (0..g * n).map(|_| rng.random_range(-1.0f32..1.0)).collect();
        for net in [Network::KoggeStone, Network::Sklansky, Network::LadnerFischer] {
            let opts = ScanOptions { kernel: Some(Kernel::RowsWarpLarge), network: net };
            for exclusive in [false, true] {
                let mut want = xs.clone();
                emulate::rows_warp(&mut want, n, Add, 16, net, exclusive);
                let got = run(&gpu, &xs, Layout::Rows { row_len: n }, Add, exclusive, &opts);
                assert_eq!(bits(&got), bits(&want), "G={g} N={n} {net:?} excl={exclusive}");
            }
        }
    }
    // Study networks exist only for f32 Add with two kernels: anything else is an error.
    let opts = ScanOptions { kernel: Some(Kernel::RowsBlock), network: Network::Sklansky };
    let src = gpu.upload(&[1.0f32; 64]).unwrap();
    let mut dst = gpu.zeros::<f32>(64).unwrap();
    let r = gpu::scan_into_device(&gpu, &src, &mut dst, Layout::Rows { row_len: 32 }, Add, false, &opts);
    assert!(matches!(r, Err(prefix_ops::Error::Invalid(_))), "{r:?}");
}

/// The in-place host conveniences (upload, scan in place, download).
#[test]
fn gpu_in_place_host_functions() {
    let Some(gpu) = gpu_or_skip("gpu_in_place_host_functions") else { return };
    let mut rng = rng("gpu_in_place_host_functions");
    for (g, n) in [(1, 1), (1, 4097), (4, 1000), (300, 7)] {
        let xs = random_vec::<i32>(&mut rng, g * n, Kind::Add);
        let mut got = xs.clone();
        gpu::inclusive(&gpu, &mut got, Add).unwrap();
        assert_eq!(got, rows_reference(&xs, xs.len(), Add, false), "inclusive n={}", xs.len());
        let mut got = xs.clone();
        gpu::exclusive(&gpu, &mut got, Max).unwrap();
        assert_eq!(got, rows_reference(&xs, xs.len(), Max, true), "exclusive n={}", xs.len());
        let mut got = xs.clone();
        gpu::inclusive_rows(&gpu, &mut got, n, Min).unwrap();
        assert_eq!(got, rows_reference(&xs, n, Min, false), "inclusive_rows G={g} N={n}");
        let mut got = xs.clone();
        gpu::exclusive_rows(&gpu, &mut got, n, Add).unwrap();
        assert_eq!(got, rows_reference(&xs, n, Add, true), "exclusive_rows G={g} N={n}");
    }
}

/// User operators on rows and segments, exclusive too, f32 and f64 (bit for bit against the
/// emulation of the same order), and the cache keeps different expressions apart.
#[test]
fn gpu_user_operator_layouts_and_types() {
    let Some(gpu) = gpu_or_skip("gpu_user_operator_layouts_and_types") else { return };
    let mut rng = rng("gpu_user_operator_layouts_and_types");
    let sum = UserOp::new("a + b", "-0.0");
    let (g, n) = (3, 3000);
    let xs: Vec<f64> = (0..g * n).map(|_| rng.random_range(-1.0..1.0)).collect();
    let xf: Vec<f32> = xs.iter().map(|&x| x as f32).collect();
    let offsets = random_offsets(&mut rng, g * n, 17);
    let heads = heads_of(&offsets, g * n);
    for exclusive in [false, true] {
        let user = |xs: &[f64], layout: Layout<'_>| {
            let src = gpu.upload(xs).unwrap();
            let mut dst = gpu.upload(&vec![f64::NAN; xs.len()]).unwrap();
            gpu::user_scan_into_device(&gpu, &src, &mut dst, layout, &sum, exclusive).unwrap();
            gpu.download(&dst).unwrap()
        };
        let mut want = xs.clone();
        emulate::lookback(&mut want, Add, Shape::lookback(8), exclusive);
        assert_eq!(bits(&user(&xs, Layout::Array)), bits(&want), "array excl={exclusive}");
        let mut want = xs.clone();
        emulate::lookback_heads(&mut want, |i| i % n == 0, Add, Shape::lookback(8), exclusive);
        assert_eq!(bits(&user(&xs, Layout::Rows { row_len: n })), bits(&want), "rows excl={exclusive}");
        let mut want = xs.clone();
        emulate::lookback_heads(&mut want, |i| heads[i], Add, Shape::lookback(8), exclusive);
        assert_eq!(bits(&user(&xs, Layout::Segments(&offsets))), bits(&want), "segments excl={exclusive}");
    }
    // f32: same expression, another module (the type is part of the cache key).
    let mut got = xf.clone();
    gpu::user_inclusive(&gpu, &mut got, &sum).unwrap();
    let mut want = xf.clone();
    emulate::lookback(&mut want, Add, Shape::lookback(4), false);
    assert_eq!(bits(&got), bits(&want));
    // Another expression on the same type must not reuse the sum's module.
    let max = UserOp::new("fmax(a, b)", "-1.0 / 0.0");
    let src = gpu.upload(&xs).unwrap();
    let mut dst = gpu.zeros::<f64>(xs.len()).unwrap();
    gpu::user_scan_into_device(&gpu, &src, &mut dst, Layout::Array, &max, false).unwrap();
    assert_eq!(gpu.download(&dst).unwrap(), rows_reference(&xs, xs.len(), Max, false));
    // A line break would cut the generated #define: rejected before NVRTC.
    let broken = UserOp::new("a +\nb", "0");
    assert!(matches!(gpu::user_inclusive(&gpu, &mut [1i32, 2], &broken), Err(prefix_ops::Error::Invalid(_))));
    // Empty device buffers: nothing to do, no error.
    let empty = gpu.upload::<f64>(&[]).unwrap();
    let mut empty_dst = gpu.zeros::<f64>(0).unwrap();
    gpu::user_scan_into_device(&gpu, &empty, &mut empty_dst, Layout::Array, &sum, false).unwrap();
}
