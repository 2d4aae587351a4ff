// Device-wide single-pass scan with decoupled look-back (Merrill & Garland 2016), made
// deterministic, for one array, for rows of any length (heads at multiples of row_len) and for
// segments given by CSR offsets (heads at the offsets), in one template.
//
// One block scans one tile of TILE = THREADS * P elements. Tiles are numbered by an atomic
// counter in claim order, so a tile only ever waits for tiles already running (no deadlock).
// Each tile publishes its aggregate as soon as it is known and its inclusive prefix once its
// look-back resolved; the look-back warp reads the status of the 32 previous tiles at a time.
//
// Determinism. CUB reduces the look-back window with a tree, so the association of a float
// prefix depends on which predecessor happened to be finished. Here the exclusive prefix of
// tile k is always the LEFT FOLD incl(k) = incl(k-1) ⊕ agg(k): the look-back finds the nearest
// predecessor j whose inclusive prefix is published (or, for segmented scans, whose aggregate
// contains a head, which makes it its own inclusive prefix) and folds agg(j+1), ..., agg(k-1)
// onto incl(j) one by one, in order. Whatever j is, the operations are the same, so the result
// is bit-identical from run to run, and `scan::emulate` reproduces it on the CPU.
#pragma once
#include "block_scan.cuh"

template <bool B, typename A, typename C> struct Select {
    typedef A type;
};
template <typename A, typename C> struct Select<false, A, C> {
    typedef C type;
};

// Stores and loads of published values bypass L1 (another SM wrote them).
template <typename T> HK_DEVICE void st_cg(T* p, T v) { __stcg(p, v); }
template <typename V> HK_DEVICE void st_cg(Flagged<V>* p, Flagged<V> v) {
    __stcg(&p->v, v.v);
    __stcg(&p->f, v.f);
}
template <typename T> HK_DEVICE T ld_cg(const T* p) { return __ldcg(p); }
template <typename V> HK_DEVICE Flagged<V> ld_cg(const Flagged<V>* p) {
    Flagged<V> r;
    r.v = __ldcg(&p->v);
    r.f = __ldcg(&p->f);
    return r;
}

enum TileStatus { TILE_INVALID = 0, TILE_AGGREGATE = 1, TILE_INCLUSIVE = 2 };

template <typename T> HK_DEVICE void publish(u32* flags, T* slot, u64 k, T v, u32 status) {
    st_cg(slot + k, v);
    __threadfence();
    ((volatile u32*)flags)[k] = status;
}

// Run by all 32 lanes of one warp. Returns the exclusive prefix of tile k (valid in lane 0).
// `buf` holds MAXW windows of 32 values in shared memory.
template <int MAXW, typename Op>
HK_DEVICE typename Op::value_type lookback(u64 k, typename Op::value_type aggregate, u32* flags,
                                           typename Op::value_type* aggs, typename Op::value_type* incls,
                                           typename Op::value_type* buf, const Op& op) {
    typedef typename Op::value_type T;
    typedef Elem<Op> E;
    const int lane = lane_id();
    const bool self_terminal = k == 0 || E::has_head(aggregate);
    if (lane == 0) {
        if (self_terminal) publish(flags, incls, k, aggregate, TILE_INCLUSIVE);
        else publish(flags, aggs, k, aggregate, TILE_AGGREGATE);
    }
    if (k == 0) return op.identity();
    long long end = (long long)k;
    int w = 0;
    while (true) {
        const long long j = end - 32 + lane;
        u32 st = TILE_INVALID;
        T v = op.identity();
        if (j >= 0) {
            int backoff = 8;
            while ((st = ((volatile u32*)flags)[j]) == TILE_INVALID) {
                __nanosleep(backoff);
                backoff = backoff < 256 ? 2 * backoff : backoff;
            }
            __threadfence();
            v = st == TILE_INCLUSIVE ? ld_cg(incls + j) : ld_cg(aggs + j);
        }
        const bool terminal = j >= 0 && (st == TILE_INCLUSIVE || E::has_head(v));
        const unsigned mask = __ballot_sync(HK_FULL_MASK, terminal);
        buf[w * 32 + lane] = v;
        __syncwarp();
        if (mask) {
            T acc = op.identity();
            if (lane == 0) {
                const int last = 31 - __clz(mask);
                acc = buf[w * 32 + last];
                for (int i = last + 1; i < 32; ++i) acc = op(acc, buf[w * 32 + i]);
                for (int ww = w - 1; ww >= 0; --ww)
                    for (int i = 0; i < 32; ++i) acc = op(acc, buf[ww * 32 + i]);
                if (!self_terminal) publish(flags, incls, k, op(acc, aggregate), TILE_INCLUSIVE);
            }
            __syncwarp();
            return acc;
        }
        __syncwarp();
        // No finished predecessor in this window: look further back while the buffer lasts,
        // otherwise poll the oldest window again until one appears.
        if (w < MAXW - 1) {
            ++w;
            end -= 32;
        }
    }
}

// 4-byte values: status and value packed in one 8-byte word, (status << 32) | bits, published
// with one store and read with one load (no fence between a value and its flag, one poll
// instead of a poll and a second load). words[k] for tile k, zeroed before the launch.
template <typename T> union PackBits {
    T t;
    u32 u;
};

template <typename T> HK_DEVICE void publish_packed(u64* words, u64 k, T v, u32 status) {
    PackBits<T> b;
    b.u = 0;
    b.t = v;
    ((volatile u64*)words)[k] = ((u64)status << 32) | b.u;
}

// lookback() for 4-byte values over packed words: the same left fold, the same windows.
template <int MAXW, typename Op>
HK_DEVICE typename Op::value_type lookback_packed(u64 k, typename Op::value_type aggregate, u64* words,
                                                  typename Op::value_type* buf, const Op& op) {
    typedef typename Op::value_type T;
    typedef Elem<Op> E;
    const int lane = lane_id();
    const bool self_terminal = k == 0 || E::has_head(aggregate);
    if (lane == 0) publish_packed(words, k, aggregate, self_terminal ? TILE_INCLUSIVE : TILE_AGGREGATE);
    if (k == 0) return op.identity();
    long long end = (long long)k;
    int w = 0;
    while (true) {
        const long long j = end - 32 + lane;
        u32 st = TILE_INVALID;
        T v = op.identity();
        if (j >= 0) {
            int backoff = 8;
            u64 word;
            while (((word = ((volatile u64*)words)[j]) >> 32) == TILE_INVALID) {
                __nanosleep(backoff);
                backoff = backoff < 256 ? 2 * backoff : backoff;
            }
            st = (u32)(word >> 32);
            PackBits<T> b;
            b.u = (u32)word;
            v = b.t;
        }
        const bool terminal = j >= 0 && (st == TILE_INCLUSIVE || E::has_head(v));
        const unsigned mask = __ballot_sync(HK_FULL_MASK, terminal);
        buf[w * 32 + lane] = v;
        __syncwarp();
        if (mask) {
            T acc = op.identity();
            if (lane == 0) {
                const int last = 31 - __clz(mask);
                acc = buf[w * 32 + last];
                for (int i = last + 1; i < 32; ++i) acc = op(acc, buf[w * 32 + i]);
                for (int ww = w - 1; ww >= 0; --ww)
                    for (int i = 0; i < 32; ++i) acc = op(acc, buf[ww * 32 + i]);
                if (!self_terminal) publish_packed(words, k, op(acc, aggregate), TILE_INCLUSIVE);
            }
            __syncwarp();
            return acc;
        }
        __syncwarp();
        if (w < MAXW - 1) {
            ++w;
            end -= 32;
        }
    }
}

HK_DEVICE u64 lower_bound(const u64* a, u64 len, u64 x) {
    u64 lo = 0, hi = len;
    while (lo < hi) {
        u64 mid = (lo + hi) / 2;
        if (a[mid] < x) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

enum HeadMode { HEADS_NONE = 0, HEADS_ROWS = 1, HEADS_OFFSETS = 2 };

// status: [0] the tile counter, then (all zero before the launch) for 4-byte values from
// status + 2 the packed word of each tile (lookback_packed), else [1 + k] the status of tile k.
// values (not used for 4-byte values): aggregates of all tiles, then inclusive prefixes of all
// tiles (uninitialised).
template <typename V, typename BaseOp, int THREADS, int P, int NET, int HEADS>
__device__ void scan_lookback_tile(const V* in, V* out, u64 n, u64 row_len, const u64* offsets, u64 n_offsets,
                                   u32* status, void* values, int exclusive) {
    typedef typename Select<HEADS != HEADS_NONE, SegOp<BaseOp>, BaseOp>::type Op;
    typedef typename Op::value_type T;
    typedef Elem<Op> E;
    typedef BlockScan<THREADS, NET, Op> BS;
    enum { TILE = THREADS * P, WARPS = THREADS / 32, MAXW = 4, SLOTS = WarpExchange<P>::SLOTS };
    __shared__ V tile_smem[WARPS * SLOTS];
    __shared__ typename BS::Storage bs;
    __shared__ T lb_buf[MAXW * 32];
    __shared__ T tile_prefix;
    __shared__ u32 tile_id;
    __shared__ unsigned char heads_smem[HEADS == HEADS_OFFSETS ? TILE : 1];
    __shared__ u64 seg_range[2];
    const Op op = Op();
    const BaseOp base_op = BaseOp();
    const int warp = threadIdx.x >> 5;

    if (threadIdx.x == 0) tile_id = atomicAdd(status, 1u);
    __syncthreads();
    const u64 k = tile_id;
    const u64 tiles = (n + TILE - 1) / TILE;
    u32* flags = status + 1;
    T* aggs = (T*)values;
    T* incls = aggs + tiles;
    const u64 base = k * TILE;

    V* wsm = tile_smem + warp * SLOTS;
    V vals[P];
    warp_load_blocked<P>(in, base + (u64)warp * 32 * P, n, vals, wsm, base_op.identity());

    bool head[P];
    const u64 first = base + (u64)threadIdx.x * P;
    if (HEADS == HEADS_ROWS) {
        u64 pos = first % row_len;
#pragma unroll
        for (int i = 0; i < P; ++i) {
            head[i] = pos == 0;
            pos = pos + 1 == row_len ? 0 : pos + 1;
        }
    } else if (HEADS == HEADS_OFFSETS) {
        if (threadIdx.x == 0) {
            seg_range[0] = lower_bound(offsets, n_offsets, base);
            seg_range[1] = lower_bound(offsets, n_offsets, base + TILE);
        }
        for (int i = threadIdx.x; i < TILE; i += THREADS) heads_smem[i] = 0;
        __syncthreads();
        // The range check only matters for unsorted offsets (a caller bug the device entry points
        // do not validate): it keeps them from writing outside the tile's shared flags.
        for (u64 j = seg_range[0] + threadIdx.x; j < seg_range[1]; j += THREADS) {
            const u64 o = offsets[j];
            if (o >= base && o - base < TILE) heads_smem[o - base] = 1;
        }
        __syncthreads();
#pragma unroll
        for (int i = 0; i < P; ++i) head[i] = heads_smem[threadIdx.x * P + i] != 0;
    } else {
#pragma unroll
        for (int i = 0; i < P; ++i) head[i] = false;
    }

    T s[P];
#pragma unroll
    for (int i = 0; i < P; ++i) s[i] = E::make(vals[i], head[i]);
    const T total = thread_inclusive<P>(s, op);
    T aggregate;
    const T prefix = BS::exclusive_prefix(total, op, bs, aggregate);
    if (warp == 0) {
        T tp = sizeof(T) == 4 ? lookback_packed<MAXW>(k, aggregate, (u64*)(status + 2), lb_buf, op)
                              : lookback<MAXW>(k, aggregate, flags, aggs, incls, lb_buf, op);
        if (lane_id() == 0) tile_prefix = tp;
    }
    __syncthreads();
    const T full = op(tile_prefix, prefix);
    V res[P];
    thread_outputs<P>(s, head, full, op, base_op.identity(), exclusive != 0, res);
    warp_store_blocked<P>(out, base + (u64)warp * 32 * P, n, res, wsm);
}
