//! Constraints between parameters: closures and the common named ones.

use std::fmt;
use std::sync::Arc;

use super::error::{Result, TuneError};
use super::param::Param;
use super::value::Value;

/// A read-only view of one configuration while its constraints are checked.
#[derive(Debug, Clone, Copy)]
pub struct ConfigView<'a> {
    params: &'a [Param],
    point: &'a [u32],
}

impl<'a> ConfigView<'a> {
    pub(crate) fn new(params: &'a [Param], point: &'a [u32]) -> Self {
        ConfigView { params, point }
    }

    /// The value of parameter `name`.
    pub fn get(&self, name: &str) -> Option<&'a Value> {
        let k = self.params.iter().position(|p| p.name() == name)?;
        Some(self.at(k))
    }

    /// The value of the `k`-th parameter.
    pub fn at(&self, k: usize) -> &'a Value {
        &self.params[k].values()[self.point[k] as usize]
    }

    /// The integer value of parameter `name` (booleans as 0/1).
    pub fn int(&self, name: &str) -> Option<i64> {
        self.get(name).and_then(Value::as_i64)
    }
}

type Check = dyn Fn(&ConfigView<'_>) -> bool + Send + Sync;

enum Kind {
    Custom(Arc<Check>),
    /// Product of the named integer parameters at most `limit`.
    MaxProduct {
        names: Vec<String>,
        idx: Vec<usize>,
        limit: i64,
    },
    /// `a` divides `b`.
    Divides {
        a: String,
        b: String,
        idx: (usize, usize),
    },
    /// `bytes(config) <= limit`.
    Fits {
        bytes: Arc<dyn Fn(&ConfigView<'_>) -> u64 + Send + Sync>,
        limit: u64,
    },
}

/// A predicate a configuration must satisfy. Invalid configurations are never evaluated and
/// cost no evaluation (they are pruned, as Kernel Tuner's restrictions are).
pub struct Constraint {
    name: String,
    kind: Kind,
}

impl fmt::Debug for Constraint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Constraint").field("name", &self.name).finish_non_exhaustive()
    }
}

impl Clone for Constraint {
    fn clone(&self) -> Self {
        let kind = match &self.kind {
            Kind::Custom(c) => Kind::Custom(c.clone()),
            Kind::MaxProduct { names, idx, limit } => {
                Kind::MaxProduct { names: names.clone(), idx: idx.clone(), limit: *limit }
            }
            Kind::Divides { a, b, idx } => Kind::Divides { a: a.clone(), b: b.clone(), idx: *idx },
            Kind::Fits { bytes, limit } => Kind::Fits { bytes: bytes.clone(), limit: *limit },
        };
        Constraint { name: self.name.clone(), kind }
    }
}

impl Constraint {
    /// Any predicate over the configuration.
    pub fn custom(
        name: impl Into<String>,
        check: impl Fn(&ConfigView<'_>) -> bool + Send + Sync + 'static,
    ) -> Self {
        Constraint { name: name.into(), kind: Kind::Custom(Arc::new(check)) }
    }

    /// Threads per block within the device limit: the product of the named block-size
    /// parameters is at most `max_threads` (e.g. 1024 on current NVIDIA GPUs).
    pub fn threads_per_block(names: &[&str], max_threads: i64) -> Self {
        Constraint {
            name: format!("threads_per_block({}) <= {max_threads}", names.join("*")),
            kind: Kind::MaxProduct {
                names: names.iter().map(|s| s.to_string()).collect(),
                idx: Vec::new(),
                limit: max_threads,
            },
        }
    }

    /// Shared memory fits: `bytes(config)` is at most `limit` (e.g. the device's shared memory
    /// per block).
    pub fn shared_memory_fits(
        bytes: impl Fn(&ConfigView<'_>) -> u64 + Send + Sync + 'static,
        limit: u64,
    ) -> Self {
        Constraint {
            name: format!("shared_memory <= {limit}"),
            kind: Kind::Fits { bytes: Arc::new(bytes), limit },
        }
    }

    /// Parameter `a` divides parameter `b` (both integers; `a = 0` never divides).
    pub fn divides(a: &str, b: &str) -> Self {
        Constraint {
            name: format!("{a} divides {b}"),
            kind: Kind::Divides { a: a.into(), b: b.into(), idx: (0, 0) },
        }
    }

    /// The constraint's name (for messages).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Resolves parameter names to positions, so checks during enumeration do not search.
    pub(crate) fn bind(&mut self, params: &[Param]) -> Result<()> {
        let find = |n: &str, cname: &str| {
            params
                .iter()
                .position(|p| p.name() == n)
                .ok_or_else(|| TuneError::UnknownParam { constraint: cname.to_owned(), param: n.to_owned() })
        };
        match &mut self.kind {
            Kind::MaxProduct { names, idx, .. } => {
                *idx = names.iter().map(|n| find(n, &self.name)).collect::<Result<_>>()?;
            }
            Kind::Divides { a, b, idx } => *idx = (find(a, &self.name)?, find(b, &self.name)?),
            Kind::Custom(_) | Kind::Fits { .. } => {}
        }
        Ok(())
    }

    /// Whether the configuration satisfies the constraint.
    pub fn check(&self, view: &ConfigView<'_>) -> bool {
        match &self.kind {
            Kind::Custom(c) => c(view),
            Kind::MaxProduct { idx, limit, .. } => {
                let mut prod: i128 = 1;
                for &k in idx {
                    match view.at(k).as_i64() {
                        Some(v) => prod *= i128::from(v),
                        None => return false,
                    }
                }
                prod <= i128::from(*limit)
            }
            Kind::Divides { idx: (a, b), .. } => match (view.at(*a).as_i64(), view.at(*b).as_i64()) {
                (Some(a), Some(b)) if a != 0 => b % a == 0,
                _ => false,
            },
            Kind::Fits { bytes, limit } => bytes(view) <= *limit,
        }
    }
}
