//! Sparse grid operations on multi-core CPUs: hierarchization along chains, batched evaluation
//! with vectorised point layouts, and the sparse vector-matrix product, parallel with rayon and
//! equal to the `sg-core` references. See the book, part "Sparse grids on CPUs".
