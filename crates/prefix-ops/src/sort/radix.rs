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
        let (src, dst): (&[E], &mut [E]) = if in_data { (&*data, &mut tmp[..]) } else { (&tmp[..], &mut *data) };
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

/// Sorts `data` stably by `key` (significant bits: the low `key_bits`) on rayon's threads, with
/// [`PAR_DIGIT_BITS`]-bit digits. Meant for large arrays (see [`super::cpu::RADIX_PAR_MIN`]).
pub(crate) fn sort_par<E, F>(data: &mut [E], key_bits: u32, key: F)
where
    E: Copy + Send + Sync,
    F: Fn(&E) -> u64 + Sync,
{
    const D: u32 = PAR_DIGIT_BITS;
    let n = data.len();
    if n < 2 {
        return;
    }
    let passes = key_bits.div_ceil(D) as usize;
    let threads = rayon::current_num_threads().max(1);
    let chunk = n.div_ceil(threads);
    let key = &key;
    // Per chunk, the counts of every digit: [pass][bucket].
    let first: Vec<Vec<usize>> = data.par_chunks(chunk).map(|c| histogram_all::<E, F, D>(c, passes, key)).collect();
    let global: Vec<usize> = (0..passes << D).map(|i| first.iter().map(|h| h[i]).sum()).collect();
    let active: Vec<usize> = (0..passes).filter(|&p| !global[p << D..(p + 1) << D].contains(&n)).collect();
    if active.is_empty() {
        return;
    }
    let mut tmp: Vec<E> = Vec::with_capacity(n);
    let bufs = [Buffer(data.as_mut_ptr()), Buffer(tmp.as_mut_ptr())];
    for (i, &p) in active.iter().enumerate() {
        let (src, dst) = (bufs[i % 2], bufs[(i + 1) % 2]);
        // SAFETY: `src` holds n initialised elements: `data`, or `tmp` after the previous pass
        // wrote every one of its n positions (each pass is a permutation).
        let src_slice: &[E] = unsafe { std::slice::from_raw_parts(src.ptr().cast_const(), n) };
        let shift = p as u32 * D;
        let counts: Vec<Vec<usize>> = if i == 0 {
            first.iter().map(|h| h[p << D..(p + 1) << D].to_vec()).collect()
        } else {
            src_slice.par_chunks(chunk).map(|c| histogram_one::<E, F, D>(c, shift, key)).collect()
        };
        let offsets = chunk_offsets(&global[p << D..(p + 1) << D], &counts);
        src_slice.par_chunks(chunk).zip(offsets).for_each(|(c, mut off)| {
            // SAFETY: chunk t writes bucket b's positions off[b] .. off[b] + counts[t][b], which
            // no other chunk writes, all below n; `dst` has room for n elements.
            unsafe { scatter_combined::<E, F, D>(c, dst.ptr(), &mut off, shift, key) }
        });
    }
    if active.len() % 2 == 1 {
        // SAFETY: the last pass wrote all n elements of `tmp`.
        unsafe { tmp.set_len(n) };
        data.par_chunks_mut(chunk).zip(tmp.par_chunks(chunk)).for_each(|(d, t)| d.copy_from_slice(t));
    }
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
fn chunk_offsets(global: &[usize], counts: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let mut start = vec![0; global.len()];
    exclusive_prefix(global, &mut start);
    counts
        .iter()
        .map(|c| {
            let mine = start.clone();
            for (s, &k) in start.iter_mut().zip(c) {
                *s += k;
            }
            mine
        })
        .collect()
}

/// Counts of every digit of `chunk`'s keys in one pass: `passes` histograms of `2^D` buckets.
fn histogram_all<E, F: Fn(&E) -> u64, const D: u32>(chunk: &[E], passes: usize, key: &F) -> Vec<usize> {
    let mask = (1u64 << D) - 1;
    let mut h = vec![0u32; passes << D];
    // u32 counters halve the histograms' cache footprint; a chunk is flushed into the usize
    // totals before any counter could overflow.
    let mut total = vec![0usize; passes << D];
    for part in chunk.chunks(u32::MAX as usize) {
        for x in part {
            let k = key(x);
            for p in 0..passes {
                h[(p << D) + ((k >> (p as u32 * D)) & mask) as usize] += 1;
            }
        }
        for (t, c) in total.iter_mut().zip(h.iter_mut()) {
            *t += *c as usize;
            *c = 0;
        }
    }
    total
}

/// Counts of one digit (at `shift`) of `chunk`'s keys.
fn histogram_one<E, F: Fn(&E) -> u64, const D: u32>(chunk: &[E], shift: u32, key: &F) -> Vec<usize> {
    let mask = (1u64 << D) - 1;
    let mut h = vec![0usize; 1 << D];
    for x in chunk {
        h[((key(x) >> shift) & mask) as usize] += 1;
    }
    h
}

/// The stable scatter of one chunk through write-combining buffers: keys gather per bucket in
/// a cache line's worth of slots and go out a line at a time.
///
/// # Safety
/// For every bucket `b`, `dst[off[b] .. off[b] + (keys of chunk in b)]` must be valid for
/// writes and written by no one else meanwhile.
unsafe fn scatter_combined<E: Copy, F: Fn(&E) -> u64, const D: u32>(
    chunk: &[E],
    dst: *mut E,
    off: &mut [usize],
    shift: u32,
    key: &F,
) {
    let Some(&first) = chunk.first() else { return };
    let w = (LINE / size_of::<E>().max(1)).max(2);
    let mask = (1u64 << D) - 1;
    let mut buf = vec![first; w << D];
    let mut fill = vec![0u32; 1 << D];
    for x in chunk {
        let b = ((key(x) >> shift) & mask) as usize;
        let f = fill[b] as usize;
        buf[b * w + f] = *x;
        if f + 1 == w {
            // SAFETY: the bucket's next w positions are its own (the function's contract).
            unsafe { std::ptr::copy_nonoverlapping(buf.as_ptr().add(b * w), dst.add(off[b]), w) };
            off[b] += w;
            fill[b] = 0;
        } else {
            fill[b] = f as u32 + 1;
        }
    }
    for (b, &f) in fill.iter().enumerate() {
        // SAFETY: as above, for the last f < w keys of bucket b.
        unsafe { std::ptr::copy_nonoverlapping(buf.as_ptr().add(b * w), dst.add(off[b]), f as usize) };
    }
}
