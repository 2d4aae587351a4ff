//! What every launch site shares: the kernel names the host asks for, the grid-size limit and the
//! per-function thread limit. The names live here so the ABI test below checks exactly what the
//! launch sites use.

use cuda_kernels::{GpuScalar, Kernel};

use crate::error::{Error, Result};

/// Largest `gridDim.x` CUDA accepts.
pub(crate) const MAX_GRID_X: usize = i32::MAX as usize;

/// Module of the evaluation kernels of element type `T` and dimension `d`: one per
/// (type, dimension), `sg/eval/f32_d4`, or the generic kernel's `sg/eval/f32_generic`, so an
/// evaluation compiles three entry points instead of all 98 (issue 17).
pub(crate) fn eval_module<T: GpuScalar>(d: usize) -> String {
    if d > crate::config::MAX_TEMPLATED_DIM {
        format!("sg/eval/{}_generic", T::SUFFIX)
    } else {
        format!("sg/eval/{}_d{d}", T::SUFFIX)
    }
}
/// Module of the sweep kernels.
pub(crate) const SWEEP_MODULE: &str = "sg/sg_hierarchize";
/// Module of the spvm kernels.
pub(crate) const SPVM_MODULE: &str = "sg/sg_spvm";

/// Evaluation kernel for dimension `d` at `pt` points per thread (the generic one beyond
/// [`crate::config::MAX_TEMPLATED_DIM`], where `pt` is ignored).
pub(crate) fn eval_kernel<T: GpuScalar>(d: usize, pt: u32) -> String {
    if d > crate::config::MAX_TEMPLATED_DIM {
        format!("sg_eval_{}_generic", T::SUFFIX)
    } else {
        format!("sg_eval_{}_d{d}_p{pt}", T::SUFFIX)
    }
}

/// Hierarchization or dehierarchization sweep kernel.
pub(crate) fn sweep_kernel<T: GpuScalar>(hierarchize: bool) -> String {
    let name = if hierarchize { "sg_hierarchize" } else { "sg_dehierarchize" };
    format!("{name}_{}", T::SUFFIX)
}

/// spvm kernel at `pt` outputs per thread.
pub(crate) fn spvm_kernel<T: GpuScalar>(pt: u32) -> String {
    format!("sg_spvm_{}_p{pt}", T::SUFFIX)
}

/// The kernel adding spvm's per-chunk partial sums.
pub(crate) fn spvm_reduce_kernel<T: GpuScalar>() -> String {
    format!("sg_spvm_reduce_{}", T::SUFFIX)
}

/// `blocks` as a `gridDim.x`, or [`Error::Shape`] past CUDA's limit of 2^31 − 1.
pub(crate) fn grid_x(blocks: usize, what: &str) -> Result<u32> {
    if blocks > MAX_GRID_X {
        return Err(Error::Shape(format!("{what} needs {blocks} thread blocks (at most 2^31 - 1)")));
    }
    Ok(blocks as u32)
}

/// Checks that `kernel` can run `block` threads per block. The kernels carry no
/// `__launch_bounds__`, so a register-heavy instantiation (e.g. d = 16 at 4 points per thread)
/// may be compiled with more registers than 1024 threads can have; the launch would then fail
/// with "too many resources requested". This reports it as a configuration error instead, from
/// the attributes read once when the kernel was looked up (no driver call per launch).
pub(crate) fn check_block(kernel: &Kernel, block: u32, name: &str) -> Result<()> {
    let max = kernel.attributes().max_threads_per_block;
    if block > max {
        return Err(Error::Config(format!(
            "block size {block}: kernel {name} runs at most {max} threads per block (registers)"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    //! The host's kernel names and argument widths against the PTX that nvcc embedded at build
    //! time: every name a launch site can form must be an entry, and the entry's parameters must
    //! have the widths the launch site pushes (a `usize` or `u32` in the wrong place corrupts
    //! every later argument). Skips when the build found no nvcc.

    use super::*;
    use crate::config::MAX_TEMPLATED_DIM;

    /// Parameter widths in bytes of `.entry name(...)` in `ptx`, or `None` without such an entry.
    fn entry_params(ptx: &str, name: &str) -> Option<Vec<usize>> {
        let head = format!(".entry {name}(");
        let start = ptx.find(&head)? + head.len();
        let body = &ptx[start..start + ptx[start..].find(')')?];
        Some(
            body.split(',')
                .map(|p| {
                    let ty = p.split_whitespace().nth(1).expect("param type");
                    match ty {
                        ".u64" | ".s64" | ".b64" | ".f64" => 8,
                        ".u32" | ".s32" | ".b32" | ".f32" => 4,
                        other => panic!("unexpected param type {other} in {name}"),
                    }
                })
                .collect(),
        )
    }

    /// Every evaluation module the launch code can name exists (with or without nvcc).
    #[test]
    fn every_eval_module_is_embedded() {
        for d in 1..=MAX_TEMPLATED_DIM + 1 {
            for name in [eval_module::<f32>(d), eval_module::<f64>(d)] {
                assert!(cuda_kernels::embedded_modules().iter().any(|m| m.name == name), "{name}");
            }
        }
    }

    fn ptx_of(module: &str) -> Option<&'static str> {
        cuda_kernels::embedded_modules().iter().find(|m| m.name == module).and_then(|m| m.ptx)
    }

    // What the launch sites push (pointers are 8 bytes):
    // evaluate.rs: nodes, n_nodes: u64, staged: u32, [d: u32,] values, ncomp: u32, ctile: u32,
    //              points, m: u64, out.
    const EVAL: [usize; 9] = [8, 8, 4, 8, 4, 4, 8, 8, 8];
    const EVAL_GENERIC: [usize; 10] = [8, 8, 4, 4, 8, 4, 4, 8, 8, 8];
    // hierarchize.rs: groups, chains, stride: u32, ncomp: u32, values.
    const SWEEP: [usize; 5] = [8, 8, 4, 4, 8];
    // spvm.rs: p: u64, lda: u64, nrows: u64, nsel: u32, rows_per_chunk: u32, x, ix, a, y;
    //          the reduction p: u64, chunks: u32, partial, y.
    const SPVM: [usize; 9] = [8, 8, 8, 4, 4, 8, 8, 8, 8];
    const SPVM_REDUCE: [usize; 4] = [8, 4, 8, 8];

    fn check_type<T: GpuScalar>(sweep: &str, spvm: &str) {
        for d in 1..=MAX_TEMPLATED_DIM + 2 {
            let module = eval_module::<T>(d);
            let eval = ptx_of(&module).unwrap_or_else(|| panic!("{module} has PTX"));
            for pt in [1, 2, 4] {
                let name = eval_kernel::<T>(d, pt);
                let want: &[usize] = if d > MAX_TEMPLATED_DIM { &EVAL_GENERIC } else { &EVAL };
                assert_eq!(entry_params(eval, &name).as_deref(), Some(want), "{name}");
            }
            // One module holds one dimension's kernels only.
            let other = eval_kernel::<T>(if d == 1 { 2 } else { 1 }, 1);
            assert!(entry_params(eval, &other).is_none(), "{module} holds {other}");
        }
        let reduce = spvm_reduce_kernel::<T>();
        assert_eq!(entry_params(spvm, &reduce).as_deref(), Some(&SPVM_REDUCE[..]), "{reduce}");
        for h in [true, false] {
            let name = sweep_kernel::<T>(h);
            assert_eq!(entry_params(sweep, &name).as_deref(), Some(&SWEEP[..]), "{name}");
        }
        for pt in [1, 2, 4] {
            let name = spvm_kernel::<T>(pt);
            assert_eq!(entry_params(spvm, &name).as_deref(), Some(&SPVM[..]), "{name}");
        }
    }

    #[test]
    fn host_kernel_names_and_argument_widths_match_the_ptx() {
        let (Some(sweep), Some(spvm)) = (ptx_of(SWEEP_MODULE), ptx_of(SPVM_MODULE)) else {
            println!("SKIPPED host_kernel_names_and_argument_widths_match_the_ptx: no nvcc PTX embedded");
            return;
        };
        check_type::<f32>(sweep, spvm);
        check_type::<f64>(sweep, spvm);
        let eval = ptx_of(&eval_module::<f64>(16)).expect("PTX");
        assert!(entry_params(eval, "sg_eval_f64_d17_p1").is_none(), "the parser finds absent entries");
    }

    #[test]
    fn learn_kernel_names_and_argument_widths_match_the_ptx() {
        use crate::learn::LearnKernel;
        let Some(ptx) = ptx_of(crate::learn::LEARN_MODULE) else {
            println!("SKIPPED learn_kernel_names_and_argument_widths_match_the_ptx: no nvcc PTX embedded");
            return;
        };
        // streaming.rs and mass.rs push: pointers and u64 are 8 bytes, d, prefetch, use_shared
        // u32, the mass kernel's lambda a T.
        let mult = [8, 8, 8, 4, 8, 8, 8, 8, 8, 8, 8, 4, 4, 8];
        let mult_t = [8, 8, 8, 4, 8, 8, 8, 8, 8, 8, 8, 4, 4, 8];
        for (t, lambda) in [("f32", 4), ("f64", 8)] {
            let mass = [8, 8, 8, 8, 8, 8, 4, 8, lambda, 8, 4, 4, 8];
            for (k, want) in [
                (LearnKernel::Mult, &mult[..]),
                (LearnKernel::Transposed, &mult_t[..]),
                (LearnKernel::Mass, &mass[..]),
            ] {
                let name =
                    if t == "f32" { crate::learn::entry::<f32>(k) } else { crate::learn::entry::<f64>(k) };
                assert_eq!(entry_params(ptx, &name).as_deref(), Some(want), "{name}");
            }
        }
    }

    #[test]
    fn grid_limit() {
        assert_eq!(grid_x(MAX_GRID_X, "x").unwrap(), i32::MAX as u32);
        assert!(grid_x(MAX_GRID_X + 1, "x").is_err());
    }
}
