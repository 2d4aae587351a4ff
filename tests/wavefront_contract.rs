//! The wavefront contract, through `hetkit::wavefront` with the names as the issue writes them.

use hetkit::ndarray::Array2;
use hetkit::wavefront::apps::{self, Scoring};
use hetkit::wavefront::{Boundary2, Boundary3, Config2, Config3, run_2d, run_3d};

fn configs2() -> Vec<Config2> {
    vec![Config2::sequential(), Config2::cpu(1), Config2::cpu(3), Config2::cpu(16), Config2::hybrid(4, -1)]
}

#[test]
fn run_2d_every_config_equals_sequential_and_the_loop() {
    for (rows, cols) in [(1, 1), (1, 11), (11, 1), (13, 29), (64, 37)] {
        let boundary = Boundary2 {
            north: (0..cols as i64).map(|j| 3 * j - 1).collect(),
            west: (0..rows as i64).map(|i| 5 - i).collect(),
            corner: 7i64,
        };
        let kernel = |i: usize, j: usize, n: &i64, w: &i64, nw: &i64| {
            n.wrapping_sub(*w).wrapping_mul(3).wrapping_add(*nw).wrapping_add((i * j) as i64)
        };
        // The loop, written here.
        let mut want = Array2::<i64>::zeros((rows, cols));
        for i in 0..rows {
            for j in 0..cols {
                let n = if i > 0 { want[[i - 1, j]] } else { boundary.north[j] };
                let w = if j > 0 { want[[i, j - 1]] } else { boundary.west[i] };
                let nw = match (i, j) {
                    (0, 0) => boundary.corner,
                    (0, _) => boundary.north[j - 1],
                    (_, 0) => boundary.west[i - 1],
                    _ => want[[i - 1, j - 1]],
                };
                want[[i, j]] = kernel(i, j, &n, &w, &nw);
            }
        }
        for cfg in configs2() {
            let got: Array2<i64> = run_2d(rows, cols, &boundary, &cfg, kernel).unwrap();
            assert_eq!(got, want, "{rows}x{cols} {cfg:?}");
        }
    }
}

#[test]
fn run_3d_constant_boundary() {
    let (n0, n1, n2) = (4, 6, 5);
    let fact = |n: usize| (1..=n as u64).product::<u64>();
    for cfg in [Config3::sequential(), Config3::cpu(2), Config3::hybrid(3, -1)] {
        // Lattice paths: the multinomial (i+j+k)! / (i! j! k!), seeded at the corner.
        let t = run_3d(n0, n1, n2, &Boundary3::constant(0u64), &cfg, |i, j, k, n, w, top| {
            if i + j + k == 0 { 1 } else { n + w + top }
        })
        .unwrap();
        for ((i, j, k), &v) in t.indexed_iter() {
            assert_eq!(v, fact(i + j + k) / (fact(i) * fact(j) * fact(k)));
        }
    }
}

#[test]
fn errors_are_hetkit_errors() {
    let k = |_: usize, _: usize, n: &u8, _: &u8, _: &u8| *n;
    let bad = Boundary2 { north: vec![0u8; 3], west: vec![], corner: 0 };
    assert!(matches!(run_2d(2, 2, &bad, &Config2::sequential(), k), Err(hetkit::Error::Wavefront(_))));
    assert!(matches!(
        run_2d(2, 2, &Boundary2::constant(0), &Config2::cpu(0), k),
        Err(hetkit::Error::Wavefront(_))
    ));
    let err = run_2d(5, 5, &Boundary2::constant(0), &Config2::hybrid(2, 1), k).unwrap_err();
    match hetkit::cuda::Gpu::new(0) {
        Err(_) => assert!(err.is_no_gpu(), "{err}"),
        Ok(_) => assert!(matches!(err, hetkit::Error::Wavefront(_)), "{err}"),
    }
    // band < 0 never needs a GPU
    assert!(run_2d(5, 5, &Boundary2::constant(0), &Config2::hybrid(2, -1), k).is_ok());
    assert!(apps::smith_waterman(b"ACDj", b"A", &Scoring::blosum62(11, 1)).is_err());
    assert!(apps::needleman_wunsch(b"AC", b"a", &Scoring::blosum62(11, 1)).is_err());
}

#[test]
fn sequence_apps() {
    assert_eq!(apps::lcs_length(b"TATGAC", b"GCATGA"), 4);
    let al: apps::Alignment =
        apps::smith_waterman(b"HEAGAWGHEE", b"PAWHEAE", &Scoring::blosum62(11, 1)).unwrap();
    // parasail sw_striped_16 gives score 17 ending at query 8, reference 4.
    assert_eq!((al.score, al.end_a, al.end_b), (17, 8, 4));
    // simple scoring: gap of length k costs open + (k - 1) extend; "ACGT" vs "AGT": one gap
    let s = Scoring::simple(2, -1, 3, 1);
    assert_eq!(apps::needleman_wunsch(b"ACGT", b"AGT", &s).unwrap(), 3 * 2 - 3);
    assert_eq!(apps::needleman_wunsch(b"ACCGT", b"AGT", &s).unwrap(), 3 * 2 - 4);
    assert_eq!(
        apps::smith_waterman(b"TTACGT", b"ACGAA", &s).unwrap(),
        apps::Alignment { score: 6, end_a: 4, end_b: 2 }
    );
}

// ---- auto-tuning (issue 21): `Config2::auto` / `Config3::auto` never change a table ----

mod auto {
    use hetkit::ndarray::Array2;
    use hetkit::wavefront::tune::{self, CalibrateOptions, Features, Instance, Rank, SearchOptions, Source};
    use hetkit::wavefront::{Boundary2, Boundary3, Config2, Config3, run_2d, run_3d};

    fn lcs_like(a: &[u8], b: &[u8]) -> impl Fn(usize, usize, &u32, &u32, &u32) -> u32 + Sync {
        let (a, b) = (a.to_vec(), b.to_vec());
        move |i, j, n, w, nw| if a[i] == b[j] { nw + 1 } else { *n.max(w) }
    }

    /// Whatever this machine's cache holds (a model or none: short search), the auto
    /// configuration gives the sequential table, on awkward shapes.
    #[test]
    fn auto_configurations_give_the_sequential_tables() {
        for (rows, cols) in [(1, 1), (1, 7), (7, 1), (13, 40), (61, 61)] {
            let a: Vec<u8> = (0..rows).map(|i| b"ACGT"[(i * 7 + 3) % 4]).collect();
            let b: Vec<u8> = (0..cols).map(|j| b"ACGT"[(j * 5 + 1) % 4]).collect();
            let boundary = Boundary2::constant(0u32);
            let seq: Array2<u32> =
                run_2d(rows, cols, &boundary, &Config2::sequential(), lcs_like(&a, &b)).unwrap();
            let cfg = tune::auto_2d(rows, cols, &boundary, lcs_like(&a, &b)).unwrap();
            assert_eq!(
                run_2d(rows, cols, &boundary, &cfg, lcs_like(&a, &b)).unwrap(),
                seq,
                "{rows}x{cols} {cfg:?}"
            );
            let direct = Config2::auto(&Features::new(rows.max(cols), 0.5, 0));
            assert_eq!(run_2d(rows, cols, &boundary, &direct, lcs_like(&a, &b)).unwrap(), seq);
        }
        for n in [[1, 1, 1], [3, 5, 2], [9, 9, 9]] {
            let k = |i: usize, j: usize, k: usize, n: &u64, w: &u64, t: &u64| {
                n.wrapping_mul(3)
                    .wrapping_add(*w)
                    .wrapping_add(t.wrapping_mul(7))
                    .wrapping_add((i + 2 * j + 3 * k) as u64)
            };
            let b = Boundary3::constant(1u64);
            let seq = run_3d(n[0], n[1], n[2], &b, &Config3::sequential(), k).unwrap();
            let cfg = tune::auto_3d(n, &b, k).unwrap();
            assert_eq!(run_3d(n[0], n[1], n[2], &b, &cfg, k).unwrap(), seq, "{n:?} {cfg:?}");
        }
    }

    /// Calibrating (a tiny grid, one run each) stores a model in the given cache; the model's
    /// configurations give the sequential tables too.
    #[test]
    fn calibrate_then_predict() {
        let dir = tempfile::tempdir().unwrap();
        let cache = hetkit::sched::tune::TuningCache::at(dir.path());
        let opts = CalibrateOptions {
            instances: vec![
                Instance::synthetic(8, 1, 1),
                Instance::synthetic(16, 2, 1),
                Instance::synthetic(24, 1, 0),
            ],
            search: SearchOptions { reps: 1, ..SearchOptions::default() },
            ..CalibrateOptions::default()
        };
        let mut events = 0;
        let cal = tune::calibrate(&opts, &cache, &mut |_| events += 1).unwrap();
        assert!(cal.summary.evaluated > 0 && events > cal.summary.evaluated);
        assert!(cal.stored.iter().all(|p| p.exists()));
        for dim in [5usize, 17, 30] {
            let f = Features::new(dim, 2.0, 1);
            let (c, source) = tune::choose_in(Some(&cache), &f, Rank::Two);
            assert_eq!(source, Source::Model);
            assert!(c.tile >= 1 && c.tile <= dim && c.band == -1, "{c:?}");
            let b = Boundary2::constant(hetkit::wavefront::apps::synthetic::Synth::<1>::BOUNDARY);
            let kern = |_: usize, _: usize, n: &_, w: &_, nw: &_| {
                hetkit::wavefront::apps::synthetic::synthetic_cell(2, n, w, nw)
            };
            let seq = run_2d(dim, dim, &b, &Config2::sequential(), kern).unwrap();
            assert_eq!(run_2d(dim, dim, &b, &c.config2(), kern).unwrap(), seq);
        }
    }
}
