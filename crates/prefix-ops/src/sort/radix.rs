//! Least-significant-digit radix sort: stable, O(n) work per digit, for any element that carries
//! an unsigned key of up to 64 bits (the keys' order-preserving bits, or `(key, value)` pairs).
//!
//! One read pass counts every digit at once; digits that are constant over the input are
//! skipped (a float array in a narrow range, small integers); every other digit is one stable
//! counting scatter from one buffer to the other. [`sort_par`] splits each pass into one
//! contiguous chunk per thread: thread `t` writes bucket `b` at
//! `start(b) + (keys of bucket b in chunks before t)`, which keeps the scatter stable, and
//! writes through per-bucket write-combining buffers of one cache line, so the 2^11 output
//! streams cost one cache-line store each instead of one partial store per key. [`sort_seq`] is
//! the one-thread version for rows, with smaller digits and direct stores.

use rayon::prelude::*;

/// Digit width of the parallel sort (a tuning parameter): 11 bits sort 32-bit keys in 3
/// passes and 64-bit keys in 6, against 4 and 8 with bytes, and 2^11 buckets of write-combining
/// buffers (128 KiB of 8-byte elements) still fit the L2 cache.
pub const PAR_DIGIT_BITS: u32 = 11;

/// Digit width of the one-thread sort used per row (a tuning parameter): with 2^8 buckets the
/// counters and offsets stay in L1 and their prefix sums stay cheap next to rows of a few
/// thousand keys.
pub const SEQ_DIGIT_BITS: u32 = 8;

/// Bytes per write-combining buffer: one cache line.
const LINE: usize = 64;

/// Sorts `data` stably by `key` (whose significant bits are the low `key_bits`) on one thread,
/// with [`SEQ_DIGIT_BITS`]-bit digits. `tmp` is reused scratch; it is resized to `data.len()`.
pub(crate) fn sort_seq<E: Copy, F: Fn(&E) -> u64>(data: &mut [E], tmp: &mut Vec<E>, key_bits: u32, key: F) {
    const D: u32 = SEQ_DIGIT_BITS;
    let n = data.len();
    if n < 2 {
        return;
    }
    let passes = key_bits.div_ceil(D) as usize;
    let mut hist = [[0usize; 1 << D]; 8];
    let mask = (1u64 << D) - 1;
    for x in data.iter() {
        let k = key(x);
        for (p, h) in hist[..passes].iter_mut().enumerate() {
            h[((k >> (p as u32 * D)) & mask) as usize] += 1;
        }
    }
    tmp.clear();
    tmp.extend_from_slice(data);
    let mut in_data = true;
    for (p, h) in hist[..passes].iter().enumerate() {
        if h.contains(&n) {
            continue;
        }
        let mut offsets = [0usize; 1 << D];
        exclusive_prefix(h, &mut offsets);
        let shift = p as u32 * D;
        let (src, dst): (&[E], &mut [E]) =
            if in_data { (&*data, &mut tmp[..]) } else { (&tmp[..], &mut *data) };
        for x in src {
            let b = ((key(x) >> shift) & mask) as usize;
            dst[offsets[b]] = *x;
            offsets[b] += 1;
        }
        in_data = !in_data;
    }
    if !in_data {
        data.copy_from_slice(tmp);
    }
}

/// Sorts `data` stably by `key` (significant bits: the low `key_bits <= 64`) on rayon's threads,
/// with [`PAR_DIGIT_BITS`]-bit digits. Meant for large arrays (see [`super::cpu::RADIX_PAR_MIN`]).
pub(crate) fn sort_par<E, F>(data: &mut [E], key_bits: u32, key: F)
where
    E: Copy + Send + Sync,
    F: Fn(&E) -> u64 + Sync,
{
    const D: u32 = PAR_DIGIT_BITS;
    match key_bits.div_ceil(D) {
        0 => {}
        1 => Par::<E, F, D, 1>::sort(data, &key),
        2 => Par::<E, F, D, 2>::sort(data, &key),
        3 => Par::<E, F, D, 3>::sort(data, &key),
        4 => Par::<E, F, D, 4>::sort(data, &key),
        5 => Par::<E, F, D, 5>::sort(data, &key),
        6 => Par::<E, F, D, 6>::sort(data, &key),
        7 => Par::<E, F, D, 7>::sort(data, &key),
        _ => Par::<E, F, D, 8>::sort(data, &key),
    }
}

/// The parallel LSD sort with `P` digits of `D` bits.
struct Par<E, F, const D: u32, const P: usize>(std::marker::PhantomData<(E, F)>);

impl<E, F, const D: u32, const P: usize> Par<E, F, D, P>
where
    E: Copy + Send + Sync,
    F: Fn(&E) -> u64 + Sync,
{
    const BUCKETS: usize = 1 << D;
    const MASK: u64 = (1 << D) - 1;

    fn sort(data: &mut [E], key: &F) {
        let n = data.len();
        if n < 2 {
            return;
        }
        // Per-chunk counters are u32: a chunk never holds more keys than that.
        let chunks = rayon::current_num_threads().max(n.div_ceil(u32::MAX as usize)).max(1);
        let chunk = n.div_ceil(chunks);
        let chunks = n.div_ceil(chunk);
        let first: Vec<Vec<u32>> = data.par_chunks(chunk).map(|c| Self::histogram_all(c, key)).collect();
        let global: Vec<usize> = (0..P << D).map(|i| first.iter().map(|h| h[i] as usize).sum()).collect();
        let active: Vec<usize> = (0..P).filter(|&p| !global[p << D..(p + 1) << D].contains(&n)).collect();
        if active.is_empty() {
            return;
        }
        let mut tmp: Vec<E> = scratch(n);
        let bufs = [Buffer(data.as_mut_ptr()), Buffer(tmp.as_mut_ptr())];
        let mut counts: Vec<Vec<u32>> =
            first.iter().map(|h| h[active[0] << D..(active[0] + 1) << D].to_vec()).collect();
        for (i, &p) in active.iter().enumerate() {
            let (src, dst) = (bufs[i % 2], bufs[(i + 1) % 2]);
            // SAFETY: `src` holds n initialised elements: `data`, or `tmp` after the previous
            // pass wrote every one of its n positions (each pass is a permutation).
            let src_slice: &[E] = unsafe { std::slice::from_raw_parts(src.ptr().cast_const(), n) };
            let next = active.get(i + 1).map(|&q| q as u32 * D);
            let offsets = chunk_offsets(&global[p << D..(p + 1) << D], &counts);
            let target = Target { dst, chunk, chunks, next_shift: next };
            let next_counts: Vec<Vec<u32>> = src_slice
                .par_chunks(chunk)
                .zip(offsets)
                .map(|(c, mut off)| {
                    // SAFETY: chunk t writes bucket b's positions off[b] .. off[b] + counts[t][b],
                    // which no other chunk writes, all below n; `dst` has room for n elements.
                    unsafe { Self::scatter(c.iter().copied(), &target, &mut off, p as u32 * D, key) }
                })
                .collect();
            if next.is_some() {
                counts = (0..chunks)
                    .map(|t| {
                        let range = t << D..(t + 1) << D;
                        (range.clone()).map(|i| next_counts.iter().map(|c| c[i]).sum()).collect()
                    })
                    .collect();
            }
        }
        if active.len() % 2 == 1 {
            // SAFETY: the last pass wrote all n elements of `tmp`.
            unsafe { tmp.set_len(n) };
            data.par_chunks_mut(chunk).zip(tmp.par_chunks(chunk)).for_each(|(d, t)| d.copy_from_slice(t));
        }
    }

    /// Counts of every digit of `chunk`'s keys in one read: `P` histograms, `[pass][bucket]`.
    fn histogram_all(chunk: &[E], key: &F) -> Vec<u32> {
        let mut h = vec![0u32; P << D];
        let h: &mut [u32] = &mut h;
        for x in chunk {
            let k = key(x);
            for p in 0..P {
                let b = ((k >> (p as u32 * D)) & Self::MASK) as usize;
                // SAFETY: p < P and b < 2^D, so the index is below P << D = h.len().
                unsafe { *h.get_unchecked_mut((p << D) + b) += 1 };
            }
        }
        h.to_vec()
    }

    /// The stable scatter of one chunk through write-combining buffers: keys gather per
    /// bucket in a cache line's worth of slots and go out a line at a time, aligned to lines
    /// where the element size divides a line. While the keys are in L1 it counts the next
    /// digit per destination chunk, which spares the next pass a counting read. Returns those
    /// counts, `[destination chunk][bucket]`.
    ///
    /// # Safety
    /// For every bucket `b`, `dst[off[b] .. off[b] + (keys of chunk in b)]` must be valid for
    /// writes and written by no one else meanwhile.
    unsafe fn scatter(
        chunk: impl IntoIterator<Item = E>,
        t: &Target<E>,
        off: &mut [usize],
        shift: u32,
        key: &F,
    ) -> Vec<u32> {
        let mut chunk = chunk.into_iter().peekable();
        let Some(&first) = chunk.peek() else { return vec![0; t.chunks << D] };
        let w = (LINE / size_of::<E>().max(1)).max(2);
        let dst = t.dst.ptr();
        let mut next = vec![0u32; if t.next_shift.is_some() { t.chunks << D } else { 0 }];
        let mut buf = vec![first; w << D];
        // Slot `fill[b]` of bucket b's line goes to `dst[base[b] + fill[b]]`; slots below
        // `lo[b]` are not the bucket's (its first line starts mid-line).
        let (mut fill, mut lo, mut base) = (vec![0u32; 1 << D], vec![0u32; 1 << D], vec![0usize; 1 << D]);
        let line_elems = if LINE.is_multiple_of(size_of::<E>().max(1)) { w } else { 1 };
        for b in 0..Self::BUCKETS {
            let skew = ((dst as usize / size_of::<E>().max(1)) + off[b]) % line_elems;
            fill[b] = skew as u32;
            lo[b] = skew as u32;
            base[b] = off[b].wrapping_sub(skew);
            prefetch_for_write(dst.wrapping_add(off[b]));
        }
        let flush = |b: usize, from: usize, to: usize, next: &mut [u32], buf: &[E], base: usize| {
            let at = base.wrapping_add(from);
            // SAFETY: slots from..to of bucket b are its keys at dst[at .. at + to - from],
            // inside the bucket's range (the function's contract).
            unsafe { copy_run(buf.as_ptr().add(b * w + from), dst.add(at), to - from, w) };
            if let Some(ns) = t.next_shift {
                for (i, x) in buf[b * w + from..b * w + to].iter().enumerate() {
                    let owner = (at + i) / t.chunk;
                    let nb = ((key(x) >> ns) & Self::MASK) as usize;
                    next[(owner << D) + nb] += 1;
                }
            }
        };
        for x in chunk {
            let b = ((key(&x) >> shift) & Self::MASK) as usize;
            let f = fill[b] as usize;
            buf[b * w + f] = x;
            if f + 1 == w {
                flush(b, lo[b] as usize, w, &mut next, &buf, base[b]);
                base[b] = base[b].wrapping_add(w);
                // The bucket's next line is written w keys of this bucket from now: ask for it
                // now, so the flush does not wait for the line (2^D streams are more than the
                // hardware prefetchers follow).
                prefetch_for_write(dst.wrapping_add(base[b]));
                fill[b] = 0;
                lo[b] = 0;
            } else {
                fill[b] = f as u32 + 1;
            }
        }
        for b in 0..Self::BUCKETS {
            flush(b, lo[b] as usize, fill[b] as usize, &mut next, &buf, base[b]);
        }
        next
    }
}

/// Digit width of the most-significant-digit pass of whole arrays (a tuning parameter): 2^12
/// buckets cut 2^24 uniform keys into buckets of 4096, which the second stage sorts inside the
/// L1 and L2 caches, while 2^12 write-combining lines still fit the L2 cache.
pub const MSD_DIGIT_BITS: u32 = 12;

/// The result of [`scatter_msd`]: the elements grouped into buckets of consecutive key ranges.
pub(crate) struct Buckets<E> {
    /// The elements, bucket after bucket, each bucket in input order.
    pub(crate) keys: Vec<E>,
    /// `starts[b] .. starts[b + 1]` is bucket `b` (at most 2^[`MSD_DIGIT_BITS`] + 1 entries).
    pub(crate) starts: Vec<usize>,
}

/// The first stage of the whole-array sort: one stable counting scatter of `data` into at most
/// 2^[`MSD_DIGIT_BITS`] buckets of consecutive runs of the [`MSD_FINE_BITS`] highest bits that
/// vary over the input (one read finds them and counts them; a second only when the keys' top
/// bits are constant), into a new buffer: runs of 16 of them (the plain 12-bit digit) where that
/// leaves every bucket in cache, else runs balanced by their counts. Returns `None`
/// when every key is the same, or there are fewer than two keys (nothing to do).
pub(crate) fn scatter_msd<E, F>(data: &[E], key_bits: u32, key: &F) -> Option<Buckets<E>>
where
    E: Copy + Send + Sync,
    F: Fn(&E) -> u64 + Sync,
{
    scatter_msd_from(data, key_bits, key)
}

/// Digit width of the coarse MSD scatter of `scatter_msd_coarse` (a tuning parameter): 2^8
/// write-combining lines are 16 KiB, inside the 32 KiB L1d, where the 2^12 lines of
/// [`MSD_DIGIT_BITS`] (256 KiB) make every key's slot store miss L1. Its buckets (2^16 keys
/// for 2^24 uniform keys) are sorted in L2 by a second, in-cache digit.
pub const MSD_COARSE_BITS: u32 = 8;

/// [`scatter_msd`] into at most 2^[`MSD_COARSE_BITS`] buckets, each of at most `bucket_max`
/// keys where the 16-bit histogram allows (plain digit, else balanced runs of it).
pub(crate) fn scatter_msd_coarse<E, F>(
    data: &[E],
    key_bits: u32,
    key: &F,
    bucket_max: usize,
) -> Option<Buckets<E>>
where
    E: Copy + Send + Sync,
    F: Fn(&E) -> u64 + Sync,
{
    scatter_msd_digit::<E, F, [E], MSD_COARSE_BITS>(data, key_bits, key, bucket_max)
}

/// Where [`scatter_msd_from`] reads its elements: a slice, or keys and values side by side
/// (which the scatter packs into pairs as it goes, sparing a pass that builds them).
pub(crate) trait Source<E>: Sync {
    /// How many elements.
    fn len(&self) -> usize;
    /// The first element, if any.
    fn first(&self) -> Option<E>;
    /// Elements `range`, in order.
    fn range(&self, range: std::ops::Range<usize>) -> impl Iterator<Item = E> + Send;
}

impl<E: Copy + Sync> Source<E> for [E] {
    fn len(&self) -> usize {
        <[E]>::len(self)
    }
    fn first(&self) -> Option<E> {
        <[E]>::first(self).copied()
    }
    fn range(&self, range: std::ops::Range<usize>) -> impl Iterator<Item = E> + Send {
        self[range].iter().copied()
    }
}

/// Keys and values of equal length, read as `(key, value)` pairs.
pub(crate) struct Zipped<'a, K, V>(pub(crate) &'a [K], pub(crate) &'a [V]);

impl<K: Copy + Sync, V: Copy + Sync> Source<(K, V)> for Zipped<'_, K, V> {
    fn len(&self) -> usize {
        self.0.len().min(self.1.len())
    }
    fn first(&self) -> Option<(K, V)> {
        Some((*self.0.first()?, *self.1.first()?))
    }
    fn range(&self, range: std::ops::Range<usize>) -> impl Iterator<Item = (K, V)> + Send {
        self.0[range.clone()].iter().copied().zip(self.1[range].iter().copied())
    }
}

/// Width of the fine histogram the whole-array scatter balances its buckets on (a tuning
/// parameter): the counting read histograms the top 16 varying bits (2^16 counters, 256 KiB per
/// thread, in L2), and the scatter's 2^[`MSD_DIGIT_BITS`] buckets are runs of consecutive fine
/// digits of about `n / 2^12` keys each. A plain 12-bit digit leaves floats skewed: keys uniform
/// in `[-1e6, 1e6]` put half of themselves under one exponent, in buckets of 500,000 keys that
/// needed a second scatter; balanced runs of the 16-bit digit hold at most 32,768 of them.
pub const MSD_FINE_BITS: u32 = 16;

/// [`scatter_msd`] reading from any [`Source`].
pub(crate) fn scatter_msd_from<E, F, S>(data: &S, key_bits: u32, key: &F) -> Option<Buckets<E>>
where
    E: Copy + Send + Sync,
    F: Fn(&E) -> u64 + Sync,
    S: Source<E> + ?Sized,
{
    scatter_msd_digit::<E, F, S, MSD_DIGIT_BITS>(data, key_bits, key, super::cpu::MSD_BUCKET_MAX)
}

/// The MSD scatter into at most 2^`D` buckets (`D <= MSD_FINE_BITS`): the plain `D`-bit digit
/// where it leaves no bucket above `bucket_max` keys, else runs of the fine digit balanced by
/// their counts.
fn scatter_msd_digit<E, F, S, const D: u32>(
    data: &S,
    key_bits: u32,
    key: &F,
    bucket_max: usize,
) -> Option<Buckets<E>>
where
    E: Copy + Send + Sync,
    F: Fn(&E) -> u64 + Sync,
    S: Source<E> + ?Sized,
{
    const FINE_MASK: u64 = (1 << MSD_FINE_BITS) - 1;
    let n = data.len();
    let first = data.first()?;
    let chunks = rayon::current_num_threads().max(n.div_ceil(u32::MAX as usize)).max(1);
    let chunk = n.div_ceil(chunks);
    let chunks = n.div_ceil(chunk);
    let parts = || (0..chunks).into_par_iter().map(|t| data.range(t * chunk..((t + 1) * chunk).min(n)));
    let k0 = key(&first);
    let top = key_bits.saturating_sub(MSD_FINE_BITS);
    let counted: Vec<(u64, Vec<u32>)> = parts()
        .map(|c| {
            let mut h = vec![0u32; 1 << MSD_FINE_BITS];
            let mut diff = 0;
            for x in c {
                let k = key(&x);
                diff |= k ^ k0;
                h[((k >> top) & FINE_MASK) as usize] += 1;
            }
            (diff, h)
        })
        .collect();
    let diff = counted.iter().fold(0, |a, (d, _)| a | d);
    if diff == 0 {
        return None;
    }
    // The highest varying bit tops the fine digit; bits above it are the same in every key.
    let shift = (u64::BITS - diff.leading_zeros()).saturating_sub(MSD_FINE_BITS);
    let fine: Vec<Vec<u32>> = if shift == top {
        counted.into_iter().map(|(_, h)| h).collect()
    } else {
        parts()
            .map(|c| {
                let mut h = vec![0u32; 1 << MSD_FINE_BITS];
                for x in c {
                    h[((key(&x) >> shift) & FINE_MASK) as usize] += 1;
                }
                h
            })
            .collect()
    };
    let fine_global: Vec<usize> =
        (0..1 << MSD_FINE_BITS).map(|f| fine.iter().map(|h| h[f] as usize).sum()).collect();
    // Where the plain top digit already leaves every bucket in cache (uniform keys), it is
    // the bucket: no table lookup per key in the scatter.
    let group: usize = 1 << (MSD_FINE_BITS - D);
    let plain = fine_global.chunks(group).all(|g| g.iter().sum::<usize>() <= bucket_max);
    let (map, buckets) = if plain {
        ((0..1u32 << MSD_FINE_BITS).map(|f| (f as usize / group) as u16).collect(), 1 << D)
    } else {
        balance(&fine_global, n, 1 << D)
    };
    let counts: Vec<Vec<u32>> = fine
        .iter()
        .map(|h| {
            let mut c = vec![0u32; 1 << D];
            for (&b, &k) in map.iter().zip(h) {
                c[b as usize] += k;
            }
            c
        })
        .collect();
    let global: Vec<usize> = (0..1 << D).map(|b| counts.iter().map(|h| h[b] as usize).sum()).collect();
    let mut out: Vec<E> = scratch(n);
    let target = Target { dst: Buffer(out.as_mut_ptr()), chunk, chunks, next_shift: None };
    let offsets = chunk_offsets(&global, &counts);
    if plain {
        let top_digit = shift + (MSD_FINE_BITS - D);
        parts().zip(offsets).for_each(|(c, mut off)| {
            // SAFETY: as below; the plain digit's buckets are the table's.
            unsafe { Par::<E, F, D, 1>::scatter(c, &target, &mut off, top_digit, key) };
        });
    } else {
        // The scatter's digit is the bucket itself (shift 0, below 2^D).
        let bucket = |x: &E| map[((key(x) >> shift) & FINE_MASK) as usize] as u64;
        parts().zip(offsets).for_each(|(c, mut off)| {
            // SAFETY: chunk t writes bucket b's positions off[b] .. off[b] + counts[t][b], which
            // no other chunk writes, all below n; `out` has room for n elements.
            unsafe { Par::<E, _, D, 1>::scatter(c, &target, &mut off, 0, &bucket) };
        });
    }
    // SAFETY: the scatter wrote each of the n positions (it is a permutation).
    unsafe { out.set_len(n) };
    let mut starts = vec![0; buckets + 1];
    exclusive_prefix(&global[..buckets], &mut starts[..buckets]);
    starts[buckets] = n;
    Some(Buckets { keys: out, starts })
}

/// Groups consecutive fine digits (counts `fine`, `n` keys in all) into at most `max` buckets
/// of about `n / max` keys: a bucket closes once it holds that many, and a fine digit that
/// alone holds that many gets a bucket of its own, so keys spread over two or more fine digits
/// always land in two or more buckets (the recursion on a big bucket makes progress). Returns
/// each fine digit's bucket and the number of buckets.
fn balance(fine: &[usize], n: usize, max: usize) -> (Vec<u16>, usize) {
    debug_assert!(max <= 1 << 16);
    // Every bucket but the last holds at least n / max keys or is followed by one that does,
    // so keys in two or more fine digits always fill two or more buckets.
    let target = n.div_ceil(max).max(1);
    let mut map = vec![0u16; fine.len()];
    let (mut b, mut held) = (0usize, 0usize);
    for (m, &c) in map.iter_mut().zip(fine) {
        if held > 0 && c >= target && b + 1 < max {
            (b, held) = (b + 1, 0);
        }
        *m = b as u16;
        held += c;
        if held >= target && b + 1 < max {
            (b, held) = (b + 1, 0);
        }
    }
    (map, (b + 1).min(max))
}

/// Bytes from which a scratch buffer asks for transparent huge pages (a tuning parameter): two
/// huge pages, so at least one aligned 2 MiB page lies inside the buffer.
pub const HUGE_PAGE_MIN_BYTES: usize = 4 << 20;

/// Room for `n` elements, uninitialised. Large buffers are first touched by a scatter, one
/// page fault per 4 KiB page (a quarter of a whole-array sort's time, and the scatter's 4096
/// streams miss the TLB on 4 KiB pages); on Linux they ask for transparent huge pages first
/// (`madvise(MADV_HUGEPAGE)`: the machines' THP setting is often `madvise`), which takes one
/// fault per 2 MiB. Where the kernel says no, nothing changes.
pub(crate) fn scratch<E>(n: usize) -> Vec<E> {
    let v: Vec<E> = Vec::with_capacity(n);
    let bytes = n.saturating_mul(size_of::<E>());
    if bytes >= HUGE_PAGE_MIN_BYTES {
        advise_huge_pages(v.as_ptr().cast(), bytes);
    }
    v
}

#[cfg(target_os = "linux")]
fn advise_huge_pages(p: *const u8, bytes: usize) {
    const PAGE: usize = 4096;
    let start = (p as usize).next_multiple_of(PAGE);
    let end = (p as usize + bytes) / PAGE * PAGE;
    if end > start {
        // SAFETY: [start, end) lies inside the allocation just made (whole pages of it);
        // MADV_HUGEPAGE changes how the kernel backs the pages, never their contents. The
        // result is ignored: the advice is optional (an old kernel, THP disabled).
        unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) };
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_: *const u8, _: usize) {}

/// Copies `len` elements; a full line (`len == w` elements of 64 bytes in all) as one
/// fixed-size move, which compiles to two or four vector stores instead of a `memcpy` call.
///
/// # Safety
/// As [`std::ptr::copy_nonoverlapping`] for `len` elements.
#[inline(always)]
unsafe fn copy_run<E>(src: *const E, dst: *mut E, len: usize, w: usize) {
    if len == w && w * size_of::<E>() == LINE {
        // SAFETY: len elements are LINE bytes here (the caller's contract covers them).
        unsafe { dst.cast::<[u8; LINE]>().write_unaligned(src.cast::<[u8; LINE]>().read_unaligned()) };
    } else {
        for i in 0..len {
            // SAFETY: i < len (the caller's contract).
            unsafe { dst.add(i).write(src.add(i).read()) };
        }
    }
}

/// Hints that the line at `p` will be written soon (`prefetchw`); a no-op elsewhere. Never
/// faults, whatever `p` is.
#[inline(always)]
fn prefetch_for_write<E>(p: *const E) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint: it never faults, even on an invalid address.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_ET0 }>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Where a pass writes: the destination buffer, its chunking for the next pass, and the next
/// pass's digit (`None` after the last pass).
struct Target<E> {
    dst: Buffer<E>,
    chunk: usize,
    chunks: usize,
    next_shift: Option<u32>,
}

/// One of the two ping-pong buffers of [`sort_par`], shared by the threads of a pass.
#[derive(Clone, Copy)]
struct Buffer<E>(*mut E);

// SAFETY: the threads of a pass read the source buffer and write disjoint positions of the
// destination buffer (see `scatter_combined`); both outlive the pass.
unsafe impl<E: Send> Send for Buffer<E> {}
// SAFETY: as above.
unsafe impl<E: Send> Sync for Buffer<E> {}

impl<E> Buffer<E> {
    /// The pointer (a method, so closures capture the whole `Send` wrapper, not its field).
    fn ptr(self) -> *mut E {
        self.0
    }
}

/// `out[b] = sum of h[..b]`.
pub(crate) fn exclusive_prefix(h: &[usize], out: &mut [usize]) {
    let mut sum = 0;
    for (o, &c) in out.iter_mut().zip(h) {
        *o = sum;
        sum += c;
    }
}

/// Where each chunk starts writing each bucket: the bucket's global start plus the counts of the
/// chunks before it.
fn chunk_offsets(global: &[usize], counts: &[Vec<u32>]) -> Vec<Vec<usize>> {
    let mut start = vec![0; global.len()];
    exclusive_prefix(global, &mut start);
    counts
        .iter()
        .map(|c| {
            let mine = start.clone();
            for (s, &k) in start.iter_mut().zip(c) {
                *s += k as usize;
            }
            mine
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rand::{Rng, SeedableRng};

    fn random(seed: u64, n: usize, mask: u64, base: u64) -> Vec<u64> {
        let mut rng = hetkit_testkit::TestRng::seed_from_u64(seed);
        (0..n).map(|_| base.wrapping_add(rng.random::<u64>() & mask)).collect()
    }

    /// Checks a [`balance`] of counts `fine` into at most `max` buckets: monotone, at most
    /// `max`, digits that alone reach the target alone in their bucket, and two or more buckets
    /// holding keys whenever two or more digits do.
    fn check_balance(fine: &[usize], max: usize) {
        let n: usize = fine.iter().sum();
        let (map, buckets) = balance(fine, n, max);
        assert!(buckets >= 1 && buckets <= max, "{buckets} buckets of at most {max}");
        assert!(map.windows(2).all(|w| w[0] <= w[1] && w[1] - w[0] <= 1), "not monotone");
        assert!(map.iter().all(|&b| (b as usize) < buckets));
        let mut held = vec![0; buckets];
        for (&b, &c) in map.iter().zip(fine) {
            held[b as usize] += c;
        }
        let target = n.div_ceil(max).max(1);
        if *map.last().unwrap() as usize + 1 < max {
            for (f, &c) in fine.iter().enumerate() {
                if c >= target {
                    assert_eq!(held[map[f] as usize], c, "a big digit shares its bucket");
                }
            }
        }
        let used_digits = fine.iter().filter(|&&c| c > 0).count();
        let used_buckets = held.iter().filter(|&&c| c > 0).count();
        assert!(used_digits < 2 || used_buckets >= 2, "{used_digits} digits in {used_buckets} bucket");
    }

    #[test]
    fn balance_edges() {
        check_balance(&[0, 5, 0, 0], 4);
        check_balance(&[1, 1_000_000], 4096);
        check_balance(&[1_000_000, 1], 4096);
        check_balance(&[3; 1 << 16], 4096);
        check_balance(&[1, 0, 1, 0, 1], 2);
    }

    proptest! {
        #[test]
        fn balance_is_monotone_bounded_and_splits(
            fine in prop::collection::vec(prop_oneof![Just(0usize), 0usize..5, 0usize..10_000], 1..300),
            max in 2usize..64,
        ) {
            prop_assume!(fine.iter().sum::<usize>() > 0);
            check_balance(&fine, max);
        }
    }

    #[test]
    fn balanced_scatter_orders_buckets_and_keeps_input_order() {
        // Floats uniform in [-1e6, 1e6] (their ordered bits skewed towards the top exponent:
        // n / 32 keys in each of its 12-bit buckets, past the in-cache limit at this n), u32
        // uniform, and a narrow range.
        let n = 1 << 22;
        let mut rng = hetkit_testkit::TestRng::seed_from_u64(5);
        let floats: Vec<u64> = (0..n)
            .map(|_| {
                use crate::sort::SortKey;
                rng.random_range(-1.0e6f32..1.0e6).to_bits_ordered() as u64
            })
            .collect();
        let small = 1 << 18;
        for (what, keys) in [
            ("floats", floats),
            ("u32", random(1, small, u32::MAX as u64, 0)),
            ("narrow", random(2, small, 4095, 77)),
        ] {
            let n = keys.len();
            let input: Vec<(u64, u32)> = keys.iter().enumerate().map(|(i, &k)| (k, i as u32)).collect();
            let b = scatter_msd(&input, 64, &|p: &(u64, u32)| p.0).unwrap();
            let buckets: Vec<&[(u64, u32)]> = b.starts.windows(2).map(|w| &b.keys[w[0]..w[1]]).collect();
            assert_eq!(*b.starts.last().unwrap(), n);
            for w in buckets.windows(2) {
                let top = w[0].iter().map(|p| p.0).max();
                let bottom = w[1].iter().map(|p| p.0).min();
                assert!(top.zip(bottom).is_none_or(|(t, b)| t < b), "{what}: buckets overlap");
            }
            for bucket in &buckets {
                assert!(bucket.windows(2).all(|w| w[0].1 < w[1].1), "{what}: input order lost");
            }
            let mut all: Vec<u32> = b.keys.iter().map(|p| p.1).collect();
            all.sort_unstable();
            assert!(all.iter().enumerate().all(|(i, &p)| p == i as u32), "{what}: not a permutation");
            // Every bucket fits the cache: no second scatter.
            let largest = buckets.iter().map(|b| b.len()).max().unwrap();
            assert!(largest <= crate::sort::cpu::MSD_BUCKET_MAX, "{what}: a bucket of {largest} keys");
        }
    }
}
