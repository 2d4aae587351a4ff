//! The segmented catalogue: the three applications built on it (flattened quicksort, NESL
//! bitonic sort, CSR sparse matrix-vector product), each checked against a plain oracle.

use std::time::Instant;

use hetkit::prefix::segmented::apps::{Csr, bitonic_sort, quicksort};
use hetkit::prefix::segmented::{self, Add, Order, Segments};

/// Milliseconds of one run of `f`.
fn ms<R>(f: impl FnOnce() -> R) -> (f64, R) {
    let t = Instant::now();
    let r = f();
    (t.elapsed().as_secs_f64() * 1e3, r)
}

pub(crate) fn section() {
    println!("\nsegmented primitives (one descriptor, the whole catalogue; CPU)");
    let n = 1usize << 20;
    let keys: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2_654_435_761) >> 1).collect();
    let mut want = keys.clone();
    want.sort_unstable();

    let segs = Segments::from_lengths(&[3, 0, 1 << 19, 5, (1 << 19) - 8]).expect("lengths fit");
    let sums = segmented::reduce(&keys.iter().map(|&k| u64::from(k)).collect::<Vec<_>>(), &segs, Add);
    println!("  reduce over 5 segments (one empty): {:?}", sums.map(|s| s.len()));

    let mut q = keys.clone();
    let (t_q, report) = ms(|| quicksort(&mut q));
    let mut s = keys.clone();
    let (t_std, ()) = ms(|| s.sort_unstable());
    println!(
        "  flattened quicksort, 2^20 u32: {t_q:.1} ms ({report:?}), slice::sort_unstable {t_std:.1} ms, equal: {}",
        q == want
    );

    let mut b = keys.clone();
    let (t_b, r) = ms(|| bitonic_sort(&mut b, Order::Ascending));
    println!("  bitonic sort (NESL form), 2^20 u32: {t_b:.1} ms, ok: {}, equal: {}", r.is_ok(), b == want);

    // A banded matrix (5 diagonals) from COO triplets.
    let rows = 1usize << 18;
    let (mut ri, mut ci, mut vi) = (Vec::new(), Vec::new(), Vec::new());
    for r in 0..rows {
        for c in r.saturating_sub(2)..(r + 3).min(rows) {
            ri.push(r);
            ci.push(c);
            vi.push(if r == c { 4.0f64 } else { -1.0 });
        }
    }
    let a = Csr::from_coo(rows, rows, &ri, &ci, &vi).expect("indices in range");
    let x: Vec<f64> = (0..rows).map(|i| (i % 7) as f64).collect();
    let mut y = vec![0.0; rows];
    let (t_mv, r) = ms(|| a.mul_vec(&x, &mut y));
    let mut want_y = vec![0.0; rows];
    for ((&r, &c), &v) in ri.iter().zip(&ci).zip(&vi) {
        want_y[r] += v * x[c];
    }
    let err = y.iter().zip(&want_y).map(|(g, w)| (g - w).abs()).fold(0.0, f64::max);
    println!(
        "  CSR SpMV, {} rows, {} entries: {t_mv:.2} ms, ok: {}, max error {err:.1e}",
        rows,
        a.nnz(),
        r.is_ok()
    );
}
