//! Tuning parameters: a name and an ordered list of values.

use super::error::{Result, TuneError};
use super::value::Value;

/// A tuning parameter: a name and its candidate values, in the order that "adjacent" refers to
/// (neighbourhood searches step to the previous and next value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    name: String,
    values: Vec<Value>,
}

impl Param {
    /// A parameter with explicit values; they must be non-empty, distinct, and not NaN.
    pub fn new(name: impl Into<String>, values: Vec<Value>) -> Result<Param> {
        let name = name.into();
        if name.is_empty() {
            return Err(TuneError::InvalidSpace("a parameter needs a name".into()));
        }
        if values.is_empty() {
            return Err(TuneError::InvalidSpace(format!("parameter `{name}` has no values")));
        }
        if values.len() > u32::MAX as usize {
            return Err(TuneError::InvalidSpace(format!("parameter `{name}` has too many values")));
        }
        if values.iter().any(|v| matches!(v, Value::Float(f) if !f.is_finite())) {
            return Err(TuneError::InvalidSpace(format!("parameter `{name}` has a non-finite value")));
        }
        let mut sorted = values.clone();
        sorted.sort();
        if sorted.windows(2).any(|w| w[0] == w[1]) {
            return Err(TuneError::InvalidSpace(format!("parameter `{name}` repeats a value")));
        }
        Ok(Param { name, values })
    }

    /// Integers `lo, lo + step, ...` up to and including `hi` if it is on the grid.
    pub fn range(name: impl Into<String>, lo: i64, hi: i64, step: i64) -> Result<Param> {
        let name = name.into();
        if step <= 0 || hi < lo {
            return Err(TuneError::InvalidSpace(format!("range `{name}`: need step > 0 and lo <= hi")));
        }
        let count = (hi - lo) / step + 1;
        if count > 1 << 24 {
            return Err(TuneError::InvalidSpace(format!("range `{name}` has {count} values")));
        }
        Param::new(name, (0..count).map(|k| Value::Int(lo + k * step)).collect())
    }

    /// The powers of two in `[lo, hi]` (both at least 1).
    pub fn pow2(name: impl Into<String>, lo: i64, hi: i64) -> Result<Param> {
        let name = name.into();
        if lo < 1 || hi < lo {
            return Err(TuneError::InvalidSpace(format!("pow2 `{name}`: need 1 <= lo <= hi")));
        }
        let values: Vec<Value> =
            (0..63).map(|e| 1i64 << e).filter(|v| (lo..=hi).contains(v)).map(Value::Int).collect();
        Param::new(name, values)
    }

    /// Explicit integers.
    pub fn ints(name: impl Into<String>, values: &[i64]) -> Result<Param> {
        Param::new(name, values.iter().map(|&v| Value::Int(v)).collect())
    }

    /// Explicit floats.
    pub fn floats(name: impl Into<String>, values: &[f64]) -> Result<Param> {
        Param::new(name, values.iter().map(|&v| Value::Float(v)).collect())
    }

    /// Explicit names (e.g. algorithm variants).
    pub fn names(name: impl Into<String>, values: &[&str]) -> Result<Param> {
        Param::new(name, values.iter().map(|&v| Value::Str(v.to_owned())).collect())
    }

    /// A switch: `false`, `true`.
    pub fn boolean(name: impl Into<String>) -> Result<Param> {
        Param::new(name, vec![Value::Bool(false), Value::Bool(true)])
    }

    /// The name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The values, in order.
    pub fn values(&self) -> &[Value] {
        &self.values
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Never true: a parameter has at least one value.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The index of `v` among the values.
    pub fn index_of(&self, v: &Value) -> Option<u32> {
        self.values.iter().position(|x| x == v).map(|i| i as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds() {
        let r = Param::range("r", 8, 40, 8).unwrap();
        assert_eq!(r.values().iter().map(|v| v.as_i64().unwrap()).collect::<Vec<_>>(), [8, 16, 24, 32, 40]);
        let p = Param::pow2("p", 3, 100).unwrap();
        assert_eq!(p.values().iter().map(|v| v.as_i64().unwrap()).collect::<Vec<_>>(), [4, 8, 16, 32, 64]);
        assert_eq!(Param::boolean("b").unwrap().len(), 2);
        assert_eq!(Param::names("n", &["a", "b"]).unwrap().index_of(&"b".into()), Some(1));
        assert_eq!(Param::floats("f", &[0.5, 1.0]).unwrap().len(), 2);
    }

    #[test]
    fn rejects_bad_descriptions() {
        assert!(Param::range("r", 1, 10, 0).is_err());
        assert!(Param::range("r", 10, 1, 1).is_err());
        assert!(Param::pow2("p", 0, 8).is_err());
        assert!(Param::ints("i", &[]).is_err());
        assert!(Param::ints("i", &[1, 1]).is_err());
        assert!(Param::floats("f", &[f64::NAN]).is_err());
        assert!(Param::ints("", &[1]).is_err());
    }
}
