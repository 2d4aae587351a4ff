//! Search spaces: the cross product of parameters, pruned by constraints, indexed lazily
//! (mixed radix) so spaces of 10^6 and more configurations are never materialised.
//!
//! Strategies see a space through the [`Domain`] trait: a point is one value index per
//! parameter. [`Space`] is the domain of a declared kernel space;
//! [`ReplayDomain`](super::replay::ReplayDomain) is the domain of a recorded cache file.

use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::sync::OnceLock;

use rand::Rng;

use super::TuneRng;
use super::constraint::{ConfigView, Constraint};
use super::error::{Result, TuneError};
use super::param::Param;
use super::value::Value;

/// A point of a space: the index of each parameter's value.
pub type Point = Vec<u32>;

/// What a search strategy needs from a space.
pub trait Domain {
    /// The number of values of each parameter.
    fn radices(&self) -> &[u32];
    /// Whether the point is a valid configuration (inside the radices and all constraints hold).
    fn is_valid(&self, p: &[u32]) -> bool;
    /// A valid point drawn uniformly, or `None` if there is none.
    fn sample(&self, rng: &mut TuneRng) -> Option<Point>;
    /// The number of valid points, if known without enumerating.
    fn valid_count(&self) -> Option<u64>;
    /// Calls `f` on every valid point in index order until it breaks.
    fn for_each_valid(&self, f: &mut dyn FnMut(&[u32]) -> ControlFlow<()>);
}

/// A configuration: parameter names and values in the space's order. Usable as a map key.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Config {
    pairs: Vec<(String, Value)>,
}

impl Config {
    /// A configuration from name/value pairs (order is kept).
    pub fn new(pairs: Vec<(String, Value)>) -> Self {
        Config { pairs }
    }

    /// The value of `name`.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.pairs.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    /// The integer value of `name`.
    pub fn int(&self, name: &str) -> Option<i64> {
        self.get(name).and_then(Value::as_i64)
    }

    /// The name/value pairs in order.
    pub fn pairs(&self) -> &[(String, Value)] {
        &self.pairs
    }

    /// Kernel Tuner's cache key: the values joined by commas, formatted like Python's `str`.
    pub fn key(&self) -> String {
        self.pairs.iter().map(|(_, v)| v.to_string()).collect::<Vec<_>>().join(",")
    }

    /// `#define NAME VALUE` lines for compile-time parameters (names upper-cased).
    pub fn defines(&self) -> String {
        self.pairs.iter().map(|(n, v)| format!("#define {} {}\n", n.to_uppercase(), v.to_define())).collect()
    }
}

/// Builds a [`Space`]; see [`Space::builder`].
#[derive(Debug, Default)]
pub struct SpaceBuilder {
    params: Vec<Result<Param>>,
    constraints: Vec<Constraint>,
}

impl SpaceBuilder {
    /// Adds a parameter (errors from `Param` constructors are reported by [`build`](Self::build)).
    pub fn param(mut self, p: Result<Param>) -> Self {
        self.params.push(p);
        self
    }

    /// Adds a constraint.
    pub fn constraint(mut self, c: Constraint) -> Self {
        self.constraints.push(c);
        self
    }

    /// Adds a closure constraint.
    pub fn restrict(
        self,
        name: &str,
        check: impl Fn(&ConfigView<'_>) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.constraint(Constraint::custom(name, check))
    }

    /// The space; fails on a bad parameter, duplicate names or a constraint naming an unknown
    /// parameter.
    pub fn build(self) -> Result<Space> {
        let params = self.params.into_iter().collect::<Result<Vec<_>>>()?;
        if params.is_empty() {
            return Err(TuneError::InvalidSpace("a space needs at least one parameter".into()));
        }
        let mut names: Vec<&str> = params.iter().map(Param::name).collect();
        names.sort_unstable();
        if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
            return Err(TuneError::InvalidSpace(format!("parameter `{}` declared twice", w[0])));
        }
        let mut constraints = self.constraints;
        for c in &mut constraints {
            c.bind(&params)?;
        }
        let radices = params.iter().map(|p| p.len() as u32).collect();
        Ok(Space { params, constraints, radices, valid: OnceLock::new() })
    }
}

/// A tuning space: parameters and constraints.
///
/// ```
/// use hetero_sched::tune::{Constraint, Param, Space};
/// let space = Space::builder()
///     .param(Param::pow2("block_x", 16, 1024))
///     .param(Param::pow2("block_y", 1, 16))
///     .param(Param::boolean("use_shared"))
///     .constraint(Constraint::threads_per_block(&["block_x", "block_y"], 1024))
///     .build()
///     .unwrap();
/// assert_eq!(space.product(), 7 * 5 * 2);
/// assert!(space.count_valid() < space.product() as u64);
/// ```
#[derive(Debug)]
pub struct Space {
    params: Vec<Param>,
    constraints: Vec<Constraint>,
    radices: Vec<u32>,
    /// The valid points, materialised only when rejection sampling keeps failing.
    valid: OnceLock<Vec<Point>>,
}

/// Rejection sampling gives up after this many tries and falls back to the enumerated list.
const SAMPLE_TRIES: usize = 2000;
/// Spaces larger than this are never materialised.
const MATERIALISE_LIMIT: u128 = 1 << 24;

impl Space {
    /// A builder.
    pub fn builder() -> SpaceBuilder {
        SpaceBuilder::default()
    }

    /// The parameters.
    pub fn params(&self) -> &[Param] {
        &self.params
    }

    /// The size of the cross product (valid or not).
    pub fn product(&self) -> u128 {
        self.radices.iter().map(|&r| u128::from(r)).product()
    }

    /// The point at linear index `i` of the cross product (the last parameter varies fastest).
    pub fn point_at(&self, mut i: u128) -> Option<Point> {
        if i >= self.product() {
            return None;
        }
        let mut p = vec![0u32; self.radices.len()];
        for k in (0..p.len()).rev() {
            let r = u128::from(self.radices[k]);
            p[k] = (i % r) as u32;
            i /= r;
        }
        Some(p)
    }

    /// The linear index of a point (inverse of [`point_at`](Self::point_at)).
    pub fn index_of(&self, p: &[u32]) -> Option<u128> {
        if p.len() != self.radices.len() || p.iter().zip(&self.radices).any(|(v, r)| v >= r) {
            return None;
        }
        Some(p.iter().zip(&self.radices).fold(0u128, |acc, (&v, &r)| acc * u128::from(r) + u128::from(v)))
    }

    /// The configuration of a point.
    pub fn config(&self, p: &[u32]) -> Config {
        Config::new(
            self.params
                .iter()
                .zip(p)
                .map(|(q, &i)| (q.name().to_owned(), q.values()[i as usize].clone()))
                .collect(),
        )
    }

    /// The point of a configuration, if every value belongs to the space (order-insensitive).
    pub fn point_of(&self, c: &Config) -> Option<Point> {
        if c.pairs().len() != self.params.len() {
            return None;
        }
        self.params.iter().map(|q| q.index_of(c.get(q.name())?)).collect()
    }

    /// The configuration from a name -> value map (ignoring extra names).
    pub fn point_of_map(&self, m: &BTreeMap<String, Value>) -> Option<Point> {
        self.params.iter().map(|q| q.index_of(m.get(q.name())?)).collect()
    }

    /// Whether all constraints hold (the point must be inside the radices).
    fn satisfies(&self, p: &[u32]) -> bool {
        let view = ConfigView::new(&self.params, p);
        self.constraints.iter().all(|c| c.check(&view))
    }

    /// Iterates over the valid points lazily, in index order.
    pub fn valid_points(&self) -> impl Iterator<Item = Point> + '_ {
        let mut next = Some(vec![0u32; self.radices.len()]);
        std::iter::from_fn(move || {
            loop {
                let cur = next.take()?;
                next = self.successor(&cur);
                if self.satisfies(&cur) {
                    return Some(cur);
                }
            }
        })
    }

    /// The next point of the cross product (odometer step), `None` after the last.
    fn successor(&self, p: &[u32]) -> Option<Point> {
        let mut q = p.to_vec();
        for k in (0..q.len()).rev() {
            q[k] += 1;
            if q[k] < self.radices[k] {
                return Some(q);
            }
            q[k] = 0;
        }
        None
    }

    /// Counts the valid configurations (enumerates lazily; nothing is stored).
    pub fn count_valid(&self) -> u64 {
        let mut n = 0u64;
        self.for_each_valid(&mut |_| {
            n += 1;
            ControlFlow::Continue(())
        });
        n
    }

    /// The valid points that differ from `p` by one step of one parameter.
    pub fn adjacent(&self, p: &[u32]) -> Vec<Point> {
        adjacent(self, p)
    }

    /// The valid points that differ from `p` in exactly one parameter (Hamming distance 1).
    pub fn hamming(&self, p: &[u32]) -> Vec<Point> {
        hamming(self, p)
    }
}

impl Domain for Space {
    fn radices(&self) -> &[u32] {
        &self.radices
    }

    fn is_valid(&self, p: &[u32]) -> bool {
        p.len() == self.radices.len() && p.iter().zip(&self.radices).all(|(v, r)| v < r) && self.satisfies(p)
    }

    fn sample(&self, rng: &mut TuneRng) -> Option<Point> {
        for _ in 0..SAMPLE_TRIES {
            let p: Point = self.radices.iter().map(|&r| rng.random_range(0..r)).collect();
            if self.satisfies(&p) {
                return Some(p);
            }
        }
        // Sparse valid region: draw from the enumerated list (uniform all the same).
        if self.product() > MATERIALISE_LIMIT {
            return None;
        }
        let valid = self.valid.get_or_init(|| self.valid_points().collect());
        if valid.is_empty() { None } else { Some(valid[rng.random_range(0..valid.len())].clone()) }
    }

    fn valid_count(&self) -> Option<u64> {
        if self.constraints.is_empty() {
            u64::try_from(self.product()).ok()
        } else {
            self.valid.get().map(|v| v.len() as u64)
        }
    }

    fn for_each_valid(&self, f: &mut dyn FnMut(&[u32]) -> ControlFlow<()>) {
        let mut p = vec![0u32; self.radices.len()];
        loop {
            if self.satisfies(&p) && f(&p).is_break() {
                return;
            }
            // In-place odometer: no allocation per point, so 10^6+ spaces enumerate quickly.
            let mut k = p.len();
            loop {
                if k == 0 {
                    return;
                }
                k -= 1;
                p[k] += 1;
                if p[k] < self.radices[k] {
                    break;
                }
                p[k] = 0;
            }
        }
    }
}

/// Valid points one step away in one coordinate.
pub fn adjacent<D: Domain + ?Sized>(d: &D, p: &[u32]) -> Vec<Point> {
    let mut out = Vec::with_capacity(2 * p.len());
    for k in 0..p.len() {
        for delta in [-1i64, 1] {
            let v = i64::from(p[k]) + delta;
            if v < 0 || v >= i64::from(d.radices()[k]) {
                continue;
            }
            let mut q = p.to_vec();
            q[k] = v as u32;
            if d.is_valid(&q) {
                out.push(q);
            }
        }
    }
    out
}

/// Valid points differing in exactly one coordinate.
pub fn hamming<D: Domain + ?Sized>(d: &D, p: &[u32]) -> Vec<Point> {
    let mut out = Vec::new();
    for k in 0..p.len() {
        for v in 0..d.radices()[k] {
            if v == p[k] {
                continue;
            }
            let mut q = p.to_vec();
            q[k] = v;
            if d.is_valid(&q) {
                out.push(q);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use std::collections::HashSet;

    fn space() -> Space {
        Space::builder()
            .param(Param::pow2("bx", 1, 64))
            .param(Param::pow2("by", 1, 64))
            .param(Param::names("alg", &["a", "b", "c"]))
            .constraint(Constraint::threads_per_block(&["bx", "by"], 256))
            .constraint(Constraint::divides("by", "bx"))
            .build()
            .unwrap()
    }

    /// Independent oracle: nested loops over the values.
    fn oracle() -> Vec<(i64, i64, usize)> {
        let mut v = Vec::new();
        for bx in (0..7).map(|e| 1i64 << e) {
            for by in (0..7).map(|e| 1i64 << e) {
                for alg in 0..3 {
                    if bx * by <= 256 && bx % by == 0 {
                        v.push((bx, by, alg));
                    }
                }
            }
        }
        v
    }

    #[test]
    fn enumeration_matches_nested_loops() {
        let s = space();
        let got: Vec<(i64, i64, usize)> = s
            .valid_points()
            .map(|p| {
                let c = s.config(&p);
                (c.int("bx").unwrap(), c.int("by").unwrap(), p[2] as usize)
            })
            .collect();
        assert_eq!(got, oracle());
        assert_eq!(s.count_valid(), oracle().len() as u64);
    }

    #[test]
    fn mixed_radix_round_trip() {
        let s = space();
        for i in 0..s.product() {
            let p = s.point_at(i).unwrap();
            assert_eq!(s.index_of(&p), Some(i));
        }
        assert!(s.point_at(s.product()).is_none());
        let p = s.point_at(17).unwrap();
        assert_eq!(s.point_of(&s.config(&p)), Some(p));
    }

    #[test]
    fn neighbours() {
        let s = space();
        let p = s
            .point_of(&Config::new(vec![
                ("bx".into(), Value::Int(16)),
                ("by".into(), Value::Int(4)),
                ("alg".into(), "b".into()),
            ]))
            .unwrap();
        let adj: HashSet<Point> = s.adjacent(&p).into_iter().collect();
        // bx 8 or 32, by 2 or 8, alg a or c; all valid here.
        assert_eq!(adj.len(), 6);
        let ham = s.hamming(&p);
        assert!(ham.iter().all(|q| q.iter().zip(&p).filter(|(a, b)| a != b).count() == 1));
        assert!(ham.iter().all(|q| s.is_valid(q)));
        // by = 1, 2, 8, 16 keep validity with bx = 16 (16*16 = 256 ok); alg 2 others; bx: by=4 divides 4..64, 64*4=256
        let oracle = oracle()
            .into_iter()
            .filter(|&(bx, by, alg)| {
                [(bx != 16) as u8, (by != 4) as u8, (alg != 1) as u8].iter().sum::<u8>() == 1
            })
            .count();
        assert_eq!(ham.len(), oracle);
    }

    #[test]
    fn sampling_is_seeded_and_valid() {
        let s = space();
        let draw = |seed| {
            let mut rng = TuneRng::seed_from_u64(seed);
            (0..50).map(|_| s.sample(&mut rng).unwrap()).collect::<Vec<_>>()
        };
        let a = draw(3);
        assert_eq!(a, draw(3));
        assert_ne!(a, draw(4));
        assert!(a.iter().all(|p| s.is_valid(p)));
    }

    #[test]
    fn sparse_space_sampling_falls_back_to_enumeration() {
        let s = Space::builder()
            .param(Param::range("a", 0, 999, 1))
            .param(Param::range("b", 0, 999, 1))
            .restrict("one point", |c| c.int("a") == Some(7) && c.int("b") == Some(9))
            .build()
            .unwrap();
        let mut rng = TuneRng::seed_from_u64(1);
        assert_eq!(s.sample(&mut rng), Some(vec![7, 9]));
        let none =
            Space::builder().param(Param::ints("a", &[1])).restrict("never", |_| false).build().unwrap();
        assert_eq!(none.sample(&mut rng), None);
        assert_eq!(none.count_valid(), 0);
    }

    #[test]
    fn builder_errors() {
        assert!(Space::builder().build().is_err());
        assert!(
            Space::builder().param(Param::ints("a", &[1])).param(Param::ints("a", &[2])).build().is_err()
        );
        let e =
            Space::builder().param(Param::ints("a", &[1])).constraint(Constraint::divides("a", "zz")).build();
        assert!(matches!(e, Err(TuneError::UnknownParam { .. })));
        assert!(Space::builder().param(Param::ints("a", &[])).build().is_err());
    }

    #[test]
    fn shared_memory_constraint() {
        let s = Space::builder()
            .param(Param::pow2("tile", 1, 1024))
            .constraint(Constraint::shared_memory_fits(|c| c.int("tile").unwrap() as u64 * 8 * 8, 48 * 1024))
            .build()
            .unwrap();
        // tile * 64 bytes <= 49152 -> tile <= 768 -> powers up to 512.
        assert_eq!(s.count_valid(), 10);
    }

    /// A space of 2^21 configurations enumerates lazily (counted, never stored).
    #[test]
    fn large_space_enumerates_lazily() {
        let s = Space::builder()
            .param(Param::range("a", 0, 127, 1))
            .param(Param::range("b", 0, 127, 1))
            .param(Param::range("c", 0, 127, 1))
            .constraint(Constraint::divides("c", "a"))
            .build()
            .unwrap();
        assert_eq!(s.product(), 1 << 21);
        // Oracle: for each a, the number of c in 1..=127 dividing a (c = 0 never divides), times 128 b's.
        let oracle: u64 =
            (0..128i64).map(|a| (1..128i64).filter(|c| a % c == 0).count() as u64).sum::<u64>() * 128;
        assert_eq!(s.count_valid(), oracle);
        assert!(s.valid.get().is_none());
    }
}
