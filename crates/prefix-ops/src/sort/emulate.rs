//! A CPU model of the GPU kernel's compare-exchange schedule (`bmcs_sort_row` in
//! `cuda-kernels/prefix/bitonic_network.cuh`), step for step: four consecutive keys per
//! virtual thread, stages 1-2 and the last two steps of each stage in registers, steps with
//! high bit 2..6 as warp shuffles (thread `t` exchanges with `t ^ m`, slots reversed for a flip),
//! steps with high bit >= 7 in shared memory, fused two at a time (radix 4) on the orbit of a
//! base index, an odd count starting with one radix-2 step.
//!
//! [`merge_pass`] and [`merge_sort`] model the merge-path kernel `sort_merge` and the whole-array
//! sort built on it (block-sorted runs, then merges doubling the run width).
//!
//! It exists so the tests can check the GPU schedule without a GPU: the 0-1 principle over all
//! 2^16 binary inputs, and random rows up to 2^15 keys. Any change to the kernel's schedule
//! must be mirrored here.

use super::key::SortBits;

/// A key and its tag (position in the row); tagged rows compare `(key, tag)`.
type Item<U> = (U, u32);

#[inline]
fn gt<U: SortBits>(a: Item<U>, b: Item<U>, tagged: bool) -> bool {
    if tagged { a > b } else { a.0 > b.0 }
}

#[inline]
fn cas<U: SortBits>(r: &mut [Item<U>], a: usize, b: usize, tagged: bool) {
    if gt(r[a], r[b], tagged) {
        r.swap(a, b);
    }
}

fn registers_first<U: SortBits>(r: &mut [Item<U>], tagged: bool) {
    for (a, b) in [(0, 1), (2, 3), (0, 3), (1, 2), (0, 1), (2, 3)] {
        cas(r, a, b, tagged);
    }
}

fn registers_last<U: SortBits>(r: &mut [Item<U>], tagged: bool) {
    for (a, b) in [(0, 2), (1, 3), (0, 1), (2, 3)] {
        cas(r, a, b, tagged);
    }
}

/// `bmcs_shuffle_step` for every virtual thread at once (a warp's lanes all read before any
/// writes, as `__shfl_xor_sync` does).
fn shuffle_step<U: SortBits>(regs: &mut [[Item<U>; 4]], m: usize, flip: bool, tagged: bool) {
    let high = 1usize << (usize::BITS - 1 - m.leading_zeros());
    let old = regs.to_vec();
    for (vt, r) in regs.iter_mut().enumerate() {
        let lower = vt & high == 0;
        for q in 0..4 {
            let other = old[vt ^ m][if flip { 3 - q } else { q }];
            let take = lower == gt(r[q], other, tagged);
            if take {
                r[q] = other;
            }
        }
    }
}

fn insert_zero(x: usize, h: usize) -> usize {
    ((x >> h) << (h + 1)) | (x & ((1 << h) - 1))
}

fn smem_radix2<U: SortBits>(sm: &mut [Item<U>], nt: usize, m: usize, h: usize, tagged: bool) {
    for vt in 0..nt {
        for c in 0..2 {
            let b = insert_zero(vt + c * nt, h);
            cas(sm, b, b ^ m, tagged);
        }
    }
}

fn smem_radix4<U: SortBits>(sm: &mut [Item<U>], nt: usize, ma: usize, ha: usize, flip: bool, tagged: bool) {
    let hb = ha - 1;
    let mb = 1 << hb;
    for vt in 0..nt {
        let b = insert_zero(insert_zero(vt, hb), ha);
        let e = [b, b ^ mb, b ^ ma, b ^ ma ^ mb];
        let mut r = [sm[e[0]], sm[e[1]], sm[e[2]], sm[e[3]]];
        cas(&mut r, 0, 2, tagged);
        cas(&mut r, 1, 3, tagged);
        cas(&mut r, 0, 1, tagged);
        if flip {
            cas(&mut r, 3, 2, tagged);
        } else {
            cas(&mut r, 2, 3, tagged);
        }
        for q in 0..4 {
            sm[e[q]] = r[q];
        }
    }
}

/// Sorts `row` (length a power of two, at least 4) ascending by `(key, tag)` when `tagged`, by
/// key otherwise, through exactly the kernel's schedule.
///
/// # Panics
/// When `row.len()` is not a power of two of at least 4 (a test-only model).
pub fn bmcs_row<U: SortBits>(row: &mut [(U, u32)], tagged: bool) {
    let n = row.len();
    assert!(n >= 4 && n.is_power_of_two(), "bmcs_row models rows of 2^k >= 4 keys");
    let log_n = n.trailing_zeros() as usize;
    let nt = n / 4;
    let mut regs: Vec<[Item<U>; 4]> = row.chunks_exact(4).map(|c| [c[0], c[1], c[2], c[3]]).collect();
    let mut sm = row.to_vec();
    for r in regs.iter_mut() {
        registers_first(r, tagged);
    }
    for s in 3..=log_n {
        let mut h = s as isize - 1;
        let mut flip = true;
        if h >= 7 {
            for (vt, r) in regs.iter().enumerate() {
                sm[4 * vt..4 * vt + 4].copy_from_slice(r);
            }
            if (h - 6) & 1 != 0 {
                smem_radix2(&mut sm, nt, (1 << s) - 1, h as usize, tagged);
                h -= 1;
                flip = false;
            }
            while h > 6 {
                let ma = if flip { (1 << s) - 1 } else { 1 << h };
                smem_radix4(&mut sm, nt, ma, h as usize, flip, tagged);
                flip = false;
                h -= 2;
            }
            for (vt, r) in regs.iter_mut().enumerate() {
                r.copy_from_slice(&sm[4 * vt..4 * vt + 4]);
            }
        }
        while h >= 2 {
            let m = if flip { (1 << (s - 2)) - 1 } else { 1 << (h - 2) };
            shuffle_step(&mut regs, m, flip, tagged);
            flip = false;
            h -= 1;
        }
        for r in regs.iter_mut() {
            registers_last(r, tagged);
        }
    }
    for (vt, r) in regs.iter().enumerate() {
        row[4 * vt..4 * vt + 4].copy_from_slice(r);
    }
}

/// The kernel's whole per-row procedure on `keys` (any length up to `2^log_n`, `log_n >= 2`):
/// map to ordered bits (xor-ed with all ones when `descending`), pad with the maximum to
/// `2^log_n`, run [`bmcs_row`] with tags when `values` is given, map back and gather the values
/// through the tags, as `sort_row_block` does.
///
/// # Panics
/// When `keys` is longer than `2^log_n`, `log_n < 2`, or `values` has another length.
pub fn bmcs_kernel_row<K: super::SortKey, V: Copy>(
    keys: &mut [K],
    values: Option<&mut [V]>,
    log_n: u32,
    descending: bool,
) {
    let n = 1usize << log_n;
    assert!(log_n >= 2 && keys.len() <= n);
    let flip = if descending { K::Bits::MAX } else { K::Bits::ZERO };
    let mut row: Vec<(K::Bits, u32)> = (0..n)
        .map(|i| (keys.get(i).map_or(K::Bits::MAX, |k| k.to_bits_ordered().xor(flip)), i as u32))
        .collect();
    bmcs_row(&mut row, values.is_some());
    for (k, &(b, _)) in keys.iter_mut().zip(&row) {
        *k = K::from_bits_ordered(b.xor(flip));
    }
    if let Some(values) = values {
        assert_eq!(values.len(), keys.len());
        let orig = values.to_vec();
        for (v, &(_, t)) in values.iter_mut().zip(&row) {
            *v = orig[t as usize];
        }
    }
}

/// Outputs per thread of `sort_merge` (its `ipt`).
const MERGE_PER_THREAD: usize = 8;

/// One pass of the kernel `sort_merge`, chunk by chunk as its threads run it: the sorted runs
/// `[2i w, 2i w + w)` and `[2i w + w, 2i w + 2w)` of `src` merged into `dst` (ties from the left
/// run, so stable), each chunk of 8 outputs (`MERGE_PER_THREAD`, as in the kernel) placed by its own merge-path
/// search along the cross diagonal. `values` (source, destination) move with their keys.
///
/// # Panics
/// When the slices' lengths differ (a test-only model).
pub fn merge_pass<K: super::SortKey, V: Copy>(
    src: &[K],
    dst: &mut [K],
    mut values: Option<(&[V], &mut [V])>,
    width: usize,
    descending: bool,
) {
    let n = src.len();
    assert_eq!(dst.len(), n);
    let flip = if descending { K::Bits::MAX } else { K::Bits::ZERO };
    let key = |i: usize| src[i].to_bits_ordered().xor(flip);
    for k0 in (0..n).step_by(MERGE_PER_THREAD) {
        let a0 = k0 / (2 * width) * (2 * width);
        let a1 = (a0 + width).min(n);
        let b1 = (a0 + 2 * width).min(n);
        let (na, nb, diag) = (a1 - a0, b1 - a1, k0 - a0);
        let (mut lo, mut hi) = (diag.saturating_sub(nb), diag.min(na));
        while lo < hi {
            let mid = (lo + hi) / 2;
            if key(a1 + diag - 1 - mid) >= key(a0 + mid) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let (mut i, mut j) = (lo, diag - lo);
        for o in k0..(k0 + MERGE_PER_THREAD).min(b1) {
            let take_a = j >= nb || (i < na && key(a1 + j) >= key(a0 + i));
            let from = if take_a { a0 + i } else { a1 + j };
            dst[o] = src[from];
            if let Some((sv, dv)) = values.as_mut() {
                dv[o] = sv[from];
            }
            if take_a {
                i += 1;
            } else {
                j += 1;
            }
        }
    }
}

/// The GPU's whole-array sort with runs of `run` keys (a power of two, at least 4): each run
/// sorted as one block row ([`bmcs_kernel_row`]), then [`merge_pass`]es doubling the run width.
///
/// # Panics
/// When `run` is not a power of two of at least 4, or `values` has another length.
pub fn merge_sort<K: super::SortKey, V: Copy>(
    keys: &mut [K],
    mut values: Option<&mut [V]>,
    run: usize,
    descending: bool,
) {
    assert!(run >= 4 && run.is_power_of_two());
    let log_n = run.trailing_zeros();
    for (r, chunk) in keys.chunks_mut(run).enumerate() {
        let vals = values.as_deref_mut().map(|v| &mut v[r * run..r * run + chunk.len()]);
        bmcs_kernel_row(chunk, vals, log_n, descending);
    }
    let mut width = run;
    while width < keys.len() {
        let src = keys.to_vec();
        match values.as_deref_mut() {
            Some(v) => {
                let sv = v.to_vec();
                merge_pass(&src, keys, Some((&sv[..], v)), width, descending);
            }
            None => merge_pass::<K, V>(&src, keys, None, width, descending),
        }
        width *= 2;
    }
}
