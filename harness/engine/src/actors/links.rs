//! RFC 8288 `Link` headers, parsed as the RFC allows them to be written:
//! relations in any order, `rel` quoted or a bare token, several relations in
//! one `rel`, extra parameters, `,` `;` `<` or escaped quotes inside `<…>` or
//! a quoted string, empty list elements (RFC 9110 §5.6.1.2). Only a link's
//! first `rel` counts (RFC 8288 §3.3). What the contract fixes (spec §3) is
//! which relations exist and where they point.

use std::collections::BTreeMap;

use crate::vocab::{Abort, Step};

/// A parsed `Link` header: relation → absolute target URL.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Links {
    by_rel: BTreeMap<String, url::Url>,
}

impl Links {
    /// Parses a header value; a target that is not an absolute URL, or a
    /// relation named twice with different targets, is the Core's failure.
    pub fn parse(header: &str) -> Step<Links> {
        let mut by_rel = BTreeMap::new();
        for entry in split_outside(header, ',') {
            let entry = entry.trim();
            if entry.is_empty() {
                continue;
            }
            let (target, params) = entry
                .strip_prefix('<')
                .and_then(|rest| rest.split_once('>'))
                .ok_or_else(|| Abort::failed(format!("Link entry without <URL>: `{entry}`")))?;
            let url = url::Url::parse(target).map_err(|e| {
                Abort::failed(format!(
                    "Link target `{target}` is not an absolute URL: {e}"
                ))
            })?;
            let rel = split_outside(params, ';')
                .into_iter()
                .filter_map(|p| p.split_once('='))
                .find(|(name, _)| name.trim().eq_ignore_ascii_case("rel"))
                .map(|(_, value)| unquote(value.trim()));
            if let Some(value) = rel {
                for rel in value.split_ascii_whitespace() {
                    let rel = rel.to_ascii_lowercase();
                    if let Some(seen) = by_rel.get(&rel)
                        && seen != &url
                    {
                        return Err(Abort::failed(format!(
                            "Link names rel={rel} twice, for {seen} and {url}"
                        )));
                    }
                    by_rel.insert(rel, url.clone());
                }
            }
        }
        Ok(Links { by_rel })
    }

    /// The target of `rel`, if present.
    pub fn get(&self, rel: &str) -> Option<&url::Url> {
        self.by_rel.get(rel)
    }

    /// Every relation present, sorted.
    pub fn rels(&self) -> Vec<&str> {
        self.by_rel.keys().map(String::as_str).collect()
    }

    /// The value of query parameter `name` in `rel`'s target.
    pub fn query(&self, rel: &str, name: &str) -> Option<String> {
        self.get(rel)?
            .query_pairs()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.into_owned())
    }
}

/// Splits on `sep` outside `<…>` and quoted strings.
fn split_outside(text: &str, sep: char) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut start, mut in_angle, mut in_quote, mut escaped) = (0, false, false, false);
    for (i, c) in text.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if in_quote => escaped = true,
            '<' if !in_quote => in_angle = true,
            '>' if !in_quote => in_angle = false,
            '"' if !in_angle => in_quote = !in_quote,
            c if c == sep && !in_angle && !in_quote => {
                parts.push(&text[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

/// A parameter's value: a token as it is, a quoted string without its quotes
/// and escapes (RFC 9110 §5.6.4).
fn unquote(value: &str) -> String {
    let Some(inner) = value.strip_prefix('"').and_then(|v| v.strip_suffix('"')) else {
        return value.to_owned();
    };
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        out.extend(if c == '\\' { chars.next() } else { Some(c) });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_order_quoting_and_extra_parameters_read_the_same() {
        let a = Links::parse(
            "<http://h/api?page=2&limit=30>; rel=\"next\", <http://h/api?page=2&limit=30>; rel=\"last\"",
        )
        .unwrap();
        let b = Links::parse(
            "<http://h/api?page=2&limit=30>; title=\"a, b\"; rel=last ,<http://h/api?page=2&limit=30>;rel=next",
        )
        .unwrap();
        assert_eq!(a, b);
        assert_eq!(a.rels(), vec!["last", "next"]);
        assert_eq!(a.query("next", "page").as_deref(), Some("2"));
        let c = Links::parse("<http://h/x?page=3>; rel=\"next last\"").unwrap();
        assert_eq!(c.rels(), vec!["last", "next"]);
    }

    /// Empty list elements, a title that reads like links, a second `rel`.
    #[test]
    fn only_each_links_own_first_rel_counts() {
        let links = Links::parse(
            r#" , <http://h/x?page=2>; title="a\"; <http://h/x?page=9>; rel=\"last\", b"; rel="next LAST" , , <http://h/x?page=1>; rel=prev; rel=next,,"#,
        )
        .unwrap();
        assert_eq!(links.rels(), vec!["last", "next", "prev"]);
        assert_eq!(links.query("last", "page").as_deref(), Some("2"));
    }

    #[test]
    fn a_relative_target_or_a_contradiction_is_refused() {
        assert!(Links::parse("</api?page=2>; rel=next").is_err());
        assert!(
            Links::parse("<http://h/?page=2>; rel=next, <http://h/?page=3>; rel=next").is_err()
        );
        assert_eq!(Links::parse("").unwrap().rels(), Vec::<&str>::new());
    }
}
