// Warp-level inclusive scans over the 32 lanes of a warp with register shuffles, in three
// prefix networks (selectable for study; all give exact integer results, and each gives its
// own fixed float association, reproduced by the Rust emulator `scan::emulate`):
//
//   KOGGE_STONE     5 steps, lane i takes lane i - d (d = 1, 2, 4, 8, 16): shfl_up only.
//   SKLANSKY        5 steps, in each block of 2h lanes the upper half takes the last lane of the
//                   lower half (the thesis's "LF"): shfl from a computed lane.
//   LADNER_FISCHER  6 steps: odd lanes add their even neighbour, Sklansky over the odd lanes,
//                   then even lanes add their odd left neighbour (classic LF, depth log n + 1).
//
// Every lane of the warp must call these (full mask). Operators get the earlier operand first.
#pragma once
#include "scan_ops.cuh"

#define HK_FULL_MASK 0xffffffffu

enum ScanNetwork { KOGGE_STONE = 0, SKLANSKY = 1, LADNER_FISCHER = 2 };

HK_DEVICE int lane_id() { return threadIdx.x & 31; }

// ---- shuffles for every scan element type, pairs included ---------------------------------------
template <typename T> HK_DEVICE T shfl_up(T x, int d) { return __shfl_up_sync(HK_FULL_MASK, x, d); }
template <typename T> HK_DEVICE T shfl_idx(T x, int src) { return __shfl_sync(HK_FULL_MASK, x, src); }
template <typename V> HK_DEVICE Flagged<V> shfl_up(Flagged<V> x, int d) {
    Flagged<V> r;
    r.v = __shfl_up_sync(HK_FULL_MASK, x.v, d);
    r.f = __shfl_up_sync(HK_FULL_MASK, x.f, d);
    return r;
}
template <typename V> HK_DEVICE Flagged<V> shfl_idx(Flagged<V> x, int src) {
    Flagged<V> r;
    r.v = __shfl_sync(HK_FULL_MASK, x.v, src);
    r.f = __shfl_sync(HK_FULL_MASK, x.f, src);
    return r;
}

// ---- the networks ------------------------------------------------------------------------------
template <int NET, typename T, typename Op> HK_DEVICE T warp_inclusive(T x, const Op& op) {
    const int lane = lane_id();
    if (NET == KOGGE_STONE) {
#pragma unroll
        for (int d = 1; d < 32; d *= 2) {
            T y = shfl_up(x, d);
            if (lane >= d) x = op(y, x);
        }
    } else if (NET == SKLANSKY) {
#pragma unroll
        for (int h = 1; h < 32; h *= 2) {
            T y = shfl_idx(x, (lane & ~(2 * h - 1)) | (h - 1));
            if (lane & h) x = op(y, x);
        }
    } else {
        T y = shfl_up(x, 1);
        if (lane & 1) x = op(y, x);
#pragma unroll
        for (int h = 2; h < 32; h *= 2) {
            y = shfl_idx(x, (lane & ~(2 * h - 1)) | (h - 1));
            if ((lane & 1) && (lane & h)) x = op(y, x);
        }
        y = shfl_up(x, 1);
        if (!(lane & 1) && lane > 0) x = op(y, x);
    }
    return x;
}

// The exclusive value from the inclusive one without needing an inverse: one more shuffle, and
// lane 0 gets the identity (works for min, max and any monoid).
template <typename T, typename Op> HK_DEVICE T warp_exclusive_from_inclusive(T inclusive, const Op& op) {
    T y = shfl_up(inclusive, 1);
    return lane_id() == 0 ? op.identity() : y;
}

// The warp's total (lane 31's inclusive value), broadcast to all lanes.
template <typename T> HK_DEVICE T warp_broadcast_last(T inclusive) { return shfl_idx(inclusive, 31); }

// ---- thread level: P items in registers, serial left fold ---------------------------------------
// items[i] <- items[0] ⊕ ... ⊕ items[i]; returns the thread's total.
template <int P, typename T, typename Op> HK_DEVICE T thread_inclusive(T (&items)[P], const Op& op) {
#pragma unroll
    for (int i = 1; i < P; ++i) items[i] = op(items[i - 1], items[i]);
    return items[P - 1];
}

// ---- warp-striped <-> blocked exchange through shared memory -------------------------------------
// A warp moves 32 * P consecutive elements: loaded coalesced (lane l reads l + 32 k) and
// re-read blocked (lane l owns l * P + k). One padding slot per 32 elements avoids bank conflicts.
HK_DEVICE int padded(int i) { return i + (i >> 5); }
template <int P> struct WarpExchange {
    enum { SLOTS = 32 * P + P };
};

template <int P, typename V>
HK_DEVICE void warp_load_blocked(const V* in, u64 base, u64 n, V (&items)[P], V* warp_smem, V fill) {
    const int lane = lane_id();
#pragma unroll
    for (int k = 0; k < P; ++k) {
        u64 g = base + lane + 32 * k;
        warp_smem[padded(lane + 32 * k)] = g < n ? in[g] : fill;
    }
    __syncwarp();
#pragma unroll
    for (int k = 0; k < P; ++k) items[k] = warp_smem[padded(lane * P + k)];
    __syncwarp();
}

template <int P, typename V>
HK_DEVICE void warp_store_blocked(V* out, u64 base, u64 n, const V (&items)[P], V* warp_smem) {
    const int lane = lane_id();
#pragma unroll
    for (int k = 0; k < P; ++k) warp_smem[padded(lane * P + k)] = items[k];
    __syncwarp();
#pragma unroll
    for (int k = 0; k < P; ++k) {
        u64 g = base + lane + 32 * k;
        if (g < n) out[g] = warp_smem[padded(lane + 32 * k)];
    }
    __syncwarp();
}
