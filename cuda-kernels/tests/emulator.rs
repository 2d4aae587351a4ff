//! The CUDA emulator in scripts/cuda-emu must fail kernels that a device would leave undefined or
//! hang on, or its green runs mean nothing. These tests run only on the emulator (its device name
//! says so): `scripts/cuda-emu.sh -p cuda-kernels --test emulator`.

use cuda_kernels::{CudaFunction, Gpu, LaunchConfig, PushKernelArg, nvrtc_compile_ptx};

fn emulator() -> Option<Gpu> {
    match Gpu::new(0) {
        Ok(gpu) if gpu.props().name.contains("CUDA emulator") => Some(gpu),
        _ => {
            println!("SKIPPED: not running on scripts/cuda-emu");
            None
        }
    }
}

fn kernel(gpu: &Gpu, name: &str, src: &str) -> CudaFunction {
    let ptx = nvrtc_compile_ptx(name, src, gpu.props().compute_capability).unwrap_or_else(|e| panic!("{e}"));
    let module = gpu.context().load_module(ptx).unwrap();
    module.load_function("k").unwrap()
}

fn cfg(threads: u32, blocks: u32, shared: u32) -> LaunchConfig {
    LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (threads, 1, 1), shared_mem_bytes: shared }
}

/// Launches `k(float* out)` and returns the launch result and `out` (n floats).
fn run(gpu: &Gpu, f: &CudaFunction, c: LaunchConfig, n: usize) -> (cuda_kernels::Result<()>, Vec<f32>) {
    let mut out = gpu.zeros::<f32>(n).unwrap();
    // SAFETY: every test kernel is k(float* out) and writes at most n floats.
    let r = unsafe { gpu.launch(f, c, |a| _ = a.arg(&mut out)) };
    let host = if r.is_ok() { gpu.download(&out).unwrap() } else { Vec::new() };
    (r, host)
}

/// A one-warp launch of `src`'s kernel `k` must fail.
fn assert_launch_fails(name: &str, src: &str) {
    let Some(gpu) = emulator() else { return };
    let f = kernel(&gpu, name, src);
    assert!(run(&gpu, &f, cfg(32, 1, 0), 32).0.is_err(), "{name} launched without a fault");
}

#[test]
fn correct_kernels_with_shared_memory_and_shuffles_give_exact_results() {
    let Some(gpu) = emulator() else { return };
    let f = kernel(
        &gpu,
        "reduce",
        r#"extern "C" __global__ void k(float* out) {
            __shared__ float warp_sums[8];
            float v = (float)(blockIdx.x * blockDim.x + threadIdx.x);
            for (int d = 16; d > 0; d /= 2) v += __shfl_xor_sync(0xffffffffu, v, d);
            if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = v;
            __syncthreads();
            if (threadIdx.x == 0) {
                float s = 0.0f;
                for (int w = 0; w < (int)(blockDim.x >> 5); ++w) s += warp_sums[w];
                out[blockIdx.x] = s;
            }
        }"#,
    );
    let (r, out) = run(&gpu, &f, cfg(256, 5, 0), 5);
    r.unwrap();
    for (b, got) in out.iter().enumerate() {
        let lo = b as f32 * 256.0;
        assert_eq!(*got, 256.0 * lo + 255.0 * 128.0, "block {b}");
    }
}

#[test]
fn unwritten_shared_memory_reads_as_poison() {
    let Some(gpu) = emulator() else { return };
    let f = kernel(
        &gpu,
        "poison",
        r#"extern "C" __global__ void k(float* out) {
            __shared__ float s[64];
            extern __shared__ float dyn[];
            if (threadIdx.x == 0) { out[0] = s[7]; out[1] = dyn[3]; }
        }"#,
    );
    let (r, out) = run(&gpu, &f, cfg(32, 1, 64), 2);
    r.unwrap();
    assert!(out[0].is_nan() && out[1].is_nan(), "{out:?}");
}

#[test]
fn a_warp_collective_missing_a_lane_is_a_launch_failure() {
    assert_launch_fails(
        "missing_lane",
        r#"extern "C" __global__ void k(float* out) {
            float v = 1.0f;
            if (threadIdx.x != 5) v = __shfl_sync(0xffffffffu, v, 0);
            out[threadIdx.x] = v;
        }"#,
    );
}

#[test]
fn different_collectives_meeting_in_a_warp_are_a_launch_failure() {
    assert_launch_fails(
        "mixed",
        r#"extern "C" __global__ void k(float* out) {
            float v = 1.0f;
            if (threadIdx.x < 16) v = __shfl_xor_sync(0xffffffffu, v, 1);
            else __syncwarp();
            out[threadIdx.x] = v;
        }"#,
    );
}

#[test]
fn a_shuffle_from_outside_its_mask_is_a_launch_failure() {
    assert_launch_fails(
        "outside",
        r#"extern "C" __global__ void k(float* out) {
            float v = (float)threadIdx.x;
            if (threadIdx.x < 16) v = __shfl_sync(0x0000ffffu, v, 20);
            out[threadIdx.x] = v;
        }"#,
    );
}

#[test]
fn launch_limits_are_enforced() {
    let Some(gpu) = emulator() else { return };
    let f = kernel(
        &gpu,
        "bounds",
        r#"extern "C" __global__ void __launch_bounds__(64) k(float* out) {
            extern __shared__ float dyn[];
            dyn[threadIdx.x] = 1.0f;
            __syncthreads();
            out[threadIdx.x] = dyn[63 - threadIdx.x];
        }"#,
    );
    assert!(run(&gpu, &f, cfg(64, 1, 256), 64).0.is_ok());
    assert!(run(&gpu, &f, cfg(128, 1, 512), 128).0.is_err(), "block beyond __launch_bounds__");
    assert!(
        run(&gpu, &f, cfg(64, 1, 64 << 10), 64).0.is_err(),
        "64 KiB of dynamic shared memory without opt-in"
    );
    f.set_attribute(
        cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
        64 << 10,
    )
    .unwrap();
    assert!(run(&gpu, &f, cfg(64, 1, 64 << 10), 64).0.is_ok(), "after opting in");
}
