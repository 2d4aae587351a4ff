use cuda_kernels::{
    CompilePath, Error, Gpu, Kernel, LaunchConfig, PushKernelArg, axpy, axpy_cpu, driver_present,
    embedded_modules, nvcc_ptx_embedded,
};
use hetkit_testkit::{assert_close, gpu_or_skip, rng};
use rand::Rng;

#[test]
fn gpu_new_reports_missing_driver_without_panicking() {
    match Gpu::new(0) {
        Err(Error::NoDriver) => assert!(!driver_present(), "NoDriver although libcuda loads"),
        Err(Error::NoDevice { ordinal, .. }) => assert_eq!(ordinal, 0),
        Ok(gpu) => assert!(gpu.props().sm_count > 0),
        Err(e) => panic!("unexpected error: {e}"),
    }
    if !driver_present() {
        assert!(matches!(Gpu::new(0), Err(Error::NoDriver)));
        assert!(matches!(Gpu::new(7), Err(Error::NoDriver)));
    }
}

#[test]
fn far_ordinal_is_no_device() {
    if let Err(e) = Gpu::new(10_000) {
        assert!(e.is_no_gpu(), "{e}");
    } else {
        panic!("device 10000 exists?");
    }
}

#[test]
fn every_kernel_file_is_embedded_with_source() {
    let names: Vec<_> = embedded_modules().iter().map(|m| m.name).collect();
    assert!(names.contains(&"blas/axpy"), "{names:?}");
    for m in embedded_modules() {
        assert!(!m.source.contains("#include \""), "{}: quoted include left for NVRTC", m.name);
        assert!(m.source.contains("extern \"C\""), "{}: no entry point", m.name);
    }
}

#[test]
fn cpu_axpy_rejects_mismatched_lengths() {
    let mut y = vec![0.0f64; 3];
    assert!(matches!(axpy_cpu(1.0, &[1.0, 2.0], &mut y), Err(Error::Invalid(_))));
}

/// Random x, y of length n: the GPU's a x + y against the CPU oracle.
macro_rules! check_axpy {
    ($t:ty, $gpu:expr, $n:expr, $a:expr, $r:expr, $tol:expr) => {{
        let x: Vec<$t> = (0..$n).map(|_| $r.random()).collect();
        let y: Vec<$t> = (0..$n).map(|_| $r.random()).collect();
        let mut want = y.clone();
        axpy_cpu($a, &x, &mut want).unwrap();
        let dx = $gpu.upload(&x).unwrap();
        let mut dy = $gpu.upload(&y).unwrap();
        axpy($gpu, $a, &dx, &mut dy).unwrap();
        assert_close(&$gpu.download(&dy).unwrap(), &want, $tol);
    }};
}

#[test]
fn gpu_axpy_matches_cpu() {
    let Some(gpu) = gpu_or_skip("gpu_axpy_matches_cpu") else { return };
    println!("{}", gpu.props());
    println!(
        "blas/axpy reached the device by {:?} (PTX embedded: {})",
        gpu.compile_path("blas/axpy").unwrap(),
        nvcc_ptx_embedded()
    );
    let mut r = rng("gpu_axpy_matches_cpu");
    for n in [0, 1, 2, 31, 32, 33, 255, 256, 257, 1 << 20, (1 << 22) + 7] {
        // One rounding apart: the kernel may fuse a*x+y into an FMA.
        check_axpy!(f32, &gpu, n, 1.5f32, r, 1e-6);
        check_axpy!(f64, &gpu, n, -0.75f64, r, 1e-15);
    }
}

#[test]
fn gpu_axpy_length_mismatch_is_an_error() {
    let Some(gpu) = gpu_or_skip("gpu_axpy_length_mismatch_is_an_error") else { return };
    let x = gpu.upload(&[1.0f32; 4]).unwrap();
    let mut y = gpu.upload(&[1.0f32; 5]).unwrap();
    assert!(matches!(axpy(&gpu, 1.0, &x, &mut y), Err(Error::Invalid(_))));
}

#[test]
fn gpu_module_cache_and_compile_path() {
    let Some(gpu) = gpu_or_skip("gpu_module_cache_and_compile_path") else { return };
    let first = gpu.compile_path("blas/axpy").unwrap();
    // A second handle on the same device shares the process-wide cache.
    let other = Gpu::new(0).unwrap();
    assert_eq!(other.compile_path("blas/axpy").unwrap(), first);
    let forced = std::env::var("HETKIT_FORCE_NVRTC").is_ok_and(|v| v == "1");
    if forced || !nvcc_ptx_embedded() {
        assert_eq!(first, CompilePath::Nvrtc);
    } else {
        assert_eq!(first, CompilePath::NvccPtx);
    }
    assert!(matches!(gpu.function("no/such", "f"), Err(Error::UnknownModule(_))));
    assert!(gpu.function("blas/axpy", "no_such_kernel").is_err());
}

#[test]
fn gpu_timer_measures_positive_time() {
    let Some(gpu) = gpu_or_skip("gpu_timer_measures_positive_time") else { return };
    let x = gpu.zeros::<f32>(1 << 22).unwrap();
    let mut y = gpu.zeros::<f32>(1 << 22).unwrap();
    let timer = cuda_kernels::GpuTimer::new(&gpu).unwrap();
    let s = timer.stats(&gpu, 2, 5, || axpy(&gpu, 1.0f32, &x, &mut y)).unwrap();
    assert!(s.min_ms > 0.0 && s.min_ms <= s.median_ms && s.median_ms <= s.max_ms, "{s:?}");
}

/// The NVRTC path needs no GPU: where libnvrtc exists, every embedded source must compile with it
/// (this catches what nvcc accepts and NVRTC does not, such as standard headers).
#[test]
fn nvrtc_compiles_every_embedded_source() {
    if !cuda_kernels::nvrtc_present() {
        println!("SKIPPED nvrtc_compiles_every_embedded_source: no libnvrtc");
        return;
    }
    for m in embedded_modules() {
        let ptx = cuda_kernels::nvrtc_compile_source(m, (8, 0)).unwrap_or_else(|e| panic!("{e}"));
        assert!(ptx.contains(".entry"), "{}: no kernel entry in the PTX", m.name);
    }
}

#[test]
fn nvrtc_rejects_a_nul_in_the_source_without_panicking() {
    let r = cuda_kernels::nvrtc_compile_ptx("nul", "extern \"C\" __global__ void k() {}\0", (8, 0));
    assert!(matches!(r, Err(Error::Invalid(_))), "{:?}", r.err());
}

/// The driver rejects 0-byte allocations: empty uploads, zeroed buffers, downloads and writes
/// must still work (scans and sorts of empty inputs allocate them).
#[test]
fn gpu_empty_buffers() {
    let Some(gpu) = gpu_or_skip("gpu_empty_buffers") else { return };
    let mut a = gpu.upload::<f64>(&[]).unwrap();
    let b = gpu.zeros::<u32>(0).unwrap();
    assert_eq!((a.len(), b.len()), (0, 0));
    gpu.write(&[], &mut a).unwrap();
    assert!(gpu.download(&a).unwrap().is_empty());
    assert!(gpu.download(&b).unwrap().is_empty());
    let mut y = gpu.zeros::<f64>(0).unwrap();
    axpy(&gpu, 2.0, &a, &mut y).unwrap();
    drop((a, b, y));
    gpu.synchronize().unwrap();
}

/// A device newer than the NVRTC library: the compile falls back to compute_80 PTX (the
/// driver JITs it) instead of failing on an unknown architecture.
#[test]
fn nvrtc_falls_back_for_an_unknown_architecture() {
    if !cuda_kernels::nvrtc_present() {
        println!("SKIPPED nvrtc_falls_back_for_an_unknown_architecture: no libnvrtc");
        return;
    }
    let src = "extern \"C\" __global__ void k(float* x) { x[threadIdx.x] = 1.0f; }";
    let ptx = cuda_kernels::nvrtc_compile_ptx("fallback", src, (99, 0)).unwrap_or_else(|e| panic!("{e}"));
    assert!(ptx.to_src().contains(".target sm_80"), "{}", ptx.to_src());
    // A genuine source error is still an error, with NVRTC's log.
    let bad = cuda_kernels::nvrtc_compile_ptx("bad", "extern \"C\" __global__ void k() { nope; }", (99, 0));
    assert!(matches!(bad, Err(Error::Compile { ref message, .. }) if message.contains("nope")), "{bad:?}");
}

/// Kernels are looked up once per process and device, with their attributes read and their
/// dynamic shared memory limit raised to the device's maximum, so a launch above 48 KiB needs no
/// opt-in from the caller.
#[test]
fn gpu_kernels_are_cached_with_the_shared_memory_limit_raised() {
    let Some(gpu) = gpu_or_skip("gpu_kernels_are_cached_with_the_shared_memory_limit_raised") else { return };
    let k = gpu.kernel("blas/axpy", "axpy_f32").unwrap();
    let again = Gpu::new(0).unwrap().kernel("blas/axpy", "axpy_f32").unwrap();
    assert!(Kernel::ptr_eq(&k, &again), "a second look-up made a second kernel");
    assert!(!Kernel::ptr_eq(&k, &gpu.kernel("blas/axpy", "axpy_f64").unwrap()));
    let a = *k.attributes();
    let optin = gpu.props().shared_per_block_optin;
    assert_eq!(a.max_dynamic_shared_bytes, optin - a.static_shared_bytes, "{a:?}");
    assert!(a.max_threads_per_block >= 256 && a.registers > 0, "{a:?}");

    let big = LaunchConfig { grid_dim: (4, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 100 << 10 };
    k.check(&big).unwrap();
    let x: Vec<f32> = (0..5000).map(|i| i as f32).collect();
    let mut want = vec![1.0f32; 5000];
    let dx = gpu.upload(&x).unwrap();
    let mut dy = gpu.upload(&want).unwrap();
    let n = 5000u64;
    // SAFETY: axpy_f32(u64 n, float a, const float* x, float* y) with x and y of n elements.
    unsafe { gpu.launch(&k, big, |args| _ = args.arg(&n).arg(&2.0f32).arg(&dx).arg(&mut dy)) }.unwrap();
    axpy_cpu(2.0, &x, &mut want).unwrap();
    assert_close(&gpu.download(&dy).unwrap(), &want, 1e-6);

    let too_wide = LaunchConfig { block_dim: (a.max_threads_per_block + 1, 1, 1), ..big };
    assert!(matches!(k.check(&too_wide), Err(Error::Invalid(_))));
    let too_much = LaunchConfig { shared_mem_bytes: (a.max_dynamic_shared_bytes + 1) as u32, ..big };
    assert!(matches!(k.check(&too_much), Err(Error::Invalid(_))));
    assert!(matches!(gpu.kernel("blas/axpy", "nope"), Err(Error::UnknownKernel { .. })));
    assert!(matches!(gpu.kernel("blas/axpy", "a\0b"), Err(Error::Invalid(_))));
}

/// Host threads looking up and launching the same kernels at once, each with a large dynamic
/// shared memory request: no opt-in race, every result right.
#[test]
fn gpu_concurrent_lookups_and_launches() {
    let Some(gpu) = gpu_or_skip("gpu_concurrent_lookups_and_launches") else { return };
    std::thread::scope(|s| {
        for t in 0..4u32 {
            let gpu = gpu.with_new_stream().unwrap();
            s.spawn(move || {
                for round in 0..3u32 {
                    let k = gpu.kernel("blas/axpy", "axpy_f64").unwrap();
                    let len = 1000 + 37 * (t + round) as usize;
                    let x: Vec<f64> = (0..len).map(|i| (i as f64).sin()).collect();
                    let mut want: Vec<f64> = (0..len).map(|i| i as f64).collect();
                    let dx = gpu.upload(&x).unwrap();
                    let mut dy = gpu.upload(&want).unwrap();
                    let cfg = LaunchConfig {
                        grid_dim: (2, 1, 1),
                        block_dim: (128, 1, 1),
                        shared_mem_bytes: (64 + 16 * t) << 10,
                    };
                    let (n, a) = (len as u64, f64::from(t) - 1.5);
                    // SAFETY: axpy_f64(u64 n, double a, const double* x, double* y), n elements each.
                    unsafe { gpu.launch(&k, cfg, |args| _ = args.arg(&n).arg(&a).arg(&dx).arg(&mut dy)) }
                        .unwrap();
                    axpy_cpu(a, &x, &mut want).unwrap();
                    assert_close(&gpu.download(&dy).unwrap(), &want, 1e-15);
                }
            });
        }
    });
}

/// Sources generated at run time: one module per source text, errors as errors.
#[test]
fn gpu_modules_from_generated_sources() {
    let Some(gpu) = gpu_or_skip("gpu_modules_from_generated_sources") else { return };
    let src = |c: f32| {
        format!(
            "extern \"C\" __global__ void fill(float* x, unsigned n) {{ unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = {c:?}f * i; }}"
        )
    };
    let m = gpu.module_from_source("fill 2", &src(2.0)).unwrap();
    assert!(std::sync::Arc::ptr_eq(&m, &gpu.module_from_source("fill 2 again", &src(2.0)).unwrap()));
    let m3 = gpu.module_from_source("fill 3", &src(3.0)).unwrap();
    assert!(!std::sync::Arc::ptr_eq(&m, &m3));
    for (module, c) in [(&m, 2.0f32), (&m3, 3.0)] {
        let k = module.kernel("fill").unwrap();
        let mut out = gpu.zeros::<f32>(300).unwrap();
        let n = 300u32;
        let cfg = LaunchConfig { grid_dim: (3, 1, 1), block_dim: (128, 1, 1), shared_mem_bytes: 0 };
        // SAFETY: fill(float* x, unsigned n) writes x[0..n).
        unsafe { gpu.launch(&k, cfg, |a| _ = a.arg(&mut out).arg(&n)) }.unwrap();
        let want: Vec<f32> = (0..300).map(|i| c * i as f32).collect();
        assert_eq!(gpu.download(&out).unwrap(), want);
    }
    let bad = gpu.module_from_source("bad", "extern \"C\" __global__ void k() { nope; }");
    assert!(matches!(bad, Err(Error::Compile { ref message, .. }) if message.contains("nope")), "{bad:?}");
    assert!(matches!(gpu.module_from_source("nul", "a\0b"), Err(Error::Invalid(_))));
}

/// NVRTC's cubin for a real architecture (needs only libnvrtc): an ELF image from a real NVRTC,
/// the emulator's marked library from its stand-in; `None` for an architecture NVRTC does not
/// know; a source error stays an error.
#[test]
fn nvrtc_makes_a_cubin_for_a_real_architecture() {
    if !cuda_kernels::nvrtc_present() {
        println!("SKIPPED nvrtc_makes_a_cubin_for_a_real_architecture: no libnvrtc");
        return;
    }
    let axpy = embedded_modules().iter().find(|m| m.name == "blas/axpy").unwrap();
    let cubin = cuda_kernels::nvrtc_compile_cubin(axpy.name, axpy.source, (9, 0))
        .unwrap()
        .expect("NVRTC knows sm_90");
    let emulated = cubin.starts_with(b"// hetkit-cuda-emu");
    assert!(emulated || cubin.starts_with(b"\x7fELF"), "neither an ELF cubin nor the emulator's image");
    assert!(cuda_kernels::nvrtc_compile_cubin("k", axpy.source, (99, 0)).unwrap().is_none());
    let bad = cuda_kernels::nvrtc_compile_cubin("bad", "extern \"C\" __global__ void k() { nope; }", (9, 0));
    assert!(matches!(bad, Err(Error::Compile { ref message, .. }) if message.contains("nope")), "{bad:?}");
}
