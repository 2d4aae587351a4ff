//! GPU stages of the streaming runtime: the mirrored buffer's states and copies, and location
//! transparency (the same pipeline with a stage on the CPU or on the GPU gives the same output).
//! Skipped without a device; on the emulator: `scripts/cuda-emu.sh -p hetero-sched --test stream_gpu`.

use std::sync::{Arc, Mutex};

use cuda_kernels::{DeviceBuffer, Gpu, axpy};
use hetero_sched::stream::{BoxError, MirroredBuffer, Pipeline, Place, StreamError, Valid, map_batches};
use hetkit_testkit::gpu_or_skip;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[test]
fn mirrored_buffer_moves_data_only_when_the_other_side_asks() -> Result<(), StreamError> {
    let Some(gpu) = gpu_or_skip("mirrored_buffer_moves_data_only_when_the_other_side_asks") else {
        return Ok(());
    };
    let copy = gpu.with_new_stream()?;
    for n in [0usize, 1, 5, 1009] {
        let x: Vec<f32> = (0..n).map(|i| i as f32 - 3.0).collect();
        let mut buf = MirroredBuffer::<f32>::new(&Place::Device(gpu.clone()));
        buf.load(&x)?;
        assert_eq!((buf.len(), buf.valid()), (n, Valid::Host));
        buf.upload(&copy)?;
        assert_eq!(buf.valid(), Valid::Both);
        let dx = gpu.upload(&x)?;
        // y <- 2 x + y on the device copy (y = x): 3 x.
        axpy(&gpu, 2.0f32, &dx, buf.device_mut(&gpu)?)?;
        assert_eq!(buf.valid(), Valid::Device);
        let want: Vec<f32> = x.iter().map(|v| 3.0 * v).collect();
        assert_eq!(buf.host(&copy)?, &want[..], "n = {n}");
        assert_eq!(buf.valid(), Valid::Both);
        // Writing on the host makes the device copy stale; the next device use uploads again.
        buf.host_mut(&copy)?.iter_mut().for_each(|v| *v = 1.0);
        assert_eq!(buf.valid(), Valid::Host);
        let back = gpu.download(buf.device(&copy)?)?;
        copy.synchronize()?;
        assert!(back.iter().all(|&v| v == 1.0));
    }
    // A buffer made from a kernel's output.
    let out = gpu.upload(&[4.0f64, 5.0])?;
    let mut b = MirroredBuffer::from_device(&gpu, out);
    assert_eq!(b.valid(), Valid::Device);
    assert_eq!(b.host(&gpu)?, &[4.0, 5.0]);
    Ok(())
}

/// `y = 2 x + 1` on the GPU through the `axpy` kernel.
fn affine_gpu(gpu: &Gpu, x: &DeviceBuffer<f64>) -> Result<DeviceBuffer<f64>, BoxError> {
    let mut y = gpu.upload(&vec![1.0; x.len()])?;
    axpy(gpu, 2.0, x, &mut y)?;
    Ok(y)
}

fn affine_cpu(x: &[f64]) -> Result<Vec<f64>, BoxError> {
    Ok(x.iter().map(|v| 2.0 * v + 1.0).collect())
}

/// source -> affine (at `place`) -> sink; the output and the affine stage's transfer count.
fn pipeline_output(place: Place, x: &[f64], seed: u64) -> (Vec<f64>, usize) {
    let mut p = Pipeline::new();
    let (src, mut mid_in) = p.channel::<f64>();
    let (mut mid_out, mut sink_in) = p.channel::<f64>();
    let input = x.to_vec();
    p.stage("source", move || {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut at = 0;
        while at < input.len() {
            let k = rng.random_range(1..700).min(input.len() - at);
            src.push(&input[at..at + k])?;
            at += k;
        }
        Ok::<(), StreamError>(())
    });
    p.stage("affine", move || map_batches(&place, &mut mid_in, &mut mid_out, 1, 512, affine_cpu, affine_gpu));
    let got = Arc::new(Mutex::new(Vec::new()));
    let g = got.clone();
    p.stage("sink", move || {
        while let Some(b) = sink_in.pop(1, 4096)? {
            g.lock().unwrap().extend_from_slice(&b);
        }
        Ok::<(), StreamError>(())
    });
    let report = p.run().expect("pipeline");
    let transfers = report.stage("affine").unwrap().transfers.len();
    let out = got.lock().unwrap().clone();
    (out, transfers)
}

#[test]
fn a_stage_moved_between_cpu_and_gpu_gives_the_same_output() {
    let Some(gpu) = gpu_or_skip("a_stage_moved_between_cpu_and_gpu_gives_the_same_output") else { return };
    for (n, seed) in [(1usize, 1u64), (513, 2), (10_007, 3)] {
        let x: Vec<f64> = (0..n).map(|i| (i as f64) - 17.0).collect();
        let (cpu, cpu_transfers) = pipeline_output(Place::Host, &x, seed);
        let (on_gpu, gpu_transfers) = pipeline_output(Place::Device(gpu.clone()), &x, seed);
        let want: Vec<f64> = x.iter().map(|v| 2.0 * v + 1.0).collect();
        assert_eq!(cpu, want, "CPU stage, n = {n}");
        assert_eq!(on_gpu, want, "GPU stage, n = {n}");
        assert_eq!(cpu_transfers, 0);
        assert!(gpu_transfers >= 2, "the GPU stage copied in and out");
    }
}

#[test]
fn a_failing_gpu_function_ends_the_run_naming_the_stage() {
    let Some(gpu) = gpu_or_skip("a_failing_gpu_function_ends_the_run_naming_the_stage") else { return };
    let mut p = Pipeline::new();
    let (src, mut rx) = p.channel::<f32>();
    let (mut tx, _out) = p.channel::<f32>();
    drop(_out);
    p.stage("source", move || src.push(&[1.0; 100]));
    let place = Place::Device(gpu);
    p.stage("kernel", move || {
        map_batches(
            &place,
            &mut rx,
            &mut tx,
            1,
            10,
            |x: &[f32]| Ok(x.to_vec()),
            |_, _| Err("launch refused".into()),
        )
    });
    let err = p.run().unwrap_err();
    assert_eq!(err.stage(), Some("kernel"));
    assert!(err.to_string().contains("launch refused"));
}
