//! The CPU emulation of the GPU order is itself a scan: it must equal the sequential reference
//! exactly on integer and exactly-representable float inputs, for every network and kernel
//! shape, and keep the order of a non-commutative operator.

mod scan_common;

use hetkit_testkit::rng;
use prefix_ops::scan::emulate::{self, Network, Shape};
use prefix_ops::scan::{Add, Max, Monoid, reference};
use scan_common::{
    Compose, Elem, Kind, heads_of, random_maps, random_offsets, random_vec, reference_scan,
    reference_segments,
};

const NETS: [Network; 3] = [Network::KoggeStone, Network::Sklansky, Network::LadnerFischer];
const SIZES: [usize; 8] = [0, 1, 31, 32, 33, 1023, 1025, 20_011];

fn check<T: Elem, M: Monoid<T> + std::fmt::Debug>(xs: &[T], op: M) {
    for net in NETS {
        let shape = Shape { threads: 64, items: 4, network: net };
        for exclusive in [false, true] {
            let want = reference_scan(xs, op, exclusive);
            let mut got = xs.to_vec();
            emulate::lookback(&mut got, op, shape, exclusive);
            assert_eq!(got, want, "lookback {net:?} excl={exclusive} n={}", xs.len());
            for row_len in [1usize, 7, 100, 333] {
                if !xs.len().is_multiple_of(row_len) {
                    continue;
                }
                let mut want = xs.to_vec();
                for r in want.chunks_mut(row_len) {
                    if exclusive { reference::exclusive(r, op) } else { reference::inclusive(r, op) }
                }
                let mut got = xs.to_vec();
                emulate::rows_warp(&mut got, row_len, op, 2, net, exclusive);
                assert_eq!(got, want, "rows_warp {net:?} N={row_len}");
                let mut got = xs.to_vec();
                emulate::rows_block(&mut got, row_len, op, shape, exclusive);
                assert_eq!(got, want, "rows_block {net:?} N={row_len}");
                let mut got = xs.to_vec();
                emulate::lookback_heads(&mut got, |i| i % row_len == 0, op, shape, exclusive);
                assert_eq!(got, want, "lookback rows {net:?} N={row_len}");
            }
        }
    }
}

#[test]
fn emulation_is_a_scan() {
    let mut rng = rng("emulation_is_a_scan");
    for &n in &SIZES {
        check(&random_vec::<i64>(&mut rng, n, Kind::Add), Add);
        check(&random_vec::<f32>(&mut rng, n, Kind::Add), Add);
        check(&random_vec::<f64>(&mut rng, n, Kind::MinMax), Max);
        check(&random_maps(&mut rng, n), Compose);
    }
}

#[test]
fn emulated_segments_match_reference() {
    let mut rng = rng("emulated_segments_match_reference");
    for &n in &SIZES {
        let xs = random_maps(&mut rng, n);
        let offsets = random_offsets(&mut rng, n, n / 5 + 2);
        let heads = heads_of(&offsets, n);
        for exclusive in [false, true] {
            let want = reference_segments(&xs, &offsets, Compose, exclusive);
            let mut got = xs.clone();
            emulate::lookback_heads(&mut got, |i| heads[i], Compose, Shape::lookback(8), exclusive);
            assert_eq!(got, want, "n={n} excl={exclusive}");
        }
    }
}
