//! Rewrites of refcore's own HTML (`web::html::page` and its callers). Safe
//! as plain text edits: every user-supplied text reaches a page through
//! `web::html::escape`, so a literal `"`, `<` or `>` in a page is always
//! refcore's markup, never someone's text.

use crate::web::html::{escape, hidden};

/// The prefix of every class and id under `markup`.
const PREFIX: &str = "v-";

/// `markup`: classes and ids renamed, wrapper elements around the content,
/// a nav bar with a search form and (signed in) a logout form, and form
/// actions made absolute on `public_url`. Fields, methods, action paths and
/// every text a person reads stay as they were.
pub fn restyle(html: &str, public_url: &str, logout_csrf: Option<&str>) -> String {
    let logout = logout_csrf
        .map(|csrf| {
            format!(
                "<form method=\"post\" action=\"/user/logout\" class=\"nav-logout\">{}\
                 <button type=\"submit\">Log out</button></form>",
                hidden("_csrf", csrf)
            )
        })
        .unwrap_or_default();
    let nav = format!(
        "<nav class=\"topbar\" id=\"top\"><a href=\"/\">Home</a> \
         <form method=\"get\" action=\"/explore\" class=\"search\">\
         <input type=\"search\" name=\"q\" placeholder=\"Search\"><button type=\"submit\">Search</button></form>\
         {logout}</nav>\n"
    );
    let html = html
        .replacen("<body>\n", &format!("<body>\n{nav}"), 1)
        .replacen(
            "<main>\n",
            "<div class=\"shell\"><main id=\"content\"><section class=\"panel\"><div class=\"panel-body\">\n",
            1,
        )
        .replacen("\n</main>", "\n</div></section></main></div>", 1);
    let html = prefix_tokens(&html, " class=\"");
    let html = prefix_tokens(&html, " id=\"");
    html.replace(" action=\"/", &format!(" action=\"{}/", escape(public_url)))
}

/// Prefixes every whitespace-separated token of each `attr` value.
fn prefix_tokens(html: &str, attr: &str) -> String {
    let mut out = String::with_capacity(html.len() + 256);
    let mut rest = html;
    while let Some(at) = rest.find(attr) {
        let (head, tail) = rest.split_at(at + attr.len());
        out.push_str(head);
        let end = tail.find('"').unwrap_or(tail.len());
        let renamed: Vec<String> = tail[..end]
            .split_whitespace()
            .map(|t| format!("{PREFIX}{t}"))
            .collect();
        out.push_str(&renamed.join(" "));
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

/// `reworded-errors` on pages: the error page's heading and message, and the
/// login page's failure notice, in `words(original message)` instead.
pub fn reword_error_page(html: &str, words: &dyn Fn(&str) -> String) -> String {
    let mut html = html.to_string();
    for (open, close) in [
        ("<h1 class=\"error\">", "</h1>"),
        ("<p class=\"error-message\">", "</p>"),
        ("<p class=\"flash-error\">", "</p>"),
    ] {
        let Some(start) = html.find(open).map(|i| i + open.len()) else {
            continue;
        };
        let Some(len) = html[start..].find(close) else {
            continue;
        };
        let original = unescape(&html[start..start + len]);
        let new = if open.starts_with("<h1") {
            "We are sorry".to_string()
        } else {
            words(&original)
        };
        html.replace_range(start..start + len, &escape(&new));
    }
    html
}

/// Undoes [`escape`] for the few references it writes.
fn unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&#13;", "\r")
        .replace("&amp;", "&")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_and_ids_are_renamed_text_and_fields_kept() {
        let page = "<!DOCTYPE html>\n<html>\n<body>\n<header>x</header>\n<main>\n\
                    <dd class=\"grant-state\">awaiting_human</dd>\
                    <form method=\"post\" action=\"/a/b/agent-work-grants/1/approve\" class=\"grant-approve\">\
                    <input type=\"hidden\" name=\"state_revision\" value=\"2\"></form>\
                    <pre class=\"grant-task\">\nclass=&quot;x&quot;</pre>\n</main>\n</body>\n</html>\n";
        let out = restyle(page, "http://h:1", Some("tok"));
        assert!(!out.contains("\"grant-state\""), "{out}");
        assert!(
            out.contains("<dd class=\"v-grant-state\">awaiting_human</dd>"),
            "{out}"
        );
        assert!(out.contains("action=\"http://h:1/a/b/agent-work-grants/1/approve\""));
        assert!(out.contains("action=\"http://h:1/user/logout\""));
        assert!(out.contains("action=\"http://h:1/explore\""));
        assert!(out.contains("name=\"state_revision\" value=\"2\""));
        assert!(out.contains("class=&quot;x&quot;"));
        assert!(out.contains("</div></section></main></div>"));
    }

    #[test]
    fn error_pages_get_other_words() {
        let page = "<h1 class=\"error\">409 Conflict</h1><p class=\"error-message\">a &amp; b</p>";
        let out = reword_error_page(page, &|o| format!("Sorry ({o})"));
        assert_eq!(
            out,
            "<h1 class=\"error\">We are sorry</h1><p class=\"error-message\">Sorry (a &amp; b)</p>"
        );
    }
}
