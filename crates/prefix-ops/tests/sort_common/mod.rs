//! Oracles and input generators shared by the sort tests.
#![allow(dead_code, unreachable_pub)]

use std::cmp::Ordering;

use prefix_ops::sort::{Order, SortKey};
use rand::Rng;

/// Key types with an independent reference comparison (not through `SortKey`'s bit maps).
pub trait TestKey: SortKey + PartialEq {
    /// The documented order: for floats total_cmp on numbers, then +NaNs, then -NaNs.
    fn cmp_ref(&self, other: &Self) -> Ordering;
    /// A key from 64 random bits (floats: any bit pattern, NaNs included).
    fn from_random(r: u64) -> Self;
    /// A small integer as a key (few-distinct, sorted and reversed inputs).
    fn from_small(i: u32) -> Self;
    /// Edge values: extremes, zeros of both signs, infinities, NaNs.
    fn edges() -> Vec<Self>;
    /// Bit-exact identity (NaN == NaN with the same payload).
    fn same(&self, other: &Self) -> bool {
        self.to_bits_ordered() == other.to_bits_ordered()
    }
}

macro_rules! int_key {
    ($t:ty) => {
        impl TestKey for $t {
            fn cmp_ref(&self, other: &Self) -> Ordering {
                self.cmp(other)
            }
            fn from_random(r: u64) -> Self {
                r as $t
            }
            fn from_small(i: u32) -> Self {
                i as $t
            }
            fn edges() -> Vec<Self> {
                vec![<$t>::MIN, <$t>::MAX, 0 as $t, 1 as $t, <$t>::MAX - 1]
            }
        }
    };
}
int_key!(u32);
int_key!(i32);
int_key!(u64);
int_key!(i64);

macro_rules! float_key {
    ($t:ty, $bits:ty) => {
        impl TestKey for $t {
            fn cmp_ref(&self, other: &Self) -> Ordering {
                let class = |x: &$t| match (x.is_nan(), x.is_sign_negative()) {
                    (false, _) => 0,
                    (true, false) => 1,
                    (true, true) => 2,
                };
                match class(self).cmp(&class(other)) {
                    // Within a class the IEEE total order: numbers by value, +NaN by
                    // payload, -NaN by payload reversed (as total_cmp orders them).
                    Ordering::Equal => self.total_cmp(other),
                    o => o,
                }
            }
            fn from_random(r: u64) -> Self {
                <$t>::from_bits(r as $bits)
            }
            fn from_small(i: u32) -> Self {
                i as $t - 8.0
            }
            fn edges() -> Vec<Self> {
                vec![
                    <$t>::NAN,
                    -<$t>::NAN,
                    <$t>::INFINITY,
                    <$t>::NEG_INFINITY,
                    0.0,
                    -0.0,
                    <$t>::MIN_POSITIVE,
                    <$t>::MAX,
                    <$t>::MIN,
                    <$t>::from_bits(!0),
                ]
            }
        }
    };
}
float_key!(f32, u32);
float_key!(f64, u64);

/// Input shapes the tests run through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Random,
    Sorted,
    Reversed,
    AllEqual,
    FewDistinct,
    Edges,
}

pub const SHAPES: [Shape; 6] =
    [Shape::Random, Shape::Sorted, Shape::Reversed, Shape::AllEqual, Shape::FewDistinct, Shape::Edges];

pub fn make<K: TestKey>(rng: &mut impl Rng, n: usize, shape: Shape) -> Vec<K> {
    let edges = K::edges();
    (0..n)
        .map(|i| match shape {
            Shape::Random => K::from_random(rng.random()),
            Shape::Sorted => K::from_small(i as u32 % 1000 + (i / 1000) as u32),
            Shape::Reversed => K::from_small((n - i) as u32),
            Shape::AllEqual => K::from_small(3),
            Shape::FewDistinct => K::from_small(rng.random_range(0..4)),
            Shape::Edges => edges[rng.random_range(0..edges.len())],
        })
        .collect()
}

pub fn cmp_order<K: TestKey>(a: &K, b: &K, order: Order) -> Ordering {
    match order {
        Order::Ascending => a.cmp_ref(b),
        Order::Descending => b.cmp_ref(a),
    }
}

/// The oracle: the standard library's stable sort of each segment with the reference order.
pub fn reference<K: TestKey>(keys: &mut [K], offsets: &[usize], order: Order) {
    for w in offsets.windows(2) {
        keys[w[0]..w[1]].sort_by(|a, b| cmp_order(a, b, order));
    }
}

/// The oracle for pairs: stable `sort_by` on (key, value) by key.
pub fn reference_pairs<K: TestKey, V: Copy>(
    keys: &mut [K],
    values: &mut [V],
    offsets: &[usize],
    order: Order,
) {
    for w in offsets.windows(2) {
        let mut p: Vec<(K, V)> =
            keys[w[0]..w[1]].iter().copied().zip(values[w[0]..w[1]].iter().copied()).collect();
        p.sort_by(|a, b| cmp_order(&a.0, &b.0, order));
        for (i, (k, v)) in p.into_iter().enumerate() {
            keys[w[0] + i] = k;
            values[w[0] + i] = v;
        }
    }
}

pub fn assert_same_keys<K: TestKey>(got: &[K], want: &[K], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    if let Some(i) = (0..got.len()).find(|&i| !got[i].same(&want[i])) {
        let lo = i.saturating_sub(3);
        panic!(
            "{what}: first difference at {i}: got {:?}, want {:?}",
            &got[lo..(i + 4).min(got.len())],
            &want[lo..(i + 4).min(want.len())]
        );
    }
}

pub fn row_offsets(n: usize, row_len: usize) -> Vec<usize> {
    (0..=n / row_len).map(|r| r * row_len).collect()
}

/// Random offsets over `n` keys with segments of 0..=max_len keys (empty ones included).
pub fn random_offsets(rng: &mut impl Rng, n: usize, max_len: usize) -> Vec<usize> {
    let mut o = vec![0];
    let mut at = 0;
    while at < n {
        at = (at + rng.random_range(0..=max_len)).min(n);
        o.push(at);
    }
    o
}
