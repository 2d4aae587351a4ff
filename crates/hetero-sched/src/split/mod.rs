//! Splitting work between CPUs and GPUs (thesis 000, chapter 6; digest §12).
//!
//! - [`Device`]: the processors ([`CpuDevice`] over a rayon pool, [`CudaDevice`], and
//!   [`Throttled`] for a slowed-down stand-in), in the role of small-grain CPU workers or
//!   large-grain GPU workers ([`DeviceKind`]).
//! - [`Splittable`]: an operation over `0..n` with a CPU implementation of any sub-range and,
//!   optionally, a GPU one (queued per stream, completed later).
//! - Static split: [`AffineModel`]s `t = γ·w + δ` from [`calibrate`] (least squares over two or
//!   more sizes; [`calibrate_concurrent`] times every device while the others run),
//!   [`solve_static`] for equal finish time over `k` devices with clamping (Eq. 6.5),
//!   [`run_static`] to execute the shares, [`run_static_timed`] and [`refine`] to correct the
//!   models from a split's measured finish times.
//! - Dynamic split: [`DynamicPlan`], the multi-grain rules of Listing 6.1 (corrected), run by
//!   [`run_dynamic`] over a lock-free cursor; [`simulate`] plays a plan in virtual time.
//! - [`ToOneMap`]: the fastest single device per operation and problem shape.
//! - [`SplitStore`]: where calibrations and choices persist: [`CacheStore`] in the tuning cache
//!   (Kernel Tuner files keyed by device fingerprint, operation and shape bucket, next to the
//!   device's tuned kernels; `HETKIT_CACHE_DIR` overriding; [`default_store`], where callers that
//!   name no store persist), [`JsonStore`] (one JSON file), [`MemoryStore`].
//!
//! See the book, chapter "Splitting work between devices".

mod cache_store;
mod calibrate;
mod clock;
mod device;
mod error;
mod model;
mod queue;
mod run;
mod simulate;
mod splittable;
mod store;
mod to_one;

pub use cache_store::{CacheStore, default_store};
pub use calibrate::{calibrate, calibrate_cached, calibrate_concurrent};
pub use clock::{Clock, ManualClock, MonotonicClock};
pub use device::{CpuDevice, CudaDevice, Device, DeviceKind, Throttled};
pub use error::{BoxError, Result, SplitError};
pub use model::{AffineModel, proportional_split, refine, solve_static};
pub use queue::{DynamicPlan, Grain};
pub use run::{TimedPieces, run_dynamic, run_static, run_static_timed};
pub use simulate::{SimDevice, SimTask, simulate};
pub use splittable::{Piece, Splittable, concat};
pub use store::{
    CACHE_DIR_ENV, Choice, ChoiceKey, JsonStore, MemoryStore, ModelKey, STORE_FILE, SplitStore, default_dir,
};
pub use to_one::{ToOneMap, size_bucket};
