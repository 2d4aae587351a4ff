//! The CPU+GPU streaming example (tridiagonal solves then scans) checks its own output against
//! the sequential computation; run it on the CPU and, when there is one, on the GPU. On the
//! emulator: `scripts/cuda-emu.sh -p hetkit --test stream_gpu_example`.

#[path = "../examples/stream_gpu.rs"]
#[allow(dead_code)]
mod example;

#[test]
fn cpu_and_gpu_pipelines_match_the_sequential_solve_and_scan() -> hetkit::Result<()> {
    let (checked, worst, report) = example::run(3, None)?;
    assert_eq!(checked, 3);
    assert!(worst <= 1e-12, "CPU pipeline differs by {worst:e}");
    assert_eq!(report.stage("solve").expect("stage").batches, 3);
    let Some(gpu) = hetkit_testkit::gpu_or_skip("cpu_and_gpu_pipelines_match_the_sequential_solve_and_scan")
    else {
        return Ok(());
    };
    let (checked, worst, _) = example::run(2, Some(&gpu))?;
    assert_eq!(checked, 2);
    assert!(worst <= 1e-9, "GPU pipeline differs by {worst:e}");
    Ok(())
}
