//! Bitonic merge comb sort for batches of rows and segments, on CPU and GPU.
