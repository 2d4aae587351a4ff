//! Segmented scans on the CPU: short segments (on average) by plain per-segment loops over
//! grouped or regular segments; longer ones by prefix-ops' tiled segmented scan
//! ([`crate::scan::inclusive_segments`], balanced whatever the lengths) or its row scan.

use rayon::prelude::*;

use super::descriptor::{Form, Segments};
use super::plan::{by_elems, groups};
use super::tuning::SegmentedTuning;
use crate::error::Result;
use crate::scan::Monoid;

/// Segments shorter than this on average take the per-segment loops: the tiled scan's head
/// bookkeeping per element costs more than a loop that restarts at each segment.
const SHORT: usize = 64;

/// Scans one segment on the calling thread, left to right.
#[inline]
fn scan_one<T: Copy, M: Monoid<T>>(seg: &mut [T], op: M, exclusive: bool) {
    let mut acc = op.identity();
    for x in seg {
        let v = *x;
        let next = op.combine(acc, v);
        *x = if exclusive { acc } else { next };
        acc = next;
    }
}

/// Scans every segment in place. Lengths already checked.
pub(crate) fn scan<T: Copy + Send + Sync, M: Monoid<T>>(
    xs: &mut [T],
    segs: &Segments,
    op: M,
    exclusive: bool,
    t: &SegmentedTuning,
) -> Result<()> {
    let task = t.task_elems.max(1);
    match segs.form() {
        Form::Regular(0) => Ok(()),
        // combine(identity, x) == x: an inclusive scan of one element changes nothing.
        Form::Regular(1) if !exclusive => Ok(()),
        Form::Regular(l) if l < SHORT => {
            xs.par_chunks_mut(task.div_ceil(l) * l)
                .for_each(|c| c.chunks_exact_mut(l).for_each(|s| scan_one(s, op, exclusive)));
            Ok(())
        }
        Form::Regular(l) if exclusive => crate::scan::exclusive_rows(xs, l, op),
        Form::Regular(l) => crate::scan::inclusive_rows(xs, l, op),
        Form::Offsets(o) if xs.len() < SHORT * segs.num_segments() => {
            let groups = groups(segs, task);
            by_elems(xs, &groups).into_par_iter().zip(&groups).for_each(|(part, g)| {
                for w in o[g.segs.start..=g.segs.end].windows(2) {
                    let seg = &mut part[w[0] - g.elems.start..w[1] - g.elems.start];
                    if seg.len() >= t.reorder_split {
                        // A long segment among short ones: all threads on it.
                        if exclusive {
                            crate::scan::exclusive(seg, op)
                        } else {
                            crate::scan::inclusive(seg, op)
                        }
                    } else {
                        scan_one(seg, op, exclusive);
                    }
                }
            });
            Ok(())
        }
        Form::Offsets(o) if exclusive => crate::scan::exclusive_segments(xs, o, op),
        Form::Offsets(o) => crate::scan::inclusive_segments(xs, o, op),
    }
}
