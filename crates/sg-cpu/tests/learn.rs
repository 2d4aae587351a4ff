//! The learning operators against a dense `B` assembled from the basis definitions (Eq. 6.5,
//! Eq. 6.13 with branches), on regular and adaptive grids, both bases, across tuning spaces.

use ndarray::Array2;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use sg_core::{AdaptiveGrid, Basis, GridSpec};
use sg_cpu::learn::{
    AssembledOperator, MassMatrix, StreamTuning, StreamingOperator, SubspaceOperator, SubspaceTuning,
    TrieOperator, UpDown, density_rhs,
};

fn phi(basis: Basis, l: u32, i: u32, x: f64) -> f64 {
    let s = (1u64 << l) as f64;
    let hat = (1.0 - (s * x - i as f64).abs()).max(0.0);
    match basis {
        Basis::Linear => hat,
        Basis::ModifiedLinear if l == 1 => 1.0,
        Basis::ModifiedLinear if i == 1 => (2.0 - s * x).max(0.0),
        Basis::ModifiedLinear if i as u64 == (1u64 << l) - 1 => (s * x + 1.0 - i as f64).max(0.0),
        Basis::ModifiedLinear => hat,
    }
}

fn dense_b(grid: &AdaptiveGrid, basis: Basis, x: &Array2<f64>) -> Array2<f64> {
    Array2::from_shape_fn((x.nrows(), grid.len()), |(r, g)| {
        (0..grid.dim()).map(|k| phi(basis, grid.levels_of(g)[k], grid.indices_of(g)[k], x[[r, k]])).product()
    })
}

/// Random points plus awkward ones: 0, 1, and cell boundaries k/8.
fn data(m: usize, d: usize, seed: u64) -> Array2<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    Array2::from_shape_fn((m, d), |(r, k)| match r % 7 {
        0 => 0.0,
        1 => 1.0,
        2 => ((r + k) % 9) as f64 / 8.0,
        _ => rng.random::<f64>(),
    })
}

fn adaptive(d: usize) -> AdaptiveGrid {
    let mut g = AdaptiveGrid::from_spec(&GridSpec::regular(d, 2).unwrap()).unwrap();
    for step in 0..3 {
        let alpha: Vec<f64> = (0..g.len()).map(|j| ((j * 31 + step * 7) % 17) as f64).collect();
        g.refine_surplus(&alpha, 2).unwrap();
    }
    assert!(g.is_consistent());
    g
}

fn close(a: &[f64], b: &[f64], tol: f64) {
    let scale = b.iter().fold(1.0f64, |s, v| s.max(v.abs()));
    for (i, (p, q)) in a.iter().zip(b).enumerate() {
        assert!((p - q).abs() <= tol * scale, "entry {i}: {p} vs {q}");
    }
}

fn check_all(grid: &AdaptiveGrid, basis: Basis, x: &Array2<f64>) {
    let b = dense_b(grid, basis, x);
    let (m, n) = b.dim();
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let alpha: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
    let v: Vec<f64> = (0..m).map(|_| rng.random_range(-1.0..1.0)).collect();
    let want_mult = b.dot(&ndarray::Array1::from(alpha.clone())).to_vec();
    let want_t = b.t().dot(&ndarray::Array1::from(v.clone())).to_vec();
    let (mut out_m, mut out_t) = (vec![0.0; m], vec![0.0; n]);
    for lanes in [8, 16, 32] {
        for (data_chunk, grid_chunk) in [(64, 1), (256, 16), (4096, 256)] {
            let t = StreamTuning { lanes, data_chunk, grid_chunk };
            let op = StreamingOperator::new(grid, basis, x.view(), t).unwrap();
            op.mult(&alpha, &mut out_m).unwrap();
            close(&out_m, &want_mult, 1e-13);
            op.mult_transpose(&v, &mut out_t).unwrap();
            close(&out_t, &want_t, 1e-13);
        }
    }
    for chunk_size in [16, 64, 512] {
        for skipping in [false, true] {
            for reuse_intermediates in [false, true] {
                let t = SubspaceTuning { chunk_size, skipping, reuse_intermediates };
                let op = SubspaceOperator::new(grid, basis, x.view(), t).unwrap();
                op.mult(&alpha, &mut out_m).unwrap();
                close(&out_m, &want_mult, 1e-13);
                op.mult_transpose(&v, &mut out_t).unwrap();
                close(&out_t, &want_t, 1e-13);
            }
        }
    }
    for t in [SubspaceTuning::DEFAULT, SubspaceTuning::PVN] {
        let walker = SubspaceOperator::new(grid, basis, x.view(), t).unwrap();
        let a64 = AssembledOperator::<f64>::from_walker(&walker, usize::MAX).unwrap();
        assert!(a64.entries() <= m * walker.subspaces());
        a64.mult(&alpha, &mut out_m).unwrap();
        close(&out_m, &want_mult, 1e-13);
        a64.mult_transpose(&v, &mut out_t).unwrap();
        close(&out_t, &want_t, 1e-13);
        let a32 = AssembledOperator::<f32>::from_walker(&walker, usize::MAX).unwrap();
        a32.mult(&alpha, &mut out_m).unwrap();
        close(&out_m, &want_mult, 1e-5);
        a32.mult_transpose(&v, &mut out_t).unwrap();
        close(&out_t, &want_t, 1e-5);
    }
    out_t.fill(f64::NAN);
    SubspaceOperator::new(grid, basis, x.view(), SubspaceTuning::DEFAULT)
        .unwrap()
        .mult_transpose(&v, &mut out_t)
        .unwrap();
    // adjointness <B a, v> = <a, B^T v>
    let lhs: f64 = want_mult.iter().zip(&v).map(|(p, q)| p * q).sum();
    let rhs: f64 = alpha.iter().zip(&out_t).map(|(p, q)| p * q).sum();
    assert!((lhs - rhs).abs() <= 1e-12 * lhs.abs().max(1.0));
}

#[test]
fn operators_equal_the_dense_matrix_on_regular_grids() {
    for (d, n, m) in [(1, 4, 37), (2, 3, 53), (3, 4, 101), (5, 3, 29), (10, 3, 19)] {
        let grid = AdaptiveGrid::from_spec(&GridSpec::regular(d, n).unwrap()).unwrap();
        for basis in [Basis::Linear, Basis::ModifiedLinear] {
            check_all(&grid, basis, &data(m, d, d as u64));
        }
    }
}

#[test]
fn operators_equal_the_dense_matrix_on_adaptive_grids() {
    for d in [1, 2, 3] {
        let grid = adaptive(d);
        for basis in [Basis::Linear, Basis::ModifiedLinear] {
            check_all(&grid, basis, &data(67, d, 11));
        }
    }
}

#[test]
fn an_inconsistent_grid_still_gives_the_dense_result() {
    // (3,1) without its parent (2,1): skipping must not be used.
    let grid = AdaptiveGrid::from_points(1, &[1, 3, 2], &[1, 1, 3]).unwrap();
    check_all(&grid, Basis::Linear, &data(23, 1, 3));
}

#[test]
fn a_deep_sparse_grid_gives_the_dense_result() {
    // A chain (l, 1) x (1, 1), l = 1..6, and its mirror in the second dimension: 11 points in
    // subspace arrays of 125 slots, so the products go through the slot-to-point map, not
    // through vectors in slot order.
    let mut levels = Vec::new();
    let mut indices = Vec::new();
    for l in 1..=6u32 {
        levels.extend([l, 1]);
        indices.extend([1, 1]);
        if l > 1 {
            levels.extend([1, l]);
            indices.extend([1, (1 << l) - 1]);
        }
    }
    let ladder = AdaptiveGrid::from_points(2, &levels, &indices).unwrap();
    assert!(ladder.is_consistent());
    for basis in [Basis::Linear, Basis::ModifiedLinear] {
        for m in [1, 2, 31] {
            check_all(&ladder, basis, &data(m, 2, m as u64));
        }
    }
}

/// `grid` with its points in reverse order (not the bijection's).
fn reversed(grid: &AdaptiveGrid) -> AdaptiveGrid {
    let rev = |v: &[u32]| v.chunks(grid.dim()).rev().flatten().copied().collect::<Vec<_>>();
    AdaptiveGrid::from_points(grid.dim(), &rev(grid.levels()), &rev(grid.indices())).unwrap()
}

#[test]
fn the_evaluation_trie_gives_the_dense_and_the_walks_results() {
    // m = 1 (the evaluator's block-parallel variant), primes (a partial last tile), d = 1,
    // level 1, and both point orders of the grid.
    for (d, n, m) in
        [(1, 1, 1), (1, 5, 1), (1, 5, 131), (2, 1, 7), (3, 4, 1), (3, 4, 257), (5, 3, 1031), (10, 2, 67)]
    {
        let spec = AdaptiveGrid::from_spec(&GridSpec::regular(d, n).unwrap()).unwrap();
        let x = data(m, d, (d * 100 + m) as u64);
        for grid in [reversed(&spec), spec] {
            assert!(TrieOperator::supports(&grid, Basis::Linear));
            let b = dense_b(&grid, Basis::Linear, &x);
            let alpha: Vec<f64> = (0..grid.len()).map(|j| ((j * 37 % 11) as f64 - 5.0) / 3.0).collect();
            let want = b.dot(&ndarray::Array1::from(alpha.clone())).to_vec();
            let (mut trie, mut walk, mut stream) = (vec![f64::NAN; m], vec![0.0; m], vec![0.0; m]);
            let op = TrieOperator::new(&grid, Basis::Linear, x.view()).unwrap();
            assert_eq!((op.grid_len(), op.data_len()), (grid.len(), m));
            op.mult(&alpha, &mut trie).unwrap();
            SubspaceOperator::new(&grid, Basis::Linear, x.view(), SubspaceTuning::DEFAULT)
                .unwrap()
                .mult(&alpha, &mut walk)
                .unwrap();
            StreamingOperator::new(&grid, Basis::Linear, x.view(), StreamTuning::DEFAULT)
                .unwrap()
                .mult(&alpha, &mut stream)
                .unwrap();
            close(&trie, &want, 1e-13);
            close(&trie, &walk, 1e-13);
            close(&trie, &stream, 1e-13);
        }
    }
}

#[test]
fn the_evaluation_trie_refuses_what_it_cannot_evaluate() {
    let x = data(5, 2, 1);
    let regular = AdaptiveGrid::from_spec(&GridSpec::regular(2, 3).unwrap()).unwrap();
    assert!(!TrieOperator::supports(&regular, Basis::ModifiedLinear));
    assert!(TrieOperator::new(&regular, Basis::ModifiedLinear, x.view()).is_err());
    // Refined (not regular), and a regular grid less one point.
    let refined = adaptive(2);
    assert!(!TrieOperator::supports(&refined, Basis::Linear));
    assert!(TrieOperator::new(&refined, Basis::Linear, x.view()).is_err());
    let holed = AdaptiveGrid::from_points(2, &regular.levels()[2..], &regular.indices()[2..]).unwrap();
    assert!(!TrieOperator::supports(&holed, Basis::Linear));
    let op = TrieOperator::new(&regular, Basis::Linear, x.view()).unwrap();
    assert!(op.mult(&vec![0.0; regular.len() + 1], &mut [0.0; 5]).is_err());
    assert!(op.mult(&vec![0.0; regular.len()], &mut [0.0; 4]).is_err());
    assert!(TrieOperator::new(&regular, Basis::Linear, ndarray::array![[0.5, 1.5]].view()).is_err());
}

#[test]
fn one_data_point_and_one_grid_point_work() {
    let grid = AdaptiveGrid::from_spec(&GridSpec::regular(2, 1).unwrap()).unwrap();
    check_all(&grid, Basis::ModifiedLinear, &ndarray::array![[0.25, 0.5]]);
}

#[test]
fn mass_matrix_equals_quadrature_and_the_digest_entries() {
    let grid = AdaptiveGrid::from_spec(&GridSpec::regular(1, 2).unwrap()).unwrap();
    let r = MassMatrix::new(&grid).unwrap();
    let order: Vec<usize> =
        [(1, 1), (2, 1), (2, 3)].iter().map(|&(l, i)| grid.find(&[l], &[i]).unwrap()).collect();
    let want = [[1.0 / 3.0, 1.0 / 8.0, 1.0 / 8.0], [1.0 / 8.0, 1.0 / 6.0, 0.0], [1.0 / 8.0, 0.0, 1.0 / 6.0]];
    for a in 0..3 {
        for b in 0..3 {
            assert!((r.entry(order[a], order[b]) - want[a][b]).abs() < 1e-15);
        }
    }
    // 2-D adaptive grid against midpoint quadrature on a grid fine enough to be exact for
    // piecewise bilinear integrands up to level 5 (products of hats are piecewise quadratic per
    // dimension: Simpson on every cell is exact).
    let grid = adaptive(2);
    let r = MassMatrix::new(&grid).unwrap();
    let cells = 64;
    let simpson = |f: &dyn Fn(f64) -> f64| -> f64 {
        (0..cells)
            .map(|c| {
                let (a, b) = (c as f64 / cells as f64, (c + 1) as f64 / cells as f64);
                (b - a) / 6.0 * (f(a) + 4.0 * f((a + b) / 2.0) + f(b))
            })
            .sum()
    };
    let n = grid.len();
    let v: Vec<f64> = (0..n).map(|j| (j as f64 * 0.7).cos()).collect();
    let mut out = vec![0.0; n];
    r.mult(&v, &mut out).unwrap();
    let mut want = vec![0.0; n];
    for i in 0..n {
        for j in 0..n {
            let e: f64 = (0..2)
                .map(|k| {
                    let (li, ii, lj, ij) = (
                        grid.levels_of(i)[k],
                        grid.indices_of(i)[k],
                        grid.levels_of(j)[k],
                        grid.indices_of(j)[k],
                    );
                    simpson(&|x| phi(Basis::Linear, li, ii, x) * phi(Basis::Linear, lj, ij, x))
                })
                .product();
            assert!((e - r.entry(i, j)).abs() < 1e-14, "({i},{j})");
            want[i] += e * v[j];
        }
    }
    close(&out, &want, 1e-13);
}

#[test]
fn density_rhs_is_the_mean_of_the_basis_values() {
    let grid = AdaptiveGrid::from_spec(&GridSpec::regular(2, 3).unwrap()).unwrap();
    let x = data(41, 2, 5);
    let b = density_rhs(&grid, x.view()).unwrap();
    let dense = dense_b(&grid, Basis::Linear, &x);
    for g in 0..grid.len() {
        let want = dense.column(g).sum() / 41.0;
        assert!((b[g] - want).abs() < 1e-14);
    }
}

#[test]
fn bad_input_is_an_error() {
    let grid = AdaptiveGrid::from_spec(&GridSpec::regular(2, 2).unwrap()).unwrap();
    let t = StreamTuning::default();
    for bad in [
        ndarray::array![[0.5, 1.5]],
        ndarray::array![[f64::NAN, 0.5]],
        Array2::zeros((0, 2)),
        ndarray::array![[0.5]],
    ] {
        assert!(StreamingOperator::new(&grid, Basis::Linear, bad.view(), t).is_err());
        assert!(SubspaceOperator::new(&grid, Basis::Linear, bad.view(), SubspaceTuning::default()).is_err());
    }
    let x = ndarray::array![[0.5, 0.5]];
    let op = StreamingOperator::new(&grid, Basis::Linear, x.view(), t).unwrap();
    assert!(op.mult(&[1.0; 4], &mut [0.0]).is_err());
    assert!(op.mult_transpose(&[1.0], &mut [0.0; 4]).is_err());
    assert!(StreamingOperator::new(&grid, Basis::Linear, x.view(), StreamTuning { lanes: 3, ..t }).is_err());
    assert!(MassMatrix::new(&AdaptiveGrid::new(2).unwrap()).is_err());
    let a = AssembledOperator::<f32>::new(&grid, Basis::Linear, x.view(), usize::MAX).unwrap();
    assert!(a.mult(&[1.0; 4], &mut [0.0]).is_err());
    assert!(a.mult_transpose(&[1.0, 2.0], &mut [0.0; 5]).is_err());
    assert!(AssembledOperator::<f64>::new(&grid, Basis::Linear, x.view(), 8).is_err());
    for bad in [ndarray::array![[0.5, -0.1]], Array2::zeros((0, 2))] {
        assert!(AssembledOperator::<f64>::new(&grid, Basis::Linear, bad.view(), usize::MAX).is_err());
    }
}

/// The 1-D L2 products of two linear hats and of their derivatives by quadrature on dyadic
/// cells of width `2^-(level + 1)`, finer than either support's kinks: Simpson is exact for the
/// piecewise quadratic product, the midpoint rule for the piecewise constant one.
fn products_1d(l1: u32, i1: u32, l2: u32, i2: u32) -> (f64, f64) {
    let cells = 1usize << (l1.max(l2) + 1);
    let hat = |l: u32, i: u32, x: f64| phi(Basis::Linear, l, i, x);
    let slope = |l: u32, i: u32, x: f64| {
        let s = (1u64 << l) as f64;
        if (s * x - i as f64).abs() >= 1.0 {
            0.0
        } else if s * x < i as f64 {
            s
        } else {
            -s
        }
    };
    let (mut mass, mut stiff) = (0.0, 0.0);
    for c in 0..cells {
        let (a, b) = (c as f64 / cells as f64, (c + 1) as f64 / cells as f64);
        let m = (a + b) / 2.0;
        let f = |x: f64| hat(l1, i1, x) * hat(l2, i2, x);
        mass += (b - a) / 6.0 * (f(a) + 4.0 * f(m) + f(b));
        stiff += (b - a) * slope(l1, i1, m) * slope(l2, i2, m);
    }
    (mass, stiff)
}

/// Dense `R` and `S = Σ_k S_k ⊗ M_{-k}` assembled entry by entry from [`products_1d`].
fn dense_mass_and_laplacian(grid: &AdaptiveGrid) -> (Array2<f64>, Array2<f64>) {
    let (n, d) = (grid.len(), grid.dim());
    let mut r = Array2::zeros((n, n));
    let mut s = Array2::zeros((n, n));
    for i in 0..n {
        for j in 0..n {
            let p: Vec<(f64, f64)> = (0..d)
                .map(|k| {
                    let (li, ii) = (grid.levels_of(i)[k], grid.indices_of(i)[k]);
                    products_1d(li, ii, grid.levels_of(j)[k], grid.indices_of(j)[k])
                })
                .collect();
            r[[i, j]] = p.iter().map(|q| q.0).product();
            s[[i, j]] =
                (0..d).map(|k| (0..d).map(|t| if t == k { p[t].1 } else { p[t].0 }).product::<f64>()).sum();
        }
    }
    (r, s)
}

fn check_up_down(grid: &AdaptiveGrid) {
    let n = grid.len();
    let (r, s) = dense_mass_and_laplacian(grid);
    let v: Vec<f64> = (0..n).map(|j| (j as f64 * 0.37 + 0.1).sin()).collect();
    let want_r = r.dot(&ndarray::ArrayView1::from(&v)).to_vec();
    let want_s = s.dot(&ndarray::ArrayView1::from(&v)).to_vec();
    let op = UpDown::<f64>::new(grid).unwrap();
    let (mut got_r, mut got_s) = (vec![f64::NAN; n], vec![f64::NAN; n]);
    op.mass(&v, &mut got_r).unwrap();
    op.laplacian(&v, &mut got_s).unwrap();
    close(&got_r, &want_r, 1e-13);
    close(&got_s, &want_s, 1e-13);
    let op32 = UpDown::<f32>::new(grid).unwrap();
    let v32: Vec<f32> = v.iter().map(|&x| x as f32).collect();
    let (mut r32, mut s32) = (vec![f32::NAN; n], vec![f32::NAN; n]);
    op32.mass(&v32, &mut r32).unwrap();
    op32.laplacian(&v32, &mut s32).unwrap();
    close(&r32.iter().map(|&x| x as f64).collect::<Vec<_>>(), &want_r, 1e-5);
    close(&s32.iter().map(|&x| x as f64).collect::<Vec<_>>(), &want_s, 1e-5);
}

#[test]
fn up_down_equals_the_assembled_mass_and_laplacian_matrices() {
    for (d, n) in [(1, 1), (1, 5), (2, 1), (2, 4), (3, 3), (4, 3), (5, 2)] {
        check_up_down(&AdaptiveGrid::from_spec(&GridSpec::regular(d, n).unwrap()).unwrap());
    }
    for d in [1, 2, 3] {
        check_up_down(&adaptive(d));
    }
}

#[test]
fn up_down_equals_the_pairwise_mass_matrix() {
    for grid in [AdaptiveGrid::from_spec(&GridSpec::regular(5, 4).unwrap()).unwrap(), adaptive(4)] {
        let n = grid.len();
        let v: Vec<f64> = (0..n).map(|j| ((j * 7919) % 101) as f64 / 50.0 - 1.0).collect();
        let (mut a, mut b) = (vec![0.0; n], vec![0.0; n]);
        UpDown::<f64>::new(&grid).unwrap().mass(&v, &mut a).unwrap();
        MassMatrix::new(&grid).unwrap().mult(&v, &mut b).unwrap();
        close(&a, &b, 1e-13);
    }
}

#[test]
fn up_down_rejects_bad_grids_and_lengths() {
    assert!(UpDown::<f64>::new(&AdaptiveGrid::new(2).unwrap()).is_err());
    // (3,1) without its parent (2,1)
    let gap = AdaptiveGrid::from_points(1, &[1, 3, 2], &[1, 1, 3]).unwrap();
    assert!(UpDown::<f64>::new(&gap).is_err());
    let grid = AdaptiveGrid::from_spec(&GridSpec::regular(2, 2).unwrap()).unwrap();
    let op = UpDown::<f32>::new(&grid).unwrap();
    assert!(op.mass(&[1.0; 5], &mut [0.0; 4]).is_err());
    assert!(op.mass(&[1.0; 5], &mut [0.0; 6]).is_err());
    assert!(op.laplacian(&[1.0; 3], &mut [0.0; 5]).is_err());
}
