//! Batched tridiagonal solvers on CPU and GPU.
