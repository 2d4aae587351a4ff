//! Shared memory of TPR's slice kernels (`tridiag_tpr_stage1_T`, `tridiag_tpr_stage3_T`): the
//! layout's sizes, as the launch code asks for them, and a model of its bank conflicts.
//!
//! The kernels keep each chain compact per level in a structure of four arrays (`a`, `b`, `c`,
//! `d`), each swizzled by `swizzle` (mirrors `tri_swz` and `tri_level_off` in
//! `cuda-kernels/prefix/tridiag_steps.cuh`). The model replays every warp-wide shared-memory
//! access of both kernels and counts its wavefronts the way sm_90 serves them: a request of
//! `w`-byte elements is split into phases of `128 / w` lanes, and a phase takes as many
//! wavefronts as the largest number of distinct 4-byte words any of the 32 banks holds for it
//! (lanes reading one word share it). The tests hold the layout conflict-free, and measure the
//! array-of-structs, in-place layout it replaced.

/// Elements of `elem_bytes` bytes in one 128-byte row of the 32 banks.
#[cfg(test)]
fn row(elem_bytes: usize) -> usize {
    128 / elem_bytes
}

/// Where element `i` of one array lives: `i ^ ((i / row) & 1)`. Stride-two reads at any offset
/// and unit-stride accesses from a multiple of 32 then touch each bank once per phase.
#[cfg(test)]
fn swizzle(i: usize, elem_bytes: usize) -> usize {
    i ^ ((i / row(elem_bytes)) & 1)
}

fn align32(n: usize) -> usize {
    n.div_ceil(32) * 32
}

/// Start of chain level `l >= 1` (`s >> l` entries) in a level area, each level rounded up to
/// 32 entries; `level_offset(s, log2 s + 1)` is the area's length.
pub(crate) fn level_offset(s: usize, l: u32) -> usize {
    (1..l).map(|k| align32(s >> k)).sum()
}

fn levels(s: usize) -> u32 {
    s.trailing_zeros()
}

/// Length of each of stage 1's four arrays: the top chain in place over the slice, then the
/// bottom chain's levels.
fn stage1_array_len(s: usize) -> usize {
    align32(s) + level_offset(s, levels(s) + 1)
}

/// Dynamic shared memory of `tridiag_tpr_stage1_T` for slices of `s` rows (a power of two).
pub(crate) fn tpr_stage1_shared(s: usize, elem_bytes: usize) -> usize {
    4 * stage1_array_len(s) * elem_bytes
}

/// Dynamic shared memory of `tridiag_tpr_stage3_T`: the unknowns of the bottom chain's levels.
pub(crate) fn tpr_stage3_shared(s: usize, elem_bytes: usize) -> usize {
    level_offset(s, levels(s) + 1) * elem_bytes
}

/// Wavefronts one warp-wide access takes and the fewest it could: `addr[lane]` is the byte
/// address lane `lane` touches (`None`: inactive), each `width` bytes wide.
#[cfg(test)]
fn wavefronts(addr: &[Option<usize>], width: usize) -> (usize, usize) {
    let (mut taken, mut least) = (0, 0);
    for phase in addr.chunks(128 / width) {
        let mut words: Vec<Vec<usize>> = vec![Vec::new(); 32];
        for a in phase.iter().flatten() {
            for word in a / 4..(a + width) / 4 {
                if !words[word % 32].contains(&word) {
                    words[word % 32].push(word);
                }
            }
        }
        let most = words.iter().map(Vec::len).max().unwrap_or(0);
        if most > 0 {
            taken += most;
            least += 1;
        }
    }
    (taken, least)
}

/// Bank conflicts of one kernel run, summed over its accesses.
#[cfg(test)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Conflicts {
    /// Wavefronts all accesses took.
    wavefronts: usize,
    /// Wavefronts they would take without conflicts.
    least: usize,
    /// The largest number of wavefronts one phase of one access took (1: conflict-free).
    worst: usize,
}

/// The element index each lane of a warp touches (`None`: inactive).
#[cfg(test)]
type Lanes<'a> = &'a dyn Fn(usize) -> Option<usize>;

#[cfg(test)]
impl Conflicts {
    /// Adds one warp-wide access whose active lanes touch `index(lane)` elements of `width`
    /// bytes at `base + index * stride` bytes.
    fn access(&mut self, lanes: impl Fn(usize) -> Option<usize>, stride: usize, width: usize) {
        let addr: Vec<Option<usize>> = (0..32).map(|l| lanes(l).map(|i| i * stride)).collect();
        for phase in addr.chunks(128 / width) {
            let (t, l) = wavefronts(phase, width);
            self.worst = self.worst.max(t.checked_div(l).unwrap_or(0));
        }
        let (t, l) = wavefronts(&addr, width);
        self.wavefronts += t;
        self.least += l;
    }

    /// Adds `access` for every warp of a block of `threads`, lane `q` of warp `w` being
    /// `q0 + 32 w + q`.
    fn block(&mut self, threads: usize, q0: usize, f: &dyn Fn(&mut Self, Lanes<'_>)) {
        for warp in 0..threads / 32 {
            f(self, &|lane| Some(q0 + 32 * warp + lane));
        }
    }

    /// `wavefronts / least`: 1 without conflicts.
    fn ratio(&self) -> f64 {
        self.wavefronts as f64 / self.least.max(1) as f64
    }
}

/// The accesses of one slice of `s` rows through TPR stages 1 and 3 with `threads` per block, in
/// the swizzled structure of arrays the kernels use (one array modelled: the four differ by a
/// whole number of bank rows, so they conflict alike).
#[cfg(test)]
fn tpr_conflicts(s: usize, elem_bytes: usize, threads: usize) -> Conflicts {
    let e = elem_bytes;
    let at = |i: usize| swizzle(i, e);
    let mut c = Conflicts::default();
    let top_n = align32(s);
    // Stage 1: the load, then per level the bottom step, the top step's reads and its write.
    for q0 in (0..s).step_by(threads) {
        c.block(threads, q0, &|c, q| c.access(|l| q(l).filter(|&o| o < s).map(at), e, e));
    }
    for l in 1..=levels(s) {
        let cnt = s >> l;
        let bsrc = if l == 1 { 0 } else { top_n + level_offset(s, l - 1) };
        let bdst = top_n + level_offset(s, l);
        for q0 in (0..cnt).step_by(threads) {
            c.block(threads, q0, &|c, q| {
                let live = |l: usize| q(l).filter(|&q| q < cnt);
                c.access(|l| live(l).map(|q| at(bsrc + 2 * q + 1)), e, e);
                c.access(|l| live(l).map(|q| at(bsrc + 2 * q)), e, e);
                c.access(|l| live(l).filter(|&q| q + 1 < cnt).map(|q| at(bsrc + 2 * q + 2)), e, e);
                c.access(|l| live(l).map(|q| at(bdst + q)), e, e);
                c.access(|l| live(l).map(|q| at(2 * q)), e, e);
                c.access(|l| live(l).filter(|&q| q > 0).map(|q| at(2 * q - 1)), e, e);
                c.access(|l| live(l).map(|q| at(2 * q + 1)), e, e);
                c.access(|l| live(l).map(at), e, e);
            });
        }
    }
    // Stage 3: per level, both neighbours from the level above and the two writes; then row 0's.
    for l in (0..levels(s)).rev() {
        let half = (s >> l) / 2;
        let (up, cur) = (level_offset(s, l + 1), level_offset(s, l.max(1)));
        for t0 in (0..half).step_by(threads) {
            c.block(threads, t0, &|c, t| {
                let live = |l: usize| t(l).filter(|&t| t < half);
                c.access(|l| live(l).map(|t| at(up + t)), e, e);
                // The left neighbour: a shuffle, lane 0 reads its own.
                c.access(|l| live(l).filter(|&t| t > 0 && l == 0).map(|t| at(up + t - 1)), e, e);
                if l > 0 {
                    c.access(|l| live(l).map(|t| at(cur + 2 * t)), e, e);
                    c.access(|l| live(l).map(|t| at(cur + 2 * t + 1)), e, e);
                }
            });
        }
    }
    c
}

/// The same slice through the array-of-structs layout the kernels had before: equations of
/// `4 * elem_bytes` bytes (read as 16-byte vectors) updated in place at stride `2^l` in stage 1,
/// unknowns at stride `2^l` in stage 3.
#[cfg(test)]
fn tpr_conflicts_aos(s: usize, elem_bytes: usize, threads: usize) -> Conflicts {
    let (eq, e) = (4 * elem_bytes, elem_bytes);
    let mut c = Conflicts::default();
    let mut st = 2;
    while st <= s {
        let (u, per_chain) = (st / 2, s / st);
        let row = |t: usize| if t < per_chain { t * st } else { (t - per_chain) * st + st - 1 };
        for t0 in (0..2 * per_chain).step_by(threads) {
            c.block(threads, t0, &|c, t| {
                let live = |l: usize| t(l).filter(|&t| t < 2 * per_chain).map(row);
                c.access(live, eq, 16);
                c.access(|l| live(l).filter(|&o| o >= u).map(|o| o - u), eq, 16);
                c.access(|l| live(l).filter(|&o| o + u < s).map(|o| o + u), eq, 16);
                c.access(live, eq, 16);
            });
        }
        st *= 2;
    }
    let mut st = s / 2;
    while st >= 2 {
        let count = (s - 1).saturating_sub(st - 1).div_ceil(2 * st);
        for t0 in (0..count).step_by(threads) {
            c.block(threads, t0, &|c, t| {
                let live = |l: usize| t(l).filter(|&t| t < count).map(|t| st - 1 + 2 * st * t);
                c.access(|l| live(l).filter(|&o| o >= st).map(|o| o - st), e, e);
                c.access(|l| live(l).map(|o| o + st), e, e);
                c.access(live, e, e);
            });
        }
        st /= 2;
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Threads per block the launch code gives a slice of `s` rows (`threads_for(s / 2)`).
    fn threads(s: usize) -> usize {
        (s / 2).clamp(32, 1024).div_ceil(32) * 32
    }

    #[test]
    fn wavefront_model_counts_known_patterns() {
        let unit: Vec<_> = (0..32).map(|l| Some(4 * l)).collect();
        assert_eq!(wavefronts(&unit, 4), (1, 1));
        let stride2: Vec<_> = (0..32).map(|l| Some(8 * l)).collect();
        assert_eq!(wavefronts(&stride2, 4), (2, 1));
        let same_word: Vec<_> = (0..32).map(|_| Some(64)).collect();
        assert_eq!(wavefronts(&same_word, 4), (1, 1));
        let column: Vec<_> = (0..32).map(|l| Some(128 * l)).collect();
        assert_eq!(wavefronts(&column, 4), (32, 1));
        // 8-byte elements: two half-warp phases of one wavefront each.
        let doubles: Vec<_> = (0..32).map(|l| Some(8 * l)).collect();
        assert_eq!(wavefronts(&doubles, 8), (2, 2));
        let none: Vec<Option<usize>> = vec![None; 32];
        assert_eq!(wavefronts(&none, 4), (0, 0));
    }

    #[test]
    fn swizzle_is_a_permutation_within_each_array() {
        for e in [4, 8] {
            for s in [2usize, 32, 64, 1024] {
                let n = stage1_array_len(s);
                let mut seen = vec![false; n];
                for i in 0..n {
                    let j = swizzle(i, e);
                    assert!(j < n && !seen[j], "s {s}, {e} B: {i} -> {j}");
                    seen[j] = true;
                }
            }
        }
    }

    /// The layout's sizes at the default slices (the book's resource table).
    #[test]
    fn shared_sizes_at_the_default_slices() {
        assert_eq!(tpr_stage1_shared(1024, 4), 4 * (1024 + 512 + 256 + 128 + 64 + 6 * 32) * 4);
        assert_eq!(tpr_stage1_shared(512, 8), 4 * (512 + 256 + 128 + 64 + 6 * 32) * 8);
        assert_eq!(tpr_stage3_shared(1024, 4), (512 + 256 + 128 + 64 + 6 * 32) * 4);
        assert_eq!(tpr_stage1_shared(2, 8), 4 * (32 + 32) * 8);
        // Every slice the launch code accepts fits the 227 KiB an H100 block may use.
        for s in (1..=11).map(|k| 1usize << k) {
            assert!(tpr_stage1_shared(s, 8) <= 227 * 1024, "{s}");
        }
    }

    /// Every access of both stages, every slice size the launch code accepts, f32 and f64: one
    /// wavefront per phase.
    #[test]
    fn tpr_layout_is_conflict_free() {
        for e in [4, 8] {
            for s in (1..=11).map(|k| 1usize << k) {
                let c = tpr_conflicts(s, e, threads(s));
                assert_eq!((c.worst, c.wavefronts), (1, c.least), "slice {s}, {e}-byte values: {c:?}");
            }
        }
    }

    /// What the layout replaced: in-place steps at stride 2^l conflict up to 32-way; at the
    /// default slices the accesses took several times their wavefronts (printed for the book:
    /// `cargo test -p prefix-ops --lib aos_layout -- --nocapture`).
    #[test]
    fn aos_layout_conflicted() {
        for (s, e) in [(1024, 4), (512, 8)] {
            let old = tpr_conflicts_aos(s, e, threads(s));
            let new = tpr_conflicts(s, e, threads(s));
            println!(
                "| slice {s}, {e}-byte values | worst {}-way, {:.2}x the wavefronts | worst {}-way, {:.2}x |",
                old.worst,
                old.ratio(),
                new.worst,
                new.ratio()
            );
            assert!(old.worst >= 16 && old.ratio() > 2.0, "{old:?}");
        }
    }
}
