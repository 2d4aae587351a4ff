//! The intermediate form every stencil is lowered to: an affine combination of input offsets,
//! `out = sum_m c_m * in[p + d_m] + bias`, whose coefficients are polynomials in the scalars and
//! in the parameter arrays read at the output's own point. Both the CPU kernels and the generated
//! GPU source are produced from this one form.

use std::collections::HashMap;

use crate::error::Result;
use crate::parse::{self, BinOp, Expr, Statement, error_at};

/// A symbol a coefficient may depend on: a scalar or a parameter array (by index).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Sym {
    Scalar(usize),
    Param(usize),
}

/// `coef * product of syms` (syms sorted, repeats allowed).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Mono {
    pub(crate) coef: f64,
    pub(crate) syms: Vec<Sym>,
}

/// A sum of monomials, like terms merged.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Poly(pub(crate) Vec<Mono>);

impl Poly {
    pub(crate) fn constant(v: f64) -> Poly {
        Poly(vec![Mono { coef: v, syms: Vec::new() }])
    }

    fn sym(s: Sym) -> Poly {
        Poly(vec![Mono { coef: 1.0, syms: vec![s] }])
    }

    fn add(mut self, other: &Poly, sign: f64) -> Poly {
        for m in &other.0 {
            match self.0.iter_mut().find(|x| x.syms == m.syms) {
                Some(x) => x.coef += sign * m.coef,
                None => self.0.push(Mono { coef: sign * m.coef, syms: m.syms.clone() }),
            }
        }
        self
    }

    fn mul(&self, other: &Poly) -> Poly {
        let mut out = Poly::default();
        for a in &self.0 {
            for b in &other.0 {
                let mut syms = [a.syms.as_slice(), b.syms.as_slice()].concat();
                syms.sort();
                out = out.add(&Poly(vec![Mono { coef: a.coef * b.coef, syms }]), 1.0);
            }
        }
        out
    }

    /// True when no monomial reads a parameter array: the coefficient is one number per sweep.
    pub(crate) fn is_uniform(&self) -> bool {
        self.0.iter().all(|m| m.syms.iter().all(|s| matches!(s, Sym::Scalar(_))))
    }

    pub(crate) fn is_zero(&self) -> bool {
        self.0.iter().all(|m| m.coef == 0.0)
    }
}

/// The value of an expression: linear in the input.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Affine {
    pub(crate) terms: Vec<([i32; 3], Poly)>,
    pub(crate) bias: Poly,
}

impl Affine {
    fn add(mut self, other: &Affine, sign: f64) -> Affine {
        for (off, p) in &other.terms {
            match self.terms.iter_mut().find(|(o, _)| o == off) {
                Some((_, q)) => *q = std::mem::take(q).add(p, sign),
                None => self.terms.push((*off, Poly::default().add(p, sign))),
            }
        }
        self.bias = self.bias.add(&other.bias, sign);
        self
    }

    fn scale(&self, p: &Poly) -> Affine {
        Affine { terms: self.terms.iter().map(|(o, q)| (*o, q.mul(p))).collect(), bias: self.bias.mul(p) }
    }
}

/// A named symbol and the byte offset of its first use.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Symbol {
    pub(crate) name: String,
    pub(crate) pos: usize,
}

/// A specification lowered to its intermediate form.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Lowered {
    pub(crate) form: Affine,
    pub(crate) scalars: Vec<Symbol>,
    pub(crate) params: Vec<Symbol>,
    pub(crate) input: String,
    pub(crate) output: String,
    pub(crate) flops: usize,
}

/// Parses `spec`, decides the roles of its arrays and lowers it.
pub(crate) fn lower(spec: &str) -> Result<Lowered> {
    let stmts = parse::parse(spec)?;
    let Some(last) = stmts.last() else {
        return Err(error_at(spec, 0, "empty specification: expected `out[i][j][k] = expression`"));
    };
    if let Some(s) = stmts.iter().find(|s| s.is_output && !std::ptr::eq(*s, last)) {
        return Err(error_at(spec, s.pos, "the result statement `out[i][j][k] = ...` must be the last"));
    }
    if !last.is_output {
        return Err(error_at(spec, last.pos, "the last statement must be the result `name[i][j][k] = ...`"));
    }
    let input = find_input(spec, &stmts)?;
    let mut cx =
        Lowering { spec, input: &input, env: HashMap::new(), scalars: Vec::new(), params: Vec::new() };
    let mut flops = 0;
    for s in &stmts {
        flops += count_ops(&s.expr);
        let v = cx.eval(&s.expr)?;
        if s.is_output {
            if v.terms.is_empty() {
                return Err(error_at(
                    spec,
                    s.pos,
                    format!("the result does not depend on the input `{input}`"),
                ));
            }
            let Lowering { scalars, params, .. } = cx;
            return Ok(Lowered { form: v, scalars, params, input, output: s.target.clone(), flops });
        }
        if s.target == input || cx.params.iter().any(|p| p.name == s.target) {
            return Err(error_at(spec, s.pos, format!("`{}` is an array and cannot be assigned", s.target)));
        }
        if let Some(used) = cx.scalars.iter().find(|x| x.name == s.target) {
            return Err(error_at(
                spec,
                used.pos,
                format!("`{}` is used here before its definition at position {}", s.target, s.pos),
            ));
        }
        cx.env.insert(s.target.clone(), v);
    }
    unreachable!("the last statement is the output")
}

/// The one array read at a non-zero offset.
fn find_input(spec: &str, stmts: &[Statement]) -> Result<String> {
    let mut refs = Vec::new();
    for s in stmts {
        arrays(&s.expr, &mut refs);
    }
    let mut input: Option<(&str, usize)> = None;
    for &(name, offset, pos) in &refs {
        if offset == [0, 0, 0] {
            continue;
        }
        match input {
            None => input = Some((name, pos)),
            Some((first, first_pos)) if first != name => {
                return Err(error_at(
                    spec,
                    pos,
                    format!(
                        "`{name}` is read at offset {offset:?}, but `{first}` (position {first_pos}) is already \
                         the input: only one array may be read at a non-zero offset, parameter arrays only at \
                         [i][j][k]"
                    ),
                ));
            }
            Some(_) => {}
        }
    }
    match input {
        Some((name, _)) => Ok(name.to_string()),
        None => Err(error_at(
            spec,
            stmts.last().map_or(0, |s| s.pos),
            "no input array: exactly one array must be read at a non-zero offset",
        )),
    }
}

fn arrays<'a>(e: &'a Expr, out: &mut Vec<(&'a str, [i32; 3], usize)>) {
    match e {
        Expr::Array { name, offset, pos } => out.push((name, *offset, *pos)),
        Expr::Neg(x) => arrays(x, out),
        Expr::Bin { lhs, rhs, .. } => {
            arrays(lhs, out);
            arrays(rhs, out);
        }
        Expr::Num(_) | Expr::Name { .. } => {}
    }
}

/// Binary operations of the formula as written: the thesis's flops per point (Table 4.1).
fn count_ops(e: &Expr) -> usize {
    match e {
        Expr::Bin { lhs, rhs, .. } => 1 + count_ops(lhs) + count_ops(rhs),
        Expr::Neg(x) => count_ops(x),
        Expr::Num(_) | Expr::Name { .. } | Expr::Array { .. } => 0,
    }
}

struct Lowering<'a> {
    spec: &'a str,
    input: &'a str,
    env: HashMap<String, Affine>,
    scalars: Vec<Symbol>,
    params: Vec<Symbol>,
}

impl Lowering<'_> {
    fn eval(&mut self, e: &Expr) -> Result<Affine> {
        Ok(match e {
            Expr::Num(v) => Affine { terms: Vec::new(), bias: Poly::constant(*v) },
            Expr::Name { name, pos } => match self.env.get(name) {
                Some(v) => v.clone(),
                None => {
                    if name == self.input || self.params.iter().any(|p| &p.name == name) {
                        return Err(error_at(
                            self.spec,
                            *pos,
                            format!("array `{name}` needs indices `[i][j][k]`"),
                        ));
                    }
                    let id = intern(&mut self.scalars, name, *pos);
                    Affine { terms: Vec::new(), bias: Poly::sym(Sym::Scalar(id)) }
                }
            },
            Expr::Array { name, offset, pos } => {
                if name == self.input {
                    Affine { terms: vec![(*offset, Poly::constant(1.0))], bias: Poly::default() }
                } else {
                    if self.env.contains_key(name) || self.scalars.iter().any(|s| &s.name == name) {
                        return Err(error_at(self.spec, *pos, format!("`{name}` is a scalar, not an array")));
                    }
                    let id = intern(&mut self.params, name, *pos);
                    Affine { terms: Vec::new(), bias: Poly::sym(Sym::Param(id)) }
                }
            }
            Expr::Neg(x) => Affine::default().add(&self.eval(x)?, -1.0),
            Expr::Bin { op, lhs, rhs, pos } => {
                let (a, b) = (self.eval(lhs)?, self.eval(rhs)?);
                match op {
                    BinOp::Add => a.add(&b, 1.0),
                    BinOp::Sub => a.add(&b, -1.0),
                    BinOp::Mul => match (a.terms.is_empty(), b.terms.is_empty()) {
                        (true, _) => b.scale(&a.bias),
                        (_, true) => a.scale(&b.bias),
                        (false, false) => {
                            return Err(error_at(
                                self.spec,
                                *pos,
                                format!(
                                    "product of two terms in the input `{}`: a stencil is linear in its input",
                                    self.input
                                ),
                            ));
                        }
                    },
                }
            }
        })
    }
}

fn intern(table: &mut Vec<Symbol>, name: &str, pos: usize) -> usize {
    table.iter().position(|s| s.name == name).unwrap_or_else(|| {
        table.push(Symbol { name: name.to_string(), pos });
        table.len() - 1
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seven_point_of_table_4_1() {
        let l = lower(
            "tmp = (u[i+1][j][k]+u[i-1][j][k]+u[i][j+1][k]+u[i][j-1][k]+u[i][j][k+1]+u[i][j][k-1])*beta;
             u1[i][j][k] = tmp + alpha*u[i][j][k]",
        )
        .unwrap();
        assert_eq!(l.flops, 8);
        assert_eq!(l.form.terms.len(), 7);
        assert_eq!((l.input.as_str(), l.output.as_str()), ("u", "u1"));
        let names: Vec<_> = l.scalars.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["beta", "alpha"]);
        assert!(l.form.bias.0.is_empty());
        assert!(l.form.terms.iter().all(|(_, p)| p.is_uniform() && p.0.len() == 1));
    }

    #[test]
    fn parameters_and_like_terms() {
        let l = lower(
            "s = w[i][j][k] * (u[i+1][j][k] - u[i][j][k]) + 3; out[i][j][k] = s + 2*w[i][j][k]*u[i+1][j][k]",
        )
        .unwrap();
        assert_eq!(l.params.len(), 1);
        let plus = &l.form.terms.iter().find(|(o, _)| *o == [1, 0, 0]).unwrap().1;
        assert_eq!(plus.0, vec![Mono { coef: 3.0, syms: vec![Sym::Param(0)] }]);
        assert!(!plus.is_uniform());
        assert_eq!(l.form.bias, Poly::constant(3.0));
    }

    #[test]
    fn role_errors_point_at_the_culprit() {
        let e = lower("out[i][j][k] = u[i+1][j][k] + v[i][j-1][k]").unwrap_err().to_string();
        assert!(e.contains("`v`") && e.contains("`u`") && e.contains("position 30"), "{e}");
        let e = lower("out[i][j][k] = u[i][j][k] * 2").unwrap_err().to_string();
        assert!(e.contains("no input array"), "{e}");
        let e = lower("out[i][j][k] = u[i+1][j][k] * u[i][j][k]").unwrap_err().to_string();
        assert!(e.contains("linear") && e.contains("position 28"), "{e}");
        let e = lower("out[i][j][k] = u[i+1][j][k]; x = 1").unwrap_err().to_string();
        assert!(e.contains("last"), "{e}");
        let e = lower("a = 2; out[i][j][k] = a[i][j][k] + u[i+1][j][k]").unwrap_err().to_string();
        assert!(e.contains("scalar, not an array"), "{e}");
        let e = lower("").unwrap_err().to_string();
        assert!(e.contains("empty"), "{e}");
    }
}
