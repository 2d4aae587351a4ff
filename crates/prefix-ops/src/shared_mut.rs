//! A raw pointer that crosses threads, for parallel loops whose tasks write disjoint parts of
//! one slice that no safe split can express (tiles handed out by a ticket, interleaved columns).

/// A `*mut T` that is `Send` and `Sync`. Every user must ensure that no two threads touch the
/// same element and that the slice outlives the parallel loop.
#[derive(Clone, Copy)]
pub(crate) struct SharedMut<T>(*mut T);

// SAFETY: only hands out the pointer; users write disjoint elements (see the type's docs).
unsafe impl<T: Send> Send for SharedMut<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for SharedMut<T> {}

impl<T> SharedMut<T> {
    pub(crate) fn new(data: &mut [T]) -> Self {
        SharedMut(data.as_mut_ptr())
    }

    pub(crate) fn get(&self) -> *mut T {
        self.0
    }
}
