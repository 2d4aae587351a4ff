//! The GPU tridiagonal dispatcher's tuning parameters, declared as a [`hetero_sched::tune`]
//! space next to its launch code: the algorithm a dominant batch runs (per layout, system size
//! and batch size), its reduction parameter, and the block size of the one-thread-per-system
//! kernels. The default is the provisional table of [`choose`](super::gpu::choose) with blocks
//! of 128 threads.

use std::sync::OnceLock;

use hetero_sched::tune::dispatch::{Bucket, Tunable};
use hetero_sched::tune::{Config, Constraint, Param, Space, Value};

use super::batch::Layout;
use super::solve::Solver;

/// The kernel's name in the tuning cache.
pub const KERNEL: &str = "prefix_ops::tridiagonal_gpu";

/// `pcr_size` when the algorithm is not CR-PCR and `tpr_slice` when it is not TPR: unused
/// parameters sit at one value, so the space holds no duplicate configurations.
const IDLE_PCR: i64 = 64;
const IDLE_SLICE: i64 = 512;

/// Parameters of a GPU solve of a dominant batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GpuTridiagonalTuning {
    /// [`Solver::Thomas`], [`Solver::CrPcr`] or [`Solver::Tpr`], with its parameter.
    pub solver: Solver,
    /// Threads per block of the one-thread-per-system kernels (Thomas, pivoting, TPR's
    /// per-system stage).
    pub threads: u32,
}

impl Default for GpuTridiagonalTuning {
    fn default() -> Self {
        GpuTridiagonalTuning { solver: Solver::CrPcr { pcr_size: 64 }, threads: 128 }
    }
}

impl GpuTridiagonalTuning {
    /// The untuned choice on an H100: the provisional table of [`choose`](super::gpu::choose),
    /// 128 threads.
    pub fn default_for(m: usize, systems: usize, layout: Layout, elem_bytes: usize) -> Self {
        GpuTridiagonalTuning { solver: super::gpu::choose(m, systems, layout, elem_bytes), threads: 128 }
    }

    /// The untuned choice on a device of `sm_count` SMs:
    /// [`choose_on`](super::gpu::choose_on), 128 threads.
    pub fn default_on(sm_count: u32, m: usize, systems: usize, layout: Layout, elem_bytes: usize) -> Self {
        GpuTridiagonalTuning {
            solver: super::gpu::choose_on(sm_count, m, systems, layout, elem_bytes),
            threads: 128,
        }
    }
}

fn algorithm(c: &Config) -> Option<&str> {
    match c.get("algorithm")? {
        Value::Str(s) => Some(s),
        _ => None,
    }
}

/// Tuned per device, element type, layout, system size and batch size (shape:
/// `(layout, m, systems, element bytes, the device's SM count)`; the SM count only feeds the
/// untuned default, and is one value per device, whose fingerprint keys the tuned results).
impl Tunable for GpuTridiagonalTuning {
    const KERNEL: &'static str = KERNEL;
    type Shape = (Layout, usize, usize, usize, u32);

    /// `algorithm` in {thomas, cr_pcr, tpr}, `pcr_size` in {16, 64, 256}, `tpr_slice` in
    /// {256, 512, 1024}, `threads` in {64, 128, 256}; a parameter the algorithm does not use
    /// stays at its middle value.
    fn space() -> &'static Space {
        static SPACE: OnceLock<Space> = OnceLock::new();
        SPACE.get_or_init(|| {
            Space::builder()
                .param(Param::names("algorithm", &["thomas", "cr_pcr", "tpr"]))
                .param(Param::ints("pcr_size", &[16, IDLE_PCR, 256]))
                .param(Param::ints("tpr_slice", &[256, IDLE_SLICE, 1024]))
                .param(Param::ints("threads", &[64, 128, 256]))
                .constraint(Constraint::custom("unused parameters idle", |c| {
                    let alg = c.get("algorithm").and_then(|v| v.as_str()).unwrap_or("");
                    (alg == "cr_pcr" || c.int("pcr_size") == Some(IDLE_PCR))
                        && (alg == "tpr" || c.int("tpr_slice") == Some(IDLE_SLICE))
                }))
                .build()
                .expect("the GPU tridiagonal tuning space is well-formed")
        })
    }

    fn to_config(&self) -> Config {
        let (alg, pcr, slice) = match self.solver {
            Solver::Thomas => ("thomas", IDLE_PCR, IDLE_SLICE),
            Solver::CrPcr { pcr_size } => ("cr_pcr", pcr_size as i64, IDLE_SLICE),
            Solver::Tpr { slice } => ("tpr", IDLE_PCR, slice as i64),
            // Not produced by `from_config` or the defaults; kept total for hand-made values.
            _ => ("thomas", IDLE_PCR, IDLE_SLICE),
        };
        Config::new(vec![
            ("algorithm".into(), Value::Str(alg.into())),
            ("pcr_size".into(), Value::Int(pcr)),
            ("tpr_slice".into(), Value::Int(slice)),
            ("threads".into(), Value::Int(i64::from(self.threads))),
        ])
    }

    /// `None` for an unknown algorithm, a non-positive size or threads not a multiple of 32
    /// up to 1024.
    fn from_config(c: &Config) -> Option<Self> {
        let get = |n| c.int(n).filter(|&v| v > 0).and_then(|v| usize::try_from(v).ok());
        let solver = match algorithm(c)? {
            "thomas" => Solver::Thomas,
            "cr_pcr" => Solver::CrPcr { pcr_size: get("pcr_size")? },
            "tpr" => Solver::Tpr { slice: get("tpr_slice")? },
            _ => return None,
        };
        let threads = u32::try_from(get("threads")?).ok().filter(|t| t % 32 == 0 && *t <= 1024)?;
        Some(GpuTridiagonalTuning { solver, threads })
    }

    fn bucket((layout, m, systems, _, _): Self::Shape) -> Option<Bucket> {
        let tag = match layout {
            Layout::Strided => "strided",
            Layout::Interleaved => "interleaved",
        };
        Some(Bucket::tagged(tag, m as u64, systems as u64))
    }

    fn fallback((layout, m, systems, bytes, sms): Self::Shape) -> Self {
        Self::default_on(sms, m, systems, layout, bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hetero_sched::tune::Domain;

    #[test]
    fn defaults_are_in_the_space_and_round_trip() {
        let space = GpuTridiagonalTuning::space();
        for (m, g, layout, bytes) in
            [(64, 10, Layout::Strided, 4), (64, 5000, Layout::Interleaved, 8), (5000, 3, Layout::Strided, 4)]
        {
            let t = GpuTridiagonalTuning::default_for(m, g, layout, bytes);
            let c = t.to_config();
            assert!(space.point_of(&c).is_some_and(|p| space.is_valid(&p)), "{c:?}");
            assert_eq!(GpuTridiagonalTuning::from_config(&c), Some(t));
        }
        // 3 algorithms' own parameters times 3 block sizes.
        assert_eq!(space.count_valid(), (1 + 3 + 3) * 3);
    }

    #[test]
    fn bad_configurations_are_rejected() {
        let mut c = GpuTridiagonalTuning::default().to_config();
        let pairs: Vec<(String, Value)> = c
            .pairs()
            .iter()
            .map(|(k, v)| (k.clone(), if k == "threads" { Value::Int(100) } else { v.clone() }))
            .collect();
        c = Config::new(pairs);
        assert_eq!(GpuTridiagonalTuning::from_config(&c), None);
    }
}
