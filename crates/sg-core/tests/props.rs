//! Property tests over every public entry point of sg-core with arbitrary sizes, truncations,
//! boundary flags, points (NaN, ±inf, outside [0, 1], empty batches) and values (NaN, ±inf):
//! no panic, and either the documented error or a result equal to an independent oracle.
//!
//! Generated grids stay below about a thousand points, so every case is fast. The default is a
//! small number of cases; `PROPTEST_CASES=20000 cargo test --release -p sg-core --test props`
//! is the long run.

use ndarray::Array2;
use proptest::prelude::*;
use sg_core::reference::{self as r, spvm};
use sg_core::{Grid, GridSpec, SgError, Side, SubspaceTables, VectorGrid};

fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(64);
    ProptestConfig { cases, ..ProptestConfig::default() }
}

/// A valid grid of at most about a thousand points: regular or truncated, with or without
/// boundary.
fn small_spec() -> impl Strategy<Value = GridSpec> {
    (1usize..=4, 1u32..=4, any::<bool>(), any::<bool>(), prop::collection::vec(1u32..=5, 4)).prop_map(
        |(d, n, trunc, bnd, c)| {
            let n = if bnd { n.min(3) } else { n };
            let spec = if trunc { GridSpec::truncated(d, n, &c[..d]) } else { GridSpec::regular(d, n) };
            let spec = spec.unwrap();
            if bnd { spec.with_boundary().unwrap() } else { spec }
        },
    )
}

/// Grid values: mostly moderate numbers (no overflow in sums), sometimes NaN, ±inf or 0.
fn value() -> impl Strategy<Value = f64> {
    prop_oneof![
        12 => -1e3..1e3f64,
        1 => Just(0.0),
        1 => Just(f64::NAN),
        1 => Just(f64::INFINITY),
        1 => Just(f64::NEG_INFINITY),
    ]
}

/// Evaluation coordinates: mostly inside [0, 1] (edges and centre included), sometimes NaN, ±inf
/// or outside.
fn coordinate() -> impl Strategy<Value = f64> {
    prop_oneof![
        12 => 0.0..=1.0f64,
        1 => Just(0.0),
        1 => Just(1.0),
        1 => Just(0.5),
        1 => Just(-0.0),
        1 => Just(f64::NAN),
        1 => Just(f64::INFINITY),
        1 => Just(f64::NEG_INFINITY),
        1 => -3.0..-1e-300f64,
        1 => 1.0000001..3.0f64,
    ]
}

/// The error `check_point_coords` must report: the first bad coordinate in row-major order.
fn expected_point_error(d: usize, flat: &[f64]) -> Option<SgError> {
    flat.iter().enumerate().find_map(|(k, &v)| {
        let (row, dim) = (k / d, k % d);
        if !v.is_finite() {
            Some(SgError::NonFinite { row, dim, value: v })
        } else if !(0.0..=1.0).contains(&v) {
            Some(SgError::OutsideDomain { row, dim, value: v })
        } else {
            None
        }
    })
}

/// NaN-aware closeness: same class (NaN, +inf, -inf, finite) and finite values within `tol`
/// relative to `scale`.
fn close(a: f64, b: f64, scale: f64) -> bool {
    if a.is_nan() || b.is_nan() {
        return a.is_nan() && b.is_nan();
    }
    if a.is_infinite() || b.is_infinite() {
        return a == b;
    }
    (a - b).abs() <= 1e-9 * (1.0 + scale)
}

fn spec_with_values() -> impl Strategy<Value = (GridSpec, Vec<f64>)> {
    small_spec().prop_flat_map(|spec| {
        let n = spec.len() as usize;
        (Just(spec), prop::collection::vec(value(), n))
    })
}

fn spec_with_points() -> impl Strategy<Value = (GridSpec, Vec<f64>, usize)> {
    small_spec().prop_flat_map(|spec| {
        let d = spec.dim();
        (0usize..10).prop_flat_map(move |m| {
            let spec = spec.clone();
            (Just(spec), prop::collection::vec(coordinate(), m * d), Just(m))
        })
    })
}

proptest! {
    #![proptest_config(config())]

    /// Constructors with any d, n and truncation: an error or a grid, never a panic; the
    /// boundary variant too; allocation either fits (small) or is refused (huge).
    #[test]
    fn constructors_never_panic(
        d in 0usize..=70,
        n in 0u32..=40,
        c in prop::collection::vec(0u32..=40, 0..=70),
    ) {
        let bad_dn = d == 0 || d > 64 || n == 0 || n > 31;
        let bad_c = c.len() != d || c.contains(&0);
        for (spec, bad) in [(GridSpec::regular(d, n), bad_dn), (GridSpec::truncated(d, n, &c), bad_dn || bad_c)] {
            match spec {
                Ok(spec) => {
                    prop_assert!((1..=64).contains(&d) && (1..=31).contains(&n));
                    prop_assert!(spec.num_blocks() >= 1 && spec.num_blocks() <= spec.len());
                    if let Ok(b) = spec.clone().with_boundary() {
                        prop_assert!(b.len() > spec.len() && b.num_blocks() <= b.len());
                    }
                    if spec.len() <= 2000 {
                        prop_assert_eq!(Grid::<f32>::zeros(spec.clone()).unwrap().len() as u64, spec.len());
                    } else if spec.len() > 1 << 52 {
                        prop_assert!(Grid::<f64>::zeros(spec).is_err());
                    }
                }
                Err(SgError::TooManyPoints { .. }) => prop_assert!(!bad),
                Err(e) => prop_assert!(bad, "{}", e),
            }
        }
        let tables = SubspaceTables::new(n, &c);
        if tables.is_ok() {
            prop_assert!((1..=31).contains(&n) && c.len() <= 64 && !c.contains(&0));
        }
    }

    /// gp2idx on arbitrary (levels, indices): Ok exactly for points of the grid, and then idx2gp
    /// inverts it; idx2gp on arbitrary indices: Ok exactly below len.
    #[test]
    fn bijection_on_arbitrary_input(
        spec in small_spec(),
        levels in prop::collection::vec(0u32..=6, 0..=5),
        indices in prop::collection::vec(0u32..=70, 0..=5),
        idx in prop_oneof![0u64..2000, any::<u64>()],
    ) {
        match spec.gp2idx(&levels, &indices) {
            Ok(j) => {
                prop_assert!(spec.contains(&levels, &indices));
                prop_assert_eq!(spec.idx2gp(j).unwrap(), (levels.clone(), indices.clone()));
            }
            Err(e) => {
                prop_assert!(!spec.contains(&levels, &indices));
                let lengths = levels.len() != spec.dim() || indices.len() != spec.dim();
                prop_assert_eq!(matches!(e, SgError::LengthMismatch { .. }), lengths);
            }
        }
        match spec.idx2gp(idx) {
            Ok((l, i)) => {
                prop_assert!(idx < spec.len());
                prop_assert_eq!(spec.gp2idx(&l, &i).unwrap(), idx);
            }
            Err(e) => {
                prop_assert!(idx >= spec.len());
                prop_assert_eq!(e, SgError::IndexOutOfRange { what: "grid point (linear index)", idx, len: spec.len() });
            }
        }
        let sides = idx;
        let _ = spec.block_offset(&levels, sides);
    }

    /// Parents and children for arbitrary (index, dimension, side): Ok exactly for valid
    /// arguments; a parent has a smaller level in that dimension, a child's parent on the other
    /// side is the point itself.
    #[test]
    fn parents_and_children(spec in small_spec(), idx in 0u64..1200, dim in 0usize..6, left in any::<bool>()) {
        let side = if left { Side::Left } else { Side::Right };
        let valid = idx < spec.len() && dim < spec.dim();
        let (p, c) = (spec.parent(idx, dim, side), spec.child(idx, dim, side));
        prop_assert_eq!(p.is_ok(), valid);
        prop_assert_eq!(c.is_ok(), valid);
        if !valid {
            return Ok(());
        }
        let (l, _) = spec.idx2gp(idx).unwrap();
        if let Some(p) = p.unwrap() {
            prop_assert!(spec.idx2gp(p).unwrap().0[dim] < l[dim]);
        }
        if let Some(ch) = c.unwrap() {
            let (cl, _) = spec.idx2gp(ch).unwrap();
            prop_assert_eq!(cl[dim], if l[dim] == 0 { 1 } else { l[dim] + 1 });
            if l[dim] > 0 {
                let back = if left { Side::Right } else { Side::Left };
                prop_assert_eq!(spec.parent(ch, dim, back).unwrap(), Some(idx));
            }
        }
    }

    /// Evaluation with arbitrary points: the first bad coordinate in row-major order is the
    /// error; otherwise the block form, the recursive form and the brute-force sum agree (finite
    /// values), and the point matrix helper gives the coordinates of the bijection.
    #[test]
    fn evaluate_arbitrary_points((spec, flat, m) in spec_with_points(), seed in any::<u64>()) {
        let d = spec.dim();
        let values: Vec<f64> = (0..spec.len()).map(|j| ((j.wrapping_mul(2654435761) ^ seed) % 2001) as f64 / 1000.0 - 1.0).collect();
        let g = Grid::from_values(spec.clone(), values.clone()).unwrap();
        let pts = Array2::from_shape_vec((m, d), flat.clone()).unwrap();
        let got = g.evaluate_batch(pts.view());
        match expected_point_error(d, &flat) {
            // Compared through Debug: the NaN inside `NonFinite` is not equal to itself.
            Some(e) => prop_assert_eq!(format!("{:?}", got.unwrap_err()), format!("{e:?}")),
            None => {
                let got = got.unwrap();
                prop_assert_eq!(got.len(), m);
                for (row, x) in flat.chunks_exact(d).enumerate() {
                    let mut rec = [0.0];
                    let mut brute = [0.0];
                    r::evaluate_recursive_into(&spec, &values, 1, x, &mut rec).unwrap();
                    r::evaluate_brute_force_into(&spec, &values, 1, x, &mut brute).unwrap();
                    prop_assert!(close(got[row], brute[0], 1.0), "{} vs {}", got[row], brute[0]);
                    prop_assert!(close(rec[0], brute[0], 1.0));
                    prop_assert_eq!(g.evaluate(x).unwrap(), got[row]);
                }
            }
        }
        let x = spec.point_matrix::<f64>().unwrap();
        for j in [0, spec.len() / 2, spec.len() - 1] {
            prop_assert_eq!(x.row(j as usize).to_vec(), spec.coordinates(j).unwrap());
        }
    }

    /// NaN and ±inf surpluses: evaluation gives NaN exactly where a contributing surplus (one
    /// per block: the basis function whose cell holds x, even where its value is 0) is NaN, and
    /// a finite result where every contributing surplus is finite.
    #[test]
    fn evaluate_nan_values((spec, values) in spec_with_values(), x in prop::collection::vec(0.0..=1.0f64, 4)) {
        let x = &x[..spec.dim()];
        let g = Grid::from_values(spec.clone(), values.clone()).unwrap();
        let y = g.evaluate(x).unwrap();
        let mut contrib = Vec::new();
        r::contributions(&spec, x, &mut contrib).unwrap();
        let vals: Vec<f64> = contrib.iter().map(|&(k, _)| values[k as usize]).collect();
        if vals.iter().any(|v| v.is_nan()) {
            prop_assert!(y.is_nan());
        }
        if vals.iter().all(|v| v.is_finite()) {
            prop_assert!(y.is_finite());
        }
        if values.iter().all(|v| v.is_finite()) {
            prop_assert!(g.integral().is_finite());
        }
    }

    /// Hierarchization with arbitrary values: the recursive and non-recursive forms agree (NaN
    /// where the other has NaN), and with finite values dehierarchization inverts it.
    #[test]
    fn hierarchize_arbitrary_values((spec, values) in spec_with_values()) {
        let mut a = Grid::from_values(spec.clone(), values.clone()).unwrap();
        let mut b = a.clone();
        a.hierarchize();
        b.hierarchize_recursive();
        let scale = values.iter().filter(|v| v.is_finite()).fold(0.0f64, |m, v| m.max(v.abs())) * 8.0;
        for (x, y) in a.values().iter().zip(b.values()) {
            prop_assert!(close(*x, *y, scale), "{} vs {}", x, y);
        }
        if values.iter().all(|v| v.is_finite()) {
            a.dehierarchize();
            for (x, y) in a.values().iter().zip(&values) {
                prop_assert!(close(*x, *y, scale));
            }
        }
        // A NaN nodal value stays NaN in its own surplus.
        for (j, v) in values.iter().enumerate() {
            if v.is_nan() {
                prop_assert!(b.values()[j].is_nan());
            }
        }
    }

    /// A non-finite nodal value is local: after hierarchization only the surpluses of points
    /// where its basis function is positive (the point itself and its hierarchical descendants)
    /// can be non-finite; after dehierarchization of a non-finite surplus likewise.
    #[test]
    fn non_finite_values_stay_in_their_support(
        spec in small_spec(),
        k in 0u64..2000,
        bad in prop_oneof![Just(f64::NAN), Just(f64::INFINITY), Just(f64::NEG_INFINITY)],
        forward in any::<bool>(),
    ) {
        let k = k % spec.len();
        let mut values: Vec<f64> = (0..spec.len()).map(|j| (j % 7) as f64 - 3.0).collect();
        values[k as usize] = bad;
        let mut g = Grid::from_values(spec.clone(), values).unwrap();
        if forward { g.hierarchize() } else { g.dehierarchize() }
        prop_assert!(!g.values()[k as usize].is_finite());
        let (lk, ik) = spec.idx2gp(k).unwrap();
        let x = spec.point_matrix::<f64>().unwrap();
        for (j, v) in g.values().iter().enumerate() {
            if !v.is_finite() {
                let phi: f64 = (0..spec.dim()).map(|t| sg_core::basis::basis_1d(lk[t], ik[t], x[[j, t]])).product();
                prop_assert!(phi > 0.0, "point {} outside the support of point {}", j, k);
            }
        }
    }

    /// Vector grids: the `s` components behave as `s` scalar grids (bit for bit), `s = 0` and
    /// component indices past `s` are errors.
    #[test]
    fn vector_grids((spec, flat, m) in spec_with_points(), s in 0usize..4, c in 0usize..6) {
        let d = spec.dim();
        let vg = VectorGrid::<f64>::from_fn(spec.clone(), s, |x, out| {
            for (k, o) in out.iter_mut().enumerate() {
                *o = x.iter().sum::<f64>() * (k as f64 + 1.0) - 0.3;
            }
        });
        if s == 0 {
            prop_assert_eq!(vg.unwrap_err(), SgError::Zero { what: "values per point (s)" });
            return Ok(());
        }
        let mut vg = vg.unwrap();
        vg.hierarchize();
        prop_assert_eq!(vg.component(c).is_ok(), c < s);
        let comps: Vec<Grid<f64>> = (0..s).map(|k| vg.component(k).unwrap()).collect();
        prop_assert_eq!(&VectorGrid::from_components(&comps).unwrap(), &vg);
        let pts = Array2::from_shape_vec((m, d), flat.clone()).unwrap();
        match vg.evaluate_batch(pts.view()) {
            Err(e) => prop_assert_eq!(format!("{:?}", Some(e)), format!("{:?}", expected_point_error(d, &flat))),
            Ok(y) => {
                prop_assert_eq!(y.dim(), (m, s));
                for (k, g) in comps.iter().enumerate() {
                    let yk = g.evaluate_batch(pts.view()).unwrap();
                    prop_assert_eq!(y.column(k).to_vec(), yk.to_vec());
                }
                for (row, x) in flat.chunks_exact(d).enumerate() {
                    let v = vg.evaluate(x).unwrap();
                    for k in 0..s {
                        prop_assert!(close(v[k], y[[row, k]], 1.0));
                    }
                }
            }
        }
        let integrals = vg.integral();
        for (k, g) in comps.iter().enumerate() {
            prop_assert_eq!(integrals[k], g.integral());
        }
    }

    /// The reference spvm with arbitrary shapes: each bad shape its own error, otherwise equal
    /// to the plain double loop.
    #[test]
    fn spvm_arbitrary_shapes(
        x in prop::collection::vec(value(), 0..5),
        ix in prop::collection::vec(0usize..8, 0..5),
        a in prop::collection::vec(value(), 0..20),
        p in 0usize..5,
    ) {
        let got = spvm(&x, &ix, &a, p);
        if x.len() != ix.len() {
            prop_assert!(matches!(got, Err(SgError::LengthMismatch { .. })), "{:?}", got);
        } else if p == 0 {
            prop_assert!(matches!(got, Err(SgError::Zero { .. })), "{:?}", got);
        } else if a.len() % p != 0 {
            prop_assert!(matches!(got, Err(SgError::NotMultiple { .. })), "{:?}", got);
        } else if ix.iter().any(|&k| k >= a.len() / p) {
            prop_assert!(matches!(got, Err(SgError::IndexOutOfRange { what: "spvm matrix row", .. })), "{:?}", got);
        } else {
            let y = got.unwrap();
            for j in 0..p {
                let mut want = 0.0;
                for (&xi, &k) in x.iter().zip(&ix) {
                    want += xi * a[k * p + j];
                }
                prop_assert!(close(y[j], want, 0.0) || (y[j] == want));
            }
        }
    }

    /// Slice-level reference functions with arbitrary lengths: wrong lengths are errors.
    #[test]
    fn reference_lengths(spec in small_spec(), len in 0usize..1200, s in 0usize..3, out_len in 0usize..4) {
        let mut values = vec![0.5; len];
        let ok_len = s > 0 && len as u64 == spec.len() * s as u64;
        prop_assert_eq!(r::hierarchize(&spec, &mut values, s).is_ok(), ok_len);
        prop_assert_eq!(r::dehierarchize_recursive(&spec, &mut values, s).is_ok(), ok_len);
        let mut out = vec![0.0; out_len];
        prop_assert_eq!(r::integral_into(&spec, &values, s, &mut out).is_ok(), ok_len && out_len == s);
        let x = vec![0.25; spec.dim()];
        prop_assert_eq!(r::evaluate_recursive_into(&spec, &values, s, &x, &mut out).is_ok(), ok_len && out_len == s);
        let approx = vec![1.0; len];
        prop_assert_eq!(r::relative_l2_error(&approx, &values[..len.min(out_len)]).is_ok(), len <= out_len);
    }
}
