//! Point counts and DP tables against the digest's tables and brute-force enumeration (§14.1).

mod common;
use common::*;
use rand::Rng;
use sg_core::{GridSpec, SgError, SubspaceTables};

#[test]
fn figure_3_2_counts() {
    assert_eq!(GridSpec::regular(2, 5).unwrap().len(), 129);
    assert_eq!(GridSpec::truncated(2, 5, &[5, 3]).unwrap().len(), 89);
    assert_eq!(GridSpec::regular(4, 5).unwrap().len(), 769);
    assert_eq!(GridSpec::regular(10, 11).unwrap().len(), 127_574_017);
}

#[test]
fn regular_counts_match_table_3a_formula() {
    // Table 3-A rows spot-checked literally, the rest through the closed form.
    let row2 = [1, 5, 17, 49, 129, 321, 769, 1793, 4097, 9217];
    let row10 = [1, 21, 241, 2001, 13441, 77505, 397825, 1862145, 8085505, 32978945];
    for n in 1..=10u32 {
        assert_eq!(GridSpec::regular(2, n).unwrap().len(), row2[n as usize - 1]);
        assert_eq!(GridSpec::regular(10, n).unwrap().len(), row10[n as usize - 1]);
    }
    for d in 1..=12usize {
        for n in 1..=12u32 {
            assert_eq!(GridSpec::regular(d, n).unwrap().len(), n_regular(d as u64, n as u64), "d={d} n={n}");
        }
        assert_eq!(GridSpec::regular(d, 1).unwrap().len(), 1);
    }
    for n in 1..=30u32 {
        assert_eq!(GridSpec::regular(1, n).unwrap().len(), (1u64 << n) - 1);
    }
}

#[test]
fn boundary_counts_match_table_3b() {
    let row3 = [27, 81, 225, 593, 1505, 3713, 8961, 21249, 49665, 114689];
    for n in 1..=10u32 {
        assert_eq!(GridSpec::regular(3, n).unwrap().with_boundary().unwrap().len(), row3[n as usize - 1]);
    }
    assert_eq!(GridSpec::regular(10, 10).unwrap().with_boundary().unwrap().len(), 18_032_138_241);
    for d in 1..=10usize {
        assert_eq!(GridSpec::regular(d, 1).unwrap().with_boundary().unwrap().len(), 3u64.pow(d as u32));
        for n in 1..=10u32 {
            let want = n_boundary(d as u64, n as u64);
            assert_eq!(GridSpec::regular(d, n).unwrap().with_boundary().unwrap().len(), want, "d={d} n={n}");
        }
    }
    for n in 1..=20u32 {
        assert_eq!(GridSpec::regular(1, n).unwrap().with_boundary().unwrap().len(), (1u64 << n) + 1);
    }
}

#[test]
fn worked_dp_examples() {
    let t = SubspaceTables::new(5, &[5, 3]).unwrap();
    let a: Vec<u64> = (0..5).map(|g| t.blocks_in_group(g)).collect();
    assert_eq!(a, [1, 2, 3, 3, 3]);
    let offs: Vec<u64> = (0..=5).map(|g| t.group_offset(g)).collect();
    assert_eq!(offs, [0, 1, 5, 17, 41, 89]);
    let t = SubspaceTables::new(6, &[2, 6, 3, 4]).unwrap();
    let a: Vec<u64> = (0..6).map(|g| t.blocks_in_group(g)).collect();
    assert_eq!(a, [1, 4, 9, 15, 20, 23]);
    assert_eq!(t.len(), 1221);
    let t = SubspaceTables::new(10, &[10; 10]).unwrap();
    let a: Vec<u64> = (0..10).map(|g| t.blocks_in_group(g)).collect();
    assert_eq!(a, [1, 10, 55, 220, 715, 2002, 5005, 11440, 24310, 48620]);
    assert_eq!(t.num_blocks(), 92_378);
}

/// a(t, j) of the DP equals brute-force counting, for random truncation vectors, and the
/// sizes equal Σ a(d, g)·2^g.
#[test]
fn dp_table_equals_brute_force() {
    let mut rng = hetkit_testkit::rng("dp_table_equals_brute_force");
    for _ in 0..60 {
        let d = rng.random_range(1..=5usize);
        let n = rng.random_range(1..=7u32);
        let c: Vec<u32> = (0..d).map(|_| rng.random_range(1..=n + 1)).collect();
        let tab = SubspaceTables::new(n, &c).unwrap();
        for t in 1..=d {
            let vecs = level_vectors(&c[..t], n);
            for j in 0..n {
                let want = vecs.iter().filter(|l| l.iter().sum::<u32>() == j).count() as u64;
                assert_eq!(tab.count(t, j), want, "c={c:?} n={n} t={t} j={j}");
            }
        }
        let size: u64 = level_vectors(&c, n).iter().map(|l| 1u64 << l.iter().sum::<u32>()).sum();
        assert_eq!(tab.len(), size);
        assert_eq!(GridSpec::truncated(d, n, &c).unwrap().len(), size);
        for g in 0..n {
            assert_eq!(tab.group_offset(g + 1) - tab.group_offset(g), tab.blocks_in_group(g) << g);
        }
    }
}

#[test]
fn regular_table_is_binomial() {
    let tab = SubspaceTables::new(9, &[9; 7]).unwrap();
    for t in 1..=7 {
        for j in 0..9 {
            assert_eq!(tab.count(t, j), binom((j as usize + t - 1) as u64, (t - 1) as u64));
        }
    }
}

/// The corrected Eq. 3.16: pos((0,0,1)) = 2 in d = 3 (the thesis's formula gives 1).
#[test]
fn block_rank_regression_case() {
    let tab = SubspaceTables::new(4, &[4; 3]).unwrap();
    assert_eq!(tab.pos(&[0, 0, 1]), 2);
    assert_eq!(tab.pos_general(&[0, 0, 1]), 2);
    assert_eq!(tab.pos(&[1, 0, 0]), 0);
    assert_eq!(tab.pos(&[0, 1, 0]), 1);
    // Fig. 3.6: (2,2) is the third block of group 4 with c = (5,3).
    assert_eq!(SubspaceTables::new(5, &[5, 3]).unwrap().pos(&[2, 2]), 2);
}

/// pos = colexicographic rank from brute-force sorting; inv_pos inverts it; the O(d) closed
/// form equals the general formula on regular grids.
#[test]
fn pos_is_colex_rank_and_inv_pos_inverts_it() {
    let mut rng = hetkit_testkit::rng("pos_is_colex_rank");
    let mut cases: Vec<(u32, Vec<u32>)> = vec![(6, vec![6; 4]), (5, vec![5; 3]), (4, vec![4; 1])];
    for _ in 0..30 {
        let d = rng.random_range(1..=5usize);
        let n = rng.random_range(1..=7u32);
        cases.push((n, (0..d).map(|_| rng.random_range(1..=n)).collect()));
    }
    for (n, c) in cases {
        let tab = SubspaceTables::new(n, &c).unwrap();
        let d = c.len();
        for g in 0..n {
            let mut group: Vec<Vec<u32>> =
                level_vectors(&c, n).into_iter().filter(|l| l.iter().sum::<u32>() == g).collect();
            group.sort_by(|u, v| u.iter().rev().cmp(v.iter().rev()));
            assert_eq!(group.len() as u64, tab.blocks_in_group(g));
            for (rank, l) in group.iter().enumerate() {
                assert_eq!(tab.pos(l), rank as u64, "c={c:?} l={l:?}");
                assert_eq!(tab.pos_general(l), rank as u64);
                let mut back = vec![0; d];
                tab.inv_pos(g, rank as u64, &mut back);
                assert_eq!(&back, l);
            }
            if tab.is_regular() && !group.is_empty() {
                let mut first = vec![0; d];
                first[0] = g;
                let mut last = vec![0; d];
                last[d - 1] = g;
                assert_eq!(tab.pos(&first), 0);
                assert_eq!(tab.pos(&last), tab.blocks_in_group(g) - 1);
            }
        }
    }
}

#[test]
fn validation_errors() {
    assert_eq!(GridSpec::regular(0, 3), Err(SgError::ZeroDimension));
    assert_eq!(GridSpec::regular(2, 0), Err(SgError::ZeroLevel));
    assert!(matches!(GridSpec::regular(65, 2), Err(SgError::DimensionTooLarge { .. })));
    assert!(matches!(GridSpec::regular(2, 32), Err(SgError::LevelTooLarge { .. })));
    assert_eq!(GridSpec::truncated(2, 3, &[3]), Err(SgError::TruncationLength { expected: 2, got: 1 }));
    assert_eq!(GridSpec::truncated(3, 3, &[3, 0, 1]), Err(SgError::TruncationZero { dim: 1 }));
    assert!(matches!(GridSpec::regular(32, 30), Err(SgError::TooManyPoints { .. })));
    assert!(matches!(GridSpec::regular(41, 1).unwrap().with_boundary(), Err(SgError::TooManyPoints { .. })));
    // Large but representable grids are fine.
    assert_eq!(GridSpec::regular(1, 30).unwrap().len(), (1 << 30) - 1);
    assert_eq!(GridSpec::regular(32, 1).unwrap().with_boundary().unwrap().len(), 3u64.pow(32));
    let big = GridSpec::regular(32, 8).unwrap();
    assert_eq!(big.len(), n_regular(32, 8));
    // Truncation above n means "not truncated".
    assert_eq!(GridSpec::truncated(2, 5, &[9, 5]).unwrap().len(), 129);
}
