//! The GPU look-back scan's tuning parameters, declared as a [`hetero_sched::tune`] space next
//! to its launch code.
//!
//! Items per thread, threads per block and the warp network are template parameters of the
//! kernel, so a configuration other than the default is compiled by NVRTC from
//! `prefix/scan_tuned.cu` with the parameters as defines (one module per configuration and
//! device, cached in memory and on disk by the runtime). The default is the shape of the
//! embedded kernels ([`Shape::lookback`]): 256 threads, 16 items for 4-byte and 8 for 8-byte
//! types, Kogge-Stone.

use std::sync::OnceLock;

use hetero_sched::tune::dispatch::{Bucket, Tunable};
use hetero_sched::tune::{Config, Constraint, Param, Space, Value};

use super::emulate::{Network, Shape};

/// The kernel's name in the tuning cache.
pub const KERNEL: &str = "prefix_ops::scan_gpu";

/// Largest tile (threads x items) of the space: the kernel's static shared memory for 8-byte
/// elements (`threads / 32 * 33 * items * 8` bytes) stays under the 48 KiB of a block.
const MAX_TILE: i64 = 4096;

/// Arrays of at most one default tile run one block whatever the shape: not looked up.
const MIN_TUNED_LEN: usize = 4096;

/// Parameters of the GPU look-back scan of one array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GpuScanTuning {
    /// Threads, items per thread and warp network.
    pub shape: Shape,
}

impl Default for GpuScanTuning {
    /// The 4-byte default ([`Tunable::fallback`] gives each element size its own).
    fn default() -> Self {
        GpuScanTuning { shape: Shape::lookback(4) }
    }
}

impl GpuScanTuning {
    /// The embedded kernels' shape for elements of `bytes` bytes.
    pub fn default_for(bytes: usize) -> Self {
        GpuScanTuning { shape: Shape::lookback(bytes) }
    }

    /// The `#define` lines of `prefix/scan_tuned.cu` for the C type `c_type` and operator
    /// functor `functor` (`AddOp`, ...).
    pub(crate) fn defines(&self, c_type: &str, functor: &str) -> String {
        let net = match self.shape.network {
            Network::KoggeStone => "KOGGE_STONE",
            Network::Sklansky => "SKLANSKY",
            Network::LadnerFischer => "LADNER_FISCHER",
        };
        format!(
            "#define HK_TUNE_T {c_type}\n#define HK_TUNE_OP {functor}\n#define HK_TUNE_THREADS {}\n\
             #define HK_TUNE_P {}\n#define HK_TUNE_NET {net}\n",
            self.shape.threads, self.shape.items
        )
    }
}

fn network_of(name: &str) -> Option<Network> {
    [Network::KoggeStone, Network::Sklansky, Network::LadnerFischer].into_iter().find(|n| n.suffix() == name)
}

/// Tuned per device, element type and length bucket (shape: `(n, element bytes)`).
impl Tunable for GpuScanTuning {
    const KERNEL: &'static str = KERNEL;
    type Shape = (usize, usize);

    /// `items_per_thread` in {4, 8, 16}, `threads` in {128, 256, 512}, `network` in {ks, sk,
    /// lf}; tiles of at most 4096 elements.
    fn space() -> &'static Space {
        static SPACE: OnceLock<Space> = OnceLock::new();
        SPACE.get_or_init(|| {
            Space::builder()
                .param(Param::ints("items_per_thread", &[4, 8, 16]))
                .param(Param::ints("threads", &[128, 256, 512]))
                .param(Param::names("network", &["ks", "sk", "lf"]))
                .constraint(Constraint::custom("tile <= 4096", |c| {
                    c.int("items_per_thread").unwrap_or(0) * c.int("threads").unwrap_or(0) <= MAX_TILE
                }))
                .build()
                .expect("the GPU scan's tuning space is well-formed")
        })
    }

    fn to_config(&self) -> Config {
        Config::new(vec![
            ("items_per_thread".into(), Value::Int(self.shape.items as i64)),
            ("threads".into(), Value::Int(self.shape.threads as i64)),
            ("network".into(), Value::Str(self.shape.network.suffix().into())),
        ])
    }

    /// `None` unless threads are a multiple of 32 up to 1024, items positive and the tile
    /// within the kernel's shared memory.
    fn from_config(c: &Config) -> Option<Self> {
        let get = |n| c.int(n).filter(|&v| v > 0).and_then(|v| usize::try_from(v).ok());
        let (items, threads) = (get("items_per_thread")?, get("threads")?);
        let network = match c.get("network")? {
            Value::Str(s) => network_of(s)?,
            _ => return None,
        };
        let ok = threads % 32 == 0 && threads <= 1024 && (items * threads) as i64 <= MAX_TILE;
        ok.then_some(GpuScanTuning { shape: Shape { threads, items, network } })
    }

    fn bucket((n, _): (usize, usize)) -> Option<Bucket> {
        (n > MIN_TUNED_LEN).then(|| Bucket::len(n as u64))
    }

    fn fallback((_, bytes): (usize, usize)) -> Self {
        Self::default_for(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hetero_sched::tune::Domain;

    #[test]
    fn defaults_are_in_the_space_and_round_trip() {
        for bytes in [4, 8] {
            let t = GpuScanTuning::default_for(bytes);
            let space = GpuScanTuning::space();
            let c = t.to_config();
            assert!(space.point_of(&c).is_some_and(|p| space.is_valid(&p)));
            assert_eq!(GpuScanTuning::from_config(&c), Some(t));
        }
    }

    #[test]
    fn tiles_past_the_shared_memory_are_invalid() {
        let space = GpuScanTuning::space();
        let big = GpuScanTuning { shape: Shape { threads: 512, items: 16, network: Network::KoggeStone } };
        assert!(space.point_of(&big.to_config()).is_some_and(|p| !space.is_valid(&p)));
        assert_eq!(GpuScanTuning::from_config(&big.to_config()), None);
        assert_eq!(space.count_valid(), 8 * 3);
    }

    #[test]
    fn defines_name_the_template_parameters() {
        let t = GpuScanTuning { shape: Shape { threads: 128, items: 4, network: Network::Sklansky } };
        let d = t.defines("double", "MaxOp");
        for want in
            ["HK_TUNE_T double", "HK_TUNE_OP MaxOp", "HK_TUNE_THREADS 128", "HK_TUNE_P 4", "NET SKLANSKY"]
        {
            assert!(d.contains(want), "{d}");
        }
    }
}
