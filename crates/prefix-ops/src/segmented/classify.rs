//! Stable k-way splits of every segment (`partition`: two classes, `split3`: three) and the
//! segmented stream compaction, on the CPU.
//!
//! A short segment is split by one thread in one pass: class-0 elements move forward in
//! place (the write position never passes the read position), the others go to per-class
//! scratch vectors and are copied back behind them. A long segment is split on all threads:
//! classes per element, counts per chunk, an exclusive scan of the counts, then every chunk
//! scatters its elements from a copy to their final places.

use rayon::prelude::*;

use super::descriptor::Segments;
use super::plan::{by_elems, by_segs, groups};
use super::tuning::SegmentedTuning;
use crate::alloc::{try_copy, try_with_capacity};
use crate::error::Result;
use crate::shared_mut::SharedMut;

/// Splits one segment on the calling thread; returns the count of each class.
fn split_seq<T: Copy, const K: usize>(
    seg: &mut [T],
    class: impl Fn(&T) -> usize,
    scratch: &mut [Vec<T>; K],
) -> [usize; K] {
    scratch.iter_mut().for_each(Vec::clear);
    let mut w = 0;
    for r in 0..seg.len() {
        let x = seg[r];
        match class(&x) {
            0 => {
                seg[w] = x;
                w += 1;
            }
            c => scratch[c].push(x),
        }
    }
    let mut counts = [0; K];
    counts[0] = w;
    for (c, part) in scratch.iter().enumerate().skip(1) {
        seg[w..w + part.len()].copy_from_slice(part);
        w += part.len();
        counts[c] = part.len();
    }
    counts
}

/// Splits one long segment on all threads; returns the count of each class.
fn split_par<T: Copy + Send + Sync, const K: usize>(
    seg: &mut [T],
    class: impl Fn(&T) -> usize + Sync,
    task: usize,
) -> Result<[usize; K]> {
    let task = task.max(1);
    let mut classes: Vec<u8> = try_with_capacity(seg.len(), "element classes")?;
    seg.par_iter().map(|x| class(x) as u8).collect_into_vec(&mut classes);
    let chunk_counts: Vec<[usize; K]> = classes
        .par_chunks(task)
        .map(|c| {
            let mut n = [0; K];
            c.iter().for_each(|&k| n[k as usize] += 1);
            n
        })
        .collect();
    let mut totals = [0; K];
    chunk_counts.iter().for_each(|n| (0..K).for_each(|k| totals[k] += n[k]));
    // Where each chunk writes its first element of each class.
    let mut next = [0; K];
    (1..K).for_each(|k| next[k] = next[k - 1] + totals[k - 1]);
    let starts: Vec<[usize; K]> = chunk_counts
        .iter()
        .map(|n| {
            let s = next;
            (0..K).for_each(|k| next[k] += n[k]);
            s
        })
        .collect();
    let src = try_copy(seg, "split scratch")?;
    let dst = SharedMut::new(seg);
    src.par_chunks(task).zip(classes.par_chunks(task)).zip(&starts).for_each(|((xs, ks), start)| {
        let mut pos = *start;
        for (&x, &k) in xs.iter().zip(ks) {
            // SAFETY: the scan of the chunk counts gives every (chunk, class) pair its own
            // range of `seg`, and together they tile `0..seg.len()`; `seg` outlives the loop.
            unsafe { dst.get().add(pos[k as usize]).write(x) };
            pos[k as usize] += 1;
        }
    });
    Ok(totals)
}

/// Splits every segment stably into `K` classes (`class(segment, element)` in `0..K`) and
/// returns the descriptor of the `K * nseg` parts. Lengths already checked.
pub(crate) fn split_k<T: Copy + Send + Sync, const K: usize>(
    xs: &mut [T],
    segs: &Segments,
    class: impl Fn(usize, &T) -> usize + Sync,
    t: &SegmentedTuning,
) -> Result<Segments> {
    let nseg = segs.num_segments();
    let mut counts: Vec<[usize; K]> = try_with_capacity(nseg, "class counts")?;
    counts.resize(nseg, [0; K]);
    let groups = groups(segs, t.task_elems);
    let parts = by_elems(xs, &groups);
    let outs = by_segs(&mut counts, &groups);
    let results: Vec<Result<()>> = parts
        .into_par_iter()
        .zip(outs)
        .zip(&groups)
        .map(|((part, out), g)| {
            let mut scratch: [Vec<T>; K] = std::array::from_fn(|_| Vec::new());
            for (n, s) in out.iter_mut().zip(g.segs.clone()) {
                let seg = &mut part[segs.start(s) - g.elems.start..segs.start(s + 1) - g.elems.start];
                *n = if seg.len() >= t.reorder_split {
                    split_par::<T, K>(seg, |x| class(s, x), t.task_elems)?
                } else {
                    split_seq(seg, |x| class(s, x), &mut scratch)
                };
            }
            Ok(())
        })
        .collect();
    results.into_iter().collect::<Result<()>>()?;
    let mut offsets = Segments::new_offsets(nseg.saturating_mul(K))?;
    offsets.push(0);
    for (s, n) in counts.iter().enumerate() {
        let mut at = segs.start(s);
        for &c in n {
            at += c;
            offsets.push(at);
        }
    }
    Segments::from_built_offsets(offsets)
}

/// The kept elements in order and the descriptor of what is left of each segment. Lengths
/// already checked.
pub(crate) fn compact<T: Copy + Send + Sync>(
    xs: &[T],
    keep: &[bool],
    segs: &Segments,
    t: &SegmentedTuning,
) -> Result<(Vec<T>, Segments)> {
    let nseg = segs.num_segments();
    let count = |k: &[bool]| k.iter().filter(|&&b| b).count();
    // Kept elements per segment.
    let mut kept: Vec<usize> = try_with_capacity(nseg, "kept counts")?;
    kept.resize(nseg, 0);
    let groups = groups(segs, t.task_elems);
    by_segs(&mut kept, &groups).into_par_iter().zip(&groups).for_each(|(out, g)| {
        for (n, s) in out.iter_mut().zip(g.segs.clone()) {
            let k = &keep[segs.start(s)..segs.start(s + 1)];
            *n = if k.len() >= t.reorder_split {
                k.par_chunks(t.task_elems.max(1)).map(count).sum()
            } else {
                count(k)
            };
        }
    });
    let mut offsets = Segments::new_offsets(nseg)?;
    offsets.push(0);
    let mut total = 0;
    for &n in &kept {
        total += n;
        offsets.push(total);
    }
    // The kept elements: chunks of the whole array, each writing its own range of the output.
    let task = t.task_elems.max(1);
    let chunk_kept: Vec<usize> = keep.par_chunks(task).map(count).collect();
    let mut out: Vec<T> = try_with_capacity(total, "compacted elements")?;
    let spare = &mut out.spare_capacity_mut()[..total];
    let parts = super::plan::split_mut(spare, chunk_kept.iter().copied());
    parts.into_par_iter().zip(xs.par_chunks(task).zip(keep.par_chunks(task))).for_each(|(dst, (x, k))| {
        for (d, &v) in dst.iter_mut().zip(x.iter().zip(k).filter(|(_, k)| **k).map(|(v, _)| v)) {
            d.write(v);
        }
    });
    // SAFETY: the chunks' kept counts sum to `total` and each chunk wrote exactly its count
    // into its own part of the first `total` slots.
    unsafe { out.set_len(total) };
    Ok((out, Segments::from_built_offsets(offsets)?))
}
