//! Continuation of list pages from `X-Total-Count` and `Link`.
//!
//! The adapter asks for `limit=30`, but a Core may clamp the width and say so
//! only through its headers. The `Link` header is parsed for `rel="next"`
//! only to learn that a next page exists and its number; its URL is never
//! requested (the next page is a fresh request to the fixed origin). The
//! total count, with the page width actually returned, confirms it.

use url::Url;

use crate::check::Reason;
use crate::edges::{Edge, Edges};

/// The width the adapter asks for.
pub const LIMIT: i64 = 30;

/// Where the caller can go from this page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Continuation {
    /// Whether another page exists.
    pub has_more: bool,
    /// The page to ask next, `None` at the end.
    pub next_page: Option<i64>,
}

/// Works out the continuation of page `page` that returned `returned` items.
pub fn continuation(
    page: i64,
    returned: usize,
    total: Option<&str>,
    link: Option<&str>,
) -> Result<Continuation, Reason> {
    let returned = returned as i64;
    let total = match total {
        None => None,
        Some(raw) => Some(
            raw.trim()
                .parse::<i64>()
                .ok()
                .filter(|n| *n >= 0)
                .ok_or("X-Total-Count is not a non-negative integer")?,
        ),
    };
    let has_more = match link {
        Some(link) => {
            let next = next_page(link)?;
            if let Some(next) = next {
                if Some(next) != page.checked_add(1) {
                    return Err("Link rel=next does not name the following page".into());
                }
                if returned == 0 {
                    return Err("Link rel=next after an empty page".into());
                }
                // A page followed by another is full: its width is what came back.
                if total.is_some_and(|t| t <= page.saturating_mul(returned)) {
                    return Err("Link rel=next contradicts X-Total-Count".into());
                }
            } else if page == 1 && total.is_some_and(|t| t != returned) {
                return Err("X-Total-Count contradicts a single page without rel=next".into());
            }
            next.is_some()
        }
        None => {
            let total = total.ok_or("neither Link nor X-Total-Count was sent")?;
            // Without Link the width is inferred from the count returned. It is
            // exact on page 1 and for full pages; a short later page is taken as
            // the last one when the total says exactly that for width 30.
            if returned == 0 {
                false
            } else if page == 1 {
                total > returned
            } else if returned >= LIMIT {
                total > page.saturating_mul(LIMIT)
            } else {
                total > page.saturating_mul(returned)
                    && total != (page - 1).saturating_mul(LIMIT).saturating_add(returned)
            }
        }
    };
    let has_more = Edge::continues(has_more, returned, link);
    // The last representable page has no successor, whatever the headers say.
    let has_more = has_more && page < i64::MAX;
    Ok(Continuation {
        has_more,
        next_page: if has_more { page.checked_add(1) } else { None },
    })
}

/// One page of a list tool's result, `{<items>, page, has_more, next_page,
/// snapshot: false}`, published only after every item passed `check` and the
/// items' keys (ids or indexes) strictly ascend; continuation comes from the
/// Core's headers, never from following its `Link`. Both list tools share it
/// so that they cannot drift apart.
pub fn page_result(
    reply: &crate::upstream::Reply,
    page: i64,
    items_field: &str,
    check: impl Fn(&serde_json::Value) -> Result<i64, Reason>,
) -> Result<serde_json::Value, crate::error::ToolError> {
    let bad = |why: String| crate::upstream::Op::Read.bad_body(reply.status, &why);
    let items = reply
        .body
        .as_array()
        .ok_or_else(|| bad("not a JSON array".into()))?;
    let mut last = 0;
    for item in items {
        let key = check(item).map_err(bad)?;
        if key <= last {
            return Err(bad(format!("{items_field} are not in ascending order")));
        }
        last = key;
    }
    let next = continuation(
        page,
        items.len(),
        reply.total_count.as_deref(),
        reply.link.as_deref(),
    )
    .map_err(bad)?;
    let mut result = serde_json::Map::new();
    result.insert(items_field.to_owned(), reply.body.clone());
    result.insert("page".to_owned(), page.into());
    result.insert("has_more".to_owned(), next.has_more.into());
    result.insert("next_page".to_owned(), next.next_page.into());
    result.insert("snapshot".to_owned(), false.into());
    Ok(serde_json::Value::Object(result))
}

/// The page number of the `rel="next"` link, if there is one. `Link` is a
/// list of `<target>` and parameters (RFC 8288 §3): empty list elements are
/// ignored (RFC 9110 §5.6.1.2), a quoted parameter may hold `<`, `,`, `;`
/// and escaped quotes, and only a link's first `rel` counts (§3.3).
fn next_page(link: &str) -> Result<Option<i64>, Reason> {
    let mut next = None;
    for element in Edge::split_link(link, ',', split_outside(link, ',')) {
        let element = element.trim();
        if element.is_empty() {
            continue;
        }
        let (target, params) = element
            .strip_prefix('<')
            .and_then(|rest| rest.split_once('>'))
            .ok_or("Link header is malformed")?;
        let rel = Edge::split_link(params, ';', split_outside(params, ';'))
            .into_iter()
            .filter_map(|p| p.split_once('='))
            .find(|(name, _)| Edge::is_rel_name(name.trim()))
            .map(|(_, value)| unquote(value.trim()));
        if rel.is_some_and(|r| r.split_whitespace().any(|t| t.eq_ignore_ascii_case("next"))) {
            let base = Url::parse("http://link.invalid/").map_err(|e| e.to_string())?;
            let url = base
                .join(target)
                .map_err(|_| "Link rel=next URL is malformed")?;
            let page = url
                .query_pairs()
                .find(|(k, _)| k == "page")
                .and_then(|(_, v)| v.parse::<i64>().ok())
                .ok_or("Link rel=next has no page number")?;
            next = Some(page);
        }
    }
    Ok(next)
}

/// `text` split on `sep` outside `<…>` and quoted strings.
pub(crate) fn split_outside(text: &str, sep: char) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut start, mut angle, mut quote, mut escaped) = (0, false, false, false);
    for (i, c) in text.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quote => escaped = true,
            '"' if !angle => quote = !quote,
            '<' if !quote => angle = true,
            '>' => angle &= quote,
            c if c == sep && !angle && !quote => {
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

    const NEXT2: &str = r#"<http://core/api/v1/agent-work-grants?page=2&limit=30>; rel="next", <http://core/api/v1/agent-work-grants?page=2&limit=30>; rel="last""#;

    #[test]
    fn link_next_continues() {
        let c = continuation(1, 30, Some("31"), Some(NEXT2)).unwrap();
        assert_eq!(
            c,
            Continuation {
                has_more: true,
                next_page: Some(2)
            }
        );
    }

    #[test]
    fn last_page_ends() {
        let link = r#"<http://core/x?page=1&limit=30>; rel="prev", <http://core/x?page=1&limit=30>; rel="first""#;
        let c = continuation(2, 1, Some("31"), Some(link)).unwrap();
        assert_eq!(
            c,
            Continuation {
                has_more: false,
                next_page: None
            }
        );
    }

    #[test]
    fn clamped_width_continues_from_total_alone() {
        let c = continuation(1, 10, Some("25"), None).unwrap();
        assert!(c.has_more);
        let c = continuation(3, 5, Some("25"), None).unwrap();
        assert!(c.has_more);
        let c = continuation(5, 5, Some("25"), None).unwrap();
        assert!(!c.has_more);
    }

    #[test]
    fn the_largest_page_does_not_overflow() {
        let c = continuation(i64::MAX, 30, Some(&i64::MAX.to_string()), None).unwrap();
        assert_eq!(
            c,
            Continuation {
                has_more: false,
                next_page: None
            }
        );
        let c = continuation(i64::MAX, 5, Some(&i64::MAX.to_string()), None).unwrap();
        assert!(!c.has_more);
        assert!(continuation(i64::MAX, 30, None, Some(NEXT2)).is_err());
    }

    /// Empty list elements, a title that reads like a link, a second `rel`:
    /// only the link's own first `rel` counts.
    #[test]
    fn link_is_read_as_rfc_8288_writes_it() {
        let link = r#" , <http://c/x?limit=30&page=2>; title="page <9>; rel=\"next\", more"; rel="next LAST" , , <http://c/x?page=9>; rel="prev"; rel="next",,"#;
        assert_eq!(next_page(link), Ok(Some(2)));
        let c = continuation(1, 30, Some("31"), Some(link)).unwrap();
        assert_eq!(c.next_page, Some(2));
        let none =
            r#"<http://c/x?page=1>; title="rel=next, <http://c/x?page=2>; rel=next"; rel=first"#;
        assert_eq!(next_page(none), Ok(None));
        assert!(next_page("page=2; rel=next").is_err());
    }

    #[test]
    fn contradictions_are_refused() {
        assert!(continuation(1, 30, Some("30"), Some(NEXT2)).is_err());
        assert!(continuation(1, 30, Some("x"), None).is_err());
        assert!(continuation(1, 5, None, None).is_err());
        assert!(continuation(3, 30, None, Some(NEXT2)).is_err());
    }
}
