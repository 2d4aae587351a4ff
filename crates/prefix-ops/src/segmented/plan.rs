//! Load balance across segments of any lengths: the segments are cut into groups of about
//! `task` elements each (a group is a run of consecutive segments, or one long segment), so
//! a million short segments and one huge one cost the same per element. Group boundaries come
//! from binary searches at element positions `k * task`, so planning costs
//! `O(n / task * log nseg)`, not a pass over the segments.

use std::ops::Range;

use super::descriptor::Segments;

/// A run of consecutive segments and the elements they cover.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Group {
    /// Segment indices.
    pub segs: Range<usize>,
    /// Element indices: `start(segs.start)..start(segs.end)`.
    pub elems: Range<usize>,
}

/// Groups covering every segment of `segs` in order, each starting at the first segment that
/// starts at or after a multiple of `task` elements. Empty segments join the group they fall in.
pub(crate) fn groups(segs: &Segments, task: usize) -> Vec<Group> {
    let nseg = segs.num_segments();
    let n = segs.len();
    let task = task.max(1);
    let mut bounds = Vec::with_capacity(n / task + 2);
    bounds.push(0);
    for k in 1..n.div_ceil(task) {
        let b = segs.first_starting_at(k * task);
        if b > *bounds.last().unwrap_or(&0) && b < nseg {
            bounds.push(b);
        }
    }
    bounds.push(nseg);
    bounds.windows(2).map(|w| Group { segs: w[0]..w[1], elems: segs.start(w[0])..segs.start(w[1]) }).collect()
}

/// Cuts `data` into consecutive parts of the given lengths (which must not exceed it).
pub(crate) fn split_mut<T>(mut data: &mut [T], lens: impl Iterator<Item = usize>) -> Vec<&mut [T]> {
    let mut parts = Vec::with_capacity(lens.size_hint().0);
    for len in lens {
        let (head, tail) = std::mem::take(&mut data).split_at_mut(len);
        parts.push(head);
        data = tail;
    }
    parts
}

/// The parts of `data` under each group's elements.
pub(crate) fn by_elems<'a, T>(data: &'a mut [T], groups: &[Group]) -> Vec<&'a mut [T]> {
    split_mut(data, groups.iter().map(|g| g.elems.len()))
}

/// The parts of a per-segment array under each group's segments.
pub(crate) fn by_segs<'a, T>(data: &'a mut [T], groups: &[Group]) -> Vec<&'a mut [T]> {
    split_mut(data, groups.iter().map(|g| g.segs.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(segs: &Segments, task: usize) {
        let gs = groups(segs, task);
        assert_eq!(gs.first().map(|g| g.segs.start), Some(0));
        assert_eq!(gs.last().map(|g| g.segs.end), Some(segs.num_segments()));
        assert!(gs.windows(2).all(|w| w[0].segs.end == w[1].segs.start && !w[0].segs.is_empty()));
        assert_eq!(gs.iter().map(|g| g.elems.len()).sum::<usize>(), segs.len());
        for g in &gs {
            // A group longer than the task is one segment, or short segments plus one long one.
            let longest = g.segs.clone().map(|s| segs.segment(s).unwrap().len()).max().unwrap_or(0);
            assert!(g.elems.len() <= 2 * task + longest, "{g:?}");
        }
    }

    #[test]
    fn groups_tile_the_segments() {
        check(&Segments::from_lengths(&[]).unwrap(), 4);
        check(&Segments::from_lengths(&[0, 0, 0]).unwrap(), 4);
        check(&Segments::from_lengths(&[1, 0, 7, 0, 0, 30, 2, 2, 2, 0]).unwrap(), 4);
        check(&Segments::regular(3, 11), 5);
        check(&Segments::regular(0, 5), 5);
        check(&Segments::regular(100, 1), 7);
    }
}
