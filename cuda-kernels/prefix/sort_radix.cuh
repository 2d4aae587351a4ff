// Onesweep-style LSD radix sort of long segments (whole arrays are one segment): 8-bit digits,
// one histogram pass over the keys for every digit, then one pass per digit that reads the keys
// once and writes them once, ping-ponging between the data and a scratch buffer (an even number
// of passes, so the result lands in the data: no copy back). Every long segment of a call is
// sorted by the same launches: tiles never straddle segments, and the look-back that finds a
// tile's place stops at the first tile of its segment.
//
// Entry points, one module per key type (sort_radix_K.cu), K in {u32, i32, f32, u64, i64, f64},
// V in {u32, u64}:
//   sort_radix_hist_K(keys, plan, segs_at, tiles_at, ntiles, tiles_per_block, desc, hist)
//     counts, per long segment and digit position, the keys of each digit: hist[(j * PASSES + p)
//     * 256 + d] (zeroed by the caller) += keys of segment j whose digit p is d.
//   sort_radix_pass_K[_V](src, dst, [src_vals, dst_vals], plan, segs_at, tiles_at, ntiles, hist,
//                         lookback, pass, desc)
//     moves every key of the long segments from src to dst, stably ordered by digit `pass`
//     within its segment. lookback holds PASSES tile counters then ntiles * 256 words, zeroed by
//     the caller once per call (the words carry their pass, so a pass never reads an older one).
// plan (u64 words): from segs_at, three words per long segment j (begin, end, first tile); from
// tiles_at, the segment of each tile. A tile is TILE = 256 * IPT consecutive keys of a segment
// (IPT = 16 for 4-byte keys, 8 for 8-byte keys); blocks of 256 threads.
//
// Per pass and tile: the keys are ranked stably (round r takes keys r*256 .. r*256+255, one per
// thread; lanes of equal digit found by eight ballots, warps ordered through per-warp digit
// counts), the tile's digit counts published to the look-back (one word per digit: pass tag
// in the top byte, count below), the tile's keys reordered by digit in shared memory and
// written out by consecutive threads, so each digit's run in the tile is one contiguous store.
#pragma once
#include "sort_keys.cuh"

#define HK_RADIX_THREADS 256
#define HK_RADIX_WARPS (HK_RADIX_THREADS / 32)
#define HK_RADIX_DIGITS 256
// Look-back word: (tag << 56) | count; tag = 2 * pass + 1 for a tile's own count (aggregate),
// 2 * pass + 2 for the count of the tile and all earlier tiles of its segment (inclusive).
#define HK_RADIX_COUNT_MASK 0x00ffffffffffffffull

template <typename K> struct RadixShape {
    typedef typename SortKey<K>::Bits U;
    static const int PASSES = (int)sizeof(U);  // 8-bit digits
    static const int IPT = sizeof(U) == 4 ? 16 : 8;
    static const u32 TILE = HK_RADIX_THREADS * IPT;
};

struct RadixTile {
    u64 seg_begin, begin;
    u32 len, seg, first;
    bool is_first;
};

HK_DEVICE RadixTile radix_tile(const u64* plan, u64 segs_at, u64 tiles_at, u64 tile, u32 tile_keys) {
    RadixTile t;
    const u64 seg = plan[tiles_at + tile];
    const u64* s = plan + segs_at + 3 * seg;
    t.seg = (u32)seg;
    t.seg_begin = s[0];
    t.first = (u32)s[2];
    t.begin = s[0] + (tile - s[2]) * tile_keys;
    const u64 rest = s[1] - t.begin;
    t.len = rest < tile_keys ? (u32)rest : tile_keys;
    t.is_first = tile == s[2];
    return t;
}

// Exclusive prefix sum over the 256 threads of the block (one value each); scratch holds
// HK_RADIX_WARPS words. Contains barriers; scratch is free again after the call returns.
HK_DEVICE u64 radix_block_exclusive(u64 v, u64* scratch) {
    const u32 lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    u64 incl = v;
#pragma unroll
    for (u32 d = 1; d < 32; d <<= 1) {
        u64 o = __shfl_up_sync(0xffffffffu, incl, d);
        if (lane >= d) incl += o;
    }
    if (lane == 31) scratch[warp] = incl;
    __syncthreads();
    u64 before = 0;
    for (u32 w = 0; w < warp; ++w) before += scratch[w];
    __syncthreads();
    return before + incl - v;
}

template <typename K>
__device__ void radix_hist(const K* keys, const u64* plan, u64 segs_at, u64 tiles_at, u64 ntiles,
                           u32 tiles_per_block, u32 desc, u64* hist) {
    typedef RadixShape<K> S;
    typedef typename S::U U;
    __shared__ u32 counts[S::PASSES][HK_RADIX_DIGITS];
    const U flip = desc ? ~(U)0 : (U)0;
    const u32 d = threadIdx.x;
    for (int p = 0; p < S::PASSES; ++p) counts[p][d] = 0;
    __syncthreads();
    const u64 t0 = (u64)blockIdx.x * tiles_per_block;
    const u64 t1 = t0 + tiles_per_block < ntiles ? t0 + tiles_per_block : ntiles;
    u32 seg = 0xffffffffu;
    for (u64 tile = t0; tile < t1; ++tile) {
        RadixTile t = radix_tile(plan, segs_at, tiles_at, tile, S::TILE);
        if (t.seg != seg && seg != 0xffffffffu) {
            // A block's tiles may cross into the next segment: flush the counts so far.
            __syncthreads();
            for (int p = 0; p < S::PASSES; ++p) {
                u32 c = counts[p][d];
                if (c) atomicAdd(&hist[((u64)seg * S::PASSES + p) * HK_RADIX_DIGITS + d], (u64)c);
                counts[p][d] = 0;
            }
            __syncthreads();
        }
        seg = t.seg;
        for (u32 i = threadIdx.x; i < t.len; i += HK_RADIX_THREADS) {
            U b = SortKey<K>::to_bits(keys[t.begin + i]) ^ flip;
#pragma unroll
            for (int p = 0; p < S::PASSES; ++p) atomicAdd(&counts[p][(u32)(b >> (8 * p)) & 255u], 1u);
        }
    }
    __syncthreads();
    if (seg != 0xffffffffu) {
        for (int p = 0; p < S::PASSES; ++p) {
            u32 c = counts[p][d];
            if (c) atomicAdd(&hist[((u64)seg * S::PASSES + p) * HK_RADIX_DIGITS + d], (u64)c);
        }
    }
}

// This tile's exclusive prefix for digit d over the earlier tiles of its segment, found by
// walking back through their look-back words until an inclusive one; publishes the tile's own
// inclusive count. One thread per digit.
HK_DEVICE u64 radix_lookback(u64* words, const RadixTile& t, u64 tile, u32 d, u32 pass, u64 own) {
    const u64 agg_tag = 2ull * pass + 1, inc_tag = 2ull * pass + 2;
    volatile u64* w = (volatile u64*)words;
    if (t.is_first) {
        w[tile * HK_RADIX_DIGITS + d] = (inc_tag << 56) | own;
        return 0;
    }
    w[tile * HK_RADIX_DIGITS + d] = (agg_tag << 56) | own;
    u64 excl = 0;
    for (u64 p = tile - 1;; --p) {
        u64 v = w[p * HK_RADIX_DIGITS + d];
        u32 backoff = 32;
        while ((v >> 56) != agg_tag && (v >> 56) != inc_tag) {
            // The predecessor has not published this pass yet: back off, then poll again.
            __nanosleep(backoff);
            backoff = backoff < 1024 ? backoff * 2 : backoff;
            v = w[p * HK_RADIX_DIGITS + d];
        }
        excl += v & HK_RADIX_COUNT_MASK;
        if ((v >> 56) == inc_tag || p == t.first) break;
    }
    w[tile * HK_RADIX_DIGITS + d] = (inc_tag << 56) | (excl + own);
    return excl;
}

template <typename K, typename V, bool KV>
__device__ void radix_pass(const K* src, K* dst, const V* src_vals, V* dst_vals, const u64* plan, u64 segs_at,
                           u64 tiles_at, u64 ntiles, const u64* hist, u64* lookback, u32 pass, u32 desc) {
    typedef RadixShape<K> S;
    typedef typename S::U U;
    const int IPT = S::IPT;
    extern __shared__ __align__(16) unsigned char radix_smem[];
    U* sk = (U*)radix_smem;                // the tile reordered by digit
    V* sv = (V*)(sk + S::TILE);            // its values
    __shared__ u32 warp_counts[2][HK_RADIX_WARPS][HK_RADIX_DIGITS];
    __shared__ u32 digit_start[HK_RADIX_DIGITS];  // first slot of each digit in the reordered tile
    __shared__ u64 digit_dst[HK_RADIX_DIGITS];    // destination of slot 0 for keys of each digit
    __shared__ u64 scan_scratch[2][HK_RADIX_WARPS];
    __shared__ u64 tile_id;

    const U flip = desc ? ~(U)0 : (U)0;
    const u32 lane = threadIdx.x & 31u, warp = threadIdx.x >> 5, d = threadIdx.x;
    const u32 shift = 8u * pass;
    if (threadIdx.x == 0) tile_id = atomicAdd((unsigned long long*)lookback + pass, 1ull);
    for (u32 i = threadIdx.x; i < 2 * HK_RADIX_WARPS * HK_RADIX_DIGITS; i += HK_RADIX_THREADS)
        (&warp_counts[0][0][0])[i] = 0;
    __syncthreads();
    const u64 tile = tile_id;
    if (tile >= ntiles) return;  // block-uniform
    u64* words = lookback + S::PASSES;
    const RadixTile t = radix_tile(plan, segs_at, tiles_at, tile, S::TILE);

    U bits[IPT];
    u32 rank[IPT];
    u32 run = 0;  // thread d: keys of digit d in the rounds so far
    const u32 lt_mask = (1u << lane) - 1u;
    // The whole tile's loads first: the ranking rounds below are separated by barriers, which
    // loads do not cross, so loading in them would leave one key per thread in flight (1 KiB per
    // block) where the tile's 16 KiB cover the memory latency at 24 resident warps per SM.
#pragma unroll
    for (int r = 0; r < IPT; ++r) {
        const u32 i = (u32)r * HK_RADIX_THREADS + threadIdx.x;
        bits[r] = i < t.len ? SortKey<K>::to_bits(src[t.begin + i]) ^ flip : ~(U)0;
    }
#pragma unroll
    for (int r = 0; r < IPT; ++r) {
        const u32 i = (u32)r * HK_RADIX_THREADS + threadIdx.x;
        const bool valid = i < t.len;
        const u32 digit = (u32)(bits[r] >> shift) & 255u;
        u32 peers = __ballot_sync(0xffffffffu, valid);
#pragma unroll
        for (int b = 0; b < 8; ++b) {
            u32 set = __ballot_sync(0xffffffffu, (digit >> b) & 1u);
            peers &= ((digit >> b) & 1u) ? set : ~set;
        }
        const u32 buf = (u32)r & 1u;
        // The lowest lane of each digit group writes the group's size, tagged with the round.
        if (valid && (peers & lt_mask) == 0) warp_counts[buf][warp][digit] = ((u32)(r + 1) << 16) | __popc(peers);
        __syncthreads();
        for (u32 w = 0; w < HK_RADIX_WARPS; ++w) {
            u32 e = warp_counts[buf][w][d];
            u32 c = (e >> 16) == (u32)(r + 1) ? (e & 0xffffu) : 0u;
            warp_counts[buf][w][d] = run;  // tag 0: read below as this round's offset
            run += c;
        }
        __syncthreads();
        // Double-buffered by round: the next round writes the other buffer, and this buffer is
        // written again only after every thread has passed the next round's second barrier.
        rank[r] = valid ? warp_counts[buf][warp][digit] + __popc(peers & lt_mask) : 0u;
    }

    const u64 tile_excl = radix_block_exclusive((u64)run, scan_scratch[0]);
    const u64 seg_count = hist[((u64)t.seg * S::PASSES + pass) * HK_RADIX_DIGITS + d];
    const u64 seg_excl = radix_block_exclusive(seg_count, scan_scratch[1]);
    const u64 before = radix_lookback(words, t, tile, d, pass, (u64)run);
    digit_start[d] = (u32)tile_excl;
    // Slot s of digit d goes to seg_begin + seg_excl + before + (s - tile_excl) (wraps, never
    // below zero in the sum).
    digit_dst[d] = t.seg_begin + seg_excl + before - tile_excl;
    __syncthreads();
#pragma unroll
    for (int r = 0; r < IPT; ++r) {
        const u32 i = (u32)r * HK_RADIX_THREADS + threadIdx.x;
        if (i < t.len) {
            const u32 slot = digit_start[(u32)(bits[r] >> shift) & 255u] + rank[r];
            sk[slot] = bits[r];
            if (KV) sv[slot] = src_vals[t.begin + i];
        }
    }
    __syncthreads();
    for (u32 s = threadIdx.x; s < t.len; s += HK_RADIX_THREADS) {
        const U b = sk[s];
        const u64 to = digit_dst[(u32)(b >> shift) & 255u] + s;
        dst[to] = SortKey<K>::from_bits(b ^ flip);
        if (KV) dst_vals[to] = sv[s];
    }
}

#define HK_RADIX_KEYS(K, NAME)                                                                         \
    extern "C" __global__ void __launch_bounds__(HK_RADIX_THREADS)                                     \
        sort_radix_hist_##NAME(const K* keys, const u64* plan, u64 segs_at, u64 tiles_at, u64 ntiles,  \
                               u32 tiles_per_block, u32 desc, u64* hist) {                             \
        radix_hist<K>(keys, plan, segs_at, tiles_at, ntiles, tiles_per_block, desc, hist);            \
    }                                                                                                  \
    extern "C" __global__ void __launch_bounds__(HK_RADIX_THREADS)                                     \
        sort_radix_pass_##NAME(const K* src, K* dst, const u64* plan, u64 segs_at, u64 tiles_at,       \
                               u64 ntiles, const u64* hist, u64* lookback, u32 pass, u32 desc) {       \
        radix_pass<K, u32, false>(src, dst, (const u32*)0, (u32*)0, plan, segs_at, tiles_at, ntiles,  \
                                  hist, lookback, pass, desc);                                         \
    }

#define HK_RADIX_PAIRS(K, NAME, V, VNAME)                                                               \
    extern "C" __global__ void __launch_bounds__(HK_RADIX_THREADS) sort_radix_pass_##NAME##_##VNAME(   \
        const K* src, K* dst, const V* src_vals, V* dst_vals, const u64* plan, u64 segs_at,             \
        u64 tiles_at, u64 ntiles, const u64* hist, u64* lookback, u32 pass, u32 desc) {                 \
        radix_pass<K, V, true>(src, dst, src_vals, dst_vals, plan, segs_at, tiles_at, ntiles, hist,    \
                               lookback, pass, desc);                                                  \
    }

#define HK_RADIX_TYPE(K, NAME)        \
    HK_RADIX_KEYS(K, NAME)            \
    HK_RADIX_PAIRS(K, NAME, u32, u32) \
    HK_RADIX_PAIRS(K, NAME, u64, u64)
