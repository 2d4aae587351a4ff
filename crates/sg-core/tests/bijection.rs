//! gp2idx / idx2gp (§14.2): round trips, exhaustive bijectivity, worked values, layout order.

mod common;
use common::*;
use proptest::prelude::*;
use rand::Rng;
use sg_core::{GridSpec, SgError, Side};

fn specs_for_round_trip() -> Vec<GridSpec> {
    let mut specs = Vec::new();
    for d in 1..=5usize {
        for n in 1..=6u32 {
            specs.push(GridSpec::regular(d, n).unwrap());
            specs.push(GridSpec::regular(d, n.min(4)).unwrap().with_boundary().unwrap());
        }
    }
    specs.push(GridSpec::truncated(2, 5, &[5, 3]).unwrap());
    specs.push(GridSpec::truncated(4, 6, &[2, 6, 3, 4]).unwrap());
    specs.push(GridSpec::truncated(3, 4, &[1, 4, 2]).unwrap().with_boundary().unwrap());
    specs.push(GridSpec::truncated(4, 4, &[2, 1, 3, 4]).unwrap().with_boundary().unwrap());
    specs.push(GridSpec::regular(10, 4).unwrap());
    specs
}

fn round_trip_every_index(spec: &GridSpec) {
    for j in 0..spec.len() {
        let (l, i) = spec.idx2gp(j).unwrap();
        spec.check_point(&l, &i).unwrap_or_else(|e| panic!("{spec:?} j={j}: {e}"));
        assert_eq!(spec.gp2idx(&l, &i).unwrap(), j, "spec {spec:?} l={l:?} i={i:?}");
    }
}

#[test]
fn round_trip_over_every_index() {
    for spec in specs_for_round_trip() {
        round_trip_every_index(&spec);
    }
}

#[test]
fn round_trip_random_truncations() {
    let mut rng = hetkit_testkit::rng("round_trip_random_truncations");
    for _ in 0..25 {
        let d = rng.random_range(1..=5usize);
        let n = rng.random_range(1..=5u32);
        let c: Vec<u32> = (0..d).map(|_| rng.random_range(1..=n)).collect();
        let spec = GridSpec::truncated(d, n, &c).unwrap();
        round_trip_every_index(&spec);
        let spec = spec.with_boundary().unwrap();
        if spec.len() < 20_000 {
            round_trip_every_index(&spec);
        }
    }
}

/// Enumerating every admissible point from the definition and mapping it hits each index
/// exactly once; block offsets and the point iterator agree with gp2idx.
#[test]
fn exhaustive_bijectivity_on_small_grids() {
    let specs = [
        GridSpec::regular(3, 4).unwrap(),
        GridSpec::truncated(2, 5, &[5, 3]).unwrap(),
        GridSpec::truncated(3, 4, &[2, 4, 3]).unwrap(),
        GridSpec::regular(2, 4).unwrap().with_boundary().unwrap(),
        GridSpec::regular(3, 3).unwrap().with_boundary().unwrap(),
        GridSpec::truncated(3, 4, &[2, 4, 1]).unwrap().with_boundary().unwrap(),
    ];
    for spec in specs {
        let pts = all_points(&spec);
        assert_eq!(pts.len() as u64, spec.len(), "{spec:?}");
        let mut seen = vec![false; spec.len() as usize];
        for (l, i) in &pts {
            let j = spec.gp2idx(l, i).unwrap() as usize;
            assert!(!seen[j], "index {j} hit twice");
            seen[j] = true;
        }
        for (k, p) in spec.points().enumerate() {
            assert_eq!(p.index, k as u64);
            assert_eq!(spec.gp2idx(&p.levels, &p.indices).unwrap(), p.index);
        }
        let table = spec.block_table().unwrap();
        assert_eq!(table.len() as u64, spec.num_blocks());
        for (b, block) in spec.blocks().enumerate() {
            assert_eq!(table.offset(b), block.offset());
            assert_eq!(table.levels(b), block.levels());
            assert_eq!(spec.block_offset(block.levels(), block.sides()).unwrap(), block.offset());
            let mut idx = vec![0; spec.dim()];
            for k in [0, block.len() - 1] {
                block.indices_at(k, &mut idx);
                assert_eq!(spec.gp2idx(block.levels(), &idx).unwrap(), block.offset() + k);
                assert_eq!(block.local_index(&idx), k);
            }
        }
    }
}

/// The boundary layout is the documented one: faces by number of boundary dimensions, then
/// lexicographically (dimension 0 first, 0 < 1 < interior), then the zero-boundary order.
#[test]
fn boundary_face_order_is_the_documented_one() {
    for spec in [
        GridSpec::regular(3, 3).unwrap().with_boundary().unwrap(),
        GridSpec::truncated(3, 3, &[1, 3, 2]).unwrap().with_boundary().unwrap(),
    ] {
        let key = |l: &[u32], i: &[u32]| {
            let sym: Vec<u32> = l.iter().zip(i).map(|(&l, &i)| if l == 0 { i } else { 2 }).collect();
            let nb = sym.iter().filter(|&&s| s < 2).count();
            (nb, sym)
        };
        let mut prev = None;
        for j in 0..spec.len() {
            let (l, i) = spec.idx2gp(j).unwrap();
            let k = key(&l, &i);
            if let Some(p) = prev.as_ref() {
                assert!(p <= &k, "faces out of order at {j}: {p:?} then {k:?}");
            }
            prev = Some(k);
        }
    }
}

#[test]
fn digest_oracle_values() {
    // Regular d = 3, n = 4 (digest §5.6, 0-based levels there; +1 here).
    let spec = GridSpec::regular(3, 4).unwrap();
    let table: [(u64, [u32; 3], [u32; 3]); 13] = [
        (0, [0, 0, 0], [1, 1, 1]),
        (1, [1, 0, 0], [1, 1, 1]),
        (2, [1, 0, 0], [3, 1, 1]),
        (3, [0, 1, 0], [1, 1, 1]),
        (4, [0, 1, 0], [1, 3, 1]),
        (5, [0, 0, 1], [1, 1, 1]),
        (6, [0, 0, 1], [1, 1, 3]),
        (7, [2, 0, 0], [1, 1, 1]),
        (8, [2, 0, 0], [3, 1, 1]),
        (10, [2, 0, 0], [7, 1, 1]),
        (30, [0, 0, 2], [1, 1, 7]),
        (31, [3, 0, 0], [1, 1, 1]),
        (110, [0, 0, 3], [1, 1, 15]),
    ];
    for (j, l0, i) in table {
        let l: Vec<u32> = l0.iter().map(|&v| v + 1).collect();
        assert_eq!(spec.gp2idx(&l, &i).unwrap(), j);
        assert_eq!(spec.idx2gp(j).unwrap(), (l, i.to_vec()));
    }
    // Regular d = 10, n = 10.
    let spec = GridSpec::regular(10, 10).unwrap();
    let one = |l0: [u32; 10]| l0.map(|v| v + 1);
    assert_eq!(spec.gp2idx(&[1; 10], &[1; 10]).unwrap(), 0);
    let mut i = [1; 10];
    i[0] = 1023;
    assert_eq!(spec.gp2idx(&one([9, 0, 0, 0, 0, 0, 0, 0, 0, 0]), &i).unwrap(), 8_086_016);
    let mut i = [1; 10];
    i[9] = 1023;
    assert_eq!(spec.gp2idx(&one([0, 0, 0, 0, 0, 0, 0, 0, 0, 9]), &i).unwrap(), 32_978_944);
    assert_eq!(
        spec.gp2idx(&one([1, 2, 0, 0, 0, 0, 0, 0, 0, 3]), &[3, 5, 1, 1, 1, 1, 1, 1, 1, 9]).unwrap(),
        383_925
    );
    // Fig. 3.6 corrected: point (0.875, 0.125), 0-based l = (2, 2) -> 41 + 32 + 12 = 85.
    let spec = GridSpec::truncated(2, 5, &[5, 3]).unwrap();
    assert_eq!(spec.gp2idx(&[3, 3], &[7, 1]).unwrap(), 85);
    assert_eq!(spec.coordinates(85).unwrap(), vec![0.875, 0.125]);
    // Index 0 is the centre; the last index of a regular grid is (1,..,1,n), (1,..,1,2^n-1).
    for (d, n) in [(2usize, 5u32), (4, 5), (6, 3)] {
        let spec = GridSpec::regular(d, n).unwrap();
        assert_eq!(spec.coordinates(0).unwrap(), vec![0.5; d]);
        let (l, i) = spec.idx2gp(spec.len() - 1).unwrap();
        let mut want_l = vec![1; d];
        want_l[d - 1] = n;
        let mut want_i = vec![1; d];
        want_i[d - 1] = (1 << n) - 1;
        assert_eq!((l, i), (want_l, want_i));
    }
}

/// Parents have strictly smaller linear indices (zero-boundary grids), and parent/child
/// arithmetic is consistent.
#[test]
fn parents_precede_children() {
    for spec in [GridSpec::regular(3, 4).unwrap(), GridSpec::truncated(3, 5, &[2, 5, 3]).unwrap()] {
        for j in 0..spec.len() {
            for t in 0..spec.dim() {
                for side in [Side::Left, Side::Right] {
                    if let Some(p) = spec.parent(j, t, side).unwrap() {
                        assert!(p < j);
                        let other = if side == Side::Left { Side::Right } else { Side::Left };
                        // j is a child of its parent, on the side facing j.
                        let (pl, _) = spec.idx2gp(p).unwrap();
                        let (l, _) = spec.idx2gp(j).unwrap();
                        if pl[t] + 1 == l[t] {
                            assert_eq!(spec.child(p, t, other).unwrap(), Some(j));
                        }
                    }
                }
            }
        }
    }
    let spec = GridSpec::regular(1, 3).unwrap().with_boundary().unwrap();
    let centre = spec.gp2idx(&[1], &[1]).unwrap();
    assert_eq!(spec.parent(centre, 0, Side::Left).unwrap(), Some(spec.gp2idx(&[0], &[0]).unwrap()));
    assert_eq!(spec.parent(centre, 0, Side::Right).unwrap(), Some(spec.gp2idx(&[0], &[1]).unwrap()));
    let spec = GridSpec::regular(1, 3).unwrap();
    assert_eq!(spec.parent(0, 0, Side::Left).unwrap(), None);
    assert_eq!(spec.child(spec.len() - 1, 0, Side::Right).unwrap(), None);
}

#[test]
fn bad_points_are_errors() {
    let spec = GridSpec::truncated(2, 5, &[5, 3]).unwrap();
    assert!(matches!(spec.gp2idx(&[1], &[1]), Err(SgError::LengthMismatch { .. })));
    assert!(matches!(spec.gp2idx(&[1, 1], &[1]), Err(SgError::LengthMismatch { .. })));
    assert!(matches!(spec.gp2idx(&[2, 1], &[2, 1]), Err(SgError::NotAGridPoint(_)))); // even index
    assert!(matches!(spec.gp2idx(&[2, 1], &[5, 1]), Err(SgError::NotAGridPoint(_)))); // index too big
    assert!(matches!(spec.gp2idx(&[1, 4], &[1, 1]), Err(SgError::NotAGridPoint(_)))); // truncated
    assert!(matches!(spec.gp2idx(&[4, 3], &[1, 1]), Err(SgError::NotAGridPoint(_)))); // level sum
    assert!(matches!(spec.gp2idx(&[0, 1], &[0, 1]), Err(SgError::NotAGridPoint(_)))); // no boundary
    assert_eq!(
        spec.idx2gp(89),
        Err(SgError::IndexOutOfRange { what: "grid point (linear index)", idx: 89, len: 89 })
    );
    assert!(spec.coordinates(u64::MAX).is_err());
    let b = spec.clone().with_boundary().unwrap();
    assert!(b.gp2idx(&[0, 1], &[1, 1]).is_ok());
    assert!(matches!(b.gp2idx(&[0, 1], &[2, 1]), Err(SgError::NotAGridPoint(_))));
    assert!(spec.parent(0, 2, Side::Left).is_err());
}

/// Large grids: spot round trips where enumeration is impossible.
#[test]
fn round_trip_on_large_grids_sampled() {
    let mut rng = hetkit_testkit::rng("round_trip_on_large_grids_sampled");
    let specs = [
        GridSpec::regular(32, 6).unwrap(),
        GridSpec::regular(1, 30).unwrap(),
        GridSpec::regular(10, 10).unwrap().with_boundary().unwrap(),
        GridSpec::regular(32, 2).unwrap().with_boundary().unwrap(),
        GridSpec::truncated(12, 9, &[9, 1, 2, 3, 4, 5, 6, 7, 8, 9, 3, 2]).unwrap().with_boundary().unwrap(),
    ];
    for spec in specs {
        for _ in 0..300 {
            let j = rng.random_range(0..spec.len());
            let (l, i) = spec.idx2gp(j).unwrap();
            assert_eq!(spec.gp2idx(&l, &i).unwrap(), j);
        }
        let last = spec.len() - 1;
        let (l, i) = spec.idx2gp(last).unwrap();
        assert_eq!(spec.gp2idx(&l, &i).unwrap(), last);
    }
}

fn arb_spec() -> impl Strategy<Value = GridSpec> {
    (1usize..=6, 1u32..=7, any::<bool>(), proptest::collection::vec(1u32..=7, 6)).prop_map(
        |(d, n, bnd, c)| {
            let spec = GridSpec::truncated(d, n, &c[..d]).unwrap();
            if bnd { spec.with_boundary().unwrap() } else { spec }
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn prop_idx2gp_then_gp2idx_is_identity(spec in arb_spec(), frac in 0.0f64..1.0) {
        let j = ((spec.len() as f64 * frac) as u64).min(spec.len() - 1);
        let (l, i) = spec.idx2gp(j).unwrap();
        prop_assert!(spec.contains(&l, &i));
        prop_assert_eq!(spec.gp2idx(&l, &i).unwrap(), j);
    }

    #[test]
    fn prop_gp2idx_then_idx2gp_is_identity(spec in arb_spec(), seed in any::<u64>()) {
        // Draw a random admissible point directly from the definition.
        let mut r = seed;
        let mut next = |m: u32| { r = r.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407); ((r >> 33) % m as u64) as u32 };
        let d = spec.dim();
        let mut budget = spec.level() - 1;
        let mut l = vec![0; d];
        let mut i = vec![0; d];
        for t in 0..d {
            if spec.has_boundary() && next(3) == 0 {
                l[t] = 0;
                i[t] = next(2);
            } else {
                let l0 = next(budget.min(spec.truncation()[t] - 1) + 1);
                budget -= l0;
                l[t] = l0 + 1;
                i[t] = 2 * next(1 << l0) + 1;
            }
        }
        let j = spec.gp2idx(&l, &i).unwrap();
        prop_assert!(j < spec.len());
        prop_assert_eq!(spec.idx2gp(j).unwrap(), (l, i));
    }
}
