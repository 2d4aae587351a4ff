//! A tour of sg-core: build a grid, look points up, hierarchize, evaluate, integrate, and
//! compare the dense layout's memory with a key-value map.
//!
//! `cargo run -p sg-core --example sg_basics`

use ndarray::Array2;
use sg_core::{Grid, GridSpec, Result, Side};
use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Counts live heap bytes, so the memory comparison below is measured, not estimated.
struct Counting;
static LIVE: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator unchanged and only updates a counter.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: same contract as our caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: same contract as our caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

fn main() -> Result<()> {
    // 1. Grids and the bijection.
    let spec = GridSpec::regular(2, 5)?;
    println!("regular d=2 n=5: {} points", spec.len());
    println!("truncated c=(5,3): {} points", GridSpec::truncated(2, 5, &[5, 3])?.len());
    println!("with boundary: {} points", spec.clone().with_boundary().unwrap().len());
    let trunc = GridSpec::truncated(2, 5, &[5, 3])?;
    let idx = trunc.gp2idx(&[3, 3], &[7, 1])?; // Fig. 3.6, corrected: 85
    println!("truncated grid: l=(3,3) i=(7,1) at x={:?} has index {idx}", trunc.coordinates(idx)?);
    println!(
        "index {idx} -> {:?}; left parent in dim 0: {:?}",
        trunc.idx2gp(idx)?,
        trunc.parent(idx, 0, Side::Left)?
    );

    // 2. Interpolation: sample, hierarchize, evaluate.
    let f = |x: &[f64]| x.iter().map(|&v| 4.0 * v * (1.0 - v)).product::<f64>();
    let mut g = Grid::<f64>::from_fn(GridSpec::regular(2, 3)?, f)?;
    g.hierarchize();
    println!("f_c(0.3, 0.6) = {:.4} (f = {:.4})", g.evaluate(&[0.3, 0.6])?, f(&[0.3, 0.6]));
    let pts = Array2::from_shape_vec((2, 2), vec![0.1, 0.2, 0.7, 0.9]).unwrap();
    println!("batch: {:?}", g.evaluate_batch(pts.view())?.to_vec());
    println!("integral {:.5} (exact {:.5})", g.integral(), 4.0 / 9.0);
    for n in [3, 5, 7] {
        let mut g = Grid::<f64>::from_fn(GridSpec::regular(4, n)?, f)?;
        g.hierarchize();
        let test = Array2::from_shape_fn((200, 4), |(i, t)| ((i * 37 + t * 11) % 101) as f64 / 100.0);
        println!("d=4 n={n}: {} points, relative L2 error {:.2e}", g.len(), g.error(test.view(), f)?);
    }

    // 3. Memory: dense values vs a HashMap<(levels, indices), value>.
    println!("\nbytes per point, measured with a counting allocator (f64 values):");
    println!(
        "{:>4} {:>3} {:>10} {:>12} {:>14} {:>7}",
        "d", "n", "points", "dense B/pt", "hashmap B/pt", "ratio"
    );
    for (d, n) in [(2usize, 10u32), (5, 7), (10, 5), (10, 6)] {
        let spec = GridSpec::regular(d, n)?;
        let before = LIVE.load(Ordering::Relaxed);
        let grid = Grid::<f64>::from_fn(spec.clone(), f)?;
        let dense = LIVE.load(Ordering::Relaxed) - before;
        let before = LIVE.load(Ordering::Relaxed);
        let mut map: HashMap<(Vec<u32>, Vec<u32>), f64> = HashMap::new();
        for p in spec.points() {
            map.insert((p.levels, p.indices), grid.values()[p.index as usize]);
        }
        let keyed = LIVE.load(Ordering::Relaxed) - before;
        let pts = spec.len() as f64;
        println!(
            "{d:>4} {n:>3} {:>10} {:>12.1} {:>14.1} {:>6.1}x",
            spec.len(),
            dense as f64 / pts,
            keyed as f64 / pts,
            keyed as f64 / dense as f64
        );
        drop(map);
    }
    Ok(())
}
