//! The host-built tables, interpreted by CPU emulators of the kernels' loops, against the sg-core
//! references. Runs without a GPU: this is what checks the kernels' index arithmetic here.

mod common;

use std::collections::HashSet;

use common::{AWKWARD_M, max_rel, random_points, random_values, specs};
use hetkit_testkit::{TestRng, rng};
use rand::Rng;
use sg_core::{GridSpec, Real, reference as r};
use sg_cuda::emulate;
use sg_cuda::occupancy::SmLimits;
use sg_cuda::plan::{self, EvalPlan, SpvmPlan};
use sg_cuda::tables::{SweepTable, TrieTable, node_link};
use sg_cuda::{EvalConfig, SpvmConfig};

fn check_sweeps<T: Real>(g: &mut TestRng, spec: &GridSpec, ncomp: usize, group_points: u64, tol: f64) {
    let n = spec.len() as usize * ncomp;
    let tables = SweepTable::for_grid(spec, group_points).unwrap();
    let nodal: Vec<T> = random_values(g, n);
    let mut want = nodal.clone();
    r::hierarchize(spec, &mut want, ncomp).unwrap();
    let mut got = nodal.clone();
    emulate::sweep(&tables, &mut got, ncomp as u32, true);
    let e = max_rel(&got, &want);
    assert!(e <= tol, "hierarchize {spec:?} ncomp {ncomp} groups {group_points}: rel err {e:e}");
    // Dehierarchization of random surpluses, against the reference.
    let surpluses: Vec<T> = random_values(g, n);
    let mut back = surpluses.clone();
    r::dehierarchize(spec, &mut back, ncomp).unwrap();
    let mut got = surpluses;
    emulate::sweep(&tables, &mut got, ncomp as u32, false);
    let e2 = max_rel(&got, &back);
    assert!(e2 <= tol, "dehierarchize {spec:?} ncomp {ncomp}: rel err {e2:e}");
}

#[test]
fn sweep_emulation_equals_reference_f64() {
    let mut g = rng("sweep_emulation_equals_reference_f64");
    for spec in specs(&mut g, 12) {
        let group_points = [1u64, 7, 64, 4096][g.random_range(0..4)];
        check_sweeps::<f64>(&mut g, &spec, 1, group_points, 1e-12);
    }
    // Chains split by lo ranges (no hi bits in dimension 0), scalar and vector.
    let spec = GridSpec::regular(2, 9).unwrap().with_boundary().unwrap();
    check_sweeps::<f64>(&mut g, &spec, 1, 40, 1e-12);
    check_sweeps::<f64>(&mut g, &spec, 2, 40, 1e-12);
}

#[test]
fn sweep_emulation_equals_reference_f32_and_vectors() {
    let mut g = rng("sweep_emulation_equals_reference_f32_and_vectors");
    for spec in specs(&mut g, 6) {
        let ncomp = g.random_range(1..=3);
        check_sweeps::<f32>(&mut g, &spec, ncomp, 16, 1e-5);
        check_sweeps::<f64>(&mut g, &spec, ncomp, 16, 1e-12);
    }
}

/// What the device race checker would see: inside one launch, no value written by one thread block
/// is read or written by another, and inside one level step of a block no value is both written
/// and read. Every interior-in-t point is written exactly once per sweep.
#[test]
fn sweep_groups_do_not_race_and_cover_every_point_once() {
    let mut g = rng("sweep_groups_do_not_race_and_cover_every_point_once");
    // regular(2, 9): dimension 0's chains have no hi bits and up to 8 lo bits, so they split by lo.
    for spec in specs(&mut g, 8).into_iter().chain([GridSpec::regular(2, 9).unwrap()]) {
        let group_points = [1u64, 5, 64][g.random_range(0..3)];
        let tables = SweepTable::for_grid(&spec, group_points).unwrap();
        let table = spec.block_table().unwrap();
        for (t, sweep) in tables.iter().enumerate() {
            let mut writer: Vec<Option<usize>> = vec![None; spec.len() as usize];
            let mut reads: Vec<HashSet<u64>> = Vec::new();
            for group in 0..sweep.num_groups() {
                let mut group_reads = HashSet::new();
                for step in 0..emulate::group_steps(sweep, group) {
                    for hier in [true, false] {
                        let (_, els) = emulate::sweep_step(sweep, group, step, 1, hier);
                        let written: HashSet<u64> = els.iter().map(|e| e.child).collect();
                        assert_eq!(written.len(), els.len(), "two threads write one value");
                        for e in &els {
                            for p in e.parents.iter().flatten() {
                                assert!(!written.contains(p), "read and write in one step");
                                group_reads.insert(*p);
                            }
                            if hier {
                                let w = &mut writer[e.child as usize];
                                assert!(w.is_none(), "dim {t}: value {} written twice", e.child);
                                *w = Some(group);
                            }
                        }
                    }
                }
                reads.push(group_reads);
            }
            for (group, rs) in reads.iter().enumerate() {
                for &p in rs {
                    if let Some(w) = writer[p as usize] {
                        assert_eq!(w, group, "dim {t}: group {group} reads what group {w} writes");
                    }
                }
            }
            for b in 0..table.len() {
                let interior = table.levels(b)[t] > 0;
                for k in table.offset(b)..table.offset(b + 1) {
                    assert_eq!(writer[k as usize].is_some(), interior, "dim {t} point {k}");
                }
            }
        }
    }
}

#[test]
fn sweep_groups_split_long_chains_and_merge_short_ones() {
    let spec = GridSpec::regular(3, 8).unwrap();
    let fine = SweepTable::for_grid(&spec, 16).unwrap();
    let coarse = SweepTable::for_grid(&spec, 1 << 20).unwrap();
    for (f, c) in fine.iter().zip(&coarse) {
        assert_eq!(f.chains, c.chains);
        assert!(f.num_groups() > c.num_groups());
    }
    assert!(SweepTable::for_grid(&spec, 0).is_err());
}

/// Interior points a work-group row covers: chains × 2^(hi bits + lo bits) × (2^top − 1).
fn group_points(row: &[u32]) -> u64 {
    (u64::from(row[1]) << (row[3] + row[7])) * ((1u64 << row[4]) - 1)
}

/// The sweep's launch shape against its model (issue 17): one launch per dimension; each with
/// one block per work group, groups of at most twice the shrunk target (or one chain that cannot
/// be split), so a dimension of `P` interior points gets at least `min(792, P / 256) / 2` blocks,
/// where the fixed 4096-point groups gave as few as a handful.
#[test]
fn sweep_launches_fill_the_device() {
    let min_groups = plan::sweep_min_groups(&SmLimits::H100, 256);
    for (d, n) in [(4usize, 14u32), (6, 10), (10, 7), (3, 9)] {
        let spec = GridSpec::regular(d, n).unwrap();
        let before = SweepTable::for_grid(&spec, 4096).unwrap();
        let after = SweepTable::for_grid_filling(&spec, 4096, min_groups).unwrap();
        let cost = sg_cuda::cost::sweep_cost(&after, 8, spec.len(), 1);
        assert_eq!(cost.launches, d as u64);
        assert_eq!(cost.blocks, after.iter().map(|t| t.num_groups() as u64).sum::<u64>());
        let counts = |ts: &[SweepTable]| ts.iter().map(SweepTable::num_groups).collect::<Vec<_>>();
        println!("d {d} n {n}: blocks per launch {:?} -> {:?}", counts(&before), counts(&after));
        for t in &after {
            let rows: Vec<&[u32]> = t.groups.chunks(sg_cuda::tables::GROUP_WORDS).collect();
            let points: u64 = rows.iter().map(|r| group_points(r)).sum();
            let target = sg_cuda::tables::sweep_group_target(points, 4096, min_groups);
            for r in &rows {
                let single_unsplittable = r[1] == 1 && r[3] == 0 && r[7] <= sg_cuda::tables::MIN_LO_BITS;
                assert!(group_points(r) <= 2 * target || single_unsplittable, "{r:?} target {target}");
            }
            let want = (min_groups.min(points / sg_cuda::tables::MIN_GROUP_POINTS) / 2).max(1);
            assert!(rows.len() as u64 >= want, "d {d} n {n}: {} groups, want {want}", rows.len());
        }
    }
}

#[test]
fn trie_has_one_leaf_per_block_and_consistent_links() {
    let mut g = rng("trie_has_one_leaf_per_block_and_consistent_links");
    for spec in specs(&mut g, 12) {
        let trie = TrieTable::new(&spec).unwrap();
        let nodes = trie.nodes();
        assert_eq!(trie.blocks() as u64, spec.num_blocks());
        // Inner links point forward and nest; leaf offsets are the block offsets.
        let table = spec.block_table().unwrap();
        let offsets: HashSet<u64> = (0..table.len()).map(|b| table.offset(b)).collect();
        let leaves = emulate_leaf_offsets(nodes, spec.dim());
        assert_eq!(leaves.len(), trie.blocks());
        assert!(leaves.iter().all(|o| offsets.contains(o)));
        assert!(nodes.len() <= trie.blocks() * spec.dim());
    }
}

fn emulate_leaf_offsets(nodes: &[u64], d: usize) -> Vec<u64> {
    fn rec(nodes: &[u64], a: u64, b: u64, t: usize, d: usize, out: &mut Vec<u64>) {
        let mut i = a;
        while i < b {
            let link = node_link(nodes[i as usize]);
            if t + 1 == d {
                out.push(link);
                i += 1;
            } else {
                assert!(link > i && link <= b, "link {link} outside ({i}, {b}]");
                rec(nodes, i + 1, link, t + 1, d, out);
                i = link;
            }
        }
    }
    let mut out = Vec::new();
    rec(nodes, 0, nodes.len() as u64, 0, d, &mut out);
    out
}

/// A random launch configuration of the evaluation kernels.
fn random_eval_config(g: &mut TestRng) -> EvalConfig {
    EvalConfig {
        block_size: [32, 96, 128, 256][g.random_range(0..4)],
        points_per_thread: [None, Some(1), Some(2), Some(4)][g.random_range(0..4)],
        stage_trie: g.random_bool(0.5),
    }
}

fn check_eval<T: Real>(g: &mut TestRng, spec: &GridSpec, ncomp: usize, m: usize, tol: f64) {
    let d = spec.dim();
    let trie = TrieTable::new(spec).unwrap();
    let values: Vec<T> = random_values(g, spec.len() as usize * ncomp);
    let points: Vec<T> = random_points(g, m, d);
    let cfg = random_eval_config(g);
    let regs = emulate::evaluate_regs(trie.nodes(), d, &values, ncomp, &points, &cfg);
    let generic = emulate::evaluate_generic(trie.nodes(), d, &values, ncomp, &points, &cfg);
    let e1 = common::eval_err(spec, &values, ncomp, &points, &regs);
    let e2 = common::eval_err(spec, &values, ncomp, &points, &generic);
    assert!(e1 <= tol && e2 <= tol, "{spec:?} m {m} {cfg:?}: regs {e1:e}, generic {e2:e}");
    // Both walks visit the nodes in the same order: identical results.
    assert!(regs.iter().zip(&generic).all(|(a, b)| Real::to_f64(*a).to_bits() == Real::to_f64(*b).to_bits()));
}

#[test]
fn eval_emulation_equals_reference() {
    let mut g = rng("eval_emulation_equals_reference");
    for spec in specs(&mut g, 12) {
        let m = AWKWARD_M[g.random_range(0..AWKWARD_M.len())];
        check_eval::<f64>(&mut g, &spec, 1, m, 1e-12);
        check_eval::<f32>(&mut g, &spec, 1, m, 1e-5);
    }
    for spec in specs(&mut g, 4) {
        check_eval::<f64>(&mut g, &spec, 3, 33, 1e-12);
    }
    for spec in common::high_dim_specs(&mut g) {
        let m = AWKWARD_M[g.random_range(0..AWKWARD_M.len())];
        check_eval::<f64>(&mut g, &spec, 1, m, 1e-12);
        check_eval::<f32>(&mut g, &spec, 1, m, 1e-5);
    }
    check_eval::<f64>(&mut g, &GridSpec::regular(9, 1).unwrap().with_boundary().unwrap(), 1, 33, 1e-12);
    // The generic kernel's range (d > 16), as the device test runs it (boundary grids have at
    // least 3^d points there: too many for a test).
    check_eval::<f64>(&mut g, &GridSpec::regular(18, 2).unwrap(), 1, 97, 1e-12);
    check_eval::<f32>(&mut g, &GridSpec::regular(17, 3).unwrap(), 1, 33, 1e-5);
}

/// The kernels' thread-to-row mapping at every pt and several block sizes, for batch sizes around
/// the block's point count `bs · pt` (and not multiples of it): every row is written exactly once
/// (the emulator asserts it and starts from NaN) with the reference value; results do not depend
/// on the launch configuration or on staging.
#[test]
fn eval_launch_geometry_covers_every_row_once() {
    let mut g = rng("eval_launch_geometry_covers_every_row_once");
    let spec = GridSpec::truncated(3, 4, &[2, 4, 3]).unwrap().with_boundary().unwrap();
    let trie = TrieTable::new(&spec).unwrap();
    let values: Vec<f64> = random_values(&mut g, spec.len() as usize * 2);
    for bs in [32u32, 96, 128] {
        for pt in [1u32, 2, 4] {
            let per_block = (bs * pt) as usize;
            for m in [0, 1, 31, 33, per_block - 1, per_block, per_block + 1, 2 * per_block + 5] {
                let points: Vec<f64> = random_points(&mut g, m, 3);
                let mut want = None;
                for stage_trie in [true, false] {
                    let cfg = EvalConfig { block_size: bs, points_per_thread: Some(pt), stage_trie };
                    let got = emulate::evaluate_regs(trie.nodes(), 3, &values, 2, &points, &cfg);
                    let e = common::eval_err(&spec, &values, 2, &points, &got);
                    assert!(e <= 1e-12, "bs {bs} pt {pt} m {m}: {e:e}");
                    let generic = emulate::evaluate_generic(trie.nodes(), 3, &values, 2, &points, &cfg);
                    assert_eq!(got, generic);
                    assert_eq!(want.get_or_insert_with(|| got.clone()), &got);
                }
            }
        }
    }
}

/// One walk per point accumulates a tile of components: every tile size (1, uneven, all) and
/// staging give the reference values, bit-identical to one another (each component sums its
/// leaves in the same order whatever the tile), for f32 and f64.
#[test]
fn eval_component_tiles_equal_the_reference() {
    fn check<T: Real>(g: &mut TestRng, tol: f64) {
        let spec = GridSpec::truncated(4, 5, &[3, 5, 2, 4]).unwrap().with_boundary().unwrap();
        let trie = TrieTable::new(&spec).unwrap();
        let ncomp = 7;
        let values: Vec<T> = random_values(g, spec.len() as usize * ncomp);
        let points: Vec<T> = random_points(g, 97, 4);
        let base = plan::plan_eval(
            &EvalConfig::default(),
            size_of::<T>(),
            (4, 97, ncomp),
            trie.bytes(),
            None,
            &SmLimits::H100,
        )
        .unwrap();
        assert_eq!(base.ctile, 7, "all components in one walk at the default");
        let mut want: Option<Vec<T>> = None;
        for ctile in [1u32, 2, 3, 7] {
            for staged in [false, true] {
                let plan = EvalPlan { ctile, staged, ..base };
                let got = emulate::evaluate_regs_planned(trie.nodes(), 4, &values, ncomp, &points, &plan);
                let e = common::eval_err(&spec, &values, ncomp, &points, &got);
                assert!(e <= tol, "ctile {ctile}: {e:e}");
                let generic =
                    emulate::evaluate_generic_planned(trie.nodes(), 4, &values, ncomp, &points, &plan);
                assert!(common::eval_err(&spec, &values, ncomp, &points, &generic) <= tol);
                let same = |a: &[T], b: &[T]| {
                    a.iter().zip(b).all(|(x, y)| Real::to_f64(*x).to_bits() == Real::to_f64(*y).to_bits())
                };
                assert!(same(want.get_or_insert_with(|| got.clone()), &got), "ctile {ctile} staged {staged}");
            }
        }
    }
    let mut g = rng("eval_component_tiles_equal_the_reference");
    check::<f64>(&mut g, 1e-12);
    check::<f32>(&mut g, 1e-5);
}

#[test]
fn staging_copies_every_node() {
    let mut g = rng("staging_copies_every_node");
    for n in [1usize, 31, 32, 33, 1000] {
        let nodes: Vec<u64> = (0..n).map(|_| g.random::<u64>() >> 1).collect();
        for bs in [32, 96, 1024] {
            assert_eq!(emulate::stage_nodes(&nodes, true, bs), nodes);
        }
        assert_eq!(emulate::stage_nodes(&nodes, false, 32), nodes);
    }
}

#[test]
fn basis_matches_sg_core() {
    let mut g = rng("basis_matches_sg_core");
    for _ in 0..10_000 {
        let l = g.random_range(1..=20u32);
        let x: f64 = match g.random_range(0..4) {
            0 => g.random_range(0..=(1u32 << l)) as f64 / (1u64 << l) as f64,
            _ => g.random_range(0.0..=1.0),
        };
        let (c, v) = sg_core::basis::basis_cell(l - 1, x);
        assert_eq!(emulate::basis(l, 0, x), (v, c), "level {l} x {x}");
    }
    assert_eq!(emulate::basis(0, 0, 0.25f64), (0.75, 0));
    assert_eq!(emulate::basis(0, 1, 0.25f64), (0.25, 0));
}

/// Plans over every chunking of `nsel` rows worth testing: one chunk, the planner's, and chunks
/// of 1, 3 and 64 rows (more chunks than blocks, uneven last chunks).
fn spvm_plans(cfg: &SpvmConfig, p: usize, nsel: usize) -> Vec<SpvmPlan> {
    let col_blocks = p.div_ceil((cfg.block_size * cfg.outputs_per_thread) as usize) as u32;
    let mut plans: Vec<SpvmPlan> = [nsel.max(1), 1, 3, 64]
        .iter()
        .map(|&rpc| SpvmPlan {
            col_blocks,
            chunks: nsel.div_ceil(rpc).max(1) as u32,
            rows_per_chunk: rpc as u32,
        })
        .collect();
    plans.push(plan::plan_spvm(cfg, 8, p, nsel, 32, &SmLimits::H100).unwrap());
    plans
}

#[test]
fn spvm_emulation_equals_reference() {
    let mut g = rng("spvm_emulation_equals_reference");
    let cases = [(1usize, 1usize, 1usize), (7, 33, 5), (50, 257, 97), (3, 1, 0), (9, 64, 65), (4, 129, 33)];
    for &(rows, p, nsel) in &cases {
        let a: Vec<f64> = random_values(&mut g, rows * p);
        let x: Vec<f64> = random_values(&mut g, nsel);
        let ix: Vec<usize> = (0..nsel).map(|_| g.random_range(0..rows)).collect();
        let want = r::spvm(&x, &ix, &a, p).unwrap();
        let ix64: Vec<u64> = ix.iter().map(|&i| i as u64).collect();
        // The device matrix's padded rows: lda a multiple of 128 bytes.
        let lda = p.next_multiple_of(16);
        let mut padded = vec![f64::NAN; rows.max(1) * lda];
        for (r, row) in a.chunks(p).enumerate() {
            padded[r * lda..][..p].copy_from_slice(row);
        }
        for block_size in [32, 64, 96] {
            for outputs_per_thread in [1, 2, 4] {
                let cfg = SpvmConfig { block_size, outputs_per_thread };
                for plan in spvm_plans(&cfg, p, nsel) {
                    let got = emulate::spvm(p, lda, &x, &ix64, &padded, &cfg, &plan);
                    assert!(max_rel(&got, &want) <= 1e-12, "rows {rows} p {p} nsel {nsel} {cfg:?} {plan:?}");
                    let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
                    let a32: Vec<f32> = padded.iter().map(|&v| v as f32).collect();
                    let want32: Vec<f32> = want.iter().map(|&v| v as f32).collect();
                    let got32 = emulate::spvm(p, lda, &x32, &ix64, &a32, &cfg, &plan);
                    assert!(max_rel(&got32, &want32) <= 1e-4, "f32 rows {rows} p {p} nsel {nsel} {cfg:?}");
                }
            }
        }
    }
}

/// Integer-valued data make every summation order exact: the row-chunked product with its
/// chunk-ordered reduction equals a plain sequential loop bit for bit, at every chunking.
#[test]
fn spvm_row_chunks_are_exact_on_integers() {
    let mut g = rng("spvm_row_chunks_are_exact_on_integers");
    for &(rows, p, nsel) in &[(5usize, 37usize, 131usize), (64, 1000, 1031), (2, 3, 2)] {
        let a: Vec<f64> = (0..rows * p).map(|_| f64::from(g.random_range(-8i32..=8))).collect();
        let x: Vec<f64> = (0..nsel).map(|_| f64::from(g.random_range(-8i32..=8))).collect();
        let ix: Vec<u64> = (0..nsel).map(|_| g.random_range(0..rows as u64)).collect();
        let mut want = vec![0.0f64; p];
        for (xi, &r) in x.iter().zip(&ix) {
            for (j, w) in want.iter_mut().enumerate() {
                *w += xi * a[r as usize * p + j];
            }
        }
        let cfg = SpvmConfig { block_size: 64, outputs_per_thread: 2 };
        for plan in spvm_plans(&cfg, p, nsel) {
            let got = emulate::spvm(p, p, &x, &ix, &a, &cfg, &plan);
            assert_eq!(got, want, "{plan:?}");
        }
    }
}

/// A row index past the matrix reads nothing and turns every output into NaN, in every chunk.
#[test]
fn spvm_emulation_poisons_outputs_for_a_row_past_the_matrix() {
    let (rows, p, lda) = (4usize, 37usize, 48usize);
    let a = vec![1.0f64; rows * lda];
    let cfg = SpvmConfig { block_size: 32, outputs_per_thread: 2 };
    let one = |n: usize| SpvmPlan { col_blocks: 1, chunks: n.div_ceil(1) as u32, rows_per_chunk: 1 };
    let good = emulate::spvm(p, lda, &[1.0, 2.0], &[0, 3], &a, &cfg, &one(2));
    assert!(good.iter().all(|&v| v == 3.0));
    let bad = emulate::spvm(p, lda, &[1.0, 2.0, 3.0], &[0, rows as u64, 3], &a, &cfg, &one(3));
    assert!(bad.iter().all(|v| v.is_nan()), "{bad:?}");
}

/// The host's spvm shared-memory size equals the kernel's layout at every legal block size.
#[test]
fn spvm_shared_bytes_match_the_kernel_layout() {
    fn kernel_end<T>(bs: usize) -> usize {
        let rows_at = size_of::<T>() * bs + (8 - (size_of::<T>() * bs) % 8) % 8;
        rows_at + 8 * bs
    }
    for bs in (32..=1024).step_by(32) {
        let cfg = SpvmConfig { block_size: bs as u32, outputs_per_thread: 1 };
        assert_eq!(cfg.shared_bytes::<f32>() as usize, kernel_end::<f32>(bs));
        assert_eq!(cfg.shared_bytes::<f64>() as usize, kernel_end::<f64>(bs));
    }
}

/// Tables of grids whose block count puts them beyond any host's memory are errors, sized
/// before anything is built (issue 15: plans on such grids aborted).
#[test]
fn huge_tables_are_allocation_errors() {
    // 2.3e15 blocks of one or two points: small enough for 56-bit links, far too many blocks.
    let spec = GridSpec::regular(30, 2).unwrap().with_boundary().unwrap();
    assert_eq!(spec.num_blocks(), 3u64.pow(30) + 30 * 3u64.pow(29));
    let is_alloc = |e: sg_cuda::Error| matches!(e, sg_cuda::Error::Sg(sg_core::SgError::Allocation { .. }));
    assert!(is_alloc(TrieTable::new(&spec).unwrap_err()));
    assert!(is_alloc(SweepTable::for_grid(&spec, 4096).unwrap_err()));
}
