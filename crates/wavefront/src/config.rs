//! Which executor runs a sweep, with its parameters.

use std::sync::Arc;

use rayon::ThreadPool;

use crate::error::{Result, WavefrontError};

/// The executors of a sweep (2D and 3D alike).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Executor {
    /// Row-major loop over the whole table: the reference.
    Sequential,
    /// Square (cubic) tiles one after another on the calling thread (cache reuse, no threads).
    Tiled {
        /// Tile side.
        tile: usize,
    },
    /// Tiles as rayon tasks, each spawned when its dependency counter reaches zero.
    Cpu {
        /// Tile side.
        tile: usize,
    },
    /// CPU tiles before and after a band of `2 band + 1` central diagonals (planes) computed on a
    /// GPU; `band < 0` means no GPU (then it is [`Executor::Cpu`]).
    Hybrid {
        /// CPU tile side.
        tile: usize,
        /// Diagonals on each side of the main one that go to the GPU; negative for none.
        band: isize,
    },
}

macro_rules! config_type {
    ($name:ident, $what:literal, $blocks:literal, $diags:literal) => {
        #[doc = concat!("How a ", $what, " sweep runs: the executor and its parameters.")]
        ///
        /// Constructors never fail; parameters are checked when the sweep runs, and invalid ones
        /// (tile 0, 0 threads) are errors. Every configuration gives the same table as
        /// [`Self::sequential`].
        #[derive(Debug, Clone)]
        pub struct $name {
            executor: Executor,
            threads: Option<usize>,
            pool: Option<Arc<ThreadPool>>,
        }

        impl $name {
            /// The sequential reference: one thread, plain loop order.
            pub fn sequential() -> Self {
                Self::of(Executor::Sequential)
            }

            #[doc = concat!("One thread over ", $blocks, " tiles in dependency order.")]
            pub fn tiled(tile: usize) -> Self {
                Self::of(Executor::Tiled { tile })
            }

            #[doc = concat!("All cores: ", $blocks, " tiles as rayon tasks driven by dependency counters.")]
            pub fn cpu(tile: usize) -> Self {
                Self::of(Executor::Cpu { tile })
            }

            #[doc = concat!("CPU tiles around a GPU band of `2 * band + 1` ", $diags, "; `band < 0` means no GPU.")]
            ///
            /// With `band >= 0` a sweep needs a GPU (else it is an error) and a kernel with a GPU
            /// form.
            pub fn hybrid(tile: usize, band: isize) -> Self {
                Self::of(Executor::Hybrid { tile, band })
            }

            /// Runs the CPU tasks on a pool of their own with `threads` threads (default: rayon's
            /// global pool).
            pub fn with_threads(mut self, threads: usize) -> Self {
                self.threads = Some(threads);
                self.pool = None;
                self
            }

            /// Runs the CPU tasks on `pool`.
            pub fn with_pool(mut self, pool: Arc<ThreadPool>) -> Self {
                self.threads = None;
                self.pool = Some(pool);
                self
            }

            /// The executor and its parameters.
            pub fn executor(&self) -> Executor {
                self.executor
            }

            fn of(executor: Executor) -> Self {
                $name { executor, threads: None, pool: None }
            }

            pub(crate) fn validate(&self) -> Result<()> {
                validate(self.executor, self.threads)
            }

            pub(crate) fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> Result<R> {
                install(self.threads, self.pool.as_deref(), f)
            }
        }

        impl PartialEq for $name {
            fn eq(&self, other: &Self) -> bool {
                self.executor == other.executor
                    && self.threads == other.threads
                    && match (&self.pool, &other.pool) {
                        (None, None) => true,
                        (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                        _ => false,
                    }
            }
        }
    };
}

config_type!(Config2, "2D", "`tile x tile`", "anti-diagonals");
config_type!(Config3, "3D", "`tile x tile x tile`", "planes");

impl Config2 {
    /// The configuration predicted for a problem with `features` by the model calibrated on
    /// this machine ([`crate::tune::calibrate`], stored in the tuning cache), or, without one,
    /// the best of a short search on a small synthetic stand-in. Never fails; like every
    /// configuration it gives the same table as [`Config2::sequential`].
    pub fn auto(features: &crate::tune::Features) -> Self {
        crate::tune::choose(features, crate::tune::Rank::Two).0.config2()
    }
}

impl Config3 {
    /// As [`Config2::auto`], with the 3D model.
    pub fn auto(features: &crate::tune::Features) -> Self {
        crate::tune::choose(features, crate::tune::Rank::Three).0.config3()
    }
}

fn validate(executor: Executor, threads: Option<usize>) -> Result<()> {
    let tile = match executor {
        Executor::Sequential => None,
        Executor::Tiled { tile } | Executor::Cpu { tile } | Executor::Hybrid { tile, .. } => Some(tile),
    };
    if tile == Some(0) {
        return Err(WavefrontError::InvalidConfig("tile side 0".into()));
    }
    if threads == Some(0) {
        return Err(WavefrontError::InvalidConfig("0 threads".into()));
    }
    Ok(())
}

fn install<R: Send>(
    threads: Option<usize>,
    pool: Option<&ThreadPool>,
    f: impl FnOnce() -> R + Send,
) -> Result<R> {
    if let Some(pool) = pool {
        return Ok(pool.install(f));
    }
    match threads {
        None => Ok(f()),
        Some(n) => {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(n).build().map_err(|e| {
                WavefrontError::InvalidConfig(format!("cannot build a pool of {n} threads: {e}"))
            })?;
            Ok(pool.install(f))
        }
    }
}
