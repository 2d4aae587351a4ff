//! `hetkit info`.

use hetero_sched::tune::{TuningCache, cpu_model};

type Error = Box<dyn std::error::Error + Send + Sync>;

/// Prints devices, the compile path and the tuning cache.
pub(crate) fn run() -> Result<(), Error> {
    println!("Devices");
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "  CPU: {} ({threads} hardware threads, rayon pool {})",
        cpu_model(),
        rayon::current_num_threads()
    );
    gpus();
    println!();
    println!("Compile path");
    if cuda_kernels::nvcc_ptx_embedded() {
        println!("  PTX by nvcc, embedded at build time (NVRTC as fallback)");
    } else {
        let nvrtc = if cuda_kernels::nvrtc_present() { "found" } else { "not found" };
        println!("  NVRTC at run time (no nvcc at build time; libnvrtc {nvrtc})");
    }
    println!();
    cache()
}

fn gpus() {
    if !cuda_kernels::driver_present() {
        println!("  GPU: none (no CUDA driver found)");
        return;
    }
    let mut n = 0;
    loop {
        match cuda_kernels::Gpu::new(n) {
            Ok(gpu) => println!("  GPU {n}: {}", gpu.props()),
            Err(e) if n == 0 => {
                println!("  GPU: none ({e})");
                return;
            }
            Err(_) => return,
        }
        n += 1;
    }
}

fn cache() -> Result<(), Error> {
    println!("Tuning cache");
    let dir = match TuningCache::default_dir() {
        Ok(d) => d,
        Err(e) => {
            println!("  location: unknown ({e})");
            return Ok(());
        }
    };
    println!("  location: {}", dir.display());
    let files = TuningCache::at(&dir).files();
    if files.is_empty() {
        println!("  (empty)");
    }
    for f in files {
        match f {
            Ok(i) => {
                let best = i
                    .best
                    .map_or("no successful entry".to_owned(), |(t, k)| format!("best {t:.4} ms at {k}"));
                println!(
                    "  {} on {} ({}): {} entries, {} succeeded, {best}",
                    i.kernel, i.device, i.problem, i.entries, i.succeeded
                );
            }
            Err(e) => println!("  unreadable: {e}"),
        }
    }
    Ok(())
}
