//! The `extern "C" __global__` entry points of a kernel source, found without a compiler.
//!
//! hetkit's kernels are instantiated by macros (an X-macro per operator and element type), so
//! their names appear in the source only as `scan_lookback_##OPNAME##_##SFX`. This is a small C
//! preprocessor, enough for those sources: object- and function-like `#define`s with `#` and `##`,
//! `#undef`, `#ifdef`/`#ifndef`/`#else`/`#endif` (the kernels' compile-time defaults), and the
//! rescanning rules of the standard (a macro is not expanded again inside its own expansion).
//! Anything it does not model (`#if` expressions, `#include` of a quoted file, which the build
//! inlines) is an error rather than a wrong answer. Checked against the system preprocessor on
//! every embedded module (`tests/entry_points.rs`).

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use crate::error::{Error, Result};

/// A preprocessing token: its text and the macros it came out of (not expanded again in it).
#[derive(Debug, Clone)]
struct Token {
    text: Rc<str>,
    hide: Rc<HashSet<Rc<str>>>,
}

impl Token {
    fn new(text: &str) -> Token {
        Token { text: text.into(), hide: Rc::default() }
    }

    fn is_ident(&self) -> bool {
        self.text.starts_with(|c: char| c == '_' || c.is_ascii_alphabetic())
    }
}

#[derive(Debug)]
struct Macro {
    /// `Some(parameters)` for a function-like macro.
    params: Option<Vec<String>>,
    body: Vec<Token>,
}

/// Names of the `extern "C" __global__` functions `source` defines, in order, after macro
/// expansion. `source` is a whole translation unit (quoted `#include`s already inlined, as in
/// [`super::EmbeddedModule::source`]).
pub(super) fn entry_points(source: &str) -> Result<Vec<String>> {
    let tokens = preprocess(source)?;
    let mut names = Vec::new();
    let text: Vec<&str> = tokens.iter().map(|t| &*t.text).collect();
    let mut i = 0;
    while i + 2 < text.len() {
        if text[i] == "extern" && text[i + 1] == "\"C\"" && text[i + 2] == "__global__" {
            i += 3;
            // The name is the first identifier followed by `(`, past the return type and any
            // `__launch_bounds__(...)`.
            let name = loop {
                match text.get(i) {
                    None | Some(&("{" | ";" | "extern")) => {
                        return Err(invalid("an `extern \"C\" __global__` without a parameter list"));
                    }
                    Some(&"__launch_bounds__") => i = skip_group(&text, i + 1)?,
                    Some(t) if tokens[i].is_ident() && text.get(i + 1) == Some(&"(") => break *t,
                    _ => i += 1,
                }
            };
            names.push(name.to_string());
        }
        i += 1;
    }
    Ok(names)
}

/// The index after the parenthesised group starting at `open`.
fn skip_group(text: &[&str], open: usize) -> Result<usize> {
    if text.get(open) != Some(&"(") {
        return Err(invalid("`__launch_bounds__` without its arguments"));
    }
    let mut depth = 0usize;
    for (k, t) in text.iter().enumerate().skip(open) {
        match *t {
            "(" => depth += 1,
            ")" => {
                depth -= 1;
                if depth == 0 {
                    return Ok(k + 1);
                }
            }
            _ => {}
        }
    }
    Err(invalid("unbalanced parentheses"))
}

fn invalid(what: &str) -> Error {
    Error::Invalid(format!("kernel source: {what}"))
}

/// The translation unit's tokens after directives and macro expansion.
fn preprocess(source: &str) -> Result<Vec<Token>> {
    let joined = source.replace("\\\r\n", "").replace("\\\n", "");
    let text = strip_comments(&joined);
    let mut macros: HashMap<String, Macro> = HashMap::new();
    // One entry per open conditional: whether its current branch is kept.
    let mut active: Vec<bool> = Vec::new();
    let mut code = Vec::new();
    for line in text.lines() {
        let trimmed = line.trim_start();
        let Some(directive) = trimmed.strip_prefix('#') else {
            if active.iter().all(|&a| a) {
                code.extend(lex(line)?);
            }
            continue;
        };
        let toks = lex(directive)?;
        let (kw, rest) = match toks.split_first() {
            Some((k, r)) => (&*k.text, r),
            None => continue,
        };
        let live = active.iter().all(|&a| a);
        match kw {
            "ifdef" | "ifndef" => {
                let name = rest.first().ok_or_else(|| invalid("`#ifdef` without a name"))?;
                active.push(macros.contains_key(&*name.text) == (kw == "ifdef"));
            }
            "else" => {
                let last = active.last_mut().ok_or_else(|| invalid("`#else` without `#if`"))?;
                *last = !*last;
            }
            "endif" => {
                active.pop().ok_or_else(|| invalid("`#endif` without `#if`"))?;
            }
            "if" | "elif" => return Err(invalid("`#if` expressions are not modelled")),
            _ if !live => {}
            "define" => {
                let (name, m) = parse_define(directive)?;
                macros.insert(name, m);
            }
            "undef" => {
                if let Some(name) = rest.first() {
                    macros.remove(&*name.text);
                }
            }
            "include" if rest.first().is_some_and(|t| t.text.starts_with('"')) => {
                return Err(invalid("a quoted `#include` (the build inlines them)"));
            }
            // `#pragma`, `#include <...>`, `#error` in dead branches, line markers.
            _ => {}
        }
    }
    if !active.is_empty() {
        return Err(invalid("unterminated `#ifdef`"));
    }
    expand(code, &macros)
}

/// `// ...` and `/* ... */` comments replaced by a space (newlines kept), outside literals.
fn strip_comments(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    let mut start = 0;
    while i < b.len() {
        match b[i] {
            b'"' | b'\'' => i = literal_end(b, i),
            b'/' if b.get(i + 1) == Some(&b'/') => {
                out.push_str(&s[start..i]);
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                out.push(' ');
                start = i;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                out.push_str(&s[start..i]);
                let end = s[i + 2..].find("*/").map_or(b.len(), |k| i + 2 + k + 2);
                out.extend(s[i..end.min(b.len())].chars().filter(|&c| c == '\n'));
                out.push(' ');
                i = end;
                start = i;
            }
            _ => i += 1,
        }
    }
    out.push_str(&s[start.min(s.len())..]);
    out
}

/// The index after the string or character literal opening at `i`.
fn literal_end(b: &[u8], i: usize) -> usize {
    let quote = b[i];
    let mut k = i + 1;
    while k < b.len() && b[k] != quote && b[k] != b'\n' {
        k += if b[k] == b'\\' { 2 } else { 1 };
    }
    (k + 1).min(b.len())
}

/// Preprocessing tokens of one line: identifiers, numbers, literals, `##`, single punctuators.
fn lex(line: &str) -> Result<Vec<Token>> {
    let b = line.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let end = if c.is_ascii_whitespace() {
            i += 1;
            continue;
        } else if c == b'_' || c.is_ascii_alphabetic() {
            i + b[i..].iter().take_while(|&&x| x == b'_' || x.is_ascii_alphanumeric()).count()
        } else if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            let mut k = i + 1;
            while k < b.len() {
                let x = b[k];
                let exp_sign = (x == b'+' || x == b'-') && matches!(b[k - 1], b'e' | b'E' | b'p' | b'P');
                if x.is_ascii_alphanumeric() || x == b'_' || x == b'.' || exp_sign {
                    k += 1;
                } else {
                    break;
                }
            }
            k
        } else if c == b'"' || c == b'\'' {
            let k = literal_end(b, i);
            if b[k - 1] != c || k == i + 1 {
                return Err(invalid("unterminated literal"));
            }
            k
        } else if c == b'#' && b.get(i + 1) == Some(&b'#') {
            i + 2
        } else {
            // One character (a multi-byte one whole: sources are UTF-8).
            i + line[i..].chars().next().map_or(1, char::len_utf8)
        };
        out.push(Token::new(&line[i..end]));
        i = end;
    }
    Ok(out)
}

fn parse_define(directive: &str) -> Result<(String, Macro)> {
    let d = directive.trim_start().strip_prefix("define").ok_or_else(|| invalid("bad `#define`"))?;
    let d = d.trim_start();
    let name_len = d.bytes().take_while(|&x| x == b'_' || x.is_ascii_alphanumeric()).count();
    if name_len == 0 {
        return Err(invalid("`#define` without a name"));
    }
    let (name, rest) = d.split_at(name_len);
    // Function-like only when `(` follows the name at once.
    if let Some(after) = rest.strip_prefix('(') {
        let close = after.find(')').ok_or_else(|| invalid("unclosed macro parameter list"))?;
        let params =
            after[..close].split(',').map(|p| p.trim().to_string()).filter(|p| !p.is_empty()).collect();
        Ok((name.to_string(), Macro { params: Some(params), body: lex(&after[close + 1..])? }))
    } else {
        Ok((name.to_string(), Macro { params: None, body: lex(rest)? }))
    }
}

/// Macro expansion of `input` with rescanning (a work stack holds what is still to be read).
fn expand(input: Vec<Token>, macros: &HashMap<String, Macro>) -> Result<Vec<Token>> {
    let mut pending: Vec<Token> = input.into_iter().rev().collect();
    let mut out = Vec::new();
    while let Some(tok) = pending.pop() {
        let Some(m) = macros.get(&*tok.text).filter(|_| tok.is_ident() && !tok.hide.contains(&tok.text))
        else {
            out.push(tok);
            continue;
        };
        let mut hide = (*tok.hide).clone();
        hide.insert(tok.text.clone());
        let replaced = match &m.params {
            None => paste(&m.body, &HashMap::new(), macros)?,
            Some(params) => {
                if pending.last().map(|t| &*t.text) != Some("(") {
                    out.push(tok);
                    continue;
                }
                pending.pop();
                let args = collect_args(&mut pending)?;
                let args: Vec<Vec<Token>> = if params.is_empty() && args.len() == 1 && args[0].is_empty() {
                    Vec::new()
                } else {
                    args
                };
                if args.len() != params.len() {
                    return Err(invalid(&format!(
                        "`{}` takes {} arguments, got {}",
                        tok.text,
                        params.len(),
                        args.len()
                    )));
                }
                let bound: HashMap<&str, &[Token]> =
                    params.iter().map(String::as_str).zip(args.iter().map(Vec::as_slice)).collect();
                paste(&m.body, &bound, macros)?
            }
        };
        let hide = Rc::new(hide);
        for mut t in replaced.into_iter().rev() {
            let mut h = (*t.hide).clone();
            h.extend(hide.iter().cloned());
            t.hide = Rc::new(h);
            pending.push(t);
        }
    }
    Ok(out)
}

/// The arguments of a macro call whose `(` was just read, up to its `)`: split at top-level commas.
fn collect_args(pending: &mut Vec<Token>) -> Result<Vec<Vec<Token>>> {
    let mut args = vec![Vec::new()];
    let mut depth = 0usize;
    loop {
        let t = pending.pop().ok_or_else(|| invalid("unterminated macro call"))?;
        match &*t.text {
            ")" if depth == 0 => return Ok(args),
            "," if depth == 0 => {
                args.push(Vec::new());
                continue;
            }
            "(" => depth += 1,
            ")" => depth -= 1,
            _ => {}
        }
        args.last_mut().expect("one argument at least").push(t);
    }
}

/// A macro body with its parameters replaced (fully expanded arguments, raw ones beside `##`,
/// a string literal after `#`), then `##` pasted.
fn paste(
    body: &[Token],
    bound: &HashMap<&str, &[Token]>,
    macros: &HashMap<String, Macro>,
) -> Result<Vec<Token>> {
    let mut out: Vec<Token> = Vec::new();
    // After `##`: the next token is pasted onto the last one written.
    let mut glue = false;
    let mut k = 0;
    while k < body.len() {
        let t = &body[k];
        let next_is_paste = body.get(k + 1).is_some_and(|n| &*n.text == "##");
        let mut piece: Vec<Token> = if &*t.text == "##" {
            glue = true;
            k += 1;
            continue;
        } else if &*t.text == "#"
            && !bound.is_empty()
            && body.get(k + 1).is_some_and(|n| bound.contains_key(&*n.text))
        {
            k += 1;
            let arg = bound[&*body[k].text];
            let s: Vec<&str> = arg.iter().map(|a| &*a.text).collect();
            vec![Token::new(&format!("\"{}\"", s.join(" ").replace('\\', "\\\\").replace('"', "\\\"")))]
        } else if let Some(arg) = bound.get(&*t.text) {
            if glue || next_is_paste { arg.to_vec() } else { expand(arg.to_vec(), macros)? }
        } else {
            vec![t.clone()]
        };
        if glue
            && !piece.is_empty()
            && let Some(last) = out.pop()
        {
            let first = piece.remove(0);
            let mut joined = lex(&format!("{}{}", last.text, first.text))?;
            if joined.len() != 1 {
                return Err(invalid(&format!("`{}` ## `{}` is not one token", last.text, first.text)));
            }
            out.push(joined.remove(0));
        }
        glue = false;
        out.extend(piece);
        k += 1;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::entry_points;

    #[test]
    fn x_macros_paste_names_and_skip_launch_bounds() {
        let src = r#"
#define ROWS(OP, T) BOUNDS(T) row_##OP##_##T(const float* x) {}
#define BOUNDS(T) extern "C" __global__ void __launch_bounds__(SIZE_##T)
#define SIZE_f32 256
#define EACH(X, T) X(add, T) X(max, T)
EACH(ROWS, f32)
// extern "C" __global__ void commented_out(int) {}
extern "C" __global__ void plain(int n) { const char* s = "extern \"C\" __global__ void no("; }
"#;
        assert_eq!(entry_points(src).unwrap(), ["row_add_f32", "row_max_f32", "plain"]);
    }

    #[test]
    fn conditionals_keep_one_branch_and_defaults_apply() {
        let src = "#ifndef T\n#define T float\n#define NAME k_float\n#else\n#define NAME k_other\n#endif\n\
                   extern \"C\" __global__ void NAME(T* x) {}\n";
        assert_eq!(entry_points(src).unwrap(), ["k_float"]);
        let with = format!("#define T double\n{src}");
        assert_eq!(entry_points(&with).unwrap(), ["k_other"]);
    }

    #[test]
    fn a_macro_is_not_expanded_inside_itself() {
        let src = "#define f(x) x f\n#define g f\nextern \"C\" __global__ void g(1)(int) {}\n";
        // g -> f -> `1 f`: the inner `f` stays (it is f's own name), then `(int)` follows it.
        assert_eq!(entry_points(src).unwrap(), ["f"]);
    }

    #[test]
    fn unsupported_input_is_an_error() {
        for src in [
            "#if 1\n#endif\n",
            "#ifdef X\n",
            "#endif\n",
            "#define F(a, b) a b\nF(1)\n",
            "#define F(a) a\nF(1\n",
            "#include \"other.cuh\"\n",
            "#define P(a, b) a ## b\nP(+, -)\n",
            "extern \"C\" __global__ void __launch_bounds__ k() {}",
            "extern \"C\" __global__ void k;",
        ] {
            assert!(entry_points(src).is_err(), "{src:?}");
        }
    }
}
