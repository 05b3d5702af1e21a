//! Reports speak the contract's words: expected and actual values are its
//! JSON (`null`, `{"grant_id": 1}`), never Rust's `Debug` text (`None`,
//! `Some(1)`, `GrantMarker { grant_id: 1 }`), which an auditor cannot read
//! and another implementation of the gate would never print. The catalogue
//! test scans its whole report with [`rust_debug_text`].

use super::model::RunReport;
use crate::vocab::Verdict;

/// Every assertion value and trial message of `report` that holds Rust
/// `Debug` text, as `trial: what: text`.
pub fn rust_debug_text(report: &RunReport) -> Vec<String> {
    let mut found = Vec::new();
    for r in &report.results {
        for step in &r.steps {
            for a in &step.assertions {
                for value in [&a.expected, &a.actual] {
                    if looks_like_debug(value) {
                        found.push(format!("{}: {}: {value}", r.name, a.what));
                    }
                }
            }
        }
        if let Verdict::Failed { message } | Verdict::Errored { message } = &r.verdict
            && looks_like_debug(message)
        {
            found.push(format!("{}: {message}", r.name));
        }
    }
    found
}

/// `Some(`, `Ok(`, `Err(` or a value `None` as words, or a struct literal
/// (`Name { field: `).
fn looks_like_debug(text: &str) -> bool {
    let word_at = |i: usize, word: &str| {
        text[i..].starts_with(word)
            && !text[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == '"')
    };
    let struct_at = |i: usize| {
        // `Name { field: ` with `Name` capitalised, as `{:?}` prints a struct.
        let before = &text[..i];
        let name = before
            .rsplit(|c: char| !c.is_alphanumeric())
            .next()
            .unwrap_or("");
        let after = &text[i + 3..];
        let field: String = after
            .chars()
            .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
            .collect();
        name.starts_with(|c: char| c.is_ascii_uppercase())
            && !field.is_empty()
            && after[field.len()..].starts_with(": ")
    };
    text.char_indices().any(|(i, _)| {
        ["Some(", "Ok(", "Err("].iter().any(|w| word_at(i, w))
            // `None` as a value: at the end, or before `)`, `,`, `]`, `}`.
            || (word_at(i, "None")
                && (text[i + 4..].is_empty() || text[i + 4..].starts_with([')', ',', ']', '}'])))
            || text[i..].starts_with(" { ") && struct_at(i)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_debug_renderings_are_found_and_json_and_prose_are_not() {
        for debug in [
            "Some(201)",
            "(true, Some(\"conflict\"))",
            "None",
            "[(1, false, None)]",
            "GrantMarker { grant_id: 1, request_key: \"k\" }",
            "Err(\"x\")",
        ] {
            assert!(looks_like_debug(debug), "{debug}");
        }
        for words in [
            "201",
            "[true,\"conflict\"]",
            "null",
            "{\"grant_id\":1}",
            "None of the grants is listed",
            "\"NoneSuch\"",
            "status 200 at /x after [[303,\"/y\"]]",
            "step `x { y }`",
        ] {
            assert!(!looks_like_debug(words), "{words}");
        }
    }
}
