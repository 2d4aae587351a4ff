//! Property tests over the public CPU entry points of prefix-ops with arbitrary sizes and
//! values: each call either returns an error (and leaves the data alone) or a result equal to
//! a plain sequential oracle written here or in `scan::reference`; nothing panics except the
//! documented panics of the test-model modules, which are not called outside their contracts.
//! Time is bounded by the sizes generated: no entry point loops on data.
//!
//! The default budget is small for CI (`CASES` per property). A long run:
//! `PROPTEST_CASES=20000 cargo test --release -p prefix-ops --test properties`.

use std::cmp::Reverse;

use prefix_ops::Error;
use prefix_ops::ndarray::{Array2, ShapeBuilder, s};
use prefix_ops::scan::{self, Add, Max, Min, Monoid, Mul, dispatch, emulate, reference, single};
use prefix_ops::segments::{check_offsets, check_rows, offsets_from_lengths};
use prefix_ops::sort::{self, Order, SortKey};
use prefix_ops::tridiagonal::{self, Dominance, Layout, Solver, TridiagonalBatch};
use proptest::prelude::*;

/// Cases per property unless `PROPTEST_CASES` says otherwise.
const CASES: u32 = 32;

fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(CASES);
    ProptestConfig { cases, failure_persistence: None, ..ProptestConfig::default() }
}

// ---------------------------------------------------------------------------------------------
// Oracles for the conventions.

fn rows_ok(len: usize, row_len: usize) -> bool {
    len == 0 || (row_len > 0 && len.is_multiple_of(row_len))
}

fn offsets_ok(len: usize, offsets: &[usize]) -> bool {
    offsets.first() == Some(&0) && offsets.last() == Some(&len) && offsets.windows(2).all(|w| w[0] <= w[1])
}

/// Offsets that are valid for `len` about half the time, and broken in every way otherwise.
fn offsets_for(len: usize) -> impl Strategy<Value = Vec<usize>> {
    let valid = prop::collection::vec(0..=len, 0..6).prop_map(move |mut cuts| {
        cuts.push(0);
        cuts.push(len);
        cuts.sort_unstable();
        cuts
    });
    let any = prop::collection::vec(0..=len + 2, 0..6);
    prop_oneof![valid, any]
}

// ---------------------------------------------------------------------------------------------
// Values.

/// f64 values with every kind of special value, small enough that no sum of a few hundred of
/// them overflows (so NaN and infinities arise from the inputs alone, in any order).
fn special_f64() -> impl Strategy<Value = f64> {
    prop_oneof![
        4 => -1e6..1e6f64,
        1 => prop::sample::select(vec![0.0, -0.0, f64::NAN, -f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1e-300, -5e-324]),
    ]
}

/// Same non-finite class (NaN, +inf, -inf, finite) and, when finite, within `tol` of `want`.
fn float_close(got: f64, want: f64, tol: f64) -> bool {
    if want.is_nan() || got.is_nan() {
        return want.is_nan() && got.is_nan();
    }
    if want.is_infinite() || got.is_infinite() {
        return got == want;
    }
    (got - want).abs() <= tol
}

/// Any-order summation bound for prefix `i`: `(i + 1) ε Σ|x_j|`.
fn prefix_bounds(xs: &[f64]) -> Vec<f64> {
    let mut acc = 0.0;
    xs.iter()
        .enumerate()
        .map(|(i, x)| {
            if x.is_finite() {
                acc += x.abs();
            }
            (i + 2) as f64 * f64::EPSILON * acc
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Scans.

/// Every whole-array CPU scan with `op` against the sequential reference, exactly.
fn whole_array_scans_exact<T: Copy + Send + Sync + PartialEq + std::fmt::Debug, M: Monoid<T>>(
    xs: &[T],
    op: M,
) {
    let mut inc = xs.to_vec();
    reference::inclusive(&mut inc, op);
    let mut exc = xs.to_vec();
    reference::exclusive(&mut exc, op);
    type Scan<T, M> = fn(&mut [T], M);
    let paths: [(Scan<T, M>, bool); 4] = [
        (scan::inclusive, false),
        (scan::exclusive, true),
        (single::inclusive, false),
        (single::exclusive, true),
    ];
    for (f, exclusive) in paths {
        let mut got = xs.to_vec();
        f(&mut got, op);
        assert_eq!(&got, if exclusive { &exc } else { &inc });
    }
    let mut got = xs.to_vec();
    scan::parallel::scan(&mut got, op, false);
    assert_eq!(got, inc);
    let mut got = xs.to_vec();
    let carry = single::inclusive_from(&mut got, op.identity(), op);
    assert_eq!(got, inc);
    assert!(carry == single::reduce(xs, op) && inc.last().is_none_or(|&l| l == carry));
    let mut got = xs.to_vec();
    single::exclusive_from(&mut got, op.identity(), op);
    assert_eq!(got, exc);
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn scans_of_integers_equal_the_reference(xs in prop::collection::vec(any::<u32>(), 0..300),
                                            ys in prop::collection::vec(any::<i64>(), 0..300)) {
        whole_array_scans_exact(&xs, Add);
        whole_array_scans_exact(&xs, Mul);
        whole_array_scans_exact(&ys, Min);
        whole_array_scans_exact(&ys, Max);
    }

    #[test]
    fn scans_of_floats_with_specials(xs in prop::collection::vec(special_f64(), 0..300)) {
        // Min and Max ignore NaN and are exact in any order.
        whole_array_scans_exact(&xs.iter().map(|x| x.to_bits()).map(f64::from_bits).collect::<Vec<_>>(), Min);
        let mut got = xs.clone();
        scan::inclusive(&mut got, Max);
        let mut want = xs.clone();
        reference::inclusive(&mut want, Max);
        prop_assert!(got.iter().zip(&want).all(|(g, w)| g.to_bits() == w.to_bits()));
        // Add reassociates: same NaN/inf class, finite values within the any-order bound.
        let mut got = xs.clone();
        scan::inclusive(&mut got, Add);
        let mut want = xs.clone();
        reference::inclusive(&mut want, Add);
        for ((g, w), tol) in got.iter().zip(&want).zip(prefix_bounds(&xs)) {
            prop_assert!(float_close(*g, *w, tol), "{g:e} vs {w:e}");
        }
    }

    #[test]
    fn scan_into_checks_lengths(xs in prop::collection::vec(any::<i32>(), 0..50), dst_len in 0usize..55) {
        let mut dst = vec![7i32; dst_len];
        let r = scan::inclusive_into(&xs, &mut dst, Add);
        if dst_len == xs.len() {
            let mut want = xs.clone();
            reference::inclusive(&mut want, Add);
            prop_assert!(r.is_ok());
            prop_assert_eq!(&dst, &want);
            scan::exclusive_into(&xs, &mut dst, Add).unwrap();
            reference::exclusive(&mut want[..], Add);
            let mut want = xs.clone();
            reference::exclusive(&mut want, Add);
            prop_assert_eq!(dst, want);
        } else {
            prop_assert!(matches!(r, Err(Error::LengthMismatch { .. })), "{r:?}");
            prop_assert!(scan::exclusive_into(&xs, &mut dst, Add).is_err());
            prop_assert!(dst.iter().all(|&v| v == 7));
        }
    }

    #[test]
    fn scan_rows_follow_the_rows_convention(xs in prop::collection::vec(any::<u64>(), 0..120), row_len in 0usize..20,
                                           exclusive in any::<bool>()) {
        let mut got = xs.clone();
        let r = if exclusive { scan::exclusive_rows(&mut got, row_len, Add) } else { scan::inclusive_rows(&mut got, row_len, Add) };
        prop_assert_eq!(r.is_ok(), rows_ok(xs.len(), row_len));
        prop_assert_eq!(check_rows(xs.len(), row_len).is_ok(), rows_ok(xs.len(), row_len));
        if r.is_ok() {
            let mut want = xs.clone();
            for row in want.chunks_mut(row_len.max(1)) {
                if exclusive { reference::exclusive(row, Add) } else { reference::inclusive(row, Add) }
            }
            prop_assert_eq!(got, want);
        } else {
            prop_assert!(matches!(r, Err(Error::InvalidRows { .. })), "{:?}", r);
            prop_assert_eq!(got, xs);
        }
    }

    #[test]
    fn scan_rows_2d_in_any_layout((rows, cols) in (0usize..6, 0usize..9), layout in 0u8..3, seed in any::<u64>()) {
        let flat: Vec<i64> = (0..rows * cols).map(|i| (seed.wrapping_mul(i as u64 + 1) % 1000) as i64 - 500).collect();
        let mut want = flat.clone();
        if cols > 0 {
            for row in want.chunks_mut(cols) {
                reference::exclusive(row, Max);
            }
        }
        let standard = Array2::from_shape_vec((rows, cols), flat).unwrap();
        let check = |got: Vec<i64>| got == want;
        match layout {
            0 => {
                let mut a = standard;
                scan::exclusive_rows_2d(a.view_mut(), Max).unwrap();
                prop_assert!(check(a.iter().copied().collect()));
            }
            1 => {
                let mut f = Array2::zeros((rows, cols).f());
                f.assign(&standard);
                scan::exclusive_rows_2d(f.view_mut(), Max).unwrap();
                prop_assert!(check(f.iter().copied().collect()));
            }
            _ => {
                let mut wide = Array2::from_elem((rows, 2 * cols), 99i64);
                wide.slice_mut(s![.., ..;2]).assign(&standard);
                scan::exclusive_rows_2d(wide.slice_mut(s![.., ..;2]), Max).unwrap();
                prop_assert!(check(wide.slice(s![.., ..;2]).iter().copied().collect()));
                if cols > 0 {
                    prop_assert!(wide.slice(s![.., 1..;2]).iter().all(|&v| v == 99));
                }
            }
        }
    }

    #[test]
    fn scan_segments_follow_the_offsets_convention((xs, offsets) in (0usize..80).prop_flat_map(|n| (prop::collection::vec(any::<u32>(), n), offsets_for(n))),
                                                   exclusive in any::<bool>()) {
        let mut got = xs.clone();
        let r = if exclusive { scan::exclusive_segments(&mut got, &offsets, Mul) } else { scan::inclusive_segments(&mut got, &offsets, Mul) };
        let valid = offsets_ok(xs.len(), &offsets);
        prop_assert_eq!(r.is_ok(), valid, "{:?} for {}", offsets, xs.len());
        prop_assert_eq!(check_offsets(xs.len(), &offsets).ok(), valid.then(|| offsets.len() - 1));
        let mut want = xs.clone();
        if valid {
            if exclusive { reference::exclusive_segments(&mut want, &offsets, Mul) } else { reference::inclusive_segments(&mut want, &offsets, Mul) }
        } else {
            prop_assert!(matches!(r, Err(Error::InvalidOffsets(_))));
        }
        prop_assert_eq!(got, want);
    }

    #[test]
    fn scan_flagged_restarts_at_heads(xs in prop::collection::vec(any::<i32>(), 0..100), heads in prop::collection::vec(any::<bool>(), 0..100)) {
        for exclusive in [false, true] {
            let mut got = xs.clone();
            let r = if exclusive { scan::exclusive_flagged(&mut got, &heads, Add) } else { scan::inclusive_flagged(&mut got, &heads, Add) };
            let mut want = xs.clone();
            if heads.len() == xs.len() {
                prop_assert!(r.is_ok());
                if exclusive { reference::exclusive_flagged(&mut want, &heads, Add) } else { reference::inclusive_flagged(&mut want, &heads, Add) }
            } else {
                prop_assert!(matches!(r, Err(Error::LengthMismatch { .. })), "{:?}", r);
            }
            prop_assert_eq!(got, want);
        }
    }

    /// The GPU-order models are scans too (within their documented shapes).
    #[test]
    fn emulated_gpu_orders_are_scans(xs in prop::collection::vec(any::<u32>(), 0..5000), row_len in 1usize..700) {
        let n = xs.len();
        let mut want = xs.clone();
        reference::inclusive(&mut want, Add);
        let mut got = xs.clone();
        emulate::lookback(&mut got, Add, emulate::Shape::lookback(4), false);
        prop_assert_eq!(&got, &want);
        let mut rows = xs.clone();
        for r in rows.chunks_mut(row_len) { reference::exclusive(r, Add) }
        let mut got = xs.clone();
        emulate::rows_warp(&mut got, row_len, Add, 4, emulate::Network::LadnerFischer, true);
        prop_assert_eq!(&got, &rows);
        let mut got = xs.clone();
        emulate::rows_block(&mut got, row_len, Add, emulate::Shape::lookback(8), true);
        prop_assert_eq!(&got, &rows);
        let mut got = xs;
        emulate::lookback_heads(&mut got, |i| i % row_len == 0, Add, emulate::Shape::lookback(8), true);
        prop_assert_eq!(got, rows, "n = {}", n);
    }

    #[test]
    fn dispatchers_never_panic(rows in any::<usize>(), row_len in any::<usize>(), bytes in any::<usize>(), sms in any::<u32>(),
                               m in any::<usize>(), layout in any::<bool>()) {
        let k = dispatch::choose(rows, row_len, bytes, sms);
        prop_assert_eq!(dispatch::resolve(rows, row_len, bytes, sms, &Default::default()), k);
        let layout = if layout { Layout::Strided } else { Layout::Interleaved };
        let _ = tridiagonal::gpu::choose(m, rows, layout, bytes);
        let _ = sort::plan_cpu(row_len, rows, bytes);
        let _ = sort::gpu::plan_block(row_len, bytes % 16, Some(bytes % 9), rows);
    }

    #[test]
    fn offsets_from_lengths_is_exact_or_an_error(lengths in prop::collection::vec(prop_oneof![0usize..10, Just(usize::MAX / 2)], 0..8)) {
        match lengths.iter().try_fold(0usize, |a, &l| a.checked_add(l)) {
            Some(total) => {
                let o = offsets_from_lengths(&lengths).unwrap();
                prop_assert_eq!(check_offsets(total, &o).unwrap(), lengths.len());
                prop_assert!(o.windows(2).zip(&lengths).all(|(w, &l)| w[1] - w[0] == l));
            }
            None => prop_assert!(matches!(offsets_from_lengths(&lengths), Err(Error::Invalid(_)))),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Sorts.

/// Keys with every special value; as bits, so NaN payloads and signs are kept.
fn any_key() -> impl Strategy<Value = f64> {
    prop_oneof![
        3 => prop::sample::select(vec![0.0, -0.0, 1.0, -1.0, f64::NAN, -f64::NAN, f64::INFINITY, f64::NEG_INFINITY, f64::MIN_POSITIVE]),
        2 => any::<u64>().prop_map(f64::from_bits),
    ]
}

/// A stable sort by the documented total order (descending: the exact reverse, stable too).
fn oracle_sort(keys: &mut [f64], values: &mut [u32], order: Order) {
    let mut pairs: Vec<(f64, u32)> = keys.iter().copied().zip(values.iter().copied()).collect();
    match order {
        Order::Ascending => pairs.sort_by_key(|p| p.0.to_bits_ordered()),
        Order::Descending => pairs.sort_by_key(|p| Reverse(p.0.to_bits_ordered())),
    }
    for ((k, v), p) in keys.iter_mut().zip(values.iter_mut()).zip(pairs) {
        *k = p.0;
        *v = p.1;
    }
}

fn same_bits(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

fn order_of(descending: bool) -> Order {
    if descending { Order::Descending } else { Order::Ascending }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn sort_rows_match_a_stable_sort(keys in prop::collection::vec(any_key(), 0..200), row_len in 0usize..70,
                                     vlen_delta in 0usize..2, descending in any::<bool>()) {
        let order = order_of(descending);
        let n = keys.len();
        let values: Vec<u32> = (0..n as u32).collect();
        let (mut wk, mut wv) = (keys.clone(), values.clone());
        if rows_ok(n, row_len) && n > 0 {
            for (k, v) in wk.chunks_mut(row_len).zip(wv.chunks_mut(row_len)) {
                oracle_sort(k, v, order);
            }
        }
        let mut got = keys.clone();
        let r = sort::rows(&mut got, row_len, order);
        prop_assert_eq!(r.is_ok(), rows_ok(n, row_len));
        prop_assert!(same_bits(&got, &wk));
        let (mut gk, mut gv) = (keys.clone(), values.clone());
        gv.truncate(n.saturating_sub(vlen_delta));
        let r = sort::rows_by_key(&mut gk, &mut gv, row_len, order);
        if vlen_delta == 1 && n > 0 {
            prop_assert!(matches!(r, Err(Error::LengthMismatch { .. })), "{:?}", r);
            prop_assert!(same_bits(&gk, &keys));
        } else {
            prop_assert_eq!(r.is_ok(), rows_ok(n, row_len));
            prop_assert!(same_bits(&gk, &wk) && gv == wv);
        }
    }

    #[test]
    fn sort_segments_and_whole((keys, offsets) in (0usize..150).prop_flat_map(|n| (prop::collection::vec(any_key(), n), offsets_for(n))),
                               descending in any::<bool>()) {
        let order = order_of(descending);
        let n = keys.len();
        let values: Vec<u32> = (0..n as u32).collect();
        let valid = offsets_ok(n, &offsets);
        let (mut wk, mut wv) = (keys.clone(), values.clone());
        if valid {
            for w in offsets.windows(2) {
                oracle_sort(&mut wk[w[0]..w[1]], &mut wv[w[0]..w[1]], order);
            }
        }
        let mut got = keys.clone();
        let r = sort::segments(&mut got, &offsets, order);
        prop_assert_eq!(r.is_ok(), valid, "{:?}", offsets);
        prop_assert!(same_bits(&got, &wk));
        let (mut gk, mut gv) = (keys.clone(), values.clone());
        prop_assert_eq!(sort::segments_by_key(&mut gk, &mut gv, &offsets, order).is_ok(), valid);
        prop_assert!(same_bits(&gk, &wk) && gv == wv);

        let (mut wk, mut wv) = (keys.clone(), values.clone());
        oracle_sort(&mut wk, &mut wv, order);
        let mut got = keys.clone();
        sort::whole(&mut got, order);
        prop_assert!(same_bits(&got, &wk));
        let (mut gk, mut gv) = (keys, values);
        sort::whole_by_key(&mut gk, &mut gv, order).unwrap();
        prop_assert!(same_bits(&gk, &wk) && gv == wv);
    }

    #[test]
    fn sort_rows_2d_in_any_layout((rows, cols) in (0usize..5, 0usize..40), column_major in any::<bool>(),
                                  seed in any::<u64>(), descending in any::<bool>()) {
        let order = order_of(descending);
        let flat: Vec<i32> = (0..rows * cols).map(|i| (seed.wrapping_mul(2 * i as u64 + 1) >> 40) as i32 % 50).collect();
        let vals: Vec<u32> = (0..(rows * cols) as u32).collect();
        let (mut wk, mut wv) = (flat.clone(), vals.clone());
        sort::rows_by_key(&mut wk, &mut wv, cols, order).unwrap();
        let shape = if column_major { (rows, cols).f() } else { (rows, cols).into_shape_with_order() };
        let mut k = Array2::zeros(shape);
        k.assign(&Array2::from_shape_vec((rows, cols), flat).unwrap());
        let mut v = Array2::zeros((rows, cols));
        v.assign(&Array2::from_shape_vec((rows, cols), vals).unwrap());
        sort::rows_by_key_2d(k.view_mut(), v.view_mut(), order).unwrap();
        prop_assert_eq!(k.iter().copied().collect::<Vec<_>>(), wk.clone());
        prop_assert_eq!(v.iter().copied().collect::<Vec<_>>(), wv);
        let mut k2 = Array2::from_shape_vec((rows, cols), wk.clone()).unwrap();
        sort::rows_2d(k2.view_mut(), order).unwrap();
        prop_assert_eq!(k2.iter().copied().collect::<Vec<_>>(), wk);
        let mut other = Array2::<u32>::zeros((rows, cols + 1));
        let r = sort::rows_by_key_2d(k.view_mut(), other.view_mut(), order);
        prop_assert!(matches!(r, Err(Error::ShapeMismatch { .. })), "{:?}", r);
    }

    #[test]
    fn sorting_networks_and_the_kernel_model_sort(log_n in 0u32..9, seed in any::<u64>()) {
        let n = 1usize << log_n;
        let keys: Vec<u32> = (0..n).map(|i| (seed.wrapping_mul(i as u64 * 2 + 1) >> 50) as u32).collect();
        let mut want = keys.clone();
        want.sort_unstable();
        let mut got = keys.clone();
        sort::network::sort_bits(&mut got);
        prop_assert_eq!(&got, &want);
        let mut tagged: Vec<(u32, u32)> = keys.iter().copied().zip(0..).collect();
        let mut want_tagged = tagged.clone();
        want_tagged.sort_unstable();
        sort::network::sort_tagged(&mut tagged);
        prop_assert_eq!(&tagged, &want_tagged);
        if n >= 4 {
            let mut row: Vec<(u32, u32)> = keys.iter().copied().zip(0..).collect();
            sort::emulate::bmcs_row(&mut row, true);
            prop_assert_eq!(row, want_tagged);
        }
        let layers = sort::network::comb_layers(log_n);
        prop_assert_eq!(layers.len() as u32, log_n * (log_n + 1) / 2);
    }
}

// ---------------------------------------------------------------------------------------------
// Tridiagonal systems.

/// Coefficients as users write them, and as they go wrong: exact zeros, near-zero pivots.
fn coefficient() -> impl Strategy<Value = f64> {
    prop_oneof![
        6 => -10.0..10.0f64,
        1 => Just(0.0),
        1 => prop::sample::select(vec![1e-17, -1e-17, 1.0, -1.0, 2.0]),
    ]
}

/// A batch: `m`, `G`, the layout and the four arrays (`d` last).
fn batch_strategy(
    values: BoxedStrategy<f64>,
) -> impl Strategy<Value = (usize, usize, Layout, Vec<Vec<f64>>)> {
    (1usize..12, 1usize..5, any::<bool>()).prop_flat_map(move |(m, g, strided)| {
        let layout = if strided { Layout::Strided } else { Layout::Interleaved };
        (
            Just(m),
            Just(g),
            Just(layout),
            prop::collection::vec(prop::collection::vec(values.clone(), m * g), 4),
        )
    })
}

/// Every named solver, with the parameters' edge values (0 and `usize::MAX` included).
fn every_solver() -> Vec<Solver> {
    use prefix_ops::tridiagonal::RrNetwork;
    vec![
        Solver::Auto,
        Solver::Thomas,
        Solver::ThomasParallel,
        Solver::ThomasLanes,
        Solver::PivotingLu,
        Solver::CyclicReduction,
        Solver::ParallelCyclicReduction,
        Solver::CrPcr { pcr_size: 0 },
        Solver::CrPcr { pcr_size: 3 },
        Solver::CrPcr { pcr_size: usize::MAX },
        Solver::RedundantReduction(RrNetwork::KoggeStone),
        Solver::RedundantReduction(RrNetwork::LadnerFischer),
        Solver::WangMou,
        Solver::Tpr { slice: 0 },
        Solver::Tpr { slice: 1 },
        Solver::Tpr { slice: 3 },
        Solver::Tpr { slice: usize::MAX },
    ]
}

proptest! {
    #![proptest_config(config())]

    /// The safe default on arbitrary systems: an error only for an exactly zero pivot of
    /// partial pivoting (singular), otherwise a backward-stable answer, as `gtsv`.
    #[test]
    fn default_solve_is_backward_stable((m, g, layout, v) in batch_strategy(coefficient().boxed())) {
        let batch = TridiagonalBatch::new(&v[0], &v[1], &v[2], m, layout).unwrap();
        for solver in [Solver::Auto, Solver::PivotingLu] {
            let mut x = v[3].clone();
            match batch.solve_with(solver, &mut x) {
                Ok(()) => {
                    let res = batch.residual(&x, &v[3]).unwrap();
                    prop_assert!(res < 1e-13, "{solver:?}: residual {res:e}");
                }
                Err(Error::ZeroPivot { system, .. }) => prop_assert!(system < g),
                Err(e) => prop_assert!(false, "{solver:?}: {e}"),
            }
        }
        // The f32 default too, on the same systems rounded.
        let w: Vec<Vec<f32>> = v.iter().map(|a| a.iter().map(|&x| x as f32).collect()).collect();
        let b32 = TridiagonalBatch::new(&w[0], &w[1], &w[2], m, layout).unwrap();
        let mut x = w[3].clone();
        if b32.solve(&mut x).is_ok() {
            if x.iter().all(|v| v.is_finite()) {
                let res = b32.residual(&x, &w[3]).unwrap();
                prop_assert!(res < 1e-5, "f32 residual {res:e}");
            } else {
                // As gtsv: a pivot that is tiny but not zero is no error, and the answer may
                // not exist in f32. Only a system whose exact solution (in f64, from the same
                // f32 values) is near or beyond the f32 range may come back non-finite.
                let wide: Vec<Vec<f64>> = w.iter().map(|a| a.iter().map(|&v| v as f64).collect()).collect();
                let b64 = TridiagonalBatch::new(&wide[0], &wide[1], &wide[2], m, layout).unwrap();
                let mut x64 = wide[3].clone();
                let huge = match b64.solve_with(Solver::PivotingLu, &mut x64) {
                    Ok(()) => x64.iter().fold(0.0f64, |a, v| a.max(v.abs())) > 1e25,
                    Err(_) => true,
                };
                prop_assert!(huge, "f32 solve non-finite where the f64 solution is {:?}", x64);
            }
        }
    }

    /// Every named solver on dominant systems gives a correct answer (RR aside, unstable by
    /// design, which must only not panic).
    #[test]
    fn named_solvers_are_correct_on_dominant_systems((m, _g, layout, v) in batch_strategy((-1.0..1.0f64).boxed())) {
        let (a, c) = (&v[0], &v[2]);
        let b: Vec<f64> = v[1].iter().zip(a).zip(c).map(|((b, a), c)| b.signum() * (a.abs() + c.abs() + 0.5)).collect();
        let batch = TridiagonalBatch::new(a, &b, c, m, layout).unwrap();
        prop_assert_eq!(batch.dominance(), Dominance::Strict);
        for solver in every_solver() {
            let mut x = v[3].clone();
            let r = batch.solve_with(solver, &mut x);
            if solver == (Solver::Tpr { slice: 0 }) {
                prop_assert!(matches!(r, Err(Error::Invalid(_))));
                continue;
            }
            prop_assert!(r.is_ok(), "{solver:?}: {r:?}");
            if !matches!(solver, Solver::RedundantReduction(_)) {
                let res = batch.residual(&x, &v[3]).unwrap();
                prop_assert!(res < 1e-12, "{solver:?}: residual {res:e}");
            }
        }
    }

    /// Arbitrary values, NaN and infinities included, through every solver and the checks:
    /// never a panic; errors only of the documented kinds.
    #[test]
    fn every_solver_survives_any_values((m, g, layout, v) in batch_strategy(special_f64().boxed())) {
        let batch = TridiagonalBatch::new(&v[0], &v[1], &v[2], m, layout).unwrap();
        let _ = batch.dominance();
        for solver in every_solver() {
            let mut x = v[3].clone();
            match batch.solve_with(solver, &mut x) {
                Ok(()) => {
                    let res = batch.residual(&x, &v[3]).unwrap();
                    prop_assert!(res.is_nan() || res >= 0.0);
                    if let Ok(rep) = batch.accuracy(&x, &v[3]) {
                        prop_assert!(rep.max_rel_error.is_nan() || rep.max_rel_error >= 0.0);
                    }
                }
                Err(Error::ZeroPivot { system, .. }) => prop_assert!(system < g),
                Err(Error::Invalid(_)) => prop_assert_eq!(solver, Solver::Tpr { slice: 0 }),
                Err(e) => prop_assert!(false, "{solver:?}: {e}"),
            }
        }
    }

    /// Construction, factoring and the 2-D entry points with arbitrary lengths and shapes.
    #[test]
    fn shapes_are_checked(la in 0usize..20, lb in 0usize..20, lc in 0usize..20, m in 0usize..7, rhs in 0usize..20,
                          (r1, c1, r2, c2) in (0usize..4, 0usize..5, 0usize..4, 0usize..5)) {
        let (a, b, c) = (vec![0.5f64; la], vec![3.0; lb], vec![0.25; lc]);
        let r = TridiagonalBatch::strided(&a, &b, &c, m);
        let ok = la == lb && lc == lb && rows_ok(lb, m);
        prop_assert_eq!(r.is_ok(), ok);
        if let Ok(batch) = r {
            let mut d = vec![1.0; rhs];
            prop_assert_eq!(batch.solve(&mut d).is_ok(), rhs == lb);
            let mut x = vec![0.0; rhs];
            prop_assert_eq!(batch.solve_into(&vec![1.0; lb], &mut x).is_ok(), rhs == lb);
            prop_assert_eq!(batch.residual(&x, &d).is_ok(), rhs == lb);
            match batch.factor() {
                Ok(f) => {
                    prop_assert_eq!(batch.systems(), 1);
                    let mut many = vec![1.0; rhs];
                    prop_assert_eq!(f.solve_many(&mut many).is_ok(), m > 0 && rhs.is_multiple_of(m));
                    prop_assert_eq!(f.solve(&mut many).is_ok(), rhs == m);
                }
                Err(e) => prop_assert!(batch.systems() != 1, "{e}"),
            }
        }
        let (a2, b2) = (Array2::from_elem((r1, c1), -1.0f64), Array2::from_elem((r2, c2), 4.0f64));
        let mut d2 = Array2::from_elem((r1, c1), 1.0f64);
        let r = tridiagonal::solve_2d(a2.view(), b2.view(), a2.view(), d2.view_mut());
        prop_assert_eq!(r.is_ok(), (r1, c1) == (r2, c2), "{:?}", r);
        if r.is_err() {
            prop_assert!(matches!(r, Err(Error::ShapeMismatch { .. })), "{:?}", r);
        }
    }
}

/// Error messages print numbers compactly: no value in any message is a long digit string.
#[test]
fn messages_stay_short() {
    let mut xs = [0.0f64; 5];
    let errors = [
        scan::inclusive_rows(&mut xs, 10, Add).unwrap_err(),
        scan::inclusive_segments(&mut xs, &[0, 9, 2], Add).unwrap_err(),
        sort::segments(&mut xs, &[], Order::Ascending).unwrap_err(),
        TridiagonalBatch::strided(&xs, &xs, &xs[..4], 5).unwrap_err(),
        tridiagonal::solve_2d(
            Array2::<f64>::zeros((1, 2)).view(),
            Array2::<f64>::zeros((2, 1)).view(),
            Array2::<f64>::zeros((1, 2)).view(),
            Array2::<f64>::zeros((1, 2)).view_mut(),
        )
        .unwrap_err(),
    ];
    for e in errors {
        let msg = e.to_string();
        let longest_number = msg.split(|c: char| !c.is_ascii_digit()).map(str::len).max().unwrap_or(0);
        assert!(longest_number < 20 && msg.len() < 200, "{msg}");
    }
}

/// Every public error can cross threads and be boxed as `dyn Error`.
#[test]
fn error_is_send_sync_static() {
    fn assert_error<E: std::error::Error + Send + Sync + 'static>() {}
    assert_error::<Error>();
}
