//! Fakes shared by the split tests: a GPU stand-in and an operation that counts how often each
//! item is processed.

#![allow(dead_code, unreachable_pub)]

use std::ops::Range;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

use hetero_sched::split::{BoxError, Device, DeviceKind, Splittable};

/// A "GPU" with `lanes` streams whose work runs on the calling thread.
#[derive(Debug)]
pub struct FakeGpu {
    pub lanes: usize,
    pub name: String,
}

impl FakeGpu {
    pub fn new(lanes: usize) -> Self {
        FakeGpu { lanes, name: format!("fake-gpu-{lanes}") }
    }
}

impl Device for FakeGpu {
    fn kind(&self) -> DeviceKind {
        DeviceKind::Gpu
    }
    fn fingerprint(&self) -> String {
        self.name.clone()
    }
    fn workers(&self) -> usize {
        1
    }
    fn lanes(&self) -> usize {
        self.lanes
    }
    fn spawn_workers(&self, f: &(dyn Fn(usize) + Sync)) {
        f(0)
    }
}

/// f(i) = 3i + 1, counted per item; the "GPU" path computes on complete and logs lane order.
#[derive(Debug)]
pub struct Counting {
    pub n: usize,
    pub hits: Vec<AtomicU32>,
    pub submits: Mutex<Vec<(usize, Range<usize>)>>,
    pub fail_at: Option<usize>,
    pub panic_at: Option<usize>,
    pub gpu: bool,
    pub whole: bool,
    pub cpu_calls: AtomicUsize,
    /// Submissions beyond this many fail.
    pub submit_limit: usize,
    pub completes: AtomicUsize,
}

pub struct FakeLane {
    pub id: usize,
    pub pending: Option<Range<usize>>,
}

impl Counting {
    pub fn new(n: usize) -> Self {
        Counting {
            n,
            hits: (0..n).map(|_| AtomicU32::new(0)).collect(),
            submits: Mutex::new(Vec::new()),
            fail_at: None,
            panic_at: None,
            gpu: true,
            whole: false,
            cpu_calls: AtomicUsize::new(0),
            submit_limit: usize::MAX,
            completes: AtomicUsize::new(0),
        }
    }

    pub fn expected(&self) -> Vec<u64> {
        (0..self.n as u64).map(|i| 3 * i + 1).collect()
    }

    fn process(&self, r: Range<usize>) -> Result<Vec<u64>, BoxError> {
        if let Some(f) = self.fail_at.filter(|f| r.contains(f)) {
            return Err(format!("item {f} failed").into());
        }
        if let Some(p) = self.panic_at.filter(|p| r.contains(p)) {
            panic!("item {p} panicked");
        }
        for i in r.clone() {
            self.hits[i].fetch_add(1, Ordering::Relaxed);
        }
        Ok(r.map(|i| 3 * i as u64 + 1).collect())
    }

    pub fn all_once(&self) -> bool {
        self.hits.iter().all(|h| h.load(Ordering::Relaxed) == 1)
    }
}

impl Splittable for Counting {
    type Output = Vec<u64>;
    type Lane = FakeLane;

    fn items(&self) -> usize {
        self.n
    }

    fn run_cpu(&self, range: Range<usize>) -> Result<Vec<u64>, BoxError> {
        self.cpu_calls.fetch_add(1, Ordering::Relaxed);
        self.process(range)
    }

    fn cpu_splits_itself(&self) -> bool {
        self.whole
    }

    fn has_gpu(&self) -> bool {
        self.gpu
    }

    fn open_lane(&self, _device: &dyn Device, lane: usize) -> Result<FakeLane, BoxError> {
        Ok(FakeLane { id: lane, pending: None })
    }

    fn submit(&self, lane: &mut FakeLane, range: Range<usize>) -> Result<(), BoxError> {
        assert!(lane.pending.is_none(), "submit on a lane with a pending range");
        let mut submits = self.submits.lock().unwrap();
        if submits.len() >= self.submit_limit {
            return Err("submit refused".into());
        }
        submits.push((lane.id, range.clone()));
        lane.pending = Some(range);
        Ok(())
    }

    fn complete(&self, lane: &mut FakeLane) -> Result<Vec<u64>, BoxError> {
        let r = lane.pending.take().ok_or("complete without submit")?;
        self.completes.fetch_add(1, Ordering::Relaxed);
        self.process(r)
    }
}

/// A CPU device of one thread that sleeps after every grain: slow enough that a GPU stand-in
/// always gets work, however fast the items are.
#[derive(Debug)]
pub struct Sleepy {
    pub pause: std::time::Duration,
}

impl Device for Sleepy {
    fn kind(&self) -> DeviceKind {
        DeviceKind::Cpu
    }
    fn fingerprint(&self) -> String {
        "sleepy-cpu".into()
    }
    fn workers(&self) -> usize {
        1
    }
    fn spawn_workers(&self, f: &(dyn Fn(usize) + Sync)) {
        f(0)
    }
    fn run_grain(&self, f: &mut dyn FnMut()) {
        f();
        std::thread::sleep(self.pause);
    }
}
