//! Scans: inclusive and exclusive, batched, segmented and single-pass, on CPU and GPU.
