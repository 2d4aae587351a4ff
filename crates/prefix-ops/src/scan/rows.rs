//! Batched scans: `G` independent rows of length `N` stored one after another, scanned in
//! parallel over rows (each row on one thread with the vectorised single-thread scan).

use rayon::prelude::*;

use super::op::Monoid;
use super::single;
use crate::error::Result;
use crate::segments::check_rows;
use hetero_sched::tune::dispatch::Tunable;

/// Elements a rayon task should hold at least, so short rows are grouped.
const MIN_TASK_ELEMS: usize = 1 << 14;

/// Scans every row of `data` (rows of `row_len`) on its own, rows in parallel.
pub(super) fn scan_rows<T: Copy + Send + Sync, M: Monoid<T>>(
    data: &mut [T],
    row_len: usize,
    op: M,
    exclusive: bool,
) -> Result<()> {
    check_rows(data.len(), row_len)?;
    if data.is_empty() {
        return Ok(());
    }
    // Few long rows: parallelise inside each row instead of across rows.
    let tuning = super::tuning::ScanTuning::tuned::<T>(row_len);
    if data.len() / row_len < rayon::current_num_threads() && row_len >= tuning.par_threshold {
        data.chunks_mut(row_len).for_each(|row| super::parallel::scan_with(row, op, exclusive, &tuning));
        return Ok(());
    }
    let rows_per_task = MIN_TASK_ELEMS.div_ceil(row_len).max(1);
    data.par_chunks_mut(row_len)
        .with_min_len(rows_per_task)
        .for_each(|row| if exclusive { single::exclusive(row, op) } else { single::inclusive(row, op) });
    Ok(())
}
