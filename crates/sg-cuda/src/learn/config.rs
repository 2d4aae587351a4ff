//! The tunable parameters of the learning kernels (the thesis's Table 7.2, per operator), their
//! [`hetero_sched::tune`] spaces, and their defaults.

use std::collections::HashMap;
use std::sync::{OnceLock, RwLock};

use cuda_kernels::Gpu;
use hetero_sched::tune::dispatch::{NO_CACHE_ENV, bucket_exp};
use hetero_sched::tune::{
    CacheKey, Config, Constraint, Fingerprint, Param, Space, TuningCache, Value, size_bucket,
};

use crate::error::{Error, Result};

/// The three kernels, each with its own parameters and tuning-cache entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LearnKernel {
    /// `v = B α`: a thread per `block` data points, grid points streamed.
    Mult,
    /// `v' = Bᵀ v`: a thread per `block` grid points, data points streamed.
    Transposed,
    /// `(R + λI) v`: a thread per grid point, grid points streamed.
    Mass,
}

impl LearnKernel {
    /// The kernel's name in the tuning cache.
    pub fn cache_name(self) -> &'static str {
        match self {
            LearnKernel::Mult => "sg_cuda::learn_mult",
            LearnKernel::Transposed => "sg_cuda::learn_mult_t",
            LearnKernel::Mass => "sg_cuda::learn_mass",
        }
    }

    /// The name stem of the CUDA entry points (`sg_learn_<stem>_f32`).
    pub(crate) fn stem(self) -> &'static str {
        match self {
            LearnKernel::Mult => "mult",
            LearnKernel::Transposed => "mult_t",
            LearnKernel::Mass => "mass",
        }
    }

    /// The compile-time blocking of this kernel in the embedded module (the `.cu` defaults).
    pub(crate) fn embedded_block(self) -> u32 {
        match self {
            LearnKernel::Mult => 4,
            LearnKernel::Transposed => 2,
            LearnKernel::Mass => 1,
        }
    }

    /// Values per streamed item staged in shared memory at dimension `d`: levels and indices
    /// plus α (mult); coordinates plus v (transposed); levels, indices, coordinates, widths
    /// plus v (mass).
    pub(crate) fn staged_per_item(self, d: usize) -> usize {
        match self {
            LearnKernel::Mult => 2 * d + 1,
            LearnKernel::Transposed => d + 1,
            LearnKernel::Mass => 4 * d + 1,
        }
    }
}

/// The tuning cache's fingerprint of a GPU: name and compute capability (tuned parameters are
/// per device model).
pub fn fingerprint(gpu: &Gpu) -> Fingerprint {
    let p = gpu.props();
    Fingerprint::new(format!("gpu: {} sm_{}{}", p.name, p.compute_capability.0, p.compute_capability.1))
}

/// Largest compile-time blocking (`LEARN_*_BLOCK` of the kernels).
pub const MAX_BLOCK: u32 = 16;
/// Largest column split: the streamed range is cut into at most this many pieces.
pub const MAX_SPLIT: u32 = 64;

/// The parameters of one learning kernel. Compile-time ones (`block`, `unroll`, `specialize`)
/// select a module: the embedded one for the `.cu` file's defaults (dimension read at run time,
/// blocking 4 for the mult and 2 for the transposed operator, no unrolling), else one compiled
/// by NVRTC with `#define`s, once per process and cached on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StreamConfig {
    /// Threads per block (the thesis's local-size): a multiple of 32 up to 1024.
    pub block_size: u32,
    /// Items per thread (compile time): data points of the mult (data-block), grid points of
    /// the transposed operator (grid-block); 1 ..= [`MAX_BLOCK`]. The mass kernel has one row
    /// per thread and needs 1.
    pub block: u32,
    /// Column split (grid-split of the mult, data-split of the transposed and mass kernels):
    /// the streamed range is cut into `split` pieces run by separate blocks whose partial sums
    /// meet in atomics; 1 ..= [`MAX_SPLIT`], or 0 to pick one that gives every SM a few blocks.
    pub split: u32,
    /// Unroll factor of the dimension loop (max-dim-unroll, compile time); 0 unrolls it fully,
    /// which needs `specialize` (without, 0 means 1).
    pub unroll: u32,
    /// Streamed items staged in shared memory per refill (prefetch-size), at least 1.
    pub prefetch: u32,
    /// Stage the streamed items in shared memory (use-local-memory), or read them through the
    /// caches.
    pub use_shared: bool,
    /// Compile the dimension into the kernel (the thesis passes it as a constant), so the
    /// per-thread coordinates or levels sit in registers; without, the embedded kernel reads
    /// them from memory.
    pub specialize: bool,
}

impl StreamConfig {
    /// The defaults of the mult: 128 threads of 4 data points, automatic split, full unroll,
    /// 64 grid points per refill.
    pub const MULT: StreamConfig = StreamConfig {
        block_size: 128,
        block: 4,
        split: 0,
        unroll: 0,
        prefetch: 64,
        use_shared: true,
        specialize: true,
    };
    /// The defaults of the transposed operator: 2 grid points per thread (each holds `2d`
    /// values in registers), otherwise as [`MULT`](Self::MULT).
    pub const TRANSPOSED: StreamConfig = StreamConfig { block: 2, ..Self::MULT };
    /// The defaults of the mass kernel.
    pub const MASS: StreamConfig = StreamConfig { block: 1, ..Self::MULT };
    /// The embedded module's kernel for `kernel` (nothing compiled at run time): dimension
    /// read at run time, the `.cu` file's blocking, no unrolling.
    pub const fn generic(kernel: LearnKernel) -> StreamConfig {
        let block = match kernel {
            LearnKernel::Mult => 4,
            LearnKernel::Transposed => 2,
            LearnKernel::Mass => 1,
        };
        StreamConfig { block, unroll: 1, specialize: false, ..Self::MULT }
    }

    /// The default of `kernel`.
    pub const fn default_for(kernel: LearnKernel) -> StreamConfig {
        match kernel {
            LearnKernel::Mult => Self::MULT,
            LearnKernel::Transposed => Self::TRANSPOSED,
            LearnKernel::Mass => Self::MASS,
        }
    }

    /// Checks the parameters for `kernel`.
    ///
    /// # Errors
    /// [`Error::Config`] saying which parameter is out of range.
    pub fn validate(&self, kernel: LearnKernel) -> Result<()> {
        let bs = self.block_size;
        if bs == 0 || bs > 1024 || !bs.is_multiple_of(32) {
            return Err(Error::Config(format!("block size {bs} (a multiple of 32 up to 1024)")));
        }
        let max_block = if kernel == LearnKernel::Mass { 1 } else { MAX_BLOCK };
        if self.block == 0 || self.block > max_block {
            return Err(Error::Config(format!("{} items per thread (1..={max_block})", self.block)));
        }
        if self.split > MAX_SPLIT {
            return Err(Error::Config(format!(
                "split {} (0 for automatic, else 1..={MAX_SPLIT})",
                self.split
            )));
        }
        if self.prefetch == 0 || self.prefetch > 4096 {
            return Err(Error::Config(format!("prefetch {} (1..=4096)", self.prefetch)));
        }
        if self.unroll > 64 {
            return Err(Error::Config(format!("unroll {} (0 for full, else 1..=64)", self.unroll)));
        }
        Ok(())
    }

    /// The tuning space of `kernel`: Table 7.2's values (local-size {64, 128, 256}, blocking
    /// {1, 2, 4, 8}, split {1, 2, 4, 8} plus 0 for automatic, unroll {1, 2, 4} plus 0 for full,
    /// prefetch {16, 32, 64, 128}, shared memory on or off) and `specialize`; the mass kernel's
    /// blocking is fixed at 1. Full unrolling needs `specialize`. The transfer-whole-* parameters
    /// of the thesis concern several devices and have no place here.
    pub fn space(kernel: LearnKernel) -> &'static Space {
        static SPACES: [OnceLock<Space>; 3] = [OnceLock::new(), OnceLock::new(), OnceLock::new()];
        SPACES[kernel as usize].get_or_init(|| {
            let blocks: &[i64] = if kernel == LearnKernel::Mass { &[1] } else { &[1, 2, 4, 8] };
            Space::builder()
                .param(Param::ints("block_size", &[64, 128, 256]))
                .param(Param::ints("block", blocks))
                .param(Param::ints("split", &[0, 1, 2, 4, 8]))
                .param(Param::ints("unroll", &[0, 1, 2, 4]))
                .param(Param::ints("prefetch", &[16, 32, 64, 128]))
                .param(Param::boolean("use_shared"))
                .param(Param::boolean("specialize"))
                .constraint(Constraint::custom("full unroll needs the dimension compiled in", |c| {
                    c.int("unroll") != Some(0) || c.get("specialize").and_then(Value::as_bool) == Some(true)
                }))
                .build()
                .expect("the learning kernels' tuning spaces are well-formed")
        })
    }

    /// As a configuration of [`space`](Self::space).
    pub fn to_config(&self) -> Config {
        let int = |v: u32| Value::Int(i64::from(v));
        Config::new(vec![
            ("block_size".into(), int(self.block_size)),
            ("block".into(), int(self.block)),
            ("split".into(), int(self.split)),
            ("unroll".into(), int(self.unroll)),
            ("prefetch".into(), int(self.prefetch)),
            ("use_shared".into(), Value::Bool(self.use_shared)),
            ("specialize".into(), Value::Bool(self.specialize)),
        ])
    }

    /// From a configuration; `None` when a parameter is missing or out of range for `kernel`.
    pub fn from_config(kernel: LearnKernel, c: &Config) -> Option<Self> {
        let int = |n| c.int(n).and_then(|v| u32::try_from(v).ok());
        let flag = |n| c.get(n).and_then(Value::as_bool);
        let s = StreamConfig {
            block_size: int("block_size")?,
            block: int("block")?,
            split: int("split")?,
            unroll: int("unroll")?,
            prefetch: int("prefetch")?,
            use_shared: flag("use_shared")?,
            specialize: flag("specialize")?,
        };
        s.validate(kernel).is_ok().then_some(s)
    }

    /// What `kernel` runs on `gpu` for `work` basis evaluations (`m · N` or `N²`) of `T`: the
    /// configuration tuned on this GPU model ([`fingerprint`]) for that size bucket, from the
    /// user's tuning cache (read once per key and process), else the default. With
    /// `HETKIT_NO_TUNING_CACHE=1` always the default.
    pub fn for_device<T>(gpu: &Gpu, kernel: LearnKernel, work: u64) -> Self {
        type Key = (String, LearnKernel, &'static str, u32);
        static MEMO: OnceLock<RwLock<HashMap<Key, StreamConfig>>> = OnceLock::new();
        static CACHE: OnceLock<Option<TuningCache>> = OnceLock::new();
        let default = Self::default_for(kernel);
        let fp = fingerprint(gpu);
        let key: Key = (fp.as_str().to_string(), kernel, std::any::type_name::<T>(), bucket_exp(work));
        let memo = MEMO.get_or_init(Default::default);
        if let Some(c) = memo.read().unwrap_or_else(|p| p.into_inner()).get(&key) {
            return *c;
        }
        let cache = CACHE.get_or_init(|| {
            let off = std::env::var(NO_CACHE_ENV).is_ok_and(|v| matches!(v.trim(), "1" | "true" | "yes"));
            if off { None } else { TuningCache::open_default().ok() }
        });
        let found = cache.as_ref().and_then(|c| {
            let ck = CacheKey::new(kernel.cache_name(), &fp, key.2, &size_bucket(work));
            c.lookup(&ck, Self::space(kernel)).and_then(|cfg| Self::from_config(kernel, &cfg))
        });
        let cfg = found.unwrap_or(default);
        memo.write().unwrap_or_else(|p| p.into_inner()).insert(key, cfg);
        cfg
    }

    /// Dynamic shared memory of one block of `kernel` at dimension `d` for elements of
    /// `elem_bytes` bytes (0 without staging).
    pub(crate) fn shared_bytes(&self, kernel: LearnKernel, d: usize, elem_bytes: usize) -> usize {
        if self.use_shared { kernel.staged_per_item(d) * self.prefetch as usize * elem_bytes } else { 0 }
    }
}

/// The parameters in one line, for messages and benches.
impl std::fmt::Display for StreamConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "bs {} block {} split {} unroll {} prefetch {}{}{}",
            self.block_size,
            self.block,
            self.split,
            self.unroll,
            self.prefetch,
            if self.use_shared { " shared" } else { "" },
            if self.specialize { " specialized" } else { "" }
        )
    }
}

/// The parameters of both regression operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LearnConfig {
    /// Of `v = B α`.
    pub mult: StreamConfig,
    /// Of `v' = Bᵀ v`.
    pub transposed: StreamConfig,
}

impl Default for LearnConfig {
    fn default() -> Self {
        LearnConfig { mult: StreamConfig::MULT, transposed: StreamConfig::TRANSPOSED }
    }
}

impl LearnConfig {
    /// Both operators on the embedded module's kernels (nothing compiled at run time).
    pub const GENERIC: LearnConfig = LearnConfig {
        mult: StreamConfig::generic(LearnKernel::Mult),
        transposed: StreamConfig::generic(LearnKernel::Transposed),
    };

    /// The tuned-or-default configurations on `gpu` for `m` data and `n` grid points of `T`
    /// ([`StreamConfig::for_device`]).
    pub fn for_problem<T>(gpu: &Gpu, m: usize, n: usize) -> Self {
        let work = (m as u64).saturating_mul(n as u64);
        LearnConfig {
            mult: StreamConfig::for_device::<T>(gpu, LearnKernel::Mult, work),
            transposed: StreamConfig::for_device::<T>(gpu, LearnKernel::Transposed, work),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hetero_sched::tune::Domain;

    #[test]
    fn defaults_are_valid_points_of_their_spaces_and_round_trip() {
        for k in [LearnKernel::Mult, LearnKernel::Transposed, LearnKernel::Mass] {
            for cfg in [StreamConfig::default_for(k), StreamConfig::generic(k)] {
                let space = StreamConfig::space(k);
                let c = cfg.to_config();
                assert!(space.point_of(&c).is_some_and(|p| space.is_valid(&p)), "{k:?} {cfg:?}");
                assert_eq!(StreamConfig::from_config(k, &c), Some(cfg));
            }
        }
    }

    #[test]
    fn spaces_have_the_thesis_sizes() {
        // 3 · 4 · 5 · 4 · 4 · 2 · 2 = 3840 points, minus full unroll without specialisation
        // (3 · 4 · 5 · 4 · 2 = 480); the mass kernel has one blocking.
        assert_eq!(StreamConfig::space(LearnKernel::Mult).count_valid(), 3840 - 480);
        assert_eq!(StreamConfig::space(LearnKernel::Mass).count_valid(), (3840 - 480) / 4);
    }

    #[test]
    fn bad_parameters_are_errors() {
        let k = LearnKernel::Mult;
        for bad in [
            StreamConfig { block_size: 100, ..StreamConfig::MULT },
            StreamConfig { block_size: 2048, ..StreamConfig::MULT },
            StreamConfig { block: 0, ..StreamConfig::MULT },
            StreamConfig { block: 17, ..StreamConfig::MULT },
            StreamConfig { split: 65, ..StreamConfig::MULT },
            StreamConfig { prefetch: 0, ..StreamConfig::MULT },
        ] {
            assert!(matches!(bad.validate(k), Err(Error::Config(_))), "{bad:?}");
            assert_eq!(StreamConfig::from_config(k, &bad.to_config()), None);
        }
        assert!(StreamConfig { block: 2, ..StreamConfig::MASS }.validate(LearnKernel::Mass).is_err());
    }
}
