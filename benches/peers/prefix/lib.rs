//! Nothing here: the peer comparison is `examples/peers.rs` (run by `run.sh`).
