//! CUDA-event timing for benchmarks and tuning tables.

use cudarc::driver::CudaEvent;
use cudarc::driver::sys::CUevent_flags;

use crate::error::Result;
use crate::gpu::Gpu;

/// Times work queued on a [`Gpu`]'s stream with a pair of CUDA events.
#[derive(Debug)]
pub struct GpuTimer {
    start: CudaEvent,
    stop: CudaEvent,
}

/// Summary of repeated timings, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimingStats {
    /// Median over the timed runs.
    pub median_ms: f64,
    /// Fastest run.
    pub min_ms: f64,
    /// Slowest run.
    pub max_ms: f64,
    /// Number of timed runs.
    pub runs: usize,
}

impl GpuTimer {
    /// Two events on `gpu`'s context, with timing enabled.
    pub fn new(gpu: &Gpu) -> Result<Self> {
        let ctx = gpu.context();
        // cudarc's default flags disable timing.
        let timed = Some(CUevent_flags::CU_EVENT_DEFAULT);
        Ok(GpuTimer { start: ctx.new_event(timed)?, stop: ctx.new_event(timed)? })
    }

    /// Milliseconds the work `f` queues on `gpu`'s stream takes on the device.
    pub fn time<F: FnMut() -> Result<()>>(&self, gpu: &Gpu, mut f: F) -> Result<f64> {
        self.start.record(gpu.stream())?;
        f()?;
        self.stop.record(gpu.stream())?;
        self.stop.synchronize()?;
        Ok(self.start.elapsed_ms(&self.stop)? as f64)
    }

    /// `warmup` untimed runs of `f`, then `runs` timed ones.
    pub fn stats<F: FnMut() -> Result<()>>(
        &self,
        gpu: &Gpu,
        warmup: usize,
        runs: usize,
        mut f: F,
    ) -> Result<TimingStats> {
        for _ in 0..warmup {
            f()?;
        }
        let mut times = Vec::with_capacity(runs.max(1));
        for _ in 0..runs.max(1) {
            times.push(self.time(gpu, &mut f)?);
        }
        times.sort_by(f64::total_cmp);
        Ok(TimingStats {
            median_ms: times[times.len() / 2],
            min_ms: times[0],
            max_ms: times[times.len() - 1],
            runs: times.len(),
        })
    }
}
