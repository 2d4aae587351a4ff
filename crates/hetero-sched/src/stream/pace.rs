//! When a receiver reads the producer's published count: the policy that keeps a receiver which
//! has caught up with its producer from reading right behind it.
//!
//! A receiver that is faster than its producer empties the channel and then reads the published
//! count again right away, finds one item, takes it, and reads again. Every such read moves the
//! count's cache line to the receiver's core, and the item's line with it; the producer's next
//! push must take both lines back before it can publish (its publishing store is sequentially
//! consistent, so it waits for them), so producer and receiver pay two cross-core transfers per
//! item and run several times slower than either does alone. A receiver that instead waits a
//! moment after finding few new items comes back to a run of them, which it reads without
//! touching the producer's lines again.
//!
//! The wait ([`settle`], [`SETTLE`] long) is taken only when the receiver has nothing left to
//! return and the last look found fewer than [`NEAR`] new items, and only while it pays: a
//! settle after which the count has still grown by fewer than [`NEAR`] items (a slow producer, or
//! a producer that waits for this receiver, as in a feedback loop or on one thread) means that
//! waiting did not help, so the next chances are skipped, twice as many each time it fails again,
//! up to [`MAX_SKIP`]. What a receiver can lose is the latency of one settle per item while the
//! back-off grows, then one per [`MAX_SKIP`] looks; what it cannot lose is an item: a settle only
//! delays a read, and the pop's contract (block while fewer than `min` are there, return what is
//! there) is checked after it as before.

use std::time::{Duration, Instant};

use super::stats;

/// New items below which a look at the published count means the receiver reads right behind
/// the producer: about two cache lines of 4-byte items.
pub(super) const NEAR: usize = 32;
/// How long a receiver settles: at tens of nanoseconds per push, room for a run of items.
pub(super) const SETTLE: Duration = Duration::from_micros(2);
/// The most looks skipped between two settles that do not pay.
pub(super) const MAX_SKIP: u32 = 256;

/// One receiver's pacing state.
#[derive(Debug)]
pub(super) struct Pace {
    /// The last look found fewer than [`NEAR`] new items.
    near: bool,
    /// Chances to settle to let pass before the next one is taken.
    skip: u32,
    /// What `skip` becomes after the next settle that does not pay.
    backoff: u32,
}

impl Default for Pace {
    fn default() -> Self {
        Pace { near: false, skip: 0, backoff: 1 }
    }
}

impl Pace {
    /// Whether a receiver about to look at the published count with nothing left to return
    /// should [`settle`] first.
    pub(super) fn settle_first(&mut self) -> bool {
        if !self.near {
            return false;
        }
        if self.skip > 0 {
            self.skip -= 1;
            return false;
        }
        true
    }

    /// Records a look that found `gain` new items (after a settle when `settled`).
    pub(super) fn looked(&mut self, gain: usize, settled: bool) {
        self.near = gain < NEAR;
        if !settled {
            return;
        }
        if self.near {
            self.skip = self.backoff;
            self.backoff = (2 * self.backoff).min(MAX_SKIP);
        } else {
            self.backoff = 1;
        }
    }
}

/// Spins for [`SETTLE`], counted as time blocked.
pub(super) fn settle() {
    let since = Instant::now();
    while since.elapsed() < SETTLE {
        std::hint::spin_loop();
    }
    stats::blocked(since);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Chances (looks with nothing to return) until the next settle is taken.
    fn chances_until_settle(p: &mut Pace) -> u32 {
        let mut n = 0;
        while !p.settle_first() {
            n += 1;
            p.looked(1, false);
        }
        n
    }

    #[test]
    fn a_receiver_far_behind_never_settles() {
        let mut p = Pace::default();
        for _ in 0..10 {
            p.looked(NEAR, false);
            assert!(!p.settle_first());
        }
    }

    #[test]
    fn settles_that_pay_go_on_and_those_that_do_not_back_off_to_the_cap() {
        let mut p = Pace::default();
        p.looked(1, false);
        for _ in 0..5 {
            assert_eq!(chances_until_settle(&mut p), 0);
            p.looked(5 * NEAR, true); // paid: the producer got well ahead
            p.looked(NEAR - 1, false); // caught up again
        }
        let mut skipped = Vec::new();
        for _ in 0..12 {
            skipped.push(chances_until_settle(&mut p));
            p.looked(NEAR - 1, true); // did not pay
        }
        assert_eq!(skipped, [0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 256, 256]);
        assert_eq!(chances_until_settle(&mut p), MAX_SKIP);
        p.looked(NEAR, true); // pays again: back to settling at every chance
        p.looked(0, false);
        assert_eq!(chances_until_settle(&mut p), 0);
    }
}
