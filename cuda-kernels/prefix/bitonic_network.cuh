// Bitonic merge comb sort (BMCS) of one row of N = 2^n keys inside a thread block.
//
// The network is Batcher's bitonic sort in the flip ("comb") form, where every comparator is
// ascending (min to the lower index). Merge stage s = 1..n sorts blocks of 2^s keys:
//   flip step:      compare i with i ^ (2^s - 1)            (its mirror in the block)
//   half-cleaners:  compare i with i ^ j, j = 2^(s-2) .. 1
// A step is named by the high bit h of its mask (the flip of stage s has h = s - 1, the
// half-cleaner j has h = log2 j). Each virtual thread t owns the four consecutive keys 4t..4t+3
// (its "home"), which decides where a step runs:
//   h <= 1        registers: both keys in one thread (stages 1 and 2, and the last two steps of
//                 every later stage),
//   2 <= h <= 6   shuffles: the partner of key 4t+q is key 4(t ^ M)+q (half-cleaner, M = j/4) or
//                 4(t ^ M)+3-q (flip, M = 2^(s-2) - 1); t ^ M < 32 stays in the warp,
//   h >= 7        shared memory: two steps at a time (radix 4) on the orbit
//                 {b, b^mB, b^mA, b^mA^mB} of a base index b, one barrier per pair; an odd
//                 count starts with one radix-2 step.
// The row lives in shared memory between stages; a thread takes its virtual threads one at a
// time (bmcs_sort_smem), so it never holds more than four keys. A CPU model of exactly this
// schedule is prefix_ops::sort::emulate, which the tests run through the 0-1 principle.
//
// Key-value rows carry a 32-bit tag (the key's position in its row) and compare (key, tag)
// lexicographically. That makes the order strict, so the sort is stable, and the padding keys
// (all ones, at positions >= len) stay behind real keys equal to all ones. Values move once,
// at the end, gathered through the tags.
#pragma once
#include "sort_keys.cuh"

#define HK_FULL_MASK 0xffffffffu

// a > b in the network's order: by key, then (tagged) by tag.
template <bool TAGGED, typename U>
HK_DEVICE bool bmcs_gt(U ka, u32 ta, U kb, u32 tb) {
    return TAGGED ? (ka > kb || (ka == kb && ta > tb)) : (ka > kb);
}

// Compare-exchange: the smaller pair ends in (ka, ta). Branch-free selects.
template <bool TAGGED, typename U>
HK_DEVICE void bmcs_cas(U& ka, u32& ta, U& kb, u32& tb) {
    bool s = bmcs_gt<TAGGED>(ka, ta, kb, tb);
    U lo = s ? kb : ka;
    U hi = s ? ka : kb;
    ka = lo;
    kb = hi;
    if (TAGGED) {
        u32 tl = s ? tb : ta;
        u32 th = s ? ta : tb;
        ta = tl;
        tb = th;
    }
}

// Stages 1 and 2 on a thread's four consecutive keys.
template <bool TAGGED, typename U>
HK_DEVICE void bmcs_registers_first(U* k, u32* t) {
    bmcs_cas<TAGGED>(k[0], t[0], k[1], t[1]);  // stage 1, flip (mask 1)
    bmcs_cas<TAGGED>(k[2], t[2], k[3], t[3]);
    bmcs_cas<TAGGED>(k[0], t[0], k[3], t[3]);  // stage 2, flip (mask 3)
    bmcs_cas<TAGGED>(k[1], t[1], k[2], t[2]);
    bmcs_cas<TAGGED>(k[0], t[0], k[1], t[1]);  // stage 2, j = 1
    bmcs_cas<TAGGED>(k[2], t[2], k[3], t[3]);
}

// The half-cleaners j = 2 and j = 1 that end every stage s >= 3.
template <bool TAGGED, typename U>
HK_DEVICE void bmcs_registers_last(U* k, u32* t) {
    bmcs_cas<TAGGED>(k[0], t[0], k[2], t[2]);
    bmcs_cas<TAGGED>(k[1], t[1], k[3], t[3]);
    bmcs_cas<TAGGED>(k[0], t[0], k[1], t[1]);
    bmcs_cas<TAGGED>(k[2], t[2], k[3], t[3]);
}

// One step across threads of a warp: exchange the four keys with thread t ^ m (slots reversed
// for a flip), keep the minima in the lower thread and the maxima in the upper one.
template <bool TAGGED, typename U>
HK_DEVICE void bmcs_shuffle_step(U* k, u32* t, u32 vt, u32 m, bool flip) {
    const u32 high = 1u << (31 - __clz(m));
    const bool lower = (vt & high) == 0;
    U ok[4];
    u32 ot[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) {
        U send = flip ? k[3 - q] : k[q];
        ok[q] = __shfl_xor_sync(HK_FULL_MASK, send, m);
        if (TAGGED) {
            u32 tsend = flip ? t[3 - q] : t[q];
            ot[q] = __shfl_xor_sync(HK_FULL_MASK, tsend, m);
        }
    }
#pragma unroll
    for (int q = 0; q < 4; ++q) {
        u32 tq = TAGGED ? t[q] : 0u;
        u32 oq = TAGGED ? ot[q] : 0u;
        bool take = lower == bmcs_gt<TAGGED>(k[q], tq, ok[q], oq);
        k[q] = take ? ok[q] : k[q];
        if (TAGGED) t[q] = take ? ot[q] : t[q];
    }
}

// x with a zero bit inserted at position h (the bits at and above h move up by one).
HK_DEVICE u32 bmcs_insert_zero(u32 x, u32 h) {
    return ((x >> h) << (h + 1)) | (x & ((1u << h) - 1u));
}

template <bool TAGGED, typename U>
HK_DEVICE void bmcs_smem_cas(U* sk, u32* st, u32 a, u32 b) {
    U ka = sk[a], kb = sk[b];
    u32 ta = TAGGED ? st[a] : 0u, tb = TAGGED ? st[b] : 0u;
    bmcs_cas<TAGGED>(ka, ta, kb, tb);
    sk[a] = ka;
    sk[b] = kb;
    if (TAGGED) {
        st[a] = ta;
        st[b] = tb;
    }
}

// One radix-2 shared-memory step (mask m, high bit h) for virtual thread vt of a row with nt
// virtual threads: pairs vt and vt + nt of the row's n/2 comparators.
template <bool TAGGED, typename U>
HK_DEVICE void bmcs_smem_radix2(U* sk, u32* st, u32 vt, u32 nt, u32 m, u32 h, u32 len) {
#pragma unroll
    for (int c = 0; c < 2; ++c) {
        u32 b = bmcs_insert_zero(vt + c * nt, h);
        if (b >= len) continue;  // both keys padding (b is the lower one)
        bmcs_smem_cas<TAGGED>(sk, st, b, b ^ m);
    }
}

// Two shared-memory steps fused (radix 4): step A (mask ma, high bit ha: a flip or a
// half-cleaner) then the half-cleaner 2^hb, hb = ha - 1, on the orbit of one base index.
template <bool TAGGED, typename U>
HK_DEVICE void bmcs_smem_radix4(U* sk, u32* st, u32 vt, u32 ma, u32 ha, u32 hb, bool flip, u32 len) {
    const u32 mb = 1u << hb;
    const u32 b = bmcs_insert_zero(bmcs_insert_zero(vt, hb), ha);
    if (b >= len) return;  // all four keys padding (b is the lowest)
    const u32 e[4] = {b, b ^ mb, b ^ ma, b ^ ma ^ mb};
    U k[4];
    u32 t[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) {
        k[q] = sk[e[q]];
        t[q] = TAGGED ? st[e[q]] : 0u;
    }
    bmcs_cas<TAGGED>(k[0], t[0], k[2], t[2]);  // step A
    bmcs_cas<TAGGED>(k[1], t[1], k[3], t[3]);
    bmcs_cas<TAGGED>(k[0], t[0], k[1], t[1]);  // step B; after a flip e3 < e2
    if (flip) {
        bmcs_cas<TAGGED>(k[3], t[3], k[2], t[2]);
    } else {
        bmcs_cas<TAGGED>(k[2], t[2], k[3], t[3]);
    }
#pragma unroll
    for (int q = 0; q < 4; ++q) {
        sk[e[q]] = k[q];
        if (TAGGED) st[e[q]] = t[q];
    }
}

// Home loads and stores: virtual thread v's four keys at 4v..4v+3 of the row's scratch, moved as
// 16-byte vectors. Scalar accesses put lanes 4 apart on one bank (a 4-way conflict for 32-bit
// keys); a 16-byte access per lane is served a quarter warp at a time, 8 lanes over 128 bytes,
// conflict-free for 32-bit keys and tags. 64-bit keys need two vectors per lane; lanes 4 apart
// (same bank group) take them in opposite orders so each quarter warp covers 8 distinct groups.
struct __align__(16) hk_vec_u32x4 { u32 v[4]; };
struct __align__(16) hk_vec_u64x2 { u64 v[2]; };

HK_DEVICE void bmcs_home_load(const u32* s, u32 home, u32* k) {
    hk_vec_u32x4 x = *(const hk_vec_u32x4*)(s + home);
#pragma unroll
    for (int q = 0; q < 4; ++q) k[q] = x.v[q];
}

HK_DEVICE void bmcs_home_store(u32* s, u32 home, const u32* k) {
    hk_vec_u32x4 x;
#pragma unroll
    for (int q = 0; q < 4; ++q) x.v[q] = k[q];
    *(hk_vec_u32x4*)(s + home) = x;
}

HK_DEVICE void bmcs_home_load(const u64* s, u32 home, u64* k) {
    const hk_vec_u64x2* p = (const hk_vec_u64x2*)(s + home);
    const u32 first = (threadIdx.x >> 2) & 1u;
    hk_vec_u64x2 a = p[first];
    hk_vec_u64x2 b = p[first ^ 1u];
    k[0] = first ? b.v[0] : a.v[0];
    k[1] = first ? b.v[1] : a.v[1];
    k[2] = first ? a.v[0] : b.v[0];
    k[3] = first ? a.v[1] : b.v[1];
}

HK_DEVICE void bmcs_home_store(u64* s, u32 home, const u64* k) {
    hk_vec_u64x2* p = (hk_vec_u64x2*)(s + home);
    const u32 first = (threadIdx.x >> 2) & 1u;
    hk_vec_u64x2 lo, hi;
    lo.v[0] = k[0];
    lo.v[1] = k[1];
    hi.v[0] = k[2];
    hi.v[1] = k[3];
    p[first] = first ? hi : lo;
    p[first ^ 1u] = first ? lo : hi;
}

// The steps of stage s whose high bit is at most 6, on one virtual thread's registers: the
// shuffles from high bit h down to 2 (the first one the stage's flip when `flip`), then the two
// register half-cleaners.
template <bool TAGGED, typename U>
HK_DEVICE void bmcs_warp_steps(U* k, u32* t, u32 v, u32 s, int h, bool flip) {
    for (; h >= 2; --h) {
        u32 m = flip ? (1u << (s - 2)) - 1u : (1u << (h - 2));
        bmcs_shuffle_step<TAGGED>(k, t, v, m, flip);
        flip = false;
    }
    bmcs_registers_last<TAGGED>(k, t);
}

// Sorts the row held in shared memory, sk (keys) and st (tags, when TAGGED), n = 2^log_n >= 4
// keys, by the np threads tp = 0..np-1 of the row (np a power of two: n/4 when n <= 128, else a
// multiple of 32). Virtual thread v = tp + c*np, c < n/(4 np), is taken one at a time, so a
// thread holds four keys in registers whatever the row length: no spills, one kernel for every
// length. Steps of high bit <= 6 stay within 128 keys, i.e. within one virtual warp whose lanes
// are one physical warp's lanes, so a warp runs them on its chunk with no barrier. Every thread
// of the block must call it with the same log_n (barriers inside). Ends with a barrier.
//
// Padding: keys at len and beyond are the order's maximum (tags above every real tag), and
// every compare-exchange puts the smaller key at the lower index, so those keys never move: a
// compare-exchange whose lower index is at or beyond len does nothing. Groups of them are
// skipped (a warp in the register steps when all its keys are padding, a thread in the shared
// steps when its group's lowest index is), so a row of len keys padded to n does about the
// work of len keys, not n, beside the flips that pair real keys with padding
// (sort::emulate::bmcs_work counts it).
template <bool TAGGED, typename U>
HK_DEVICE void bmcs_sort_smem(U* sk, u32* st, u32 tp, u32 np, u32 log_n, u32 len) {
    const u32 nt = (1u << log_n) >> 2;
    const u32 first_smem = log_n < 7 ? log_n : 7;  // last stage that needs no shared step
    U k[4];
    u32 t[4];
    for (u32 v = tp; v < nt; v += np) {
        // Warp-uniform: lanes exchange keys only within their warp's 128 (or their row's).
        if (__all_sync(HK_FULL_MASK, 4u * v >= len)) continue;
        bmcs_home_load(sk, 4u * v, k);
        if (TAGGED) bmcs_home_load(st, 4u * v, t);
        bmcs_registers_first<TAGGED>(k, t);
        for (u32 s = 3; s <= first_smem; ++s) bmcs_warp_steps<TAGGED>(k, t, v, s, (int)s - 1, true);
        bmcs_home_store(sk, 4u * v, k);
        if (TAGGED) bmcs_home_store(st, 4u * v, t);
    }
    __syncthreads();
    for (u32 s = 8; s <= log_n; ++s) {
        int h = (int)s - 1;
        bool flip = true;
        if (((h - 6) & 1) != 0) {  // odd number of shared steps: the flip alone, radix 2
            for (u32 v = tp; v < nt; v += np)
                bmcs_smem_radix2<TAGGED>(sk, st, v, nt, (1u << s) - 1u, (u32)h, len);
            __syncthreads();
            h -= 1;
            flip = false;
        }
        for (; h > 6; h -= 2) {
            u32 ma = flip ? (1u << s) - 1u : (1u << h);
            for (u32 v = tp; v < nt; v += np)
                bmcs_smem_radix4<TAGGED>(sk, st, v, ma, (u32)h, (u32)(h - 1), flip, len);
            __syncthreads();
            flip = false;
        }
        for (u32 v = tp; v < nt; v += np) {
            if (__all_sync(HK_FULL_MASK, 4u * v >= len)) continue;
            bmcs_home_load(sk, 4u * v, k);
            if (TAGGED) bmcs_home_load(st, 4u * v, t);
            bmcs_warp_steps<TAGGED>(k, t, v, s, h, false);
            bmcs_home_store(sk, 4u * v, k);
            if (TAGGED) bmcs_home_store(st, 4u * v, t);
        }
        __syncthreads();
    }
}
