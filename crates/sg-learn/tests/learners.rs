//! The learners against closed forms (digest §12.4–12.6) and dense normal-equation solves.

use std::sync::Arc;

use ndarray::{Array1, Array2, array};
use sg_core::basis::hat_inner_product;
use sg_cpu::learn::StreamTuning;
use sg_learn::graph::{connected_components, knn_binned, knn_exact};
use sg_learn::{
    AdaptiveGrid, Basis, Clustering, CpuAlgorithm, CpuAssembled, CpuStreaming, CpuSubspace, DataOperator,
    DensityEstimator, GridSpec, Knn, LearnError, Regressor, Regularization, adjusted_rand_index, datasets,
};

/// Solves `A x = b` by Gaussian elimination with partial pivoting.
fn dense_solve(mut a: Array2<f64>, mut b: Vec<f64>) -> Vec<f64> {
    let n = b.len();
    for c in 0..n {
        let p = (c..n).max_by(|&i, &j| a[[i, c]].abs().total_cmp(&a[[j, c]].abs())).unwrap();
        for k in 0..n {
            a.swap([c, k], [p, k]);
        }
        b.swap(c, p);
        for r in c + 1..n {
            let f = a[[r, c]] / a[[c, c]];
            for k in c..n {
                a[[r, k]] -= f * a[[c, k]];
            }
            b[r] -= f * b[c];
        }
    }
    let mut x = vec![0.0; n];
    for r in (0..n).rev() {
        let s: f64 = (r + 1..n).map(|k| a[[r, k]] * x[k]).sum();
        x[r] = (b[r] - s) / a[[r, r]];
    }
    x
}

type Backend = Arc<dyn sg_learn::Backend>;

fn dense_b(grid: &AdaptiveGrid, basis: Basis, x: &Array2<f64>) -> Array2<f64> {
    Array2::from_shape_fn((x.nrows(), grid.len()), |(r, g)| {
        basis.eval(grid.levels_of(g), grid.indices_of(g), x.row(r).as_slice().unwrap())
    })
}

fn sample(m: usize, d: usize, seed: u64) -> Array2<f64> {
    Array2::from_shape_fn((m, d), |(i, k)| {
        (((i + 1) * (2 * k + 3) * 7919 + seed as usize * 104729) % 1009) as f64 / 1008.0
    })
}

fn point(grid: &AdaptiveGrid, l: &[u32], i: &[u32]) -> usize {
    grid.find(l, i).unwrap()
}

#[test]
fn modified_linear_level_one_is_the_damped_mean() {
    let x = sample(13, 3, 1);
    let y: Array1<f64> = (0..13).map(|i| i as f64 * 0.5 - 1.0).collect();
    for lambda in [0.0, 0.1, 2.0] {
        let model =
            Regressor::new(GridSpec::regular(3, 1).unwrap()).lambda(lambda).fit(x.view(), y.view()).unwrap();
        let want = y.mean().unwrap() / (1.0 + lambda);
        assert!((model.alpha()[0] - want).abs() < 1e-12, "lambda {lambda}");
    }
}

#[test]
fn linear_level_one_matches_its_closed_form() {
    let x = array![[0.1], [0.4], [0.5], [0.9], [1.0]];
    let y = array![1.0, -2.0, 0.5, 3.0, 7.0];
    let lambda = 0.03;
    let m = Regressor::new(GridSpec::regular(1, 1).unwrap()).basis(Basis::Linear).lambda(lambda);
    let alpha = m.fit(x.view(), y.view()).unwrap().alpha()[0];
    let phi: Vec<f64> = x.iter().map(|&v| 1.0 - (2.0 * v - 1.0f64).abs()).collect();
    let want = phi.iter().zip(&y).map(|(p, y)| p * y).sum::<f64>()
        / (phi.iter().map(|p| p * p).sum::<f64>() + 5.0 * lambda);
    assert!((alpha - want).abs() < 1e-12);
}

#[test]
fn regression_through_the_grid_points_is_hierarchization() {
    let x = array![[0.25], [0.5], [0.75]];
    let y = x.column(0).mapv(|v| v * (1.0 - v));
    let model = Regressor::new(GridSpec::regular(1, 2).unwrap())
        .basis(Basis::Linear)
        .lambda(0.0)
        .tolerance(1e-14)
        .fit(x.view(), y.view())
        .unwrap();
    let g = model.grid();
    assert!((model.alpha()[point(g, &[1], &[1])] - 0.25).abs() < 1e-12);
    assert!((model.alpha()[point(g, &[2], &[1])] - 1.0 / 16.0).abs() < 1e-12);
    assert!((model.alpha()[point(g, &[2], &[3])] - 1.0 / 16.0).abs() < 1e-12);
    assert!(model.mse(x.view(), y.view()).unwrap() < 1e-24);
}

#[test]
fn regression_equals_the_dense_normal_equations() {
    let mut adaptive = AdaptiveGrid::from_spec(&GridSpec::regular(2, 3).unwrap()).unwrap();
    adaptive.refine(&[3, 7]).unwrap();
    let grids = [AdaptiveGrid::from_spec(&GridSpec::regular(3, 3).unwrap()).unwrap(), adaptive];
    for grid in grids {
        for basis in [Basis::Linear, Basis::ModifiedLinear] {
            let d = grid.dim();
            let x = sample(97, d, 3);
            let y: Array1<f64> = x.rows().into_iter().map(|r| (3.0 * r[0]).sin() + r[d - 1] * r[0]).collect();
            let lambda = 1e-3;
            let b = dense_b(&grid, basis, &x);
            let m = x.nrows() as f64;
            let mut a = b.t().dot(&b) / m;
            for i in 0..grid.len() {
                a[[i, i]] += lambda;
            }
            let want = dense_solve(a, (b.t().dot(&y) / m).to_vec());
            // (backend, CG tolerance, allowed error relative to the solution's scale)
            let backends: [(Option<Backend>, f64, f64); 4] = [
                (None, 1e-13, 1e-9),
                (Some(Arc::new(CpuSubspace::default())), 1e-13, 1e-9),
                (Some(Arc::new(CpuAssembled::default())), 1e-13, 1e-9),
                // f32 products: CG stops at the f32 noise floor, α to about 1e-4 of its scale
                (Some(Arc::new(CpuAssembled::f32())), 1e-5, 1e-3),
            ];
            let scale = want.iter().fold(1.0f64, |s, v| s.max(v.abs()));
            for (backend, tolerance, error) in backends {
                let mut r = Regressor::with_grid(grid.clone())
                    .basis(basis)
                    .lambda(lambda)
                    .tolerance(tolerance)
                    .max_iterations(1000);
                if let Some(be) = backend {
                    r = r.backend(be);
                }
                let model = r.fit(x.view(), y.view()).unwrap();
                assert!(model.report().converged, "{:?}", model.report());
                for (p, q) in model.alpha().iter().zip(&want) {
                    assert!((p - q).abs() < error * scale, "{basis:?}: {p} vs {q}");
                }
            }
        }
    }
}

/// The streaming operator for both products, without the evaluation trie: the backend as it
/// was before `CpuStreaming` took `B α` from the trie on regular grids.
#[derive(Debug)]
struct PureStreaming;

impl sg_learn::Backend for PureStreaming {
    fn name(&self) -> &'static str {
        "pure-streaming"
    }
    fn data_operator<'a>(
        &'a self,
        grid: &'a AdaptiveGrid,
        basis: Basis,
        x: ndarray::ArrayView2<'a, f64>,
    ) -> sg_learn::Result<Box<dyn DataOperator + 'a>> {
        Ok(Box::new(CpuStreaming::build(grid, basis, x, StreamTuning::DEFAULT)?))
    }
}

#[test]
fn streaming_through_the_evaluation_trie_fits_and_predicts_as_before() {
    // m = 1 and primes, d = 1, level 1: the trie's awkward sizes; every fit to 1e-13.
    for (d, n, m) in [(1, 1, 1), (1, 5, 13), (2, 1, 7), (2, 4, 1), (3, 3, 97), (5, 2, 31)] {
        let grid = AdaptiveGrid::from_spec(&GridSpec::regular(d, n).unwrap()).unwrap();
        let x = sample(m, d, 4);
        let y: Array1<f64> = x.rows().into_iter().map(|r| (3.0 * r[0]).sin() + r[d - 1]).collect();
        let xt = sample(29, d, 9);
        let fit = |backend: Backend| {
            let r = Regressor::with_grid(grid.clone()).basis(Basis::Linear).lambda(1e-3);
            let model =
                r.tolerance(1e-13).max_iterations(1000).backend(backend).fit(x.view(), y.view()).unwrap();
            assert!(model.report().converged, "{:?}", model.report());
            let predicted = model.predict(xt.view()).unwrap();
            (model.alpha().to_vec(), predicted.to_vec())
        };
        let (alpha, predicted) = fit(Arc::new(CpuStreaming::default()));
        let others: [Backend; 3] =
            [Arc::new(PureStreaming), Arc::new(CpuSubspace::default()), Arc::new(CpuAssembled::default())];
        for backend in others {
            let (want_alpha, want_predicted) = fit(backend);
            let scale = want_alpha.iter().fold(1.0f64, |s, v| s.max(v.abs()));
            for (p, q) in alpha.iter().zip(&want_alpha).chain(predicted.iter().zip(&want_predicted)) {
                assert!((p - q).abs() < 1e-9 * scale, "d {d}, n {n}, m {m}: {p} vs {q}");
            }
        }
        let est =
            DensityEstimator::with_grid(grid.clone()).lambda(1e-3).tolerance(1e-13).max_iterations(1000);
        let trie = est.clone().backend(Arc::new(CpuStreaming::default())).fit(x.view()).unwrap();
        let pure = est.backend(Arc::new(PureStreaming)).fit(x.view()).unwrap();
        let (f, g) = (trie.evaluate(xt.view()).unwrap(), pure.evaluate(xt.view()).unwrap());
        let scale = g.iter().fold(1.0f64, |s, v| s.max(v.abs()));
        assert!(f.iter().zip(&g).all(|(p, q)| (p - q).abs() < 1e-12 * scale), "density d {d}, n {n}");
    }
}

#[test]
fn density_matches_the_digest_closed_forms() {
    let x = array![[0.5]];
    let fit = |level, lambda| {
        DensityEstimator::new(GridSpec::regular(1, level).unwrap())
            .lambda(lambda)
            .tolerance(1e-14)
            .fit(x.view())
            .unwrap()
    };
    for lambda in [0.0, 0.5] {
        assert!((fit(1, lambda).alpha()[0] - 1.0 / (1.0 / 3.0 + lambda)).abs() < 1e-12);
    }
    for (lambda, want) in [(0.0, [48.0 / 7.0, -36.0 / 7.0]), (0.1, [1920.0 / 607.0, -900.0 / 607.0])] {
        let model = fit(2, lambda);
        let g = model.grid();
        assert!((model.alpha()[point(g, &[1], &[1])] - want[0]).abs() < 1e-11);
        assert!((model.alpha()[point(g, &[2], &[1])] - want[1]).abs() < 1e-11);
        assert!((model.alpha()[point(g, &[2], &[3])] - want[1]).abs() < 1e-11);
    }
}

#[test]
fn density_equals_the_dense_system_and_ignores_duplication() {
    let grid = AdaptiveGrid::from_spec(&GridSpec::regular(2, 4).unwrap()).unwrap();
    let x = sample(61, 2, 9);
    let lambda = 1e-3;
    let n = grid.len();
    let mut r = Array2::from_shape_fn((n, n), |(i, j)| {
        (0..2)
            .map(|k| {
                hat_inner_product(
                    grid.levels_of(i)[k],
                    grid.indices_of(i)[k],
                    grid.levels_of(j)[k],
                    grid.indices_of(j)[k],
                )
            })
            .product()
    });
    for i in 0..n {
        r[[i, i]] += lambda;
    }
    let b = dense_b(&grid, Basis::Linear, &x).sum_axis(ndarray::Axis(0)) / 61.0;
    let want = dense_solve(r, b.to_vec());
    let est = DensityEstimator::with_grid(grid).lambda(lambda).tolerance(1e-13).max_iterations(1000);
    let model = est.fit(x.view()).unwrap();
    for (p, q) in model.alpha().iter().zip(&want) {
        assert!((p - q).abs() < 1e-9 * want.iter().fold(1.0f64, |s, v| s.max(v.abs())));
    }
    let twice = ndarray::concatenate![ndarray::Axis(0), x, x];
    let again = est.fit(twice.view()).unwrap();
    for (p, q) in model.alpha().iter().zip(again.alpha()) {
        assert!((p - q).abs() < 1e-9 * p.abs().max(1.0));
    }
    let subspace = est.clone().backend(Arc::new(CpuSubspace::default())).fit(x.view()).unwrap();
    for (p, q) in model.alpha().iter().zip(subspace.alpha()) {
        assert!((p - q).abs() < 1e-9 * p.abs().max(1.0));
    }
    let scale = want.iter().fold(1.0f64, |s, v| s.max(v.abs()));
    let single = est.clone().backend(Arc::new(CpuAssembled::f32())).tolerance(1e-5).fit(x.view()).unwrap();
    assert!(single.report().converged, "{:?}", single.report());
    for (p, q) in single.alpha().iter().zip(&want) {
        assert!((p - q).abs() < 1e-3 * scale, "f32: {p} vs {q}");
    }
}

/// `(R + λS) α = b` assembled densely: `S_ij = Σ_k s_k ∏_{t≠k} m_t` with the 1-D stiffness
/// `s = 2^{l+1}` on the diagonal and 0 elsewhere (hierarchical hats' derivatives are orthogonal).
#[test]
fn laplacian_density_equals_the_dense_system() {
    let grid = {
        let mut g = AdaptiveGrid::from_spec(&GridSpec::regular(3, 2).unwrap()).unwrap();
        g.refine(&[0, 2]).unwrap();
        g
    };
    let x = sample(37, 3, 4);
    let lambda = 1e-2;
    let n = grid.len();
    let a = Array2::from_shape_fn((n, n), |(i, j)| {
        let (li, ii, lj, ij) = (grid.levels_of(i), grid.indices_of(i), grid.levels_of(j), grid.indices_of(j));
        let m: Vec<f64> = (0..3).map(|k| hat_inner_product(li[k], ii[k], lj[k], ij[k])).collect();
        let stiff =
            |k: usize| if li[k] == lj[k] && ii[k] == ij[k] { (1u64 << (li[k] + 1)) as f64 } else { 0.0 };
        let s: f64 =
            (0..3).map(|k| (0..3).map(|t| if t == k { stiff(k) } else { m[t] }).product::<f64>()).sum();
        m.iter().product::<f64>() + lambda * s
    });
    let b = dense_b(&grid, Basis::Linear, &x).sum_axis(ndarray::Axis(0)) / 37.0;
    let want = dense_solve(a, b.to_vec());
    let model = DensityEstimator::with_grid(grid)
        .lambda(lambda)
        .regularization(Regularization::Laplacian)
        .tolerance(1e-13)
        .max_iterations(1000)
        .fit(x.view())
        .unwrap();
    let scale = want.iter().fold(1.0f64, |s, v| s.max(v.abs()));
    for (p, q) in model.alpha().iter().zip(&want) {
        assert!((p - q).abs() < 1e-9 * scale, "{p} vs {q}");
    }
}

/// A grid missing an ancestor takes the pairwise mass product (same dense solution); the
/// Laplacian, which needs the up-down scheme, is an error there.
#[test]
fn an_inconsistent_grid_falls_back_to_the_pairwise_mass_matrix() {
    let grid = AdaptiveGrid::from_points(1, &[1, 3, 2], &[1, 1, 3]).unwrap();
    let x = sample(19, 1, 2);
    let n = grid.len();
    let lambda = 1e-3;
    let a = Array2::from_shape_fn((n, n), |(i, j)| {
        hat_inner_product(
            grid.levels_of(i)[0],
            grid.indices_of(i)[0],
            grid.levels_of(j)[0],
            grid.indices_of(j)[0],
        ) + if i == j { lambda } else { 0.0 }
    });
    let b = dense_b(&grid, Basis::Linear, &x).sum_axis(ndarray::Axis(0)) / 19.0;
    let want = dense_solve(a, b.to_vec());
    let est = DensityEstimator::with_grid(grid).lambda(lambda).tolerance(1e-13);
    let model = est.clone().fit(x.view()).unwrap();
    for (p, q) in model.alpha().iter().zip(&want) {
        assert!((p - q).abs() < 1e-10 * q.abs().max(1.0));
    }
    assert!(est.regularization(Regularization::Laplacian).fit(x.view()).is_err());
}

#[test]
fn surplus_refinement_keeps_the_grid_consistent_and_helps() {
    let (x, y) = datasets::friedman1(600, 0.0, 5);
    let x2 = x.slice(ndarray::s![.., 0..3]).to_owned();
    let y2: Array1<f64> = x2.rows().into_iter().map(|r| (4.0 * r[0] * r[1]).sin() + r[2]).collect();
    let _ = y;
    let base = Regressor::new(GridSpec::regular(3, 2).unwrap()).lambda(1e-6).max_iterations(300);
    let plain = base.clone().fit(x2.view(), y2.view()).unwrap();
    let refined = base.refinement(3, 4).fit(x2.view(), y2.view()).unwrap();
    assert!(refined.grid().len() > plain.grid().len());
    assert!(refined.grid().is_consistent());
    assert!(refined.mse(x2.view(), y2.view()).unwrap() < plain.mse(x2.view(), y2.view()).unwrap());
}

#[test]
fn friedman1_error_approaches_the_noise_variance() {
    let (x, y) = datasets::friedman1(3000, 1.0, 11);
    let (xt, yt) = datasets::friedman1(1000, 1.0, 12);
    let model = Regressor::new(GridSpec::regular(10, 3).unwrap())
        .lambda(1e-4)
        .max_iterations(200)
        .fit(x.view(), y.view())
        .unwrap();
    let mse = model.mse(xt.view(), yt.view()).unwrap();
    assert!(mse > 0.8 && mse < 2.5, "test MSE {mse}");
}

#[test]
fn bad_input_is_an_error() {
    let r = Regressor::new(GridSpec::regular(2, 2).unwrap());
    let ok = array![[0.1, 0.2], [0.3, 0.4]];
    let y = array![1.0, 2.0];
    for bad in
        [array![[0.1, 1.2]], array![[f64::NAN, 0.2]], array![[f64::INFINITY, 0.2]], array![[-0.1, 0.2]]]
    {
        let err = r.fit(bad.view(), array![1.0].view()).unwrap_err();
        assert!(matches!(err, LearnError::OutsideDomain { .. } | LearnError::NonFinite { .. }), "{err}");
    }
    assert!(matches!(
        r.fit(Array2::zeros((0, 2)).view(), Array1::zeros(0).view()),
        Err(LearnError::Empty { .. })
    ));
    assert!(matches!(r.fit(ok.view(), array![1.0].view()), Err(LearnError::LengthMismatch { .. })));
    assert!(matches!(r.fit(ok.view(), array![1.0, f64::NAN].view()), Err(LearnError::NonFinite { .. })));
    assert!(matches!(
        r.fit(array![[0.5]].view(), array![1.0].view()),
        Err(LearnError::DimensionMismatch { .. })
    ));
    assert!(r.clone().lambda(-1.0).fit(ok.view(), y.view()).is_err());
    assert!(r.clone().max_iterations(0).fit(ok.view(), y.view()).is_err());
    assert!(r.clone().tolerance(f64::NAN).fit(ok.view(), y.view()).is_err());
    let boundary = GridSpec::regular(2, 2).unwrap().with_boundary().unwrap();
    assert!(Regressor::new(boundary).fit(ok.view(), y.view()).is_err());
    let model = r.fit(ok.view(), y.view()).unwrap();
    assert!(model.predict(array![[2.0, 0.0]].view()).is_err());
    assert!(model.mse(ok.view(), array![1.0].view()).is_err());
    let dm = DensityEstimator::new(GridSpec::regular(2, 2).unwrap()).fit(ok.view()).unwrap();
    assert!(dm.evaluate(array![[0.5, f64::NAN]].view()).is_err());
    assert!(DensityEstimator::new(GridSpec::regular(2, 2).unwrap()).fit(array![[0.5, 1.5]].view()).is_err());
    let c = Clustering::new(GridSpec::regular(2, 2).unwrap());
    assert!(c.clone().neighbors(0).fit(ok.view()).is_err());
    assert!(c.clone().threshold(1.5).fit(ok.view()).is_err());
    assert!(c.clone().knn(Knn::Binned(2)).neighbors(3).fit(ok.view()).is_err());
    assert!(c.fit(array![[0.5, f64::NAN]].view()).is_err());
    assert!(adjusted_rand_index(&[Some(0)], &[]).is_nan());
}

#[test]
fn ari_worked_values() {
    let p = |v: &[usize]| v.iter().map(|&c| Some(c)).collect::<Vec<_>>();
    let a = p(&[0, 0, 0, 1, 1, 1]);
    assert!((adjusted_rand_index(&a, &p(&[0, 0, 1, 1, 1, 1])) - 12.0 / 37.0).abs() < 1e-12);
    assert!(
        (adjusted_rand_index(&p(&[0, 0, 1, 1, 2, 2]), &p(&[0, 1, 0, 1, 0, 1])) + 4.0 / 11.0).abs() < 1e-12
    );
    assert_eq!(adjusted_rand_index(&a, &a), 1.0);
    assert_eq!(adjusted_rand_index(&a, &p(&[7, 7, 7, 3, 3, 3])), 1.0);
    // noise is a label of its own: {0,1}{2,3}{4,5 noise} against three clusters
    let with_noise = vec![Some(0), Some(0), Some(1), Some(1), None, None];
    assert_eq!(adjusted_rand_index(&with_noise, &p(&[5, 5, 6, 6, 9, 9])), 1.0);
    assert!(adjusted_rand_index(&with_noise, &p(&[5, 5, 6, 6, 6, 9])) < 1.0);
}

#[test]
fn knn_follows_the_tie_rule_and_binning_is_exact_with_enough_bins() {
    let line = array![[0.0], [1.0], [2.0], [3.0]];
    let g = knn_exact(line.view(), 1).unwrap();
    assert_eq!(g[1], vec![0]); // 0 and 2 tie: the smaller index wins
    let x = sample(40, 3, 4);
    let exact = knn_exact(x.view(), 5).unwrap();
    // brute force oracle: sort all others by (distance, index)
    for i in 0..40 {
        let mut all: Vec<(f64, usize)> = (0..40)
            .filter(|&j| j != i)
            .map(|j| ((0..3).map(|k| (x[[i, k]] - x[[j, k]]).powi(2)).sum::<f64>(), j))
            .collect();
        all.sort_by(|a, b| a.partial_cmp(b).unwrap());
        assert_eq!(exact[i], all.iter().take(5).map(|c| c.1).collect::<Vec<_>>());
    }
    assert_eq!(knn_binned(x.view(), 5, 39).unwrap(), exact);
    let small = knn_exact(array![[0.1], [0.2]].view(), 3).unwrap();
    assert_eq!(small, vec![vec![1], vec![0]]);
}

#[test]
fn components_equal_a_breadth_first_search() {
    let m = 30;
    let edges: Vec<(usize, usize)> =
        (0..m).map(|i| (i, (i * 7 + 3) % m)).filter(|&(a, b)| (a + b) % 4 != 0).collect();
    let active: Vec<bool> = (0..m).map(|i| i % 5 != 2).collect();
    let labels = connected_components(m, &edges, &active);
    for i in 0..m {
        assert_eq!(labels[i].is_none(), !active[i]);
        // BFS from i over active nodes
        if !active[i] {
            continue;
        }
        let mut seen = vec![false; m];
        let mut stack = vec![i];
        seen[i] = true;
        while let Some(u) = stack.pop() {
            for &(a, b) in &edges {
                for (p, q) in [(a, b), (b, a)] {
                    if p == u && active[q] && !seen[q] {
                        seen[q] = true;
                        stack.push(q);
                    }
                }
            }
        }
        for j in 0..m {
            if active[j] {
                assert_eq!(seen[j], labels[i] == labels[j], "{i} {j}");
            }
        }
    }
}

/// More check points per edge only remove edges: the same points are noise, and every cluster
/// of the finer check lies inside one cluster of the midpoint check.
#[test]
fn more_edge_checks_refine_the_partition() {
    let blobs = datasets::GaussianBlobs { clusters: 5, dim: 2, sigma: 0.05, separation: 4.0, noise: 0.05 };
    let (x, _) = blobs.generate(500, 11).unwrap();
    let base = Clustering::new(GridSpec::regular(2, 5).unwrap()).lambda(1e-3).neighbors(8).threshold(0.2);
    let one = base.clone().fit(x.view()).unwrap();
    let five = base.clone().edge_checks(5).fit(x.view()).unwrap();
    let mut inside = std::collections::HashMap::new();
    for (a, b) in one.iter().zip(&five) {
        assert_eq!(a.is_none(), b.is_none());
        if let (Some(a), Some(b)) = (a, b) {
            assert_eq!(*inside.entry(*b).or_insert(*a), *a, "cluster {b} spans two coarser clusters");
        }
    }
    assert!(base.edge_checks(0).fit(x.view()).is_err());
}

#[test]
fn clustering_recovers_separated_blobs() {
    let blobs = datasets::GaussianBlobs { clusters: 4, dim: 2, sigma: 0.04, separation: 7.0, noise: 0.02 };
    let (x, truth) = blobs.generate(400, 3).unwrap();
    for knn in [Knn::Exact, Knn::Binned(16)] {
        let labels = Clustering::new(GridSpec::regular(2, 5).unwrap())
            .lambda(1e-3)
            .neighbors(6)
            .threshold(0.1)
            .knn(knn)
            .fit(x.view())
            .unwrap();
        let ari = adjusted_rand_index(&labels, &truth);
        assert!(ari > 0.9, "{knn:?}: ARI {ari}");
    }
    assert!(
        datasets::GaussianBlobs { clusters: 50, dim: 1, sigma: 0.05, separation: 7.0, noise: 0.0 }
            .generate(10, 1)
            .is_err()
    );
}

#[test]
fn csv_errors_name_the_line() {
    assert!(matches!(
        datasets::read_csv("1,2\n3\n".as_bytes(), false),
        Err(LearnError::Parse { line: 2, .. })
    ));
    assert!(matches!(datasets::read_csv("1,x\n".as_bytes(), false), Err(LearnError::Parse { line: 1, .. })));
    assert!(matches!(datasets::read_csv("a,b\n".as_bytes(), true), Err(LearnError::Empty { .. })));
}

#[test]
fn the_parameter_search_finds_the_best_pair_of_its_grid() {
    let blobs = datasets::GaussianBlobs { clusters: 3, dim: 2, sigma: 0.04, separation: 7.0, noise: 0.02 };
    let (x, truth) = blobs.generate(300, 9).unwrap();
    let c = Clustering::new(GridSpec::regular(2, 5).unwrap()).neighbors(6);
    let (lambdas, thresholds) = ([1e-4, 1e-3], [0.02, 0.1, 0.3]);
    let best = c.search(x.view(), &truth, &lambdas, &thresholds).unwrap();
    // the oracle: every pair fitted from scratch
    for &l in &lambdas {
        for &t in &thresholds {
            let labels = c.clone().lambda(l).threshold(t).fit(x.view()).unwrap();
            assert!(adjusted_rand_index(&labels, &truth) <= best.ari + 1e-12);
        }
    }
    let again = c.clone().lambda(best.lambda).threshold(best.threshold).fit(x.view()).unwrap();
    assert_eq!(again, best.labels);
    assert!(c.search(x.view(), &truth[1..], &lambdas, &thresholds).is_err());
    assert!(c.search(x.view(), &truth, &[], &thresholds).is_err());
}
