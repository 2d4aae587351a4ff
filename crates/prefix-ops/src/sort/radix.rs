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
        let mut tmp: Vec<E> = Vec::with_capacity(n);
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

/// The result of [`scatter_msd`]: the elements grouped by their top varying digit.
pub(crate) struct Buckets<E> {
    /// The elements, bucket after bucket, each bucket in input order.
    pub(crate) keys: Vec<E>,
    /// `starts[b] .. starts[b + 1]` is bucket `b` (2^[`MSD_DIGIT_BITS`] + 1 entries).
    pub(crate) starts: Vec<usize>,
}

/// The first stage of the whole-array sort: one stable counting scatter of `data` by the
/// [`MSD_DIGIT_BITS`] highest bits that vary over the input (one read finds them and counts
/// them; a second only when the keys' top bits are constant), into a new buffer. Returns `None`
/// when every key is the same, or there are fewer than two keys (nothing to do).
pub(crate) fn scatter_msd<E, F>(data: &[E], key_bits: u32, key: &F) -> Option<Buckets<E>>
where
    E: Copy + Send + Sync,
    F: Fn(&E) -> u64 + Sync,
{
    scatter_msd_from(data, key_bits, key)
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

/// [`scatter_msd`] reading from any [`Source`].
pub(crate) fn scatter_msd_from<E, F, S>(data: &S, key_bits: u32, key: &F) -> Option<Buckets<E>>
where
    E: Copy + Send + Sync,
    F: Fn(&E) -> u64 + Sync,
    S: Source<E> + ?Sized,
{
    const D: u32 = MSD_DIGIT_BITS;
    type P<E, F> = Par<E, F, D, 1>;
    let n = data.len();
    let first = data.first()?;
    let chunks = rayon::current_num_threads().max(n.div_ceil(u32::MAX as usize)).max(1);
    let chunk = n.div_ceil(chunks);
    let chunks = n.div_ceil(chunk);
    let parts = || (0..chunks).into_par_iter().map(|t| data.range(t * chunk..((t + 1) * chunk).min(n)));
    let k0 = key(&first);
    let top = key_bits.saturating_sub(D);
    let counted: Vec<(u64, Vec<u32>)> = parts()
        .map(|c| {
            let mut h = vec![0u32; 1 << D];
            let mut diff = 0;
            for x in c {
                let k = key(&x);
                diff |= k ^ k0;
                h[((k >> top) & P::<E, F>::MASK) as usize] += 1;
            }
            (diff, h)
        })
        .collect();
    let diff = counted.iter().fold(0, |a, (d, _)| a | d);
    if diff == 0 {
        return None;
    }
    // The highest varying bit tops the digit; bits above it are the same in every key.
    let shift = (u64::BITS - diff.leading_zeros()).saturating_sub(D);
    let counts: Vec<Vec<u32>> = if shift == top {
        counted.into_iter().map(|(_, h)| h).collect()
    } else {
        parts()
            .map(|c| {
                let mut h = vec![0u32; 1 << D];
                for x in c {
                    h[((key(&x) >> shift) & P::<E, F>::MASK) as usize] += 1;
                }
                h
            })
            .collect()
    };
    let global: Vec<usize> = (0..1 << D).map(|b| counts.iter().map(|h| h[b] as usize).sum()).collect();
    let mut out: Vec<E> = Vec::with_capacity(n);
    let target = Target { dst: Buffer(out.as_mut_ptr()), chunk, chunks, next_shift: None };
    parts().zip(chunk_offsets(&global, &counts)).for_each(|(c, mut off)| {
        // SAFETY: chunk t writes bucket b's positions off[b] .. off[b] + counts[t][b], which no
        // other chunk writes, all below n; `out` has room for n elements.
        unsafe { P::<E, F>::scatter(c, &target, &mut off, shift, key) };
    });
    // SAFETY: the scatter wrote each of the n positions (it is a permutation).
    unsafe { out.set_len(n) };
    let mut starts = vec![0; (1 << D) + 1];
    exclusive_prefix(&global, &mut starts[..1 << D]);
    starts[1 << D] = n;
    Some(Buckets { keys: out, starts })
}

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
fn exclusive_prefix(h: &[usize], out: &mut [usize]) {
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
