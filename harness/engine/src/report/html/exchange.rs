//! One exchange of a trial's transcript, as the report shows it: folded,
//! unless it is the failing one.

use std::fmt::Write;

use super::{esc, text};
use crate::report::model::Exchange;

/// One exchange, folded unless it is the failing one (then open and marked).
pub(super) fn exchange(h: &mut String, ex: &Exchange, failing: bool) {
    let status = match ex.kind.as_str() {
        "http" => ex.status.to_string(),
        _ => String::new(),
    };
    let _ = write!(
        h,
        "<details class=\"ex{cls}\"{open}><summary>{actor}: {method} {target} {status} ({ms} ms){mark}</summary>",
        cls = if failing { " failing" } else { "" },
        open = if failing { " open" } else { "" },
        mark = if failing {
            " — <strong>the failing exchange</strong>"
        } else {
            ""
        },
        actor = esc(&ex.actor),
        method = esc(&ex.method),
        target = esc(path(&ex.target)),
        ms = ex.elapsed_ms
    );
    let headers = |hs: &[(String, String)]| {
        hs.iter()
            .map(|(k, v)| format!("{k}: {v}\n"))
            .collect::<String>()
    };
    let _ = write!(
        h,
        "<pre>{}\n{}</pre><pre>{}\n{}</pre></details>",
        text(&headers(&ex.request_headers)),
        text(&ex.request_body),
        text(&headers(&ex.response_headers)),
        text(&ex.response_body)
    );
}

/// A URL without its `http://host:port` origin (every trial's Core has its
/// own port; the path is what the contract names).
pub(super) fn path(target: &str) -> &str {
    match target
        .strip_prefix("http://")
        .or_else(|| target.strip_prefix("https://"))
    {
        Some(rest) => rest.find('/').map_or(target, |i| &rest[i..]),
        None => target,
    }
}
