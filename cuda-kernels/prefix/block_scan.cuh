// Block-level scan of one value per thread (a thread's total over its P items), built from the
// warp networks: each warp scans its 32 totals, the warp totals go to shared memory, warp 0
// scans them with the same network, and every thread combines (warp prefix ⊕ lane prefix).
//
// Combination order (fixed, so float results are deterministic and the Rust emulator can
// reproduce them bit for bit):
//   lane_excl   = exclusive value of the warp network over the thread totals (identity on lane 0)
//   warp_prefix = exclusive value of the network over the warp totals (identity for warp 0)
//   prefix      = warp_prefix ⊕ lane_excl
//   aggregate   = inclusive network value of the last warp total
#pragma once
#include "warp_scan.cuh"

template <int THREADS, int NET, typename Op> struct BlockScan {
    typedef typename Op::value_type T;
    enum { WARPS = THREADS / 32 };
    struct Storage {
        T warp_inclusive[WARPS];
    };

    // Returns this thread's exclusive prefix within the block; `aggregate` gets the block total.
    // Starts and ends with a __syncthreads, so `s` may be reused right after.
    HK_DEVICE static T exclusive_prefix(T thread_total, const Op& op, Storage& s, T& aggregate) {
        const int lane = lane_id();
        const int warp = threadIdx.x >> 5;
        T incl = warp_inclusive<NET>(thread_total, op);
        T lane_excl = warp_exclusive_from_inclusive(incl, op);
        __syncthreads();
        if (lane == 31) s.warp_inclusive[warp] = incl;
        __syncthreads();
        if (warp == 0) {
            T w = lane < WARPS ? s.warp_inclusive[lane] : op.identity();
            w = warp_inclusive<NET>(w, op);
            __syncwarp();
            if (lane < WARPS) s.warp_inclusive[lane] = w;
        }
        __syncthreads();
        aggregate = s.warp_inclusive[WARPS - 1];
        T warp_prefix = warp > 0 ? s.warp_inclusive[warp - 1] : op.identity();
        T prefix = op(warp_prefix, lane_excl);
        __syncthreads();
        return prefix;
    }
};

// Writes the scan outputs of one thread's P items given its serial inclusive values `s` (from
// thread_inclusive), the head flags of its items and the full prefix in front of them:
//   inclusive  out[i] = value(prefix ⊕ s[i])
//   exclusive  out[i] = head[i] ? I : value(i == 0 ? prefix : prefix ⊕ s[i-1])
template <int P, typename Op, typename V>
HK_DEVICE void thread_outputs(const typename Op::value_type (&s)[P], const bool (&head)[P],
                              typename Op::value_type prefix, const Op& op, V ident, bool exclusive, V (&out)[P]) {
    typedef Elem<Op> E;
    if (exclusive) {
        out[0] = head[0] ? ident : E::value(prefix);
#pragma unroll
        for (int i = 1; i < P; ++i) out[i] = head[i] ? ident : E::value(op(prefix, s[i - 1]));
    } else {
#pragma unroll
        for (int i = 0; i < P; ++i) out[i] = E::value(op(prefix, s[i]));
    }
}
