//! The hybrid executor's GPU band (NVRTC-compiled device functions) against the CPU: LCS and
//! the synthetic kernel, bands from none to the whole table, short diagonals (single-block
//! launches of many diagonals) and long ones. Skips without a GPU; runs on the CUDA emulator.

use wavefront::apps::lcs_length_gpu;
use wavefront::apps::synthetic::{Synth, synthetic_cell, synthetic_gpu_kernel};
use wavefront::{Boundary2, Config2, GpuKernel2, WavefrontError, run_2d, run_2d_gpu};

fn lcs_oracle(a: &[u8], b: &[u8]) -> usize {
    let mut prev = vec![0usize; b.len() + 1];
    for &x in a {
        let mut cur = vec![0usize; b.len() + 1];
        for (j, &y) in b.iter().enumerate() {
            cur[j + 1] = if x == y { prev[j] + 1 } else { prev[j + 1].max(cur[j]) };
        }
        prev = cur;
    }
    prev[b.len()]
}

fn seq(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed;
    (0..len)
        .map(|_| {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            b"ACGT"[(x >> 33) as usize % 4]
        })
        .collect()
}

#[test]
fn lcs_band_on_gpu() {
    if hetkit_testkit::gpu_or_skip("lcs_band_on_gpu").is_none() {
        return;
    }
    for (m, n, bands) in [
        (1, 1, &[0, 3][..]),
        (1, 17, &[0, 2, 100][..]),
        (17, 1, &[1][..]),
        (31, 29, &[-1, 0, 1, 7, 100][..]),
        (300, 113, &[4, 40][..]),
        (1100, 1030, &[0, 3][..]),
    ] {
        let (a, b) = (seq(m, 1), seq(n, 2));
        let want = lcs_oracle(&a, &b);
        for &band in bands {
            for tile in [1, 8] {
                let got = lcs_length_gpu(&a, &b, &Config2::hybrid(tile, band)).unwrap();
                assert_eq!(got, want, "{m}x{n} band {band} tile {tile}");
            }
        }
    }
}

#[test]
fn synthetic_band_on_gpu_is_bitwise() {
    if hetkit_testkit::gpu_or_skip("synthetic_band_on_gpu_is_bitwise").is_none() {
        return;
    }
    let tsize = 7;
    let boundary = Boundary2::constant(Synth::<2>::BOUNDARY);
    let kernel =
        |_: usize, _: usize, n: &Synth<2>, w: &Synth<2>, nw: &Synth<2>| synthetic_cell(tsize, n, w, nw);
    for (rows, cols) in [(13, 7), (40, 41)] {
        let want = run_2d(rows, cols, &boundary, &Config2::sequential(), kernel).unwrap();
        for band in [0, 2, 9, 100] {
            let got = run_2d_gpu(
                rows,
                cols,
                &boundary,
                &Config2::hybrid(4, band),
                kernel,
                &synthetic_gpu_kernel::<2>(tsize),
            )
            .unwrap();
            for ((i, j), g) in got.indexed_iter() {
                let w = want[[i, j]];
                assert_eq!((g.a, g.b), (w.a, w.b), "({i},{j}) band {band}");
                assert!(
                    g.v.iter().zip(&w.v).all(|(x, y)| x.to_bits() == y.to_bits()),
                    "({i},{j}) band {band}"
                );
            }
        }
    }
    // DS = 0: no payload array in the C struct.
    let b0 = Boundary2::constant(Synth::<0>::BOUNDARY);
    let k0 = |_: usize, _: usize, n: &Synth<0>, w: &Synth<0>, nw: &Synth<0>| synthetic_cell(1, n, w, nw);
    let got = run_2d_gpu(9, 11, &b0, &Config2::hybrid(2, 3), k0, &synthetic_gpu_kernel::<0>(1)).unwrap();
    assert!(got.indexed_iter().all(|((i, j), c)| c.a as usize == i + j && c.b as usize == (i + 1) * (j + 1)));
}

#[test]
fn gpu_form_errors() {
    let k = |_: usize, _: usize, n: &u64, _: &u64, _: &u64| *n;
    let wrong_size = GpuKernel2::new(
        "int",
        "__device__ int wf_cell(long long i, long long j, int n, int w, int nw, const unsigned char* aux) { return n; }",
    );
    let r = run_2d_gpu(5, 5, &Boundary2::constant(0u64), &Config2::hybrid(2, 1), k, &wrong_size);
    if hetkit_testkit::gpu_or_skip("gpu_form_errors").is_none() {
        assert!(matches!(&r, Err(WavefrontError::Cuda(e)) if e.is_no_gpu()));
        return;
    }
    assert!(matches!(r, Err(WavefrontError::InvalidConfig(_))), "{r:?}");
    let broken = GpuKernel2::new("unsigned long long", "__device__ this is not C");
    let r = run_2d_gpu(5, 5, &Boundary2::constant(0u64), &Config2::hybrid(2, 1), k, &broken);
    assert!(matches!(r, Err(WavefrontError::Cuda(_))), "{r:?}");
    // band < 0 and CPU configurations never touch the GPU form.
    assert!(run_2d_gpu(5, 5, &Boundary2::constant(0u64), &Config2::cpu(2), k, &broken).is_ok());
}
