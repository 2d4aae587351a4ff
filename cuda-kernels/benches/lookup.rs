//! Host-side cost of getting a kernel ready for a launch: the cached look-up (`gpu.kernel`,
//! `gpu.function`) against what a call did before the cache (a driver function look-up, an
//! attribute query and setting the dynamic shared memory limit). Needs a device or the emulator
//! (`scripts/cuda-emu.sh -p cuda-kernels --bench lookup`), where the driver calls are the
//! emulator's: compare the cached rows across machines, not the driver rows.

use criterion::{Criterion, criterion_group, criterion_main};
use cuda_kernels::Gpu;
use cudarc::driver::sys::CUfunction_attribute as FnAttr;
use std::hint::black_box;

fn bench(c: &mut Criterion) {
    let Ok(gpu) = Gpu::new(0) else {
        println!("lookup bench skipped: no device");
        return;
    };
    let module = gpu.module("blas/axpy").unwrap();
    let mut group = c.benchmark_group("kernel_lookup");
    group.bench_function("gpu.kernel (cached)", |b| {
        b.iter(|| gpu.kernel(black_box("blas/axpy"), black_box("axpy_f32")).unwrap())
    });
    group.bench_function("gpu.function (cached)", |b| {
        b.iter(|| gpu.function(black_box("blas/axpy"), black_box("axpy_f32")).unwrap())
    });
    group.bench_function("gpu.module (cached)", |b| b.iter(|| gpu.module(black_box("blas/axpy")).unwrap()));
    group.bench_function("module.kernel (cached)", |b| {
        b.iter(|| module.kernel(black_box("axpy_f32")).unwrap())
    });
    group.bench_function("driver look-up + attribute query + opt-in (per call before)", |b| {
        b.iter(|| {
            let f = module.cuda_module().load_function(black_box("axpy_f32")).unwrap();
            let max = f.max_threads_per_block().unwrap();
            f.set_attribute(FnAttr::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 64 << 10).unwrap();
            black_box((f, max))
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
