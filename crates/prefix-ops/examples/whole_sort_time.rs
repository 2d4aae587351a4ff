//! Times `sort::whole` on 2^24 keys (u32 uniform, f32 uniform in [-1e6, 1e6]) and
//! `sort::whole_by_key` (f32 keys, u32 values): median wall clock of REPS calls per case.
//!
//!   cargo run --release -p prefix-ops --example whole_sort_time [REPS] [LOG2_N]
//!
//! With `CPU=1` it reports the process's CPU time (user + system, every thread) of each call
//! instead of wall clock: on a loaded machine, with `RAYON_NUM_THREADS=1`, the steadier measure.

use std::time::Instant;

use prefix_ops::sort::{self, Order};

fn splitmix(s: &mut u64) -> u64 {
    *s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *s;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The process's CPU time so far, in milliseconds (0 where there is no such clock).
fn cpu_ms() -> f64 {
    #[cfg(target_os = "linux")]
    {
        let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: `t` is a valid timespec to write; the clock id is a constant the kernel knows.
        unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut t) };
        t.tv_sec as f64 * 1e3 + t.tv_nsec as f64 * 1e-6
    }
    #[cfg(not(target_os = "linux"))]
    0.0
}

fn median(f: &mut dyn FnMut() -> f64, reps: usize) -> f64 {
    let mut t: Vec<f64> = (0..reps).map(|_| f()).collect();
    t.sort_by(f64::total_cmp);
    t[reps / 2]
}

fn main() {
    let args: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let reps = args.first().copied().unwrap_or(5);
    let n = 1usize << args.get(1).copied().unwrap_or(24);
    let mut s = 1;
    let u: Vec<u32> = (0..n).map(|_| splitmix(&mut s) as u32).collect();
    let f: Vec<f32> =
        (0..n).map(|_| ((splitmix(&mut s) >> 11) as f64 / (1u64 << 53) as f64 * 2e6 - 1e6) as f32).collect();
    let cpu = std::env::var("CPU").is_ok_and(|v| v == "1");
    let time = |run: &mut dyn FnMut()| {
        let (t, c) = (Instant::now(), cpu_ms());
        run();
        if cpu { cpu_ms() - c } else { t.elapsed().as_secs_f64() * 1e3 }
    };
    let u_ms = median(
        &mut || {
            let mut v = u.clone();
            let ms = time(&mut || sort::whole(&mut v, Order::Ascending));
            assert!(v.is_sorted());
            ms
        },
        reps,
    );
    let f_ms = median(
        &mut || {
            let mut v = f.clone();
            let ms = time(&mut || sort::whole(&mut v, Order::Ascending));
            assert!(v.is_sorted_by(|a, b| a <= b));
            ms
        },
        reps,
    );
    let kv_ms = median(
        &mut || {
            let (mut k, mut x) = (f.clone(), (0..n as u32).collect::<Vec<u32>>());
            let ms = time(&mut || sort::whole_by_key(&mut k, &mut x, Order::Ascending).unwrap());
            assert!(k.is_sorted_by(|a, b| a <= b));
            ms
        },
        reps,
    );
    println!("n=2^{} u32 {u_ms:.1} ms  f32 {f_ms:.1} ms  kv_f32 {kv_ms:.1} ms", n.trailing_zeros());
}
