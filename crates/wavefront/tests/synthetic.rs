//! The synthetic kernels' integer oracles, and the float payload identical across executors.

use wavefront::apps::synthetic::{Synth, synthetic_2d, synthetic_3d, synthetic_int_2d};
use wavefront::{Config2, Config3};

#[test]
fn synthetic_2d_oracles() {
    for (rows, cols) in [(1, 1), (1, 9), (9, 1), (23, 29), (40, 13)] {
        let reference = synthetic_2d::<3>(rows, cols, 5, &Config2::sequential()).unwrap();
        for i in 0..rows {
            for j in 0..cols {
                let c: Synth<3> = reference[[i, j]];
                assert_eq!(c.a as usize, i + j, "a({i},{j})");
                assert_eq!(c.b as usize, (i + 1) * (j + 1), "b({i},{j})");
                assert!(c.v.iter().all(|v| v.is_finite() && v.abs() < 100.0));
            }
        }
        for cfg in [Config2::tiled(4), Config2::cpu(1), Config2::cpu(5), Config2::hybrid(8, -1)] {
            let got = synthetic_2d::<3>(rows, cols, 5, &cfg).unwrap();
            // Bitwise: the same operations in the same order per cell.
            assert!(
                got.iter().zip(&reference).all(|(g, r)| g.a == r.a
                    && g.b == r.b
                    && g.v.iter().zip(&r.v).all(|(x, y)| x.to_bits() == y.to_bits())),
                "{cfg:?}"
            );
        }
    }
}

#[test]
fn synthetic_3d_oracles() {
    let (n0, n1, n2) = (6, 7, 5);
    let reference = synthetic_3d(n0, n1, n2, 3, &Config3::sequential()).unwrap();
    let fact = |n: usize| (1..=n as u64).product::<u64>();
    for i in 0..n0 {
        for j in 0..n1 {
            for k in 0..n2 {
                let c = reference[[i, j, k]];
                assert_eq!(c.a as usize, i + j + k);
                assert_eq!(c.c, fact(i + j + k) / (fact(i) * fact(j) * fact(k)), "c({i},{j},{k})");
            }
        }
    }
    for cfg in [Config3::tiled(2), Config3::cpu(1), Config3::cpu(3), Config3::hybrid(4, -1)] {
        let got = synthetic_3d(n0, n1, n2, 3, &cfg).unwrap();
        assert!(
            got.iter()
                .zip(&reference)
                .all(|(g, r)| g.a == r.a && g.c == r.c && g.v.to_bits() == r.v.to_bits())
        );
    }
}

/// The integer kernel against an independent plain loop (its own hash and match rule), on
/// awkward shapes and every executor; with 0 rounds nothing matches and every cell is 0.
#[test]
fn synthetic_int_matches_a_plain_loop() {
    fn matches(rounds: u32, i: usize, j: usize) -> bool {
        let mut h = (i as u32).wrapping_mul(0x9E37_79B9) ^ (j as u32).wrapping_mul(0x85EB_CA6B) ^ 0x2545_F491;
        (0..rounds).any(|_| {
            h ^= h << 13;
            h ^= h >> 17;
            h ^= h << 5;
            h.is_multiple_of(4)
        })
    }
    for (rows, cols, rounds) in [(1, 1, 1), (1, 17, 2), (13, 1, 3), (31, 29, 1), (40, 23, 4), (7, 7, 0)] {
        // 1-based with a zero border: the sequence-comparison recurrence.
        let mut f = vec![vec![0u32; cols + 1]; rows + 1];
        for i in 0..rows {
            for j in 0..cols {
                f[i + 1][j + 1] =
                    if matches(rounds, i, j) { f[i][j] + 1 } else { f[i][j + 1].max(f[i + 1][j]) };
            }
        }
        for cfg in [Config2::sequential(), Config2::tiled(4), Config2::cpu(1), Config2::cpu(5)] {
            let got = synthetic_int_2d(rows, cols, rounds, &cfg).unwrap();
            for i in 0..rows {
                for j in 0..cols {
                    assert_eq!(got[[i, j]], f[i + 1][j + 1], "{rows}x{cols} r{rounds} ({i},{j}) {cfg:?}");
                }
            }
            if rounds == 0 {
                assert!(got.iter().all(|&v| v == 0));
            }
        }
    }
    assert!(synthetic_int_2d(0, 3, 1, &Config2::sequential()).is_err());
}
