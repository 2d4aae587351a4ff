//! The real evaluator: runs the applications under a configuration, times them, and checks
//! every table against the sequential reference (synthetic: the whole table; LCS and SW: the
//! score of the library's fast path).

use std::collections::HashMap;
use std::time::Duration;

use ndarray::{Array2, Array3};

use crate::apps::synthetic::{
    Synth, Synth3, synthetic_2d, synthetic_3d, synthetic_cell, synthetic_gpu_kernel, synthetic_int_2d,
    synthetic_int_cell,
};
use crate::apps::{
    Alignment, Scoring, lcs_length, lcs_length_gpu, lcs_length_with, smith_waterman, smith_waterman_with,
};
use crate::boundary::{Boundary2, Boundary3};
use crate::config::Config3;
use crate::error::{Result, WavefrontError};
use crate::gpu::run_2d_gpu;
use crate::tune::driver::{App, Evaluate, Instance, timed};
use crate::tune::features::{Features, features_2d, features_3d};
use crate::tune::space::Candidate;

/// What a sequential sweep of an instance gave, kept to check every other configuration.
#[derive(Debug)]
enum Reference {
    Synth(Box<dyn std::any::Any + Send>),
    Synth3(Array3<Synth3>),
    SynthInt(Array2<u32>),
    Lcs { a: Vec<u8>, b: Vec<u8>, len: usize },
    Sw { a: Vec<u8>, b: Vec<u8>, best: Alignment },
}

/// Times the built-in applications on this machine's CPU (and GPU, for bands).
#[derive(Debug, Default)]
pub struct SweepEvaluator {
    references: HashMap<Instance, Reference>,
}

impl SweepEvaluator {
    /// An evaluator with no references computed yet.
    pub fn new() -> Self {
        SweepEvaluator::default()
    }

    fn reference(&mut self, inst: &Instance) -> Result<&Reference> {
        if !self.references.contains_key(inst) {
            // Searches go instance by instance: keep one reference (a table can be megabytes).
            self.references.clear();
            let r = build_reference(inst)?;
            self.references.insert(*inst, r);
        }
        Ok(&self.references[inst])
    }
}

/// Pseudo-random residues (splitmix64), seeded by the instance so every run sees the same
/// sequences.
fn sequences(inst: &Instance, alphabet: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let mut state = inst.dim as u64 * 31 + inst.app as u64;
    let mut next = move || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let mut draw =
        || (0..inst.dim).map(|_| alphabet[(next() % alphabet.len() as u64) as usize]).collect::<Vec<u8>>();
    (draw(), draw())
}

const PROTEIN: &[u8] = b"ARNDCQEGHILKMFPSTWYV";

fn scoring() -> Scoring {
    Scoring::blosum62(11, 1)
}

fn bad_dsize(d: usize) -> WavefrontError {
    WavefrontError::Tune(format!("synthetic dsize {d} is not supported (0..=5)"))
}

/// Runs `$body` with `DS` bound to the instance's dsize as a constant.
macro_rules! with_dsize {
    ($d:expr, $body:ident) => {
        match $d {
            0 => $body::<0>,
            1 => $body::<1>,
            2 => $body::<2>,
            3 => $body::<3>,
            4 => $body::<4>,
            5 => $body::<5>,
            d => return Err(bad_dsize(d)),
        }
    };
}

fn build_reference(inst: &Instance) -> Result<Reference> {
    Ok(match inst.app {
        App::Synthetic => {
            fn reference<const DS: usize>(inst: &Instance) -> Result<Box<dyn std::any::Any + Send>> {
                Ok(Box::new(synthetic_2d::<DS>(
                    inst.dim,
                    inst.dim,
                    inst.grain,
                    &crate::Config2::sequential(),
                )?))
            }
            Reference::Synth(with_dsize!(inst.dsize, reference)(inst)?)
        }
        App::Synthetic3 => {
            Reference::Synth3(synthetic_3d(inst.dim, inst.dim, inst.dim, inst.grain, &Config3::sequential())?)
        }
        App::SyntheticInt => Reference::SynthInt(synthetic_int_2d(
            inst.dim,
            inst.dim,
            inst.grain,
            &crate::Config2::sequential(),
        )?),
        App::Lcs => {
            let (a, b) = sequences(inst, b"ACGT");
            let len = lcs_length(&a, &b);
            Reference::Lcs { a, b, len }
        }
        App::Sw => {
            let (a, b) = sequences(inst, PROTEIN);
            let best = smith_waterman(&a, &b, &scoring())?;
            Reference::Sw { a, b, best }
        }
    })
}

fn mismatch(inst: &Instance, c: &Candidate) -> WavefrontError {
    WavefrontError::Tune(format!("{inst} under {c}: the result differs from the sequential reference"))
}

/// A GPU configuration's error becomes a logged failure; other errors stop the search.
fn soft<T>(r: Result<T>, c: &Candidate) -> Result<std::result::Result<T, String>> {
    match r {
        Ok(v) => Ok(Ok(v)),
        Err(e @ (WavefrontError::Cuda(_) | WavefrontError::NoGpuKernel { .. })) if c.band >= 0 => {
            Ok(Err(e.to_string()))
        }
        Err(e) => Err(e),
    }
}

fn run_synth<const DS: usize>(
    inst: &Instance,
    c: &Candidate,
    reference: &Reference,
) -> Result<std::result::Result<Duration, String>> {
    if c.halo >= 0 {
        return Ok(Err("this crate has no dual-GPU executor".into()));
    }
    let (table, t) = timed(|| -> Result<Array2<Synth<DS>>> {
        if c.band >= 0 {
            let gk = synthetic_gpu_kernel::<DS>(inst.grain);
            let g = inst.grain;
            run_2d_gpu(
                inst.dim,
                inst.dim,
                &Boundary2::constant(Synth::BOUNDARY),
                &c.config2(),
                |_, _, n, w, nw| synthetic_cell(g, n, w, nw),
                &gk,
            )
        } else {
            synthetic_2d::<DS>(inst.dim, inst.dim, inst.grain, &c.config2())
        }
    });
    let table = match soft(table, c)? {
        Ok(t) => t,
        Err(e) => return Ok(Err(e)),
    };
    let Reference::Synth(r) = reference else { unreachable!("synthetic instance, synthetic reference") };
    match r.downcast_ref::<Array2<Synth<DS>>>() {
        Some(r) if *r == table => Ok(Ok(t)),
        _ => Err(mismatch(inst, c)),
    }
}

impl Evaluate for SweepEvaluator {
    fn features(&mut self, inst: &Instance) -> Result<Features> {
        match inst.app {
            App::Synthetic => {
                fn f<const DS: usize>(inst: &Instance) -> Result<Features> {
                    let g = inst.grain;
                    features_2d(
                        inst.dim,
                        inst.dim,
                        &Boundary2::constant(Synth::<DS>::BOUNDARY),
                        move |_, _, n, w, nw| synthetic_cell(g, n, w, nw),
                    )
                }
                with_dsize!(inst.dsize, f)(inst)
            }
            App::Synthetic3 => {
                let g = inst.grain;
                features_3d([inst.dim; 3], &Boundary3::constant(Synth3::BOUNDARY), move |i, j, k, n, w, t| {
                    crate::apps::synthetic::synthetic_cell_3d(g, i, j, k, n, w, t)
                })
            }
            App::SyntheticInt => {
                let g = inst.grain;
                features_2d(inst.dim, inst.dim, &Boundary2::constant(0u32), move |i, j, n, w, nw| {
                    synthetic_int_cell(g, i, j, n, w, nw)
                })
            }
            App::Lcs => {
                let (a, b) = sequences(inst, b"ACGT");
                features_2d(a.len(), b.len(), &Boundary2::constant(0u32), |i, j, n, w, nw| {
                    if a[i] == b[j] { nw + 1 } else { *n.max(w) }
                })
            }
            App::Sw => {
                let (a, b) = sequences(inst, PROTEIN);
                let enc = scoring().encode(&a, &b)?;
                // The Gotoh cell of `smith_waterman_with` (three i32): dsize 0 like the thesis's SW.
                const NEG: i32 = i32::MIN / 4;
                features_2d(a.len(), b.len(), &Boundary2::constant([0i32, NEG, NEG]), |i, j, n, w, nw| {
                    let e = (w[1] - enc.extend).max(w[0] - enc.open);
                    let f = (n[2] - enc.extend).max(n[0] - enc.open);
                    let h = (nw[0] + enc.score(enc.a[i], enc.b[j])).max(e).max(f).max(0);
                    [h, e, f]
                })
            }
        }
    }

    fn run(&mut self, inst: &Instance, c: &Candidate) -> Result<std::result::Result<Duration, String>> {
        let reference = self.reference(inst)?;
        match (inst.app, reference) {
            (App::Synthetic, r) => with_dsize!(inst.dsize, run_synth)(inst, c, r),
            (App::Synthetic3, Reference::Synth3(r)) => {
                let (table, t) =
                    timed(|| synthetic_3d(inst.dim, inst.dim, inst.dim, inst.grain, &c.config3()));
                match soft(table, c)? {
                    Ok(table) if table == *r => Ok(Ok(t)),
                    Ok(_) => Err(mismatch(inst, c)),
                    Err(e) => Ok(Err(e)),
                }
            }
            (App::SyntheticInt, Reference::SynthInt(r)) => {
                if c.band >= 0 {
                    return Ok(Err("the integer synthetic kernel has no GPU form".into()));
                }
                let (table, t) = timed(|| synthetic_int_2d(inst.dim, inst.dim, inst.grain, &c.config2()));
                if table? == *r { Ok(Ok(t)) } else { Err(mismatch(inst, c)) }
            }
            (App::Lcs, Reference::Lcs { a, b, len }) => {
                let (got, t) = timed(|| {
                    if c.band >= 0 {
                        lcs_length_gpu(a, b, &c.config2())
                    } else {
                        lcs_length_with(a, b, &c.config2())
                    }
                });
                match soft(got, c)? {
                    Ok(got) if got == *len => Ok(Ok(t)),
                    Ok(_) => Err(mismatch(inst, c)),
                    Err(e) => Ok(Err(e)),
                }
            }
            (App::Sw, Reference::Sw { a, b, best }) => {
                let (got, t) = timed(|| smith_waterman_with(a, b, &scoring(), &c.config2()));
                match soft(got, c)? {
                    Ok(got) if got == *best => Ok(Ok(t)),
                    Ok(_) => Err(mismatch(inst, c)),
                    Err(e) => Ok(Err(e)),
                }
            }
            _ => unreachable!("references are built per application"),
        }
    }

    fn has_gpu_form(&self, app: App) -> bool {
        matches!(app, App::Synthetic | App::Lcs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tune::space::{SpaceOptions, candidates};

    /// Every CPU configuration of small instances of every application times and matches the
    /// reference (the evaluator would fail otherwise).
    #[test]
    fn every_cpu_configuration_matches_the_reference() {
        let mut e = SweepEvaluator::new();
        for inst in [
            Instance::synthetic(13, 3, 2),
            Instance::synthetic(1, 1, 0),
            Instance { app: App::Synthetic3, dim: 7, grain: 2, dsize: 0 },
            Instance::of(App::Lcs, 37),
            Instance::of(App::Sw, 29),
            Instance::synthetic_int(31, 3),
        ] {
            let f = e.features(&inst).unwrap();
            assert!(f.tsize > 0.0, "{inst}");
            for c in candidates(inst.dim, &SpaceOptions::default()) {
                assert!(e.run(&inst, &c).unwrap().is_ok(), "{inst} {c}");
            }
        }
        assert!(e.run(&Instance::synthetic(5, 1, 9), &Candidate::cpu(true, 2)).is_err(), "dsize 9");
    }

    #[test]
    fn gpu_configurations_fail_softly_without_a_gpu() {
        if cuda_kernels::Gpu::new(0).is_ok() {
            return; // with a GPU the band runs; covered by the GPU tests of the band itself
        }
        let mut e = SweepEvaluator::new();
        let g = Candidate { parallel: true, tile: 4, band: 2, gpu_tile: 1, halo: -1 };
        assert!(e.run(&Instance::synthetic(9, 1, 1), &g).unwrap().is_err());
        assert!(e.run(&Instance::of(App::Sw, 9), &g).unwrap().is_err());
        let two = Candidate { halo: 1, ..g };
        assert!(e.run(&Instance::synthetic(9, 1, 1), &two).unwrap().is_err());
    }
}
