//! CPU scans against the sequential reference: every operator and type, the sizes,
//! batched rows, segments (offsets and flags), the non-commutative operator, and bad input.
//!
//! The 2^26 case is ignored in debug runs: `cargo test --release -p prefix-ops --test scan_cpu -- --ignored`.

mod scan_common;

use hetkit_testkit::rng;
use prefix_ops::Error;
use prefix_ops::scan::{self, Add, Max, Min, Monoid, Mul, reference, single};
use rand::Rng;
use scan_common::{Compose, Elem, Kind, SIZES, Sample, heads_of, random_maps, random_offsets, random_vec};

/// Every CPU entry point for whole arrays against the reference, bit for bit.
fn check_array<T: Elem, M: Monoid<T> + std::fmt::Debug>(xs: &[T], op: M) {
    let n = xs.len();
    let mut want_inc = xs.to_vec();
    reference::inclusive(&mut want_inc, op);
    let mut want_exc = xs.to_vec();
    reference::exclusive(&mut want_exc, op);

    let mut got = xs.to_vec();
    scan::inclusive(&mut got, op);
    assert_eq!(got, want_inc, "scan::inclusive {op:?} n={n}");
    let mut got = xs.to_vec();
    scan::exclusive(&mut got, op);
    assert_eq!(got, want_exc, "scan::exclusive {op:?} n={n}");
    let mut got = xs.to_vec();
    single::inclusive(&mut got, op);
    assert_eq!(got, want_inc, "single::inclusive {op:?} n={n}");
    let mut got = xs.to_vec();
    single::exclusive(&mut got, op);
    assert_eq!(got, want_exc, "single::exclusive {op:?} n={n}");
    let mut dst = vec![op.identity(); n];
    scan::inclusive_into(xs, &mut dst, op).unwrap();
    assert_eq!(dst, want_inc, "inclusive_into {op:?} n={n}");
    scan::exclusive_into(xs, &mut dst, op).unwrap();
    assert_eq!(dst, want_exc, "exclusive_into {op:?} n={n}");
    // Inclusive/exclusive relation: incl[i] = excl[i] ⊕ a[i].
    for i in 0..n.min(64) {
        assert_eq!(op.combine(want_exc[i], xs[i]), want_inc[i]);
    }
}

fn all_ops_for<T: Sample>(test: &str, sizes: &[usize])
where
    Add: Monoid<T>,
    Mul: Monoid<T>,
    Min: Monoid<T>,
    Max: Monoid<T>,
{
    let mut rng = rng(test);
    for &n in sizes {
        check_array(&random_vec::<T>(&mut rng, n, Kind::Add), Add);
        check_array(&random_vec::<T>(&mut rng, n, Kind::Mul), Mul);
        check_array(&random_vec::<T>(&mut rng, n, Kind::MinMax), Min);
        check_array(&random_vec::<T>(&mut rng, n, Kind::MinMax), Max);
    }
}

#[test]
fn arrays_i32() {
    all_ops_for::<i32>("arrays_i32", &SIZES);
}
#[test]
fn arrays_u32() {
    all_ops_for::<u32>("arrays_u32", &SIZES);
}
#[test]
fn arrays_i64() {
    all_ops_for::<i64>("arrays_i64", &SIZES);
}
#[test]
fn arrays_u64() {
    all_ops_for::<u64>("arrays_u64", &SIZES);
}
#[test]
fn arrays_f32() {
    all_ops_for::<f32>("arrays_f32", &SIZES);
}
#[test]
fn arrays_f64() {
    all_ops_for::<f64>("arrays_f64", &SIZES);
}

/// 2^26 elements (the parallel path with hundreds of rounds).
#[test]
#[ignore = "large: cargo test --release -p prefix-ops --test scan_cpu -- --ignored"]
fn arrays_2_pow_26() {
    let mut rng = rng("arrays_2_pow_26");
    check_array(&random_vec::<f32>(&mut rng, 1 << 26, Kind::Add), Add);
    check_array(&random_vec::<u32>(&mut rng, 1 << 26, Kind::Add), Add);
    check_array(&random_maps(&mut rng, 1 << 26), Compose);
}

/// Real-valued floats (rounding happens): within the bound `(i + 1) ε Σ_{j<=i} |a_j|` that holds
/// for any association order, against an f64 reference.
#[test]
fn f32_rounding_within_any_order_bound() {
    let mut rng = rng("f32_rounding_within_any_order_bound");
    for n in [1usize, 33, 1025, 300_007] {
        let xs: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0f32..1.0)).collect();
        let mut got = xs.clone();
        scan::inclusive(&mut got, Add);
        let (mut exact, mut abs) = (0.0f64, 0.0f64);
        for i in 0..n {
            exact += xs[i] as f64;
            abs += xs[i].abs() as f64;
            let bound = (i as f64 + 1.0) * f32::EPSILON as f64 * abs;
            assert!((got[i] as f64 - exact).abs() <= bound, "n={n} i={i}: {} vs {exact}", got[i]);
        }
    }
}

/// The multi-threaded scan combines in a fixed order: each tile is rescanned from the prefix
/// `P_{i-1} = P_{i-2} ⊕ sum_{i-1}`, tiles cut by length and element size alone. So f32 results
/// are bit-identical for any number of threads, and equal this sequential model of that order.
#[test]
fn parallel_float_scan_is_deterministic_across_thread_counts() {
    let mut rng = rng("parallel_float_scan_is_deterministic_across_thread_counts");
    let tile = prefix_ops::scan::parallel::tile_len::<f32>();
    for n in [prefix_ops::scan::parallel::PAR_THRESHOLD, 5 * tile + 3] {
        let xs: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0f32..1.0)).collect();
        for exclusive in [false, true] {
            let mut want = xs.clone();
            let mut before: f32 = Monoid::<f32>::identity(&Add);
            for part in want.chunks_mut(tile) {
                let sum = single::reduce(part, Add);
                if exclusive {
                    single::exclusive_from(part, before, Add);
                } else {
                    single::inclusive_from(part, before, Add);
                }
                before = Add.combine(before, sum);
            }
            // 8 threads on a 2-core machine also exercise the waits' yield path.
            for threads in [2, 3, 5, 8] {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                let mut got = xs.clone();
                pool.install(|| {
                    if exclusive { scan::exclusive(&mut got, Add) } else { scan::inclusive(&mut got, Add) }
                });
                let same = got.iter().zip(&want).all(|(g, w)| g.to_bits() == w.to_bits());
                assert!(
                    same,
                    "n={n} exclusive={exclusive} threads={threads}: differs from the tile-order model"
                );
            }
        }
    }
}

/// The chained scan keeps order across tiles with more workers than cores (tiles finish out of
/// order, prefixes must still chain in order).
#[test]
fn non_commutative_order_is_kept_with_many_workers() {
    let mut rng = rng("non_commutative_order_is_kept_with_many_workers");
    let pool = rayon::ThreadPoolBuilder::new().num_threads(8).build().unwrap();
    let tile = prefix_ops::scan::parallel::tile_len::<(u64, u64)>();
    for n in [prefix_ops::scan::parallel::PAR_THRESHOLD + 1, 9 * tile + 5] {
        let maps = random_maps(&mut rng, n);
        pool.install(|| check_array(&maps, Compose));
    }
}

/// Order is kept: the affine-map composition differs under any operand swap.
#[test]
fn non_commutative_order_is_kept() {
    let mut rng = rng("non_commutative_order_is_kept");
    for &n in &SIZES {
        check_array(&random_maps(&mut rng, n), Compose);
    }
}

fn check_rows<T: Elem, M: Monoid<T> + std::fmt::Debug>(xs: &[T], row_len: usize, op: M) {
    let mut got = xs.to_vec();
    scan::inclusive_rows(&mut got, row_len, op).unwrap();
    let mut got_exc = xs.to_vec();
    scan::exclusive_rows(&mut got_exc, row_len, op).unwrap();
    for (r, row) in xs.chunks(row_len).enumerate() {
        let mut want = row.to_vec();
        reference::inclusive(&mut want, op);
        assert_eq!(&got[r * row_len..(r + 1) * row_len], &want[..], "row {r} of {row_len} {op:?}");
        let mut want = row.to_vec();
        reference::exclusive(&mut want, op);
        assert_eq!(&got_exc[r * row_len..(r + 1) * row_len], &want[..], "excl row {r} of {row_len}");
    }
}

#[test]
fn batched_rows_awkward_lengths() {
    let mut rng = rng("batched_rows_awkward_lengths");
    for (g, n) in [
        (1, 1),
        (7, 1),
        (3, 31),
        (5, 33),
        (64, 32),
        (2, 1023),
        (9, 1025),
        (1, 300_007),
        (3, 200_003),
        (1025, 17),
    ] {
        check_rows(&random_vec::<f32>(&mut rng, g * n, Kind::Add), n, Add);
        check_rows(&random_vec::<i64>(&mut rng, g * n, Kind::Mul), n, Mul);
        check_rows(&random_vec::<f64>(&mut rng, g * n, Kind::MinMax), n, Max);
        check_rows(&random_maps(&mut rng, g * n), n, Compose);
    }
}

/// No leak across rows: a huge last element of row g must not reach row g + 1.
#[test]
fn batched_rows_do_not_leak() {
    let n = 33;
    let mut xs = vec![1i64; 10 * n];
    for g in 0..10 {
        xs[g * n + n - 1] = 1 << 40;
    }
    let mut inc = xs.clone();
    scan::inclusive_rows(&mut inc, n, Add).unwrap();
    let mut exc = xs.clone();
    scan::exclusive_rows(&mut exc, n, Add).unwrap();
    for g in 0..10 {
        assert_eq!(inc[g * n], 1);
        assert_eq!(exc[g * n], 0);
        assert_eq!(inc[g * n + n - 1], (1 << 40) + 32);
    }
}

fn check_segments<T: Elem, M: Monoid<T> + std::fmt::Debug>(xs: &[T], offsets: &[usize], op: M) {
    let mut want_inc = xs.to_vec();
    reference::inclusive_segments(&mut want_inc, offsets, op);
    let mut want_exc = xs.to_vec();
    reference::exclusive_segments(&mut want_exc, offsets, op);
    let mut got = xs.to_vec();
    scan::inclusive_segments(&mut got, offsets, op).unwrap();
    assert_eq!(got, want_inc, "inclusive_segments {op:?} n={} segs={}", xs.len(), offsets.len());
    let mut got = xs.to_vec();
    scan::exclusive_segments(&mut got, offsets, op).unwrap();
    assert_eq!(got, want_exc, "exclusive_segments {op:?}");
    // The same segments as head flags (empty segments have no head of their own).
    let heads = heads_of(offsets, xs.len());
    let mut got = xs.to_vec();
    scan::inclusive_flagged(&mut got, &heads, op).unwrap();
    assert_eq!(got, want_inc, "inclusive_flagged {op:?}");
    let mut got = xs.to_vec();
    scan::exclusive_flagged(&mut got, &heads, op).unwrap();
    assert_eq!(got, want_exc, "exclusive_flagged {op:?}");
}

#[test]
fn segments_random_with_empty_ones() {
    let mut rng = rng("segments_random_with_empty_ones");
    for &n in &SIZES {
        for segs in [1usize, 2, 7, n / 3 + 1, n + 5] {
            let offsets = random_offsets(&mut rng, n, segs);
            check_segments(&random_vec::<f32>(&mut rng, n, Kind::Add), &offsets, Add);
            check_segments(&random_vec::<u32>(&mut rng, n, Kind::MinMax), &offsets, Min);
            check_segments(&random_maps(&mut rng, n), &offsets, Compose);
        }
    }
}

#[test]
fn segments_single_huge_and_edges() {
    let mut rng = rng("segments_single_huge_and_edges");
    let n = (1 << 20) + 7;
    let xs = random_vec::<i64>(&mut rng, n, Kind::Add);
    check_segments(&xs, &[0, n], Add);
    check_segments(&xs, &[0, 0, 0, n, n], Add);
    check_segments(&xs, &[0, 1, n - 1, n], Add);
    let every: Vec<usize> = (0..=n).collect();
    check_segments(&xs, &every, Add);
}

#[test]
fn empty_inputs_are_no_ops() {
    let mut e: Vec<f32> = vec![];
    scan::inclusive(&mut e, Add);
    scan::exclusive(&mut e, Add);
    scan::inclusive_rows(&mut e, 0, Add).unwrap();
    scan::inclusive_rows(&mut e, 5, Add).unwrap();
    scan::inclusive_segments(&mut e, &[0], Add).unwrap();
    scan::inclusive_segments(&mut e, &[0, 0, 0], Add).unwrap();
    scan::inclusive_flagged(&mut e, &[], Add).unwrap();
    scan::inclusive_into(&[], &mut e, Add).unwrap();
}

#[test]
fn bad_input_is_an_error() {
    let mut xs = vec![1.0f64; 10];
    let mut short = vec![0.0f64; 9];
    assert!(matches!(scan::inclusive_into(&xs, &mut short, Add), Err(Error::LengthMismatch { .. })));
    assert!(matches!(scan::exclusive_into(&xs, &mut short, Add), Err(Error::LengthMismatch { .. })));
    assert!(matches!(scan::inclusive_rows(&mut xs, 3, Add), Err(Error::InvalidRows { len: 10, row_len: 3 })));
    assert!(matches!(scan::inclusive_rows(&mut xs, 0, Add), Err(Error::InvalidRows { .. })));
    // The message: length 5, rows of 10 once read "expected 0".
    let msg = scan::inclusive_rows(&mut xs[..5], 10, Add).unwrap_err().to_string();
    assert_eq!(msg, "5 elements do not form whole rows of 10");
    assert!(matches!(scan::inclusive_segments(&mut [0u32; 0], &[], Add), Err(Error::InvalidOffsets(_))));
    for bad in [&[][..], &[1, 10], &[0, 5, 4, 10], &[0, 5, 11], &[0, 5, 9]] {
        assert!(
            matches!(scan::inclusive_segments(&mut xs, bad, Add), Err(Error::InvalidOffsets(_))),
            "{bad:?} accepted"
        );
        assert!(matches!(scan::exclusive_segments(&mut xs, bad, Add), Err(Error::InvalidOffsets(_))));
    }
    assert!(matches!(scan::inclusive_flagged(&mut xs, &[true; 3], Add), Err(Error::LengthMismatch { .. })));
    assert!(xs.iter().all(|&x| x == 1.0), "a failed call must not touch the data");
}

/// `u64` addition that panics on the value `marker`, like a checked or debug-build overflow.
#[derive(Clone, Copy, Debug)]
struct PanicOn(u64);

impl Monoid<u64> for PanicOn {
    fn identity(&self) -> u64 {
        0
    }
    fn combine(&self, a: u64, b: u64) -> u64 {
        assert!(b != self.0, "operator refused {b}");
        a.wrapping_add(b)
    }
}

/// A panicking operator on the multi-threaded paths (>= 2^17 elements, 2 threads) reaches the
/// caller: the worker waiting for the dead worker's tile gives up instead of spinning forever.
/// Each call runs on its own thread with a bounded wait, so a hang fails the test.
#[test]
fn a_panicking_operator_propagates_from_every_parallel_path() {
    let n = 1usize << 18;
    type Call = fn(&mut [u64]);
    let calls: [(&str, Call); 5] = [
        ("inclusive", |xs| scan::inclusive(xs, PanicOn(7))),
        ("exclusive", |xs| scan::exclusive(xs, PanicOn(7))),
        ("inclusive_rows (one long row)", |xs| {
            let len = xs.len();
            scan::inclusive_rows(xs, len, PanicOn(7)).unwrap()
        }),
        ("inclusive_segments", |xs| {
            let len = xs.len();
            scan::inclusive_segments(xs, &[0, 5, len], PanicOn(7)).unwrap()
        }),
        ("exclusive_flagged", |xs| {
            let heads = vec![false; xs.len()];
            scan::exclusive_flagged(xs, &heads, PanicOn(7)).unwrap()
        }),
    ];
    for (name, call) in calls {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
            // The marker sits early in the first tile: its worker dies before publishing.
            let mut xs = vec![1u64; n];
            xs[3] = 7;
            let outcome =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| pool.install(|| call(&mut xs))));
            let _ = tx.send(outcome.is_err());
        });
        let panicked = rx.recv_timeout(std::time::Duration::from_secs(60));
        assert_eq!(panicked, Ok(true), "{name}: the panic did not reach the caller (Err = hung)");
    }
}
