//! The specification language (thesis Eq. 4.1): tokens, a recursive-descent parser, and the
//! syntax tree it builds. Roles (input, parameters, scalars) are decided afterwards, in
//! [`crate::symbolic`], because an array's role depends on every reference to it.

use crate::error::{Result, StencilError};

/// A token and the byte offset where it starts.
#[derive(Debug, Clone, PartialEq)]
struct Token {
    kind: Tok,
    pos: usize,
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Num(f64),
    Plus,
    Minus,
    Star,
    LParen,
    RParen,
    LBrack,
    RBrack,
    Assign,
    AddAssign,
    Semi,
    End,
}

impl Tok {
    fn describe(&self) -> String {
        match self {
            Tok::Ident(s) => format!("`{s}`"),
            Tok::Num(v) => format!("number {v}"),
            Tok::Plus => "`+`".into(),
            Tok::Minus => "`-`".into(),
            Tok::Star => "`*`".into(),
            Tok::LParen => "`(`".into(),
            Tok::RParen => "`)`".into(),
            Tok::LBrack => "`[`".into(),
            Tok::RBrack => "`]`".into(),
            Tok::Assign => "`=`".into(),
            Tok::AddAssign => "`+=`".into(),
            Tok::Semi => "`;`".into(),
            Tok::End => "the end of the specification".into(),
        }
    }
}

/// A binary operator of the language.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BinOp {
    Add,
    Sub,
    Mul,
}

/// An expression of the language.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Expr {
    Num(f64),
    /// A scalar: an intermediate of an earlier statement, or one bound by `.scalar`.
    Name {
        name: String,
        pos: usize,
    },
    /// `a[i+di][j+dj][k+dk]`.
    Array {
        name: String,
        offset: [i32; 3],
        pos: usize,
    },
    Neg(Box<Expr>),
    Bin {
        op: BinOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
        pos: usize,
    },
}

/// `name = expr`, `name += expr` or `out[i][j][k] = expr`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Statement {
    pub(crate) target: String,
    pub(crate) pos: usize,
    /// True for the result statement `out[i][j][k] = ...`.
    pub(crate) is_output: bool,
    pub(crate) expr: Expr,
}

/// The specification's statements, in order.
pub(crate) fn parse(spec: &str) -> Result<Vec<Statement>> {
    let tokens = lex(spec)?;
    let mut p = Parser { spec, tokens, at: 0 };
    let mut out = Vec::new();
    loop {
        while p.peek().kind == Tok::Semi {
            p.at += 1;
        }
        if p.peek().kind == Tok::End {
            break;
        }
        out.push(p.statement()?);
        match p.peek().kind {
            Tok::Semi | Tok::End => {}
            _ => return Err(p.unexpected("`;` between statements")),
        }
    }
    Ok(out)
}

/// A parse error at byte offset `pos` of `spec`, with its line and column.
pub(crate) fn error_at(spec: &str, pos: usize, message: impl Into<String>) -> StencilError {
    let before = &spec[..pos.min(spec.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    StencilError::Parse { message: message.into(), position: pos, line, column }
}

fn lex(spec: &str) -> Result<Vec<Token>> {
    let bytes = spec.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let start = i;
        let kind = match c {
            b' ' | b'\t' | b'\n' | b'\r' => {
                i += 1;
                continue;
            }
            b'#' => {
                // A comment runs to the end of the line.
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'+' if bytes.get(i + 1) == Some(&b'=') => {
                i += 1;
                Tok::AddAssign
            }
            b'+' => Tok::Plus,
            b'-' => Tok::Minus,
            b'*' => Tok::Star,
            b'(' => Tok::LParen,
            b')' => Tok::RParen,
            b'[' => Tok::LBrack,
            b']' => Tok::RBrack,
            b'=' => Tok::Assign,
            b';' => Tok::Semi,
            b'0'..=b'9' | b'.' => {
                let (v, end) = number(spec, i)?;
                i = end;
                out.push(Token { kind: Tok::Num(v), pos: start });
                continue;
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                out.push(Token { kind: Tok::Ident(spec[start..i].to_string()), pos: start });
                continue;
            }
            _ => {
                let ch = spec[i..].chars().next().unwrap_or('?');
                return Err(error_at(spec, i, format!("unexpected character `{ch}`")));
            }
        };
        i += 1;
        out.push(Token { kind, pos: start });
    }
    out.push(Token { kind: Tok::End, pos: spec.len() });
    Ok(out)
}

/// A decimal literal (`3`, `0.25`, `.5`, `1e-3`) starting at `i`, and the offset after it.
fn number(spec: &str, mut i: usize) -> Result<(f64, usize)> {
    let bytes = spec.as_bytes();
    let start = i;
    while i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == b'.') {
        i += 1;
    }
    if i < bytes.len() && (bytes[i] == b'e' || bytes[i] == b'E') {
        let mut e = i + 1;
        if e < bytes.len() && (bytes[e] == b'+' || bytes[e] == b'-') {
            e += 1;
        }
        if e < bytes.len() && bytes[e].is_ascii_digit() {
            i = e;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
        }
    }
    let text = &spec[start..i];
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok((v, i)),
        _ => Err(error_at(spec, start, format!("malformed number `{text}`"))),
    }
}

struct Parser<'a> {
    spec: &'a str,
    tokens: Vec<Token>,
    at: usize,
}

impl Parser<'_> {
    fn peek(&self) -> &Token {
        &self.tokens[self.at.min(self.tokens.len() - 1)]
    }

    fn next(&mut self) -> Token {
        let t = self.peek().clone();
        if t.kind != Tok::End {
            self.at += 1;
        }
        t
    }

    fn unexpected(&self, wanted: &str) -> StencilError {
        let t = self.peek();
        error_at(self.spec, t.pos, format!("expected {wanted}, found {}", t.kind.describe()))
    }

    fn expect(&mut self, kind: Tok, wanted: &str) -> Result<Token> {
        if self.peek().kind == kind { Ok(self.next()) } else { Err(self.unexpected(wanted)) }
    }

    fn statement(&mut self) -> Result<Statement> {
        let t = self.next();
        let Tok::Ident(target) = t.kind else {
            self.at -= 1;
            return Err(self.unexpected("a statement `name = expression`"));
        };
        let is_output = if self.peek().kind == Tok::LBrack {
            let (offset, pos) = self.indices()?;
            if offset != [0, 0, 0] {
                return Err(error_at(self.spec, pos, "the result must be written at `[i][j][k]`"));
            }
            true
        } else {
            false
        };
        let compound = match self.next().kind {
            Tok::Assign => false,
            Tok::AddAssign if !is_output => true,
            _ => {
                self.at -= 1;
                return Err(self.unexpected(if is_output { "`=`" } else { "`=` or `+=`" }));
            }
        };
        let rhs = self.expr()?;
        let expr = if compound {
            let name = Expr::Name { name: target.clone(), pos: t.pos };
            Expr::Bin { op: BinOp::Add, lhs: Box::new(name), rhs: Box::new(rhs), pos: t.pos }
        } else {
            rhs
        };
        Ok(Statement { target, pos: t.pos, is_output, expr })
    }

    fn expr(&mut self) -> Result<Expr> {
        let mut lhs = self.term()?;
        loop {
            let op = match self.peek().kind {
                Tok::Plus => BinOp::Add,
                Tok::Minus => BinOp::Sub,
                _ => return Ok(lhs),
            };
            let pos = self.next().pos;
            let rhs = self.term()?;
            lhs = Expr::Bin { op, lhs: Box::new(lhs), rhs: Box::new(rhs), pos };
        }
    }

    fn term(&mut self) -> Result<Expr> {
        let mut lhs = self.unary()?;
        while self.peek().kind == Tok::Star {
            let pos = self.next().pos;
            let rhs = self.unary()?;
            lhs = Expr::Bin { op: BinOp::Mul, lhs: Box::new(lhs), rhs: Box::new(rhs), pos };
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> Result<Expr> {
        match self.peek().kind {
            Tok::Minus => {
                self.next();
                Ok(Expr::Neg(Box::new(self.unary()?)))
            }
            Tok::Plus => {
                self.next();
                self.unary()
            }
            _ => self.primary(),
        }
    }

    fn primary(&mut self) -> Result<Expr> {
        let t = self.next();
        match t.kind {
            Tok::Num(v) => Ok(Expr::Num(v)),
            Tok::LParen => {
                let e = self.expr()?;
                self.expect(Tok::RParen, "`)`")?;
                Ok(e)
            }
            Tok::Ident(name) => {
                if self.peek().kind == Tok::LBrack {
                    let (offset, _) = self.indices()?;
                    Ok(Expr::Array { name, offset, pos: t.pos })
                } else if matches!(name.as_str(), "i" | "j" | "k") {
                    Err(error_at(
                        self.spec,
                        t.pos,
                        format!("`{name}` is an index and may only appear inside `[...]`"),
                    ))
                } else {
                    Ok(Expr::Name { name, pos: t.pos })
                }
            }
            _ => {
                self.at -= 1;
                Err(self.unexpected("a number, a name, an array reference or `(`"))
            }
        }
    }

    /// `[i+a][j+b][k+c]`: the offset and the position of the first `[`.
    fn indices(&mut self) -> Result<([i32; 3], usize)> {
        let pos = self.peek().pos;
        let mut offset = [0i32; 3];
        for (axis, var) in ["i", "j", "k"].into_iter().enumerate() {
            self.expect(Tok::LBrack, "`[`")?;
            match self.next().kind {
                Tok::Ident(v) if v == var => {}
                _ => {
                    self.at -= 1;
                    return Err(self.unexpected(&format!("index `{var}` (axis {axis})")));
                }
            }
            let sign = match self.peek().kind {
                Tok::Plus => 1,
                Tok::Minus => -1,
                _ => 0,
            };
            if sign != 0 {
                self.next();
                let t = self.next();
                match t.kind {
                    Tok::Num(v) if v.fract() == 0.0 && v <= f64::from(crate::MAX_OFFSET) => {
                        offset[axis] = sign * v as i32;
                    }
                    _ => {
                        return Err(error_at(
                            self.spec,
                            t.pos,
                            format!("an offset must be a whole number of at most {}", crate::MAX_OFFSET),
                        ));
                    }
                }
            }
            self.expect(Tok::RBrack, "`]`")?;
        }
        Ok((offset, pos))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_and_offsets() {
        let s = parse("t = (u[i+1][j][k] + u[i-2][j][k]) * b; out[i][j][k] = t + a*u[i][j][k+3];").unwrap();
        assert_eq!(s.len(), 2);
        assert!(!s[0].is_output && s[1].is_output);
        let Expr::Bin { op: BinOp::Add, rhs, .. } = &s[1].expr else { panic!("{:?}", s[1].expr) };
        let Expr::Bin { op: BinOp::Mul, rhs, .. } = rhs.as_ref() else { panic!() };
        assert_eq!(**rhs, Expr::Array { name: "u".into(), offset: [0, 0, 3], pos: 60 });
    }

    #[test]
    fn errors_name_line_and_column() {
        let e = parse("a = 1;\nout[i][j][k] = u[i+1][j][k] $ 2").unwrap_err();
        let StencilError::Parse { line, column, position, .. } = e else { panic!("{e}") };
        assert_eq!((line, column, position), (2, 29, 35));
        let e = parse("out[i][j][k] = u[j][j][k]").unwrap_err().to_string();
        assert!(e.contains("index `i`") && e.contains("position 17"), "{e}");
        let e = parse("out[i][j][k] = u[i+0.5][j][k]").unwrap_err().to_string();
        assert!(e.contains("whole number"), "{e}");
        let e = parse("out[i][j][k] = (u[i][j][k]").unwrap_err().to_string();
        assert!(e.contains("expected `)`") && e.contains("end of the specification"), "{e}");
        let e = parse("out[i][j][k] = i * 2").unwrap_err().to_string();
        assert!(e.contains("index"), "{e}");
    }

    #[test]
    fn compound_assignment_adds() {
        let s = parse("t = 1; t += 2").unwrap();
        assert!(matches!(&s[1].expr, Expr::Bin { op: BinOp::Add, .. }));
    }
}
