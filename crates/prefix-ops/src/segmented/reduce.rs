//! Segmented reduction on the CPU: whole segments per task when they are short (a regular
//! fast path walks fixed-length chunks with no offsets at all), several threads on one
//! segment when it is at least [`SegmentedTuning::reduce_split`] long.

use rayon::prelude::*;

use super::descriptor::{Form, Segments};
use super::plan::{by_segs, groups};
use super::tuning::SegmentedTuning;
use crate::alloc::try_with_capacity;
use crate::error::Result;
use crate::scan::{Monoid, single};

/// Segments shorter than this fold left to right: the interleaved accumulators of
/// [`single::reduce`] cost more to set up and combine than they save.
const SHORT: usize = 64;

/// The reduction of one segment on the calling thread.
#[inline]
pub(crate) fn reduce_one<T: Copy, M: Monoid<T>>(seg: &[T], op: M) -> T {
    if seg.len() < SHORT {
        seg.iter().fold(op.identity(), |a, &x| op.combine(a, x))
    } else {
        single::reduce(seg, op)
    }
}

/// The reduction of one long segment on all threads, in order (the operator need not commute).
fn reduce_par<T: Copy + Send + Sync, M: Monoid<T>>(seg: &[T], op: M, task: usize) -> T {
    seg.par_chunks(task.max(1))
        .map(|c| single::reduce(c, op))
        .reduce(|| op.identity(), |a, b| op.combine(a, b))
}

/// One value per segment (the identity for empty ones). Lengths already checked.
pub(crate) fn reduce<T: Copy + Send + Sync, M: Monoid<T>>(
    xs: &[T],
    segs: &Segments,
    op: M,
    t: &SegmentedTuning,
) -> Result<Vec<T>> {
    let nseg = segs.num_segments();
    let mut out = try_with_capacity(nseg, "segment results")?;
    out.resize(nseg, op.identity());
    match segs.form() {
        Form::Regular(0) => {}
        // combine(identity, x) == x: one-element segments are a copy.
        Form::Regular(1) => out
            .par_chunks_mut(t.task_elems.max(1))
            .zip(xs.par_chunks(t.task_elems.max(1)))
            .for_each(|(o, x)| o.copy_from_slice(x)),
        Form::Regular(seg_len) if seg_len < t.reduce_split => {
            let per_task = t.task_elems.div_ceil(seg_len).max(1);
            out.par_chunks_mut(per_task).zip(xs.par_chunks(per_task * seg_len)).for_each(|(o, chunk)| {
                for (r, seg) in o.iter_mut().zip(chunk.chunks_exact(seg_len)) {
                    *r = reduce_one(seg, op);
                }
            });
        }
        form => {
            let groups = groups(segs, t.task_elems);
            by_segs(&mut out, &groups).into_par_iter().zip(&groups).for_each(|(o, g)| {
                let one = |seg: &[T]| {
                    if seg.len() >= t.reduce_split {
                        reduce_par(seg, op, t.task_elems)
                    } else {
                        reduce_one(seg, op)
                    }
                };
                match form {
                    // The offsets read directly: no per-segment dispatch on the form.
                    Form::Offsets(offsets) => {
                        for (r, w) in o.iter_mut().zip(offsets[g.segs.start..=g.segs.end].windows(2)) {
                            *r = one(&xs[w[0]..w[1]]);
                        }
                    }
                    Form::Regular(l) => {
                        for (r, seg) in o.iter_mut().zip(xs[g.elems.clone()].chunks_exact(l)) {
                            *r = one(seg);
                        }
                    }
                }
            });
        }
    }
    Ok(out)
}
