//! Test policy shared by hetkit's crates.
//!
//! - [`gpu_or_skip`]: a GPU test gets a [`Gpu`] or prints why it skipped; with
//!   `HETKIT_REQUIRE_GPU=1` a missing GPU fails the test instead, so a run on a GPU machine cannot
//!   pass by skipping.
//! - [`rng`]: a seeded generator that prints its seed (`HETKIT_SEED=n` replays a failure).
//! - [`assert_close`] and [`max_rel_err`]: tolerance checks with readable failures.

use cuda_kernels::Gpu;
use rand::SeedableRng;
pub use rand_chacha::ChaCha8Rng as TestRng;

/// True when `HETKIT_REQUIRE_GPU=1`.
pub fn gpu_required() -> bool {
    std::env::var("HETKIT_REQUIRE_GPU").is_ok_and(|v| v == "1")
}

/// Device 0, or `None` after printing a skip line. Panics when `HETKIT_REQUIRE_GPU=1` and no
/// device can be opened, and on any error other than "no GPU" (a broken GPU must not look like
/// an absent one).
pub fn gpu_or_skip(test: &str) -> Option<Gpu> {
    match Gpu::new(0) {
        Ok(gpu) => Some(gpu),
        Err(e) if e.is_no_gpu() && !gpu_required() => {
            println!("SKIPPED {test}: no GPU ({e})");
            None
        }
        Err(e) => panic!("{test}: GPU required but unavailable: {e}"),
    }
}

/// A generator seeded from `HETKIT_SEED` or from the clock, printing the seed.
pub fn rng(test: &str) -> TestRng {
    let seed = std::env::var("HETKIT_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0x5eed)
    });
    println!("{test}: HETKIT_SEED={seed}");
    TestRng::seed_from_u64(seed)
}

/// Scalars the tolerance helpers accept.
pub trait Real: Copy + std::fmt::Debug {
    /// The value as f64.
    fn to_f64(self) -> f64;
}
impl Real for f32 {
    fn to_f64(self) -> f64 {
        self as f64
    }
}
impl Real for f64 {
    fn to_f64(self) -> f64 {
        self
    }
}

/// Largest `|a - b| / max(|b|, floor)` over the pairs; NaN anywhere gives infinity.
pub fn max_rel_err<T: Real>(got: &[T], want: &[T], floor: f64) -> f64 {
    assert_eq!(got.len(), want.len(), "length mismatch");
    got.iter()
        .zip(want)
        .map(|(g, w)| {
            let (g, w) = (g.to_f64(), w.to_f64());
            if g.is_nan() || w.is_nan() { f64::INFINITY } else { (g - w).abs() / w.abs().max(floor) }
        })
        .fold(0.0, f64::max)
}

/// Panics with the first offending index when some `got[i]` differs from `want[i]` by more than
/// `rel` relative to `max(|want[i]|, 1)`.
#[track_caller]
pub fn assert_close<T: Real>(got: &[T], want: &[T], rel: f64) {
    assert_eq!(got.len(), want.len(), "length mismatch: got {} want {}", got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let (gf, wf) = (g.to_f64(), w.to_f64());
        let err = (gf - wf).abs() / wf.abs().max(1.0);
        assert!(
            err <= rel && !gf.is_nan(),
            "index {i}: got {g:?}, want {w:?} (rel err {err:.3e} > {rel:.1e})"
        );
    }
}
