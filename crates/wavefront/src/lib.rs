//! The wavefront pattern in 2D and 3D: cells that depend on their upper and left neighbours,
//! computed along anti-diagonals and split between CPU cores and GPUs. See the book, part
//! "Wavefronts".
