// Shared pieces of the sparse grid kernels: the trie node word, the 1-D basis in cell form and the
// hierarchical parent arithmetic. The host side (crates/sg-cuda/src/tables.rs) builds the words,
// and crates/sg-cuda/src/emulate.rs mirrors every function here line by line for CPU tests.
#pragma once
#include "../common/types.cuh"

// A trie node is one 64-bit word:
//   bits 0..4   public level L of the node's dimension (0 = boundary function)
//   bit  5      boundary side (0: 1 - x, 1: x); only meaningful when L = 0
//   bits 8..63  link: for an inner node the index one past its subtree (preorder), for a leaf
//               (depth d - 1) the offset of its block in the value array.
#define SG_LEVEL_MASK 31u
#define SG_SIDE_BIT 32u
#define SG_LINK_SHIFT 8

HK_DEVICE u32 sg_node_level(u64 w) { return (u32)w & SG_LEVEL_MASK; }
HK_DEVICE u32 sg_node_side(u64 w) { return ((u32)w & SG_SIDE_BIT) ? 1u : 0u; }
HK_DEVICE u64 sg_node_link(u64 w) { return w >> SG_LINK_SHIFT; }
// Position bits the node adds to the in-block index: L - 1 for a hat level, 0 on the boundary.
HK_DEVICE u32 sg_node_bits(u64 w) {
    u32 l = sg_node_level(w);
    return l == 0 ? 0u : l - 1u;
}

// 2^k as a float, exact for k < 64.
template <typename T>
HK_DEVICE T sg_pow2(u32 k) {
    return (T)(1ull << k);
}

// Basis value and in-level cell of node kind (level, side) at x (Eq. 3.19 in cell form): the only
// level-L hat whose support holds x is cell = floor(2^(L-1) x) (clamped so x = 1 is fine), with
// value 1 - |2^L x - 2 cell - 1|. Matches sg_core::basis::basis_cell.
template <typename T>
HK_DEVICE void sg_basis(u32 level, u32 side, T x, T& value, u32& cell) {
    if (level == 0) {
        value = side ? x : (T)1 - x;
        cell = 0;
        return;
    }
    const u32 l0 = level - 1;
    const T scale = sg_pow2<T>(l0);
    const u32 top = (1u << l0) - 1u;
    T f = floor(scale * x);
    u32 c = f <= (T)0 ? 0u : (f >= (T)top ? top : (u32)f);
    T two_scale_x = (T)2 * scale * x;
    T v = (T)1 - fabs(two_scale_x - (T)(2u * c) - (T)1);
    value = v > (T)0 ? v : (T)0;
    cell = c;
}

// The offset table of one chain (see tables.rs): [boundary x=0, boundary x=1, level 1, ...,
// level top], SG_NONE where the grid stores no such block.
#define SG_NONE 0xffffffffffffffffull

// Offset of the first value of pole (hi, lo = 0) at the 1-D point (level, index) of a chain, or
// SG_NONE. Public convention: level 0 is the boundary with index 0 or 1.
HK_DEVICE u64 sg_point_base(const u64* chain, u32 s, u64 hi, u32 level, u32 index) {
    if (level == 0) {
        u64 off = chain[index];
        return off == SG_NONE ? SG_NONE : off + (hi << s);
    }
    u64 p = (u64)(index >> 1);
    return chain[1 + level] + (((hi << (level - 1)) + p) << s);
}

// Hierarchical parent (level, index) on the left (side = 0) or right (side = 1) of the interior
// point (level >= 1, odd index): m = index -+ 1, z = ctz(m), parent (level - z, m >> z); m = 0 is
// the left boundary.
HK_DEVICE void sg_parent(u32 level, u32 index, u32 side, u32& plevel, u32& pindex) {
    u32 m = side ? index + 1u : index - 1u;
    if (m == 0) {
        plevel = 0;
        pindex = 0;
        return;
    }
    u32 z = (u32)(__ffs((int)m) - 1);
    plevel = level - z;
    pindex = m >> z;
}
