//! [`Segments`]: the descriptor of a segmented array, in its two stored forms (CSR offsets, or
//! the two numbers of equal-length segments) and the views derived from them (lengths, segment
//! ids, head flags).

use std::ops::Range;

use rayon::prelude::*;

use crate::alloc::try_with_capacity;
use crate::error::{Error, Result};
use crate::segments::{check_offsets, offsets_from_lengths};

use super::plan::{by_elems, groups};
use super::tuning::TASK;

/// Inputs at least this long build their derived views (ids, flags) on all threads.
const PAR_VIEW_MIN: usize = 1 << 16;

/// How an array of `n` elements is cut into consecutive segments.
///
/// Two stored forms: CSR offsets (`nseg + 1` entries, empty segments allowed anywhere), or
/// `regular` segments of one length, which store two numbers and compute offsets on the fly
/// (the thesis's regular segmented arrays). Equality compares the segmentation, not the form:
/// `regular(2, 3)` equals `from_lengths(&[2, 2, 2])`.
///
/// The number of segments is limited to `u32::MAX`, so that [`segment_ids`](Self::segment_ids)
/// fits `u32`.
///
/// ```
/// use prefix_ops::segmented::Segments;
/// // The thesis's Fig. 5.7: head flags rebuilt into ids, offsets and lengths.
/// let s = Segments::from_head_flags(&[true, false, false, true, false, true, true, false])?;
/// assert_eq!(s.num_segments(), 4);
/// assert_eq!(s.segment_ids(), [0, 0, 0, 1, 1, 2, 3, 3]);
/// assert_eq!(s.offsets(), [0, 3, 5, 6, 8]);
/// assert_eq!(s.lengths(), [3, 2, 1, 2]);
/// assert_eq!(Segments::regular(2, 3), Segments::from_lengths(&[2, 2, 2])?);
/// # Ok::<(), prefix_ops::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Segments {
    repr: Repr,
    /// The length every segment has, when all have the same (any form; found once at
    /// construction for offsets), so that the paths specialised on equal lengths need not
    /// read the offsets at all.
    equal: Option<usize>,
}

#[derive(Debug, Clone)]
enum Repr {
    /// `nseg` segments of `seg_len` elements each.
    Regular { seg_len: usize, nseg: usize },
    /// CSR offsets, already validated: start 0, non-decreasing, `nseg + 1` entries.
    Offsets(Vec<usize>),
}

/// A descriptor's stored form, for paths that take rows or offsets.
#[derive(Clone, Copy)]
pub(crate) enum Form<'a> {
    /// Segments of this length.
    Regular(usize),
    /// CSR offsets.
    Offsets(&'a [usize]),
}

fn check_count(nseg: usize) -> Result<()> {
    if nseg > u32::MAX as usize {
        return Err(Error::Invalid(format!("{nseg} segments: at most {} (ids are u32)", u32::MAX)));
    }
    Ok(())
}

impl Segments {
    /// From CSR offsets: `nseg + 1` entries, the first 0, never decreasing; the last is the
    /// number of elements. `[0]` is zero segments of empty data.
    ///
    /// Errors: [`Error::InvalidOffsets`] for an empty slice, a first entry other than 0 or a
    /// decrease; [`Error::Invalid`] for more than `u32::MAX` segments.
    pub fn from_offsets(offsets: &[usize]) -> Result<Segments> {
        let n = offsets.last().copied().unwrap_or(0);
        let nseg = check_offsets(n, offsets)?;
        check_count(nseg)?;
        Ok(Segments::with_offsets(crate::alloc::try_copy(offsets, "segment offsets")?))
    }

    /// From segment lengths (zero allowed). Errors: a total that overflows `usize`, more than
    /// `u32::MAX` segments.
    pub fn from_lengths(lengths: &[usize]) -> Result<Segments> {
        check_count(lengths.len())?;
        Ok(Segments::with_offsets(offsets_from_lengths(lengths)?))
    }

    /// `nseg` segments of `seg_len` elements each, stored as the two numbers (no allocation,
    /// no failure: the contract's fast path). `seg_len == 0` gives `nseg` empty segments of
    /// empty data; data whose length is not a multiple of a segment length is described with
    /// [`from_lengths`](Self::from_lengths), a shorter last segment included.
    ///
    /// A request no data can match (`seg_len * nseg` overflows `usize`, or more than
    /// `u32::MAX` segments, whose ids would not fit `u32`) still gives a descriptor, one that
    /// every operation rejects with [`Error::Invalid`]; its [`len`](Self::len) saturates at
    /// `usize::MAX` and its views are empty.
    ///
    /// ```
    /// use prefix_ops::segmented::{self, Add, Segments};
    /// assert_eq!(Segments::regular(3, 2).lengths(), [3, 3]);
    /// let huge = Segments::regular(usize::MAX, 2);
    /// assert!(segmented::reduce(&[1, 2], &huge, Add).is_err());
    /// ```
    pub fn regular(seg_len: usize, nseg: usize) -> Segments {
        Segments { repr: Repr::Regular { seg_len, nseg }, equal: Some(seg_len) }
    }

    /// The offsets form, with its equal length looked for.
    fn with_offsets(offsets: Vec<usize>) -> Segments {
        Segments { equal: common_step(&offsets), repr: Repr::Offsets(offsets) }
    }

    /// The length of every segment when all have the same one (a `regular` descriptor, or
    /// offsets in an arithmetic progression); `None` for other offsets and for offsets of no
    /// segment (a `regular` descriptor of no segment keeps its `seg_len`).
    pub(crate) fn equal_length(&self) -> Option<usize> {
        self.equal
    }

    /// True for a `regular` descriptor that no data can match (see [`regular`](Self::regular)).
    pub(crate) fn is_oversized(&self) -> bool {
        match self.repr {
            Repr::Regular { seg_len, nseg } => {
                nseg > u32::MAX as usize || seg_len.checked_mul(nseg).is_none()
            }
            Repr::Offsets(_) => false,
        }
    }

    /// The error every operation returns for an oversized descriptor.
    pub(crate) fn oversized_error(&self) -> Error {
        let (seg_len, nseg) = self.as_regular().unwrap_or((0, 0));
        Error::Invalid(format!(
            "{nseg} regular segments of {seg_len}: more than u32::MAX segments or a total over usize::MAX"
        ))
    }

    /// From head flags, one per element, `true` where a segment starts (the thesis's Fig. 5.7
    /// rebuild: the segment ids are the inclusive scan of the flags, minus one). Head flags
    /// cannot express empty segments; use offsets for those. Empty flags give zero segments.
    ///
    /// Errors: [`Error::Invalid`] when `flags` is non-empty and `flags[0]` is false (the first
    /// elements would belong to no segment).
    pub fn from_head_flags(flags: &[bool]) -> Result<Segments> {
        if flags.first() == Some(&false) {
            return Err(Error::Invalid("head flags: flags[0] must be true when there is data".into()));
        }
        let mut offsets: Vec<usize> = if flags.len() >= PAR_VIEW_MIN {
            flags.par_iter().enumerate().filter(|(_, h)| **h).map(|(i, _)| i).collect()
        } else {
            flags.iter().enumerate().filter(|(_, h)| **h).map(|(i, _)| i).collect()
        };
        check_count(offsets.len())?;
        offsets.push(flags.len());
        if flags.is_empty() {
            offsets = vec![0];
        }
        Ok(Segments::with_offsets(offsets))
    }

    /// Number of segments.
    pub fn num_segments(&self) -> usize {
        match &self.repr {
            Repr::Regular { nseg, .. } => *nseg,
            Repr::Offsets(o) => o.len() - 1,
        }
    }

    /// Number of elements the segments cover.
    pub fn len(&self) -> usize {
        match &self.repr {
            Repr::Regular { seg_len, nseg } => seg_len.saturating_mul(*nseg),
            Repr::Offsets(o) => o[o.len() - 1],
        }
    }

    /// True when the segments cover no element (there may still be empty segments).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `Some((seg_len, nseg))` for the regular form.
    pub fn as_regular(&self) -> Option<(usize, usize)> {
        match self.repr {
            Repr::Regular { seg_len, nseg } => Some((seg_len, nseg)),
            Repr::Offsets(_) => None,
        }
    }

    /// The stored form, borrowed (no allocation).
    pub(crate) fn form(&self) -> Form<'_> {
        match &self.repr {
            Repr::Regular { seg_len, .. } => Form::Regular(*seg_len),
            Repr::Offsets(o) => Form::Offsets(o),
        }
    }

    /// Where segment `s` starts; `start(num_segments())` is `len()`. `s` must be at most
    /// `num_segments()`.
    #[inline]
    pub(crate) fn start(&self, s: usize) -> usize {
        match &self.repr {
            Repr::Regular { seg_len, .. } => s * seg_len,
            Repr::Offsets(o) => o[s],
        }
    }

    /// The elements of segment `s`, or `None` past the last segment (or for a descriptor no
    /// data can match).
    pub fn segment(&self, s: usize) -> Option<Range<usize>> {
        (s < self.num_segments() && !self.is_oversized()).then(|| self.start(s)..self.start(s + 1))
    }

    /// The first segment starting at or after element `i` (`num_segments()` when none does).
    pub(crate) fn first_starting_at(&self, i: usize) -> usize {
        match &self.repr {
            Repr::Regular { seg_len: 0, .. } => 0,
            Repr::Regular { seg_len, nseg } => i.div_ceil(*seg_len).min(*nseg),
            Repr::Offsets(o) => o[..o.len() - 1].partition_point(|&x| x < i),
        }
    }

    /// CSR offsets, `num_segments() + 1` entries (none for a descriptor no data can match).
    pub fn offsets(&self) -> Vec<usize> {
        if self.is_oversized() {
            return Vec::new();
        }
        match &self.repr {
            Repr::Regular { seg_len, nseg } => (0..=*nseg).map(|s| s * seg_len).collect(),
            Repr::Offsets(o) => o.clone(),
        }
    }

    /// The length of every segment.
    pub fn lengths(&self) -> Vec<usize> {
        if self.is_oversized() {
            return Vec::new();
        }
        match &self.repr {
            Repr::Regular { seg_len, nseg } => vec![*seg_len; *nseg],
            Repr::Offsets(o) => o.windows(2).map(|w| w[1] - w[0]).collect(),
        }
    }

    /// The segment of every element (`len()` entries).
    pub fn segment_ids(&self) -> Vec<u32> {
        if self.is_oversized() {
            return Vec::new();
        }
        let mut ids = vec![0u32; self.len()];
        let groups = groups(self, TASK);
        by_elems(&mut ids, &groups).into_par_iter().zip(&groups).for_each(|(part, g)| {
            for s in g.segs.clone() {
                part[self.start(s) - g.elems.start..self.start(s + 1) - g.elems.start].fill(s as u32);
            }
        });
        ids
    }

    /// One flag per element, `true` at the first element of every non-empty segment. Empty
    /// segments leave no trace: this view is lossy where the segments have empty ones.
    pub fn head_flags(&self) -> Vec<bool> {
        if self.is_oversized() {
            return Vec::new();
        }
        let mut flags = vec![false; self.len()];
        match &self.repr {
            Repr::Regular { seg_len, .. } => {
                flags.iter_mut().step_by((*seg_len).max(1)).for_each(|f| *f = true)
            }
            Repr::Offsets(o) => {
                let n = flags.len();
                o[..o.len() - 1].iter().filter(|&&x| x < n).for_each(|&x| flags[x] = true)
            }
        }
        flags
    }

    /// Checks that this descriptor covers `n` elements named `what`.
    pub(crate) fn check_len(&self, what: &'static str, n: usize) -> Result<()> {
        if self.is_oversized() {
            return Err(self.oversized_error());
        }
        if n != self.len() {
            return Err(Error::LengthMismatch { what, got: n, expected: self.len() });
        }
        Ok(())
    }

    /// Offsets with room reserved, for building a new descriptor ([`Error::Alloc`] on failure).
    pub(crate) fn new_offsets(nseg: usize) -> Result<Vec<usize>> {
        try_with_capacity(nseg.saturating_add(1), "segment offsets")
    }

    /// A descriptor from offsets the caller built correctly (start 0, non-decreasing).
    pub(crate) fn from_built_offsets(offsets: Vec<usize>) -> Result<Segments> {
        check_count(offsets.len().saturating_sub(1))?;
        debug_assert!(offsets.first() == Some(&0) && offsets.windows(2).all(|w| w[0] <= w[1]));
        Ok(Segments::with_offsets(offsets))
    }
}

/// Chunk of [`common_step`]'s pass: long enough to vectorise, short enough that irregular
/// offsets stop after one.
const STEP_CHUNK: usize = 1024;

/// `Some(step)` when `xs` (at least two entries) goes up by one `step` from entry to entry;
/// `None` otherwise or for fewer than two entries. One pass without bounds checks, stopping
/// after the first chunk that breaks the step (a pass with an early exit per entry does not
/// vectorise, and for one-element segments this pass is 8 bytes per element).
pub(crate) fn common_step(xs: &[usize]) -> Option<usize> {
    let step = xs.get(1)?.wrapping_sub(xs[0]);
    let mut start = 0;
    while start + 1 < xs.len() {
        let part = &xs[start..(start + STEP_CHUNK + 1).min(xs.len())];
        if !part[1..].iter().zip(part).fold(true, |ok, (&b, &a)| ok & (b.wrapping_sub(a) == step)) {
            return None;
        }
        start += STEP_CHUNK;
    }
    Some(step)
}

impl PartialEq for Segments {
    fn eq(&self, other: &Segments) -> bool {
        match (&self.repr, &other.repr) {
            (Repr::Offsets(a), Repr::Offsets(b)) => a == b,
            (Repr::Regular { seg_len: a, nseg: m }, Repr::Regular { seg_len: b, nseg: n })
                if self.is_oversized() || other.is_oversized() =>
            {
                (a, m) == (b, n)
            }
            _ if self.is_oversized() || other.is_oversized() => false,
            _ => {
                self.num_segments() == other.num_segments()
                    && (0..=self.num_segments()).all(|s| self.start(s) == other.start(s))
            }
        }
    }
}

impl Eq for Segments {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_step_reads_every_chunk() {
        assert_eq!(common_step(&[]), None);
        assert_eq!(common_step(&[4]), None);
        assert_eq!(common_step(&[4, 4]), Some(0));
        for n in [2usize, 3, STEP_CHUNK, STEP_CHUNK + 1, STEP_CHUNK + 2, 3 * STEP_CHUNK + 5] {
            let xs: Vec<usize> = (0..n).map(|i| 7 + 3 * i).collect();
            assert_eq!(common_step(&xs), Some(3), "{n}");
            // A break anywhere, in the first chunk, on a chunk's edge or in the last one.
            for at in [1, n / 2, STEP_CHUNK, STEP_CHUNK + 1, n - 1] {
                // (Two entries are always a progression.)
                if n > 2 && (1..n).contains(&at) {
                    let mut bad = xs.clone();
                    bad[at] += 1;
                    assert_eq!(common_step(&bad), None, "{n} broken at {at}");
                }
            }
        }
    }

    #[test]
    fn equal_lengths_are_found_by_every_constructor() {
        assert_eq!(Segments::regular(5, 3).equal_length(), Some(5));
        assert_eq!(Segments::from_lengths(&[5, 5, 5]).unwrap().equal_length(), Some(5));
        assert_eq!(Segments::from_offsets(&[0, 2, 4, 6]).unwrap().equal_length(), Some(2));
        assert_eq!(Segments::from_head_flags(&[true; 9]).unwrap().equal_length(), Some(1));
        assert_eq!(Segments::from_lengths(&[0, 0]).unwrap().equal_length(), Some(0));
        assert_eq!(Segments::from_lengths(&[5, 5, 4]).unwrap().equal_length(), None);
        assert_eq!(Segments::from_head_flags(&[true, false, true]).unwrap().equal_length(), None);
        assert_eq!(Segments::from_lengths(&[]).unwrap().equal_length(), None);
    }
}
