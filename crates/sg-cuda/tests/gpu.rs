//! Every kernel on the device against the sg-core references (skips without a GPU; fails under
//! `HETKIT_REQUIRE_GPU=1`). Outputs are poisoned with NaN before each run.

mod common;

use common::{AWKWARD_M, max_rel, random_points, random_values, specs};
use cuda_kernels::Gpu;
use hetkit_testkit::{TestRng, gpu_or_skip, rng};
use ndarray::{Array2, ArrayView2};
use rand::Rng;
use sg_core::{GridSpec, reference as r};
use sg_cuda::{DeviceGrid, DeviceMatrix, DeviceReal, EvalConfig, SpvmConfig, SweepConfig};

fn check_sweeps<T: DeviceReal>(gpu: &Gpu, g: &mut TestRng, spec: &GridSpec, ncomp: usize, tol: f64) {
    let n = spec.len() as usize * ncomp;
    let nodal: Vec<T> = random_values(g, n);
    let cfg = SweepConfig {
        block_size: [32, 128, 256][g.random_range(0..3)],
        group_points: [8, 4096][g.random_range(0..2)],
    };
    let mut dev = DeviceGrid::from_values(gpu, spec.clone(), ncomp, &nodal, cfg).unwrap();
    let mut want = nodal.clone();
    r::hierarchize(spec, &mut want, ncomp).unwrap();
    dev.hierarchize().unwrap();
    let got = dev.download_values().unwrap();
    let e = max_rel(&got, &want);
    assert!(e <= tol, "hierarchize {spec:?} ncomp {ncomp} {cfg:?}: {e:e}");
    dev.dehierarchize().unwrap();
    let back = dev.download_values().unwrap();
    let mut want_back = want.clone();
    r::dehierarchize(spec, &mut want_back, ncomp).unwrap();
    let e = max_rel(&back, &want_back);
    assert!(e <= tol, "dehierarchize {spec:?} ncomp {ncomp}: {e:e}");
}

#[test]
fn gpu_hierarchize_matches_reference() {
    let Some(gpu) = gpu_or_skip("gpu_hierarchize_matches_reference") else { return };
    let mut g = rng("gpu_hierarchize_matches_reference");
    for spec in specs(&mut g, 12) {
        check_sweeps::<f64>(&gpu, &mut g, &spec, 1, 1e-12);
        check_sweeps::<f32>(&gpu, &mut g, &spec, 1, 1e-5);
    }
    for spec in specs(&mut g, 4) {
        check_sweeps::<f64>(&gpu, &mut g, &spec, 3, 1e-12);
    }
}

fn check_eval<T: DeviceReal>(gpu: &Gpu, g: &mut TestRng, spec: &GridSpec, ncomp: usize, m: usize, tol: f64) {
    let d = spec.dim();
    let values: Vec<T> = random_values(g, spec.len() as usize * ncomp);
    let points: Vec<T> = random_points(g, m, d);
    let mut want = vec![T::zero(); m * ncomp];
    r::evaluate_batch_into(spec, &values, ncomp, &points, &mut want).unwrap();
    let dev = DeviceGrid::from_values(gpu, spec.clone(), ncomp, &values, SweepConfig::default()).unwrap();
    let dev_points = gpu.upload(&points).unwrap();
    for pt in [1, 2, 4] {
        for (bs, stage) in [(32, true), (128, false), (256, true)] {
            let cfg = EvalConfig { block_size: bs, points_per_thread: Some(pt), stage_trie: stage };
            let mut out = gpu.upload(&vec![T::nan(); (m * ncomp).max(1)]).unwrap();
            dev.evaluate_device(gpu, &dev_points_or_dummy(gpu, &dev_points, m), m, &mut out, &cfg).unwrap();
            let got = gpu.download(&out).unwrap();
            let e = common::eval_err(spec, &values, ncomp, &points, &got[..m * ncomp]);
            assert!(e <= tol, "{spec:?} m {m} {cfg:?}: {e:e}");
        }
    }
    let view = ArrayView2::from_shape((m, d), &points).unwrap();
    let got = dev.evaluate(view).unwrap();
    assert!(common::eval_err(spec, &values, ncomp, &points, got.as_slice().unwrap()) <= tol);
    assert_eq!(want.len(), m * ncomp);
}

/// cudarc cannot allocate empty buffers portably; m = 0 runs against a one-element buffer.
fn dev_points_or_dummy<T: DeviceReal>(
    gpu: &Gpu,
    p: &cuda_kernels::DeviceBuffer<T>,
    m: usize,
) -> cuda_kernels::DeviceBuffer<T> {
    if m == 0 { gpu.zeros::<T>(1).unwrap() } else { p.clone() }
}

#[test]
fn gpu_evaluate_matches_reference() {
    let Some(gpu) = gpu_or_skip("gpu_evaluate_matches_reference") else { return };
    let mut g = rng("gpu_evaluate_matches_reference");
    for spec in specs(&mut g, 12) {
        let m = AWKWARD_M[g.random_range(0..AWKWARD_M.len())];
        check_eval::<f64>(&gpu, &mut g, &spec, 1, m, 1e-12);
        check_eval::<f32>(&gpu, &mut g, &spec, 1, m, 1e-5);
    }
    for spec in specs(&mut g, 3) {
        check_eval::<f64>(&gpu, &mut g, &spec, 2, 33, 1e-12);
        // All components in one walk, the extra ones in shared accumulators.
        check_eval::<f32>(&gpu, &mut g, &spec, 7, 97, 1e-5);
    }
    // More components than one walk's shared accumulators hold at bs 256, pt 4: several tiles.
    let spec = GridSpec::regular(4, 3).unwrap().with_boundary().unwrap();
    check_eval::<f64>(&gpu, &mut g, &spec, 40, 37, 1e-12);
    // Every templated depth (specs() stops at d = 12) and a boundary grid at d = 10.
    for spec in common::high_dim_specs(&mut g) {
        let m = AWKWARD_M[g.random_range(0..AWKWARD_M.len())];
        check_eval::<f64>(&gpu, &mut g, &spec, 1, m, 1e-12);
        check_eval::<f32>(&gpu, &mut g, &spec, 1, m, 1e-5);
    }
    check_eval::<f64>(
        &gpu,
        &mut g,
        &GridSpec::regular(10, 2).unwrap().with_boundary().unwrap(),
        1,
        97,
        1e-12,
    );
    // The generic kernel (d > 16). Not with boundary: such grids have at least 3^d points.
    check_eval::<f64>(&gpu, &mut g, &GridSpec::regular(18, 2).unwrap(), 1, 97, 1e-12);
    check_eval::<f32>(&gpu, &mut g, &GridSpec::regular(17, 3).unwrap(), 1, 33, 1e-5);
    check_eval::<f64>(&gpu, &mut g, &GridSpec::truncated(20, 3, &[2; 20]).unwrap(), 2, 257, 1e-12);
}

/// Tries past the 48 KiB default (staging needs the opt-in attribute) and past the opt-in limit
/// (the kernel must read the trie from global memory): same results staged or not, against the
/// reference. A block size the kernel's registers do not allow is a configuration error, not a
/// failed launch.
#[test]
fn gpu_evaluate_large_tries_staged_and_from_global() {
    let Some(gpu) = gpu_or_skip("gpu_evaluate_large_tries_staged_and_from_global") else { return };
    let mut g = rng("gpu_evaluate_large_tries_staged_and_from_global");
    let optin = gpu.props().shared_per_block_optin;
    let mut sizes = Vec::new();
    for (d, n) in [(16usize, 5u32), (8, 8), (10, 8)] {
        let spec = GridSpec::regular(d, n).unwrap();
        let values: Vec<f64> = random_values(&mut g, spec.len() as usize);
        let dev = DeviceGrid::from_values(&gpu, spec.clone(), 1, &values, SweepConfig::default()).unwrap();
        sizes.push(dev.trie().bytes());
        let m = 97;
        let points: Vec<f64> = random_points(&mut g, m, d);
        let dev_points = gpu.upload(&points).unwrap();
        for (bs, pt, stage) in
            [(128, None, true), (128, None, false), (64, Some(2), true), (1024, Some(4), true)]
        {
            let cfg = EvalConfig { block_size: bs, points_per_thread: pt, stage_trie: stage };
            let mut out = gpu.upload(&vec![f64::NAN; m]).unwrap();
            match dev.evaluate_device(&gpu, &dev_points, m, &mut out, &cfg) {
                Ok(()) => {
                    let got = gpu.download(&out).unwrap();
                    let e = common::eval_err(&spec, &values, 1, &points, &got);
                    assert!(e <= 1e-12, "d {d} n {n} trie {} bytes {cfg:?}: {e:e}", dev.trie().bytes());
                }
                Err(sg_cuda::Error::Config(msg)) if bs == 1024 => println!("d {d} bs 1024: {msg}"),
                Err(e) => panic!("d {d} n {n} {cfg:?}: {e}"),
            }
        }
    }
    assert!(
        sizes.iter().any(|&b| b > 48 * 1024 && b <= optin),
        "no trie between 48 KiB and {optin}: {sizes:?}"
    );
    assert!(sizes.iter().any(|&b| b > optin), "no trie past {optin} bytes: {sizes:?}");
}

/// Vector-valued grids through the streamed path: batches that grow and shrink, so each stream's
/// pinned buffers are reused at smaller sizes and reallocated at larger ones.
#[test]
fn gpu_evaluate_stream_vector_grid() {
    let Some(gpu) = gpu_or_skip("gpu_evaluate_stream_vector_grid") else { return };
    let mut g = rng("gpu_evaluate_stream_vector_grid");
    let spec = GridSpec::truncated(3, 5, &[5, 2, 4]).unwrap().with_boundary().unwrap();
    let ncomp = 3;
    let values: Vec<f32> = random_values(&mut g, spec.len() as usize * ncomp);
    let dev = DeviceGrid::from_values(&gpu, spec.clone(), ncomp, &values, SweepConfig::default()).unwrap();
    let sizes = [2usize, 5000, 1, 3, 129, 7000, 0, 33];
    let batches: Vec<Array2<f32>> =
        sizes.iter().map(|&m| Array2::from_shape_vec((m, 3), random_points(&mut g, m, 3)).unwrap()).collect();
    let cfg = EvalConfig { block_size: 64, points_per_thread: Some(2), stage_trie: true };
    let got = dev.evaluate_stream(batches.iter().map(|b| b.view()), &cfg).unwrap();
    assert_eq!(got.len(), batches.len());
    for (b, y) in batches.iter().zip(&got) {
        assert_eq!(y.shape(), &[b.nrows(), ncomp]);
        let e = common::eval_err(&spec, &values, ncomp, b.as_slice().unwrap(), y.as_slice().unwrap());
        assert!(e <= 1e-5, "batch of {}: {e:e}", b.nrows());
    }
}

#[test]
fn gpu_evaluate_stream_matches_reference() {
    let Some(gpu) = gpu_or_skip("gpu_evaluate_stream_matches_reference") else { return };
    let mut g = rng("gpu_evaluate_stream_matches_reference");
    let spec = GridSpec::regular(5, 5).unwrap();
    let values: Vec<f64> = random_values(&mut g, spec.len() as usize);
    let dev = DeviceGrid::from_values(&gpu, spec.clone(), 1, &values, SweepConfig::default()).unwrap();
    let sizes = [33usize, 1000, 0, 1, 4097, 257];
    let batches: Vec<Array2<f64>> =
        sizes.iter().map(|&m| Array2::from_shape_vec((m, 5), random_points(&mut g, m, 5)).unwrap()).collect();
    let got = dev.evaluate_stream(batches.iter().map(|b| b.view()), &EvalConfig::default()).unwrap();
    assert_eq!(got.len(), batches.len());
    for (b, y) in batches.iter().zip(&got) {
        let mut want = vec![0.0; b.nrows()];
        r::evaluate_batch_into(&spec, &values, 1, b.as_slice().unwrap(), &mut want).unwrap();
        assert!(max_rel(y.as_slice().unwrap(), &want) <= 1e-12);
    }
}

#[test]
fn gpu_spvm_matches_reference() {
    let Some(gpu) = gpu_or_skip("gpu_spvm_matches_reference") else { return };
    let mut g = rng("gpu_spvm_matches_reference");
    for &(rows, p, nsel) in
        &[(1usize, 1usize, 1usize), (7, 33, 5), (50, 257, 97), (300, 1031, 300), (3, 31, 0)]
    {
        let a: Vec<f64> = random_values(&mut g, rows * p);
        let x: Vec<f64> = random_values(&mut g, nsel);
        let ix: Vec<usize> = (0..nsel).map(|_| g.random_range(0..rows)).collect();
        let want = r::spvm(&x, &ix, &a, p).unwrap();
        let dm = DeviceMatrix::upload(&gpu, &a, p).unwrap();
        for pt in [1, 2, 4] {
            let got = dm.spvm_with(&x, &ix, &SpvmConfig { block_size: 64, outputs_per_thread: pt }).unwrap();
            assert!(max_rel(&got, &want) <= 1e-12, "rows {rows} p {p} nsel {nsel} pt {pt}");
        }
        let a32: Vec<f32> = a.iter().map(|&v| v as f32).collect();
        let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
        let want32 = r::spvm(&x32, &ix, &a32, p).unwrap();
        let got32 = DeviceMatrix::upload(&gpu, &a32, p).unwrap().spvm(&x32, &ix).unwrap();
        assert!(max_rel(&got32, &want32) <= 1e-5);
    }
}

/// Many selected rows over few columns: the grid splits the rows into chunks whose partial sums
/// a second kernel adds in chunk order. Integer values make every order exact, so the result
/// equals a sequential loop bit for bit.
#[test]
fn gpu_spvm_row_chunks_are_exact() {
    let Some(gpu) = gpu_or_skip("gpu_spvm_row_chunks_are_exact") else { return };
    let mut g = rng("gpu_spvm_row_chunks_are_exact");
    let (rows, p, nsel) = (40usize, 37usize, 1031usize);
    let a: Vec<f64> = (0..rows * p).map(|_| f64::from(g.random_range(-8i32..=8))).collect();
    let x: Vec<f64> = (0..nsel).map(|_| f64::from(g.random_range(-8i32..=8))).collect();
    let ix: Vec<usize> = (0..nsel).map(|_| g.random_range(0..rows)).collect();
    let mut want = vec![0.0f64; p];
    for (xi, &r) in x.iter().zip(&ix) {
        for (j, w) in want.iter_mut().enumerate() {
            *w += xi * a[r * p + j];
        }
    }
    let dm = DeviceMatrix::upload(&gpu, &a, p).unwrap();
    let cfg = SpvmConfig::default();
    let plan = dm.plan(&cfg, nsel).unwrap();
    assert!(plan.chunks > 1 && plan.launches() == 2, "{plan:?}");
    assert_eq!(dm.spvm_with(&x, &ix, &cfg).unwrap(), want);
    let a32: Vec<f32> = a.iter().map(|&v| v as f32).collect();
    let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
    let want32: Vec<f32> = want.iter().map(|&v| v as f32).collect();
    assert_eq!(DeviceMatrix::upload(&gpu, &a32, p).unwrap().spvm(&x32, &ix).unwrap(), want32);
}

/// `spvm_device` trusts no index: a row past the matrix reads nothing and poisons the result.
#[test]
fn gpu_spvm_device_row_past_the_matrix_gives_nan() {
    let Some(gpu) = gpu_or_skip("gpu_spvm_device_row_past_the_matrix_gives_nan") else { return };
    let (rows, p) = (5usize, 70usize);
    let dm = DeviceMatrix::upload(&gpu, &vec![1.0f32; rows * p], p).unwrap();
    let x = gpu.upload(&[1.0f32, 2.0, 3.0]).unwrap();
    let mut y = gpu.zeros::<f32>(p).unwrap();
    for (ix, poisoned) in [([0u64, 4, 2], false), ([0, rows as u64, 2], true), ([0, u64::MAX, 2], true)] {
        let dix = gpu.upload(&ix).unwrap();
        dm.spvm_device(&x, &dix, &mut y, &SpvmConfig::default()).unwrap();
        let got = gpu.download(&y).unwrap();
        if poisoned {
            assert!(got.iter().all(|v| v.is_nan()), "{ix:?}: {got:?}");
        } else {
            assert!(got.iter().all(|&v| v == 6.0), "{ix:?}: {got:?}");
        }
    }
}

#[test]
fn gpu_bad_shapes_are_errors() {
    let Some(gpu) = gpu_or_skip("gpu_bad_shapes_are_errors") else { return };
    let spec = GridSpec::regular(3, 3).unwrap();
    assert!(
        DeviceGrid::<f64>::from_values(&gpu, spec.clone(), 1, &[0.0; 5], SweepConfig::default()).is_err()
    );
    let dev = DeviceGrid::<f64>::from_values(
        &gpu,
        spec.clone(),
        1,
        &vec![0.0; spec.len() as usize],
        SweepConfig::default(),
    )
    .unwrap();
    assert!(dev.evaluate(Array2::<f64>::zeros((4, 2)).view()).is_err());
    assert!(dev.evaluate(Array2::<f64>::from_elem((1, 3), 1.5).view()).is_err());
    assert!(dev.evaluate(Array2::<f64>::from_elem((1, 3), f64::NAN).view()).is_err());
    let bad = EvalConfig { block_size: 100, ..EvalConfig::default() };
    assert!(dev.evaluate_with(Array2::<f64>::zeros((1, 3)).view(), &bad).is_err());
    let dm = DeviceMatrix::upload(&gpu, &[1.0f64; 6], 2).unwrap();
    assert!(dm.spvm(&[1.0], &[3]).is_err());
    assert!(dm.spvm(&[1.0, 2.0], &[0]).is_err());
}

#[test]
fn gpu_out_of_memory_is_reported() {
    let Some(gpu) = gpu_or_skip("gpu_out_of_memory_is_reported") else { return };
    // More than any device holds: 2^40 f64 values.
    let e = gpu.zeros::<f64>(1 << 40).map_err(sg_cuda::Error::from).unwrap_err();
    assert!(e.is_out_of_memory(), "{e}");
}
