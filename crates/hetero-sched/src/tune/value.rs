//! Parameter values: integers, floats, names and booleans, hashable and totally ordered so a
//! configuration can key a map.

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};

/// One value of a tuning parameter.
///
/// Floats compare and hash by their bit pattern (after mapping `-0.0` to `0.0`), so a
/// configuration holding a float is still a valid map key. Its `Display` formats like
/// Python's `str()`, which is how Kernel Tuner joins values into its cache keys.
#[derive(Debug, Clone)]
pub enum Value {
    /// An integer.
    Int(i64),
    /// A floating-point number (never NaN in a space built by [`Param`](super::Param)).
    Float(f64),
    /// A name, e.g. an algorithm variant.
    Str(String),
    /// A boolean switch.
    Bool(bool),
}

impl Value {
    /// The integer, if this is an [`Value::Int`] (or a boolean, as 0 or 1).
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            Value::Bool(b) => Some(i64::from(*b)),
            _ => None,
        }
    }

    /// The number, if this is an integer or a float.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Int(i) => Some(*i as f64),
            Value::Float(f) => Some(*f),
            _ => None,
        }
    }

    /// The name, if this is a [`Value::Str`].
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The boolean, if this is a [`Value::Bool`].
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The value as JSON (floats that JSON cannot hold become `null`).
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Value::Int(i) => serde_json::Value::from(*i),
            Value::Float(f) => {
                serde_json::Number::from_f64(*f).map_or(serde_json::Value::Null, serde_json::Value::Number)
            }
            Value::Str(s) => serde_json::Value::from(s.as_str()),
            Value::Bool(b) => serde_json::Value::from(*b),
        }
    }

    /// The value of a JSON scalar; `None` for null, arrays, objects and non-finite numbers.
    pub fn from_json(v: &serde_json::Value) -> Option<Value> {
        match v {
            serde_json::Value::Bool(b) => Some(Value::Bool(*b)),
            serde_json::Value::Number(n) => {
                if let Some(i) = n.as_i64() {
                    Some(Value::Int(i))
                } else {
                    n.as_f64().filter(|f| f.is_finite()).map(Value::Float)
                }
            }
            serde_json::Value::String(s) => Some(Value::Str(s.clone())),
            _ => None,
        }
    }

    /// A define's right-hand side for generated source code (`true`/`false` become 1/0).
    pub fn to_define(&self) -> String {
        match self {
            Value::Bool(b) => u8::from(*b).to_string(),
            Value::Float(f) => format!("{f:?}"),
            other => other.to_string(),
        }
    }

    fn rank(&self) -> u8 {
        match self {
            Value::Bool(_) => 0,
            Value::Int(_) => 1,
            Value::Float(_) => 2,
            Value::Str(_) => 3,
        }
    }

    fn zero_normalised(f: f64) -> f64 {
        if f == 0.0 { 0.0 } else { f }
    }

    fn float_key(f: f64) -> u64 {
        if f == 0.0 { 0 } else { f.to_bits() }
    }
}

impl PartialEq for Value {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Value {}

impl PartialOrd for Value {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Value {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (Value::Int(a), Value::Int(b)) => a.cmp(b),
            (Value::Float(a), Value::Float(b)) => {
                Value::zero_normalised(*a).total_cmp(&Value::zero_normalised(*b))
            }
            (Value::Str(a), Value::Str(b)) => a.cmp(b),
            (Value::Bool(a), Value::Bool(b)) => a.cmp(b),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

impl Hash for Value {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.rank().hash(state);
        match self {
            Value::Int(i) => i.hash(state),
            Value::Float(f) => Value::float_key(*f).hash(state),
            Value::Str(s) => s.hash(state),
            Value::Bool(b) => b.hash(state),
        }
    }
}

impl fmt::Display for Value {
    /// Python's `str()` of the value: `128`, `2.45`, `1.0`, `alg_1`, `True`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => write!(f, "{}", python_float(*x)),
            Value::Str(s) => f.write_str(s),
            Value::Bool(true) => f.write_str("True"),
            Value::Bool(false) => f.write_str("False"),
        }
    }
}

/// Python's `repr` of a float for the values a tuning space holds: the shortest round-trip
/// digits, with `.0` on integral values and an exponent outside `[1e-4, 1e16)`.
fn python_float(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let a = x.abs();
    if a != 0.0 && !(1e-4..1e16).contains(&a) {
        let s = format!("{x:e}");
        // Rust writes `1e20` and `1.5e-7`; Python writes `1e+20` and `1.5e-07`.
        let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
        let (sign, digits) = exp.strip_prefix('-').map_or(("+", exp), |d| ("-", d));
        return format!("{mant}e{sign}{digits:0>2}");
    }
    let s = format!("{x}");
    if s.contains('.') { s } else { format!("{s}.0") }
}

impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::Int(v)
    }
}

impl From<bool> for Value {
    fn from(v: bool) -> Self {
        Value::Bool(v)
    }
}

impl From<&str> for Value {
    fn from(v: &str) -> Self {
        Value::Str(v.to_owned())
    }
}

impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Value::Float(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn formats_like_python_str() {
        assert_eq!(Value::Int(128).to_string(), "128");
        assert_eq!(Value::Float(2.45).to_string(), "2.45");
        assert_eq!(Value::Float(1.0).to_string(), "1.0");
        assert_eq!(Value::Float(1e20).to_string(), "1e+20");
        assert_eq!(Value::Float(1.5e-7).to_string(), "1.5e-07");
        assert_eq!(Value::Bool(true).to_string(), "True");
        assert_eq!(Value::Str("alg_1".into()).to_string(), "alg_1");
    }

    #[test]
    fn floats_hash_and_compare_as_keys() {
        let set: HashSet<Value> =
            [Value::Float(0.0), Value::Float(-0.0), Value::Float(1.5)].into_iter().collect();
        assert_eq!(set.len(), 2);
        assert!(Value::Int(3) < Value::Int(4));
        assert_ne!(Value::Int(1), Value::Bool(true));
    }

    #[test]
    fn json_round_trip() {
        for v in [Value::Int(-3), Value::Float(0.25), Value::Str("x".into()), Value::Bool(false)] {
            assert_eq!(Value::from_json(&v.to_json()), Some(v));
        }
        assert_eq!(Value::from_json(&serde_json::Value::Null), None);
    }
}
