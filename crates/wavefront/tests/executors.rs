//! Every executor and parameter gives the sequential loop's table, written here independently,
//! on awkward shapes; bad input is an error.

use ndarray::{Array2, Array3};
use wavefront::{Boundary2, Boundary3, Config2, Config3, WavefrontError, run_2d, run_3d};

/// A kernel where every neighbour and the position matter (wrapping, so no overflow).
fn mix2(i: usize, j: usize, n: &u64, w: &u64, nw: &u64) -> u64 {
    n.wrapping_mul(31).wrapping_add(w.wrapping_mul(17)).wrapping_add(nw.wrapping_mul(7))
        ^ ((i as u64) << 20 | j as u64)
}

/// The oracle: the recurrence by a plain row-major loop with explicit boundary lookups.
fn oracle_2d(rows: usize, cols: usize, b: &Boundary2<u64>) -> Array2<u64> {
    let north = |j: usize| if b.north.is_empty() { b.corner } else { b.north[j] };
    let west = |i: usize| if b.west.is_empty() { b.corner } else { b.west[i] };
    let mut t = Array2::zeros((rows, cols));
    for i in 0..rows {
        for j in 0..cols {
            let n = if i > 0 { t[[i - 1, j]] } else { north(j) };
            let w = if j > 0 { t[[i, j - 1]] } else { west(i) };
            let nw = match (i, j) {
                (0, 0) => b.corner,
                (0, _) => north(j - 1),
                (_, 0) => west(i - 1),
                _ => t[[i - 1, j - 1]],
            };
            t[[i, j]] = mix2(i, j, &n, &w, &nw);
        }
    }
    t
}

fn configs2() -> Vec<Config2> {
    let mut c = vec![Config2::sequential()];
    for tile in [1, 2, 3, 7, 16, 100] {
        c.push(Config2::tiled(tile));
        c.push(Config2::cpu(tile));
        c.push(Config2::hybrid(tile, -1));
    }
    c.push(Config2::cpu(4).with_threads(1));
    c.push(Config2::cpu(3).with_threads(3));
    c
}

const SHAPES: [(usize, usize); 10] =
    [(1, 1), (1, 13), (13, 1), (2, 2), (7, 7), (31, 17), (17, 31), (64, 64), (97, 5), (5, 97)];

#[test]
fn every_2d_executor_matches_the_loop() {
    for (rows, cols) in SHAPES {
        let boundaries = [
            Boundary2::constant(3u64),
            Boundary2 {
                north: (0..cols as u64).map(|j| j * 1000 + 1).collect(),
                west: (0..rows as u64).map(|i| i * 7 + 5).collect(),
                corner: 11,
            },
            Boundary2 { north: vec![], west: (0..rows as u64).collect(), corner: 2 },
        ];
        for b in &boundaries {
            let want = oracle_2d(rows, cols, b);
            for cfg in configs2() {
                let got = run_2d(rows, cols, b, &cfg, mix2).expect("valid run");
                assert_eq!(got, want, "{rows}x{cols} {cfg:?}");
            }
        }
    }
}

fn mix3(i: usize, j: usize, k: usize, n: &u64, w: &u64, t: &u64) -> u64 {
    n.wrapping_mul(31).wrapping_add(w.wrapping_mul(17)).wrapping_add(t.wrapping_mul(7))
        ^ ((i as u64) << 40 | (j as u64) << 20 | k as u64)
}

fn oracle_3d(n: [usize; 3], b: &Boundary3<u64>) -> Array3<u64> {
    let [n0, n1, n2] = n;
    let at = |v: &Vec<u64>, idx: usize| if v.is_empty() { b.fill } else { v[idx] };
    let mut t = Array3::zeros((n0, n1, n2));
    for i in 0..n0 {
        for j in 0..n1 {
            for k in 0..n2 {
                let no = if i > 0 { t[[i - 1, j, k]] } else { at(&b.north, j * n2 + k) };
                let we = if j > 0 { t[[i, j - 1, k]] } else { at(&b.west, i * n2 + k) };
                let to = if k > 0 { t[[i, j, k - 1]] } else { at(&b.top, i * n1 + j) };
                t[[i, j, k]] = mix3(i, j, k, &no, &we, &to);
            }
        }
    }
    t
}

#[test]
fn every_3d_executor_matches_the_loop() {
    for n in [[1, 1, 1], [1, 5, 1], [3, 1, 7], [5, 5, 5], [7, 3, 11], [13, 2, 9], [2, 17, 3]] {
        let [n0, n1, n2] = n;
        let boundaries = [
            Boundary3::constant(9u64),
            Boundary3 {
                north: (0..(n1 * n2) as u64).map(|x| x * 3 + 1).collect(),
                west: (0..(n0 * n2) as u64).map(|x| x * 5 + 2).collect(),
                top: (0..(n0 * n1) as u64).map(|x| x * 11 + 3).collect(),
                fill: 0,
            },
        ];
        for b in &boundaries {
            let want = oracle_3d(n, b);
            let mut configs = vec![Config3::sequential(), Config3::cpu(2).with_threads(3)];
            for tile in [1, 2, 3, 8] {
                configs.extend([Config3::tiled(tile), Config3::cpu(tile), Config3::hybrid(tile, -1)]);
            }
            for cfg in configs {
                let got = run_3d(n0, n1, n2, b, &cfg, mix3).expect("valid run");
                assert_eq!(got, want, "{n:?} {cfg:?}");
            }
        }
    }
}

#[test]
fn bad_input_is_an_error() {
    let k = |_: usize, _: usize, n: &i32, _: &i32, _: &i32| *n;
    let c = Config2::cpu(4);
    assert!(matches!(
        run_2d(0, 3, &Boundary2::constant(0), &c, k),
        Err(WavefrontError::EmptyGrid { axis: "rows" })
    ));
    assert!(matches!(
        run_2d(3, 0, &Boundary2::constant(0), &c, k),
        Err(WavefrontError::EmptyGrid { axis: "cols" })
    ));
    let short = Boundary2 { north: vec![0; 2], west: vec![], corner: 0 };
    assert!(matches!(
        run_2d(3, 3, &short, &c, k),
        Err(WavefrontError::BoundaryLength { side: "north", got: 2, want: 3 })
    ));
    let long = Boundary2 { north: vec![], west: vec![0; 4], corner: 0 };
    assert!(matches!(run_2d(3, 3, &long, &c, k), Err(WavefrontError::BoundaryLength { side: "west", .. })));
    for bad in [Config2::tiled(0), Config2::cpu(0), Config2::hybrid(0, -1), Config2::cpu(2).with_threads(0)] {
        assert!(matches!(
            run_2d(3, 3, &Boundary2::constant(0), &bad, k),
            Err(WavefrontError::InvalidConfig(_))
        ));
    }
    assert!(matches!(
        run_2d(usize::MAX, 3, &Boundary2::constant(0), &c, k),
        Err(WavefrontError::TooLarge { .. })
    ));
    let k3 = |_: usize, _: usize, _: usize, n: &i32, _: &i32, _: &i32| *n;
    assert!(matches!(
        run_3d(2, 0, 2, &Boundary3::constant(0), &Config3::cpu(1), k3),
        Err(WavefrontError::EmptyGrid { axis: "n1" })
    ));
    let b3 = Boundary3 { north: vec![], west: vec![], top: vec![0; 5], fill: 0 };
    assert!(matches!(
        run_3d(2, 2, 2, &b3, &Config3::cpu(1), k3),
        Err(WavefrontError::BoundaryLength { side: "top", got: 5, want: 4 })
    ));
    assert!(matches!(
        run_3d(2, 2, 2, &Boundary3::constant(0), &Config3::tiled(0), k3),
        Err(WavefrontError::InvalidConfig(_))
    ));
}

/// A GPU band needs a GPU, and a closure has no GPU form: an error either way, never a panic.
#[test]
fn gpu_band_without_gpu_form_is_an_error() {
    let k = |_: usize, _: usize, n: &i32, _: &i32, _: &i32| *n;
    let err = run_2d(8, 8, &Boundary2::constant(0), &Config2::hybrid(2, 1), k).unwrap_err();
    match cuda_kernels::Gpu::new(0) {
        Err(_) => assert!(matches!(&err, WavefrontError::Cuda(e) if e.is_no_gpu()), "{err}"),
        Ok(_) => assert!(matches!(err, WavefrontError::NoGpuKernel { band: 1 }), "{err}"),
    }
    let k3 = |_: usize, _: usize, _: usize, n: &i32, _: &i32, _: &i32| *n;
    assert!(run_3d(4, 4, 4, &Boundary3::constant(0), &Config3::hybrid(2, 0), k3).is_err());
}

/// A panicking kernel propagates its panic from every executor (no hang, no abort).
#[test]
fn kernel_panic_propagates() {
    for cfg in [Config2::sequential(), Config2::cpu(3)] {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            run_2d(9, 9, &Boundary2::constant(0i32), &cfg, |i, j, n, _, _| {
                assert!(i + j != 9, "kernel failure");
                *n
            })
        }));
        assert!(r.is_err(), "{cfg:?}");
    }
}
