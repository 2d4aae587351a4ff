//! Segmented reverse on the CPU: whole segments per task when short, a long segment's two
//! halves swapped chunk against mirrored chunk on all threads.

use rayon::prelude::*;

use super::descriptor::Segments;
use super::plan::{by_elems, groups};
use super::tuning::SegmentedTuning;

/// Reverses one long segment on all threads: chunk `k` of the front half against the `k`-th
/// chunk from the back of the back half.
pub(crate) fn reverse_par<T: Send>(seg: &mut [T], task: usize) {
    let half = seg.len() / 2;
    let (front, rest) = seg.split_at_mut(half);
    let back_from = rest.len() - half;
    let back = &mut rest[back_from..];
    front.par_chunks_mut(task.max(1)).zip(back.par_rchunks_mut(task.max(1))).for_each(|(x, y)| {
        for (p, q) in x.iter_mut().zip(y.iter_mut().rev()) {
            std::mem::swap(p, q);
        }
    });
}

/// Reverses every segment in place. Lengths already checked.
pub(crate) fn reverse<T: Send>(xs: &mut [T], segs: &Segments, t: &SegmentedTuning) {
    match segs.as_regular() {
        Some((0, _)) => {}
        Some((seg_len, _)) if seg_len < t.reorder_split => {
            let per_task = t.task_elems.div_ceil(seg_len).max(1);
            xs.par_chunks_mut(per_task * seg_len)
                .for_each(|c| c.chunks_exact_mut(seg_len).for_each(<[T]>::reverse));
        }
        _ => {
            let groups = groups(segs, t.task_elems);
            by_elems(xs, &groups).into_par_iter().zip(&groups).for_each(|(part, g)| {
                for s in g.segs.clone() {
                    let seg = &mut part[segs.start(s) - g.elems.start..segs.start(s + 1) - g.elems.start];
                    if seg.len() >= t.reorder_split { reverse_par(seg, t.task_elems) } else { seg.reverse() }
                }
            });
        }
    }
}
