//! GPU solvers (being written).
