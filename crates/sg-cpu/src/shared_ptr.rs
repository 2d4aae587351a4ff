//! A raw pointer that rayon tasks may share, for writes the algorithm proves disjoint.

#[derive(Clone, Copy)]
pub(crate) struct SharedMut<T>(*mut T);

// SAFETY: a `SharedMut` is only dereferenced through `slice`/`slice_mut`, whose callers
// guarantee that concurrent tasks touch disjoint ranges (see each use).
unsafe impl<T: Send> Send for SharedMut<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for SharedMut<T> {}

impl<T> SharedMut<T> {
    pub(crate) fn new(data: &mut [T]) -> Self {
        SharedMut(data.as_mut_ptr())
    }

    /// # Safety
    /// `start + len` is within the slice this pointer came from, and no other task writes the
    /// range while the returned slice lives.
    #[inline]
    pub(crate) unsafe fn slice<'a>(self, start: usize, len: usize) -> &'a [T] {
        // SAFETY: the caller guarantees bounds and the absence of concurrent writers.
        unsafe { std::slice::from_raw_parts(self.0.add(start), len) }
    }

    /// # Safety
    /// `start + len` is within the slice this pointer came from, and no other task reads or
    /// writes the range while the returned slice lives.
    #[inline]
    #[allow(clippy::mut_from_ref)]
    pub(crate) unsafe fn slice_mut<'a>(self, start: usize, len: usize) -> &'a mut [T] {
        // SAFETY: the caller guarantees bounds and exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.0.add(start), len) }
    }
}
