//! Sub-domains along axis 0 that exchange halo planes as separate devices would: the transport
//! trait, the in-process transport, the proportional split, and the slab runner that updates
//! each sub-domain's inner planes while its boundary planes travel.

use std::sync::mpsc::{Receiver, Sender, channel};

use ndarray::{Array3, s};

use crate::cpu::{CpuBlocks, Source, sweep_blocked};
use crate::element::Element;
use crate::error::{Result, StencilError};
use crate::plan::Plan;

/// Point-to-point messages between the sub-domains of one run, numbered `0..parts`.
///
/// In-process now ([`ChannelTransport`]); a transport across nodes implements the same two
/// calls over its message layer. Messages between one ordered pair arrive in the order sent.
pub trait Transport<T>: Send {
    /// This endpoint's sub-domain number.
    fn rank(&self) -> usize;
    /// Sends `data` to sub-domain `to` without waiting for it to be received.
    fn send(&mut self, to: usize, data: Vec<T>) -> Result<()>;
    /// The next message from sub-domain `from`, waiting for it.
    fn recv(&mut self, from: usize) -> Result<Vec<T>>;
}

/// The in-process transport: one channel per ordered pair of sub-domains.
#[derive(Debug)]
pub struct ChannelTransport<T> {
    rank: usize,
    to: Vec<Option<Sender<Vec<T>>>>,
    from: Vec<Option<Receiver<Vec<T>>>>,
}

impl<T: Send> ChannelTransport<T> {
    /// Endpoints for `parts` sub-domains, endpoint `r` for sub-domain `r`.
    pub fn mesh(parts: usize) -> Vec<ChannelTransport<T>> {
        let mut ends: Vec<ChannelTransport<T>> = (0..parts)
            .map(|rank| ChannelTransport {
                rank,
                to: (0..parts).map(|_| None).collect(),
                from: (0..parts).map(|_| None).collect(),
            })
            .collect();
        for a in 0..parts {
            for b in 0..parts {
                if a != b {
                    let (tx, rx) = channel();
                    ends[a].to[b] = Some(tx);
                    ends[b].from[a] = Some(rx);
                }
            }
        }
        ends
    }
}

impl<T: Send> Transport<T> for ChannelTransport<T> {
    fn rank(&self) -> usize {
        self.rank
    }

    fn send(&mut self, to: usize, data: Vec<T>) -> Result<()> {
        let tx = self.to.get(to).and_then(Option::as_ref).ok_or_else(|| no_peer(self.rank, to))?;
        tx.send(data).map_err(|_| StencilError::Transport(format!("sub-domain {to} hung up")))
    }

    fn recv(&mut self, from: usize) -> Result<Vec<T>> {
        let rx = self.from.get(from).and_then(Option::as_ref).ok_or_else(|| no_peer(self.rank, from))?;
        rx.recv().map_err(|_| StencilError::Transport(format!("sub-domain {from} hung up")))
    }
}

fn no_peer(rank: usize, peer: usize) -> StencilError {
    StencilError::Transport(format!("sub-domain {rank} has no channel to {peer}"))
}

/// `total` planes split in proportion to `rates` (e.g. each device's tuned points per second),
/// by largest remainder, each part at least `min` planes. Ties in the remainder go to the lower
/// index. An error when there are no rates, a rate is not positive and finite, or
/// `total < min * rates.len()`.
///
/// ```
/// // 27-point f64 on a C2050 and a GTX 480 (thesis Table 4.3): 53.2 % and 46.8 %.
/// assert_eq!(stencil::proportional_split(1000, &[97.7, 86.0], 1)?, vec![532, 468]);
/// # Ok::<(), stencil::StencilError>(())
/// ```
pub fn proportional_split(total: usize, rates: &[f64], min: usize) -> Result<Vec<usize>> {
    if rates.is_empty() {
        return Err(StencilError::Config("no devices to split between".into()));
    }
    if let Some(r) = rates.iter().find(|r| !(r.is_finite() && **r > 0.0)) {
        return Err(StencilError::Config(format!(
            "a device rate of {r} (rates must be positive and finite)"
        )));
    }
    if total < min.max(1) * rates.len() {
        return Err(StencilError::Config(format!(
            "{total} planes cannot give {} parts at least {} planes each",
            rates.len(),
            min.max(1)
        )));
    }
    let sum: f64 = rates.iter().sum();
    let quota: Vec<f64> = rates.iter().map(|r| total as f64 * r / sum).collect();
    let mut parts: Vec<usize> = quota.iter().map(|q| q.floor() as usize).collect();
    let mut order: Vec<usize> = (0..rates.len()).collect();
    order.sort_by(|&a, &b| {
        (quota[b] - quota[b].floor()).total_cmp(&(quota[a] - quota[a].floor())).then(a.cmp(&b))
    });
    let mut left = total - parts.iter().sum::<usize>();
    for &i in order.iter().cycle() {
        if left == 0 {
            break;
        }
        parts[i] += 1;
        left -= 1;
    }
    // Raise parts below the minimum, taking planes from the largest.
    while let Some(small) = parts.iter().position(|&p| p < min.max(1)) {
        let big = (0..parts.len()).max_by_key(|&i| (parts[i], std::cmp::Reverse(i))).expect("non-empty");
        parts[big] -= 1;
        parts[small] += 1;
    }
    Ok(parts)
}

/// `sweeps` Jacobi sweeps of `plan` on `field`, cut along axis 0 into parts of `sizes` planes,
/// one thread per part, halos exchanged through `ChannelTransport`.
pub(crate) fn iterate_slabs<T: Element>(
    plan: &Plan<T>,
    field: &mut Array3<T>,
    sweeps: usize,
    sizes: &[usize],
    blocks: CpuBlocks,
) -> Result<()> {
    let h = plan.halo[0];
    if let Some(p) = sizes.iter().position(|&s| s < h.max(1)) {
        return Err(StencilError::Config(format!(
            "sub-domain {p} has {} planes along axis 0, fewer than the halo of {}: use fewer parts",
            sizes[p],
            h.max(1)
        )));
    }
    let mut starts = vec![0];
    for s in sizes {
        starts.push(starts.last().expect("non-empty") + s);
    }
    debug_assert_eq!(*starts.last().expect("non-empty"), plan.shape[0]);
    let grid = &*field;
    let results: Vec<Result<(usize, Array3<T>)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = ChannelTransport::mesh(sizes.len())
            .into_iter()
            .map(|transport| {
                let r = transport.rank();
                let owned = starts[r]..starts[r + 1];
                scope.spawn(move || {
                    run_part(plan, grid, owned.clone(), sweeps, blocks, transport).map(|a| (owned.start, a))
                })
            })
            .collect();
        handles
            .into_iter()
            .enumerate()
            .map(|(r, h)| {
                h.join().unwrap_or_else(|_| Err(StencilError::Transport(format!("sub-domain {r} panicked"))))
            })
            .collect()
    });
    let mut parts = Vec::with_capacity(results.len());
    for r in results {
        parts.push(r?);
    }
    for (start, owned) in parts {
        let n = owned.shape()[0];
        field.slice_mut(s![start..start + n, .., ..]).assign(&owned);
    }
    Ok(())
}

/// One sub-domain: its planes `owned` plus up to `h` ghost planes each side, double-buffered.
/// Returns its owned planes after the last sweep.
fn run_part<T: Element>(
    plan: &Plan<T>,
    grid: &Array3<T>,
    owned: std::ops::Range<usize>,
    sweeps: usize,
    blocks: CpuBlocks,
    mut transport: ChannelTransport<T>,
) -> Result<Array3<T>> {
    let (h, n0) = (plan.halo[0], plan.shape[0]);
    let rank = transport.rank();
    let (has_low, has_high) = (owned.start > 0, owned.end < n0);
    let lo = owned.start.saturating_sub(h);
    let hi = (owned.end + h).min(n0);
    let mut cur = grid.slice(s![lo..hi, .., ..]).to_owned();
    let mut next = cur.clone();
    let inner = plan.interior_planes();
    let todo = owned.start.max(inner.start)..owned.end.min(inner.end);
    // Planes whose stencil reaches no ghost plane: computed while the halos travel.
    let safe_lo = if has_low { owned.start + h } else { 0 }.max(todo.start);
    let safe_hi = if has_high { owned.end.saturating_sub(h) } else { n0 }.min(todo.end).max(safe_lo);
    for _ in 0..sweeps {
        if has_low {
            transport.send(rank - 1, planes(&cur, owned.start - lo, h))?;
        }
        if has_high {
            transport.send(rank + 1, planes(&cur, owned.end - h - lo, h))?;
        }
        compute(plan, &cur, lo, &mut next, safe_lo..safe_hi, blocks);
        if has_low {
            receive(&mut transport, rank - 1, &mut cur, owned.start - h - lo, h)?;
        }
        if has_high {
            receive(&mut transport, rank + 1, &mut cur, owned.end - lo, h)?;
        }
        compute(plan, &cur, lo, &mut next, todo.start..safe_lo.min(todo.end), blocks);
        compute(plan, &cur, lo, &mut next, safe_hi.max(todo.start)..todo.end, blocks);
        std::mem::swap(&mut cur, &mut next);
    }
    Ok(cur.slice(s![owned.start - lo..owned.end - lo, .., ..]).to_owned())
}

/// Planes `from..from + n` of `a` (local indices) as one contiguous message.
fn planes<T: Element>(a: &Array3<T>, from: usize, n: usize) -> Vec<T> {
    a.slice(s![from..from + n, .., ..]).iter().copied().collect()
}

fn receive<T: Element>(
    t: &mut ChannelTransport<T>,
    from: usize,
    a: &mut Array3<T>,
    at: usize,
    n: usize,
) -> Result<()> {
    let data = t.recv(from)?;
    let mut dst = a.slice_mut(s![at..at + n, .., ..]);
    if data.len() != dst.len() {
        return Err(StencilError::Transport(format!(
            "sub-domain {from} sent {} values where {} were expected",
            data.len(),
            dst.len()
        )));
    }
    dst.iter_mut().zip(data).for_each(|(d, v)| *d = v);
    Ok(())
}

/// Global planes `range` from `cur` (whose plane 0 is global `lo`) into `next`.
fn compute<T: Element>(
    plan: &Plan<T>,
    cur: &Array3<T>,
    lo: usize,
    next: &mut Array3<T>,
    range: std::ops::Range<usize>,
    blocks: CpuBlocks,
) {
    if range.is_empty() {
        return;
    }
    let src = Source { data: cur.as_slice().expect("standard layout"), first: lo };
    let mut out = next.slice_mut(s![range.start - lo..range.end - lo, .., ..]);
    sweep_blocked(plan, src, range, &mut out, blocks, true);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proportional_examples_of_the_digest() {
        // 10.3: {97.7, 86.0} -> {0.532, 0.468}; {31.8, 38.7} -> {0.451, 0.549}.
        assert_eq!(proportional_split(1000, &[97.7, 86.0], 1).unwrap(), [532, 468]);
        assert_eq!(proportional_split(1000, &[31.8, 38.7], 1).unwrap(), [451, 549]);
        for total in [2, 3, 7, 64, 101] {
            for rates in [&[1.0, 1.0][..], &[97.7, 86.0], &[1.0, 1000.0, 3.0]] {
                if total < rates.len() {
                    continue;
                }
                let p = proportional_split(total, rates, 1).unwrap();
                assert_eq!(p.iter().sum::<usize>(), total);
                assert!(p.iter().all(|&x| x >= 1), "{p:?}");
            }
        }
        assert_eq!(proportional_split(7, &[1.0, 1.0], 1).unwrap(), [4, 3]);
        assert!(proportional_split(1, &[1.0, 1.0], 1).is_err());
        assert!(proportional_split(10, &[], 1).is_err());
        assert!(proportional_split(10, &[1.0, f64::NAN], 1).is_err());
        assert!(proportional_split(10, &[1.0, 0.0], 1).is_err());
    }

    #[test]
    fn channels_deliver_in_order() {
        let mut ends = ChannelTransport::<f32>::mesh(3);
        ends[0].send(2, vec![1.0]).unwrap();
        ends[0].send(2, vec![2.0, 3.0]).unwrap();
        assert_eq!(ends[2].recv(0).unwrap(), [1.0]);
        assert_eq!(ends[2].recv(0).unwrap(), [2.0, 3.0]);
        assert!(ends[1].send(1, vec![]).is_err());
        let last = ends.pop().unwrap();
        drop(last);
        assert!(ends[0].send(2, vec![]).is_err());
    }
}
