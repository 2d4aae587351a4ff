//! Splitting work between CPUs and GPUs (calibrated static splits, dynamic multi-grain queues)
//! and autotuning (parameter spaces, search strategies, a persistent tuning cache). See the book,
//! part "Scheduling and tuning".

pub mod split;
pub mod stream;
pub mod tune;
