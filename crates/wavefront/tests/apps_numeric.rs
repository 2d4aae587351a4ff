//! The Nash-like and LU/SOR-like applications against their oracles.

use ndarray::Array3;
use wavefront::apps::lt::{OMEGA, Vec5, blocks, lt_cell, lt_sweep};
use wavefront::apps::nash::nash;
use wavefront::{Config2, Config3};

#[test]
fn nash_oracles_and_executors() {
    let reference = nash(11, 7, 3, &Config2::sequential()).unwrap();
    // Cell (0, 0) plays the unperturbed stag hunt from its interior equilibrium p = q = 1/2.
    let c = reference[[0, 0]];
    assert_eq!((c.p, c.q, c.u1, c.u2, c.flag), (0.5, 0.5, 1.0, 1.0, 0));
    for i in 0..11 {
        for j in 0..7 {
            let c = reference[[i, j]];
            assert_eq!(c.it as usize, i + j);
            assert!((0.0..=1.0).contains(&c.p) && (0.0..=1.0).contains(&c.q));
        }
    }
    for cfg in [Config2::tiled(3), Config2::cpu(1), Config2::cpu(4)] {
        assert_eq!(nash(11, 7, 3, &cfg).unwrap(), reference, "{cfg:?}");
    }
}

#[test]
fn lt_matches_npb_loop_order_and_solves_its_blocks() {
    let (n0, n1, n2, seed) = (5, 7, 6, 42);
    // NPB's order: k outermost, then j, then i.
    let mut want: Array3<Vec5> = Array3::from_elem((n0, n1, n2), [0.0; 5]);
    for k in 0..n2 {
        for j in 0..n1 {
            for i in 0..n0 {
                let z = [0.0; 5];
                let n = if i > 0 { want[[i - 1, j, k]] } else { z };
                let w = if j > 0 { want[[i, j - 1, k]] } else { z };
                let t = if k > 0 { want[[i, j, k - 1]] } else { z };
                want[[i, j, k]] = lt_cell(seed, i, j, k, &n, &w, &t);
            }
        }
    }
    for cfg in [Config3::sequential(), Config3::tiled(2), Config3::cpu(1), Config3::cpu(3)] {
        assert_eq!(lt_sweep(n0, n1, n2, seed, &cfg).unwrap(), want, "{cfg:?}");
    }
    // Residual of one interior point's block system.
    let (i, j, k) = (3, 4, 2);
    let ([d, lx, ly, lz], rhs) = blocks(seed, i, j, k);
    let v = want[[i, j, k]];
    let (n, w, t) = (want[[i - 1, j, k]], want[[i, j - 1, k]], want[[i, j, k - 1]]);
    for r in 0..5 {
        let mut s = 0.0;
        for c in 0..5 {
            s += d[r][c] * v[c] + OMEGA * (lx[r][c] * n[c] + ly[r][c] * w[c] + lz[r][c] * t[c]);
        }
        assert!((s - rhs[r]).abs() < 1e-12, "row {r}: {s} vs {}", rhs[r]);
    }
}
