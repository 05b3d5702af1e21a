//! Assertion values as an auditor reads them, and the diff of a mismatch.
//!
//! Scenarios record expected and actual values with Rust's `Debug`
//! (`Some(303)`, `("/", 200)`, `"text"`). Here a value that parses as such,
//! completely, is shown as compact JSON; anything else is shown as the text
//! it is. The parser is deliberately small: it accepts only what it fully
//! understands, so a value is never shown as something it was not, and
//! nothing nested deeper than [`MAX_DEPTH`] (a Core's JSON nested a hundred
//! thousand deep would otherwise overflow the stack): such a value is shown
//! as its text.

use std::fmt::Write;

use serde_json::Value;

use super::esc;

/// The value as text to show: compact JSON when `raw` is a `Debug` rendering
/// of options, tuples, lists, strings, numbers and booleans; `raw` otherwise.
pub(super) fn readable(raw: &str) -> String {
    let mut p = DebugParser {
        rest: raw,
        depth: 0,
    };
    match p.value() {
        Some(v) if p.rest.trim().is_empty() => match v {
            // Multi-line text reads best as the text itself.
            Value::String(s) if s.contains('\n') => s,
            other => other.to_string(),
        },
        _ => raw.to_owned(),
    }
}

/// The deepest nesting [`readable`] parses; values of the contract nest a
/// few levels.
const MAX_DEPTH: usize = 32;

struct DebugParser<'a> {
    rest: &'a str,
    depth: usize,
}

impl DebugParser<'_> {
    fn eat(&mut self, token: &str) -> bool {
        self.rest = self.rest.trim_start();
        match self.rest.strip_prefix(token) {
            Some(r) => {
                self.rest = r;
                true
            }
            None => false,
        }
    }

    fn value(&mut self) -> Option<Value> {
        if self.depth >= MAX_DEPTH {
            return None;
        }
        self.depth += 1;
        let v = self.value_inner();
        self.depth -= 1;
        v
    }

    fn value_inner(&mut self) -> Option<Value> {
        // `Some(x)`, and serde_json's own `Debug` wrappers, are their content.
        for wrapper in ["Some(", "String(", "Number(", "Bool("] {
            if self.eat(wrapper) {
                let v = self.value()?;
                return self.eat(")").then_some(v);
            }
        }
        for (word, v) in [
            ("None", Value::Null),
            ("Null", Value::Null),
            ("true", Value::Bool(true)),
            ("false", Value::Bool(false)),
        ] {
            if self.eat(word) {
                return Some(v);
            }
        }
        if self.eat("\"") {
            return self.string().map(Value::String);
        }
        for (open, close) in [("(", ")"), ("[", "]")] {
            if self.eat(open) {
                return self.list(close);
            }
        }
        let end = self
            .rest
            .find(|c: char| !(c.is_ascii_digit() || "-+.eE".contains(c)))
            .unwrap_or(self.rest.len());
        let number: Value = serde_json::from_str(&self.rest[..end]).ok()?;
        self.rest = &self.rest[end..];
        number.is_number().then_some(number)
    }

    /// Items up to `close`; a trailing comma (`(x,)`) is allowed.
    fn list(&mut self, close: &str) -> Option<Value> {
        let mut items = Vec::new();
        while !self.eat(close) {
            items.push(self.value()?);
            if !self.eat(",") {
                return self.eat(close).then_some(Value::Array(items));
            }
        }
        Some(Value::Array(items))
    }

    /// The rest of a Rust string literal after its opening quote.
    fn string(&mut self) -> Option<String> {
        let mut out = String::new();
        let mut chars = self.rest.char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => {
                    self.rest = &self.rest[i + 1..];
                    return Some(out);
                }
                '\\' => match chars.next()?.1 {
                    'n' => out.push('\n'),
                    'r' => out.push('\r'),
                    't' => out.push('\t'),
                    '0' => out.push('\0'),
                    q @ ('\\' | '"' | '\'') => out.push(q),
                    'u' => {
                        let hex: String = chars
                            .by_ref()
                            .map(|(_, c)| c)
                            .skip_while(|c| *c == '{')
                            .take_while(|c| *c != '}')
                            .collect();
                        out.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
                    }
                    _ => return None,
                },
                c => out.push(c),
            }
        }
        None
    }
}

/// A mismatch as HTML: one-line values with their differing middle marked,
/// multi-line values as a line diff (longest common subsequence).
pub(super) fn diff(expected: &str, actual: &str) -> String {
    let mut h = String::from("<pre class=\"diff\">");
    if !expected.contains('\n') && !actual.contains('\n') {
        let prefix = common(expected.chars(), actual.chars());
        let (e, a) = (&expected[prefix..], &actual[prefix..]);
        let suffix = common(e.chars().rev(), a.chars().rev());
        let (head, e_mid, a_mid) = (
            &expected[..prefix],
            &e[..e.len() - suffix],
            &a[..a.len() - suffix],
        );
        let tail = &e[e.len() - suffix..];
        let _ = write!(
            h,
            "<span class=\"del\">- {h1}<del>{em}</del>{t}</span>\n<span class=\"ins\">+ {h1}<ins>{am}</ins>{t}</span>",
            h1 = esc(head),
            em = esc(e_mid),
            am = esc(a_mid),
            t = esc(tail)
        );
    } else {
        for (sign, line) in line_diff(expected, actual) {
            let class = match sign {
                '-' => "del",
                '+' => "ins",
                _ => "same",
            };
            let _ = writeln!(h, "<span class=\"{class}\">{sign} {}</span>", esc(line));
        }
    }
    h.push_str("</pre>");
    h
}

/// Byte length of the common run of two char sequences.
fn common(a: impl Iterator<Item = char>, b: impl Iterator<Item = char>) -> usize {
    a.zip(b)
        .take_while(|(x, y)| x == y)
        .map(|(x, _)| x.len_utf8())
        .sum()
}

/// Lines marked ` ` (both), `-` (expected only) or `+` (actual only). Long
/// inputs (the table is quadratic) are shown whole, one after the other.
fn line_diff<'a>(expected: &'a str, actual: &'a str) -> Vec<(char, &'a str)> {
    let (e, a): (Vec<&str>, Vec<&str>) = (expected.lines().collect(), actual.lines().collect());
    if e.len() * a.len() > 250_000 {
        let del = e.iter().map(|l| ('-', *l));
        return del.chain(a.iter().map(|l| ('+', *l))).collect();
    }
    // lcs[i][j]: length of the longest common subsequence of e[i..], a[j..].
    let mut lcs = vec![vec![0usize; a.len() + 1]; e.len() + 1];
    for i in (0..e.len()).rev() {
        for j in (0..a.len()).rev() {
            lcs[i][j] = match e[i] == a[j] {
                true => lcs[i + 1][j + 1] + 1,
                false => lcs[i + 1][j].max(lcs[i][j + 1]),
            };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < e.len() || j < a.len() {
        if i < e.len() && j < a.len() && e[i] == a[j] {
            out.push((' ', e[i]));
            (i, j) = (i + 1, j + 1);
        } else if j == a.len() || (i < e.len() && lcs[i + 1][j] >= lcs[i][j + 1]) {
            out.push(('-', e[i]));
            i += 1;
        } else {
            out.push(('+', a[j]));
            j += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_renderings_read_as_json_and_anything_else_as_itself() {
        assert_eq!(readable("Some(303)"), "303");
        assert_eq!(readable("Some((303, \"/\"))"), "[303,\"/\"]");
        assert_eq!(readable("None"), "null");
        assert_eq!(readable("\"a \\\"b\\\" \\u{e9}\""), "\"a \\\"b\\\" é\"");
        assert_eq!(
            readable("(\"/api\", Some(2), [true, false],)"),
            "[\"/api\",2,[true,false]]"
        );
        assert_eq!(readable("\"line 1\\nline 2\""), "line 1\nline 2");
        for text in [
            "tables with rows",
            "9 table(s), 15 row(s)",
            "Some(1",
            "(1, 2) and more",
            "",
        ] {
            assert_eq!(readable(text), text, "left as it is");
        }
        // Too deep to parse without a deep stack: shown as it is.
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert_eq!(readable(&deep), deep);
        let nested = format!(
            "{}1{}",
            "Some(".repeat(MAX_DEPTH - 1),
            ")".repeat(MAX_DEPTH - 1)
        );
        assert_eq!(readable(&nested), "1");
    }

    #[test]
    fn a_mismatch_marks_what_differs() {
        assert_eq!(
            diff("[200,\"/a\"]", "[303,\"/a\"]"),
            "<pre class=\"diff\"><span class=\"del\">- [<del>200</del>,&quot;/a&quot;]</span>\n\
             <span class=\"ins\">+ [<ins>303</ins>,&quot;/a&quot;]</span></pre>"
        );
        let d = diff("a\nb\nc", "a\nc\nd");
        assert!(d.contains("<span class=\"same\">  a</span>"), "{d}");
        assert!(d.contains("<span class=\"del\">- b</span>"), "{d}");
        assert!(d.contains("<span class=\"ins\">+ d</span>"), "{d}");
    }
}
