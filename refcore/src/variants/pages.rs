//! Variants of refcore's pages that a browser reads and submits exactly as
//! refcore's own: inline markup inside words, form controls outside their
//! `<form>`, the consent decision as two forms, and more form controls than
//! refcore writes. Plain text edits of refcore's HTML, safe for the reason
//! `markup` is: every user-supplied text is escaped, so a literal `<` or `"`
//! is always refcore's markup (or another variant's).
//!
//! They compose, with each other and with `markup`: each is layered where
//! it finds what it rewrites (`catalogue::PAGE_ORDER`), and a form is found
//! by what a browser reads of it (its action's path, however written), not
//! by refcore's classes or spelling. `together` asserts every one's change
//! in every group the self-test forms.

/// Elements whose content is not text a person reads as words, or whose
/// content the parser does not read as markup: left exactly as they are.
const RAW: [&str; 6] = ["pre", "textarea", "title", "script", "style", "option"];

/// `inline-markup`: every word of the text a person reads gets inline markup
/// inside it: a `<span>` around its first character, a `<wbr>` in its middle
/// and each `_` written `&#95;`. A browser reads every word as before
/// (`issue_<wbr>deleted` is `issue_deleted`); a reader that splits words at
/// elements does not. Words holding an entity are left whole.
pub fn inline_markup(html: &str) -> String {
    let mut out = String::with_capacity(html.len() * 2);
    let mut rest = html;
    while let Some(lt) = rest.find('<') {
        out.push_str(&split_words(&rest[..lt]));
        let tag_end = rest[lt..].find('>').map_or(rest.len(), |i| lt + i + 1);
        let tag = &rest[lt..tag_end];
        out.push_str(tag);
        rest = &rest[tag_end..];
        let name: String = tag[1..]
            .chars()
            .take_while(char::is_ascii_alphanumeric)
            .collect::<String>()
            .to_ascii_lowercase();
        if RAW.contains(&name.as_str()) {
            let close = format!("</{name}");
            let end = rest.find(&close).unwrap_or(rest.len());
            out.push_str(&rest[..end]);
            rest = &rest[end..];
        }
    }
    out.push_str(&split_words(rest));
    out
}

/// `template-forms`: a `<template>` at the top of the body holding a copy
/// of every form of the page, each `_csrf` a placeholder, as a page that
/// clones forms from a template in script would. Template contents are no
/// part of the document (HTML standard): a browser neither shows nor
/// submits them, so the page works exactly as refcore's.
pub fn template_forms(html: &str) -> String {
    let mut copies = String::new();
    let mut rest = html;
    while let Some(start) = rest.find("<form") {
        let Some(len) = rest[start..].find("</form>") else {
            break;
        };
        let end = start + len + "</form>".len();
        copies.push_str(&placeholder_csrf(&rest[start..end]));
        rest = &rest[end..];
    }
    match html.find("<body>") {
        Some(at) if !copies.is_empty() => {
            let at = at + "<body>".len();
            format!(
                "{}<template>{copies}</template>{}",
                &html[..at],
                &html[at..]
            )
        }
        _ => html.to_string(),
    }
}

/// `form` with every `_csrf` value replaced by a placeholder.
fn placeholder_csrf(form: &str) -> String {
    const FIELD: &str = "name=\"_csrf\" value=\"";
    let mut out = String::with_capacity(form.len());
    let mut rest = form;
    while let Some(at) = rest.find(FIELD) {
        let value = at + FIELD.len();
        out.push_str(&rest[..value]);
        out.push_str("{{csrf}}");
        rest = &rest[value..];
        rest = &rest[rest.find('"').unwrap_or(rest.len())..];
    }
    out.push_str(rest);
    out
}

fn split_words(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 3);
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        out.push_str(&split_word(word));
        word.clear();
    };
    for c in text.chars() {
        if c.is_whitespace() {
            flush(&mut word, &mut out);
            out.push(c);
        } else {
            word.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// One word with inline markup inside it (`inline-markup`); a word of one
/// character, or holding an entity, as it is.
pub(super) fn split_word(word: &str) -> String {
    let chars: Vec<char> = word.chars().collect();
    if chars.len() < 2 || word.contains('&') {
        return word.to_string();
    }
    let esc = |cs: &[char]| -> String {
        cs.iter()
            .map(|c| match c {
                '_' => "&#95;".to_string(),
                c => c.to_string(),
            })
            .collect()
    };
    let mid = chars.len() / 2;
    if chars.len() < 3 {
        return format!("{}<wbr>{}", esc(&chars[..mid]), esc(&chars[mid..]));
    }
    format!(
        "<span class=\"w\">{}</span>{}<wbr>{}",
        esc(&chars[..1]),
        esc(&chars[1..mid]),
        esc(&chars[mid..])
    )
}

/// Where one `<form …>…</form>` stands in a page: its start, the end of
/// its open tag, the start of its `</form>` and its end. refcore's forms do
/// not nest.
struct FormSpan {
    start: usize,
    open_end: usize,
    close: usize,
    end: usize,
}

/// Every form of `html`, in order.
fn form_spans(html: &str) -> Vec<FormSpan> {
    let mut spans = Vec::new();
    let mut from = 0;
    while let Some(start) = html[from..].find("<form").map(|i| from + i) {
        let Some(open_end) = html[start..].find('>').map(|i| start + i + 1) else {
            break;
        };
        let Some(close) = html[start..].find("</form>").map(|i| start + i) else {
            break;
        };
        let end = close + "</form>".len();
        spans.push(FormSpan {
            start,
            open_end,
            close,
            end,
        });
        from = end;
    }
    spans
}

/// The value of a form's `action` as written in its open tag (escaped),
/// whatever the markup around it: a path, absolute on the public URL, or
/// relative to a `<base>`.
fn action(open: &str) -> Option<&str> {
    let at = open.find(" action=\"")? + " action=\"".len();
    let len = open[at..].find('"')?;
    Some(&open[at..at + len])
}

/// Whether an action names refcore's `path` (written `/a/b`), however the
/// page writes it: `/a/b`, `http://host/a/b` or `a/b` against a `<base>`.
fn action_is(action: &str, path: &str) -> bool {
    action == path || action == &path[1..] || action.ends_with(path)
}

/// Each `<form …>…</form>` of `html`, in order, replaced by `f(index, open
/// tag, inner HTML)`.
fn each_form(html: &str, mut f: impl FnMut(usize, &str, &str) -> String) -> String {
    let mut out = String::with_capacity(html.len() + 512);
    let mut done = 0;
    for (index, span) in form_spans(html).iter().enumerate() {
        out.push_str(&html[done..span.start]);
        let open = &html[span.start..span.open_end];
        let inner = &html[span.open_end..span.close];
        out.push_str(&f(index, open, inner));
        done = span.end;
    }
    out.push_str(&html[done..]);
    out
}

/// `form-owner`: every form is left empty, with an `id`; its controls
/// (hidden `_csrf` and `state_revision`, login fields, submit buttons) stand
/// right after it, each joined to it with `form="id"` (HTML's form owner).
pub fn form_owner(html: &str) -> String {
    each_form(html, |i, open, inner| {
        let id = format!("vf-{i}");
        let owned = ["<input ", "<button ", "<button>", "<select ", "<textarea "]
            .iter()
            .fold(inner.to_string(), |acc, tag| {
                let bare = tag.trim_end_matches([' ', '>']);
                acc.replace(tag, &format!("{bare} form=\"{id}\"{}", &tag[bare.len()..]))
            });
        format!(
            "{}></form>\n<div class=\"form-fields\">{owned}</div>",
            open.replacen("<form", &format!("<form id=\"{id}\""), 1)
                .trim_end_matches('>')
        )
    })
}

/// `consent-two-forms`: the consent decision (§9) as two forms posting to
/// the same action, one per decision: "Authorize" sends a hidden
/// `granted=true` with an unnamed button, "Deny" a `granted=false` button.
pub fn consent_two_forms(html: &str) -> String {
    const ALLOW: &str =
        "<button type=\"submit\" name=\"granted\" value=\"true\">Authorize</button>\n";
    const DENY: &str = "<button type=\"submit\" name=\"granted\" value=\"false\">Deny</button>\n";
    each_form(html, |_, open, inner| {
        let consent = action(open).is_some_and(|a| action_is(a, crate::web::oauth::GRANT_PATH));
        if !consent || !inner.contains(ALLOW) {
            return format!("{open}{inner}</form>");
        }
        let fields = inner.replace(ALLOW, "").replace(DENY, "");
        format!(
            "{open}{fields}<input type=\"hidden\" name=\"granted\" value=\"true\">\
             <button type=\"submit\">Authorize</button></form>\n\
             {open}{fields}{DENY}</form>"
        )
    })
}

/// `base-relative`: a `<base href="/">` in the head and every form action,
/// `formaction` and link written relative to it (`action="alice/lab/…"`):
/// a browser resolves them against the base URL, not the page's.
pub fn base_relative(html: &str) -> String {
    html.replace(" action=\"/", " action=\"")
        .replace(" formaction=\"/", " formaction=\"")
        .replace(" href=\"/", " href=\"")
        .replacen("<head>\n", "<head>\n<base href=\"/\">\n", 1)
}

/// The value of every decoy control under `form-controls`.
const DECOY: &str = "decoy-not-a-field-value";

/// `form-controls`: what other Cores' forms hold and a browser does not
/// send: before each hidden input, a disabled text input and an unchecked
/// checkbox of the same name; after the fields, a `type="button"` button, a
/// reset input and a checked checkbox the Core ignores; submit buttons
/// without `type` (a button submits by default); `method="POST"` in upper
/// case. On a grant page with both
/// decisions, one form: Approve, and Withdraw with `formaction`.
pub fn form_controls(html: &str) -> String {
    let html = merge_decisions(html);
    each_form(&html, |_, open, inner| {
        let mut fields = String::new();
        let mut rest = inner;
        while let Some(at) = rest.find("<input type=\"hidden\" name=\"") {
            let name_at = at + "<input type=\"hidden\" name=\"".len();
            let name_len = rest[name_at..].find('"').unwrap_or(0);
            let name = &rest[name_at..name_at + name_len];
            fields.push_str(&rest[..at]);
            fields.push_str(&format!(
                "<input type=\"text\" name=\"{name}\" value=\"{DECOY}\" disabled hidden>\
                 <input type=\"checkbox\" name=\"{name}\" value=\"{DECOY}\">"
            ));
            fields.push_str("<input type=\"hidden\" name=\"");
            rest = &rest[name_at..];
        }
        fields.push_str(rest);
        let fields = fields.replace("<button type=\"submit\"", "<button");
        let open = open.replace("method=\"post\"", "method=\"POST\"");
        format!(
            "{open}{fields}<button type=\"button\" name=\"x_help\" value=\"{DECOY}\">Help</button>\
             <input type=\"reset\" name=\"x_reset\" value=\"Reset\">\
             <label><input type=\"checkbox\" name=\"x_remember\" value=\"1\" checked> Remember</label></form>"
        )
    })
}

/// The grant page's approve and withdraw forms as one form whose Withdraw
/// button carries `formaction` (they post the same fields). The two are
/// found by the paths their actions end with, so whatever classes or
/// action spelling another variant gave them.
fn merge_decisions(html: &str) -> String {
    let spans = form_spans(html);
    let find = |suffix: &str| {
        spans
            .iter()
            .find(|s| action(&html[s.start..s.open_end]).is_some_and(|a| a.ends_with(suffix)))
    };
    let (Some(approve), Some(withdraw)) = (find("/approve"), find("/withdraw")) else {
        return html.to_string();
    };
    let Some(target) = action(&html[withdraw.start..withdraw.open_end]) else {
        return html.to_string();
    };
    if withdraw.start < approve.end {
        return html.to_string();
    }
    let after = withdraw.end + usize::from(html[withdraw.end..].starts_with('\n'));
    format!(
        "{}<button type=\"submit\" formaction=\"{target}\">Withdraw</button>{}{}",
        &html[..approve.close],
        &html[approve.close..withdraw.start],
        &html[after..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_forms_copies_every_form_with_a_placeholder_csrf() {
        let page = "<body>\n<form method=\"post\" action=\"/a\"><input type=\"hidden\" name=\"_csrf\" \
                    value=\"t\"><button>Go</button></form><p>x</p></body>";
        assert_eq!(
            template_forms(page),
            "<body><template><form method=\"post\" action=\"/a\"><input type=\"hidden\" \
             name=\"_csrf\" value=\"{{csrf}}\"><button>Go</button></form></template>\n<form method=\"post\" \
             action=\"/a\"><input type=\"hidden\" name=\"_csrf\" value=\"t\"><button>Go</button></form>\
             <p>x</p></body>"
        );
        assert_eq!(
            template_forms("<body><p>no form</p>"),
            "<body><p>no form</p>"
        );
    }

    #[test]
    fn inline_markup_splits_words_but_not_raw_text_or_entities() {
        let out = inline_markup(
            "<title>t_x</title><dd class=\"s\">issue_deleted</dd> a &amp;b <pre>\nx_y</pre>#7",
        );
        assert_eq!(
            out,
            "<title>t_x</title><dd class=\"s\"><span class=\"w\">i</span>ssue&#95;<wbr>deleted</dd> \
             a &amp;b <pre>\nx_y</pre>#<wbr>7"
        );
    }

    #[test]
    fn form_owner_moves_controls_out_and_joins_them_by_id() {
        let out = form_owner(
            "<form method=\"post\" action=\"/a\"><input type=\"hidden\" name=\"_csrf\" value=\"t\">\
             <button type=\"submit\">Go</button></form><form action=\"/b\"><button>B</button></form>",
        );
        assert_eq!(
            out,
            "<form id=\"vf-0\" method=\"post\" action=\"/a\"></form>\n<div class=\"form-fields\">\
             <input form=\"vf-0\" type=\"hidden\" name=\"_csrf\" value=\"t\">\
             <button form=\"vf-0\" type=\"submit\">Go</button></div>\
             <form id=\"vf-1\" action=\"/b\"></form>\n<div class=\"form-fields\"><button form=\"vf-1\">B</button></div>"
        );
    }

    #[test]
    fn the_consent_form_becomes_two() {
        let page = "<form method=\"post\" action=\"/login/oauth/grant\" class=\"oauth-grant\">\n\
                    <input type=\"hidden\" name=\"_csrf\" value=\"t\">\n\
                    <button type=\"submit\" name=\"granted\" value=\"true\">Authorize</button>\n\
                    <button type=\"submit\" name=\"granted\" value=\"false\">Deny</button>\n</form>";
        let out = consent_two_forms(page);
        assert_eq!(out.matches("<form ").count(), 2, "{out}");
        assert_eq!(out.matches("name=\"_csrf\"").count(), 2, "{out}");
        assert!(out.contains("name=\"granted\" value=\"true\"><button type=\"submit\">Authorize"));
        assert!(!out.contains("value=\"true\">Authorize"), "{out}");
        assert_eq!(out.matches("value=\"false\">Deny").count(), 1, "{out}");
    }

    #[test]
    fn form_controls_add_decoys_and_merge_the_decisions() {
        let page = "<div>\n<form method=\"post\" action=\"/g/1/approve\" class=\"grant-approve\">\
                    <input type=\"hidden\" name=\"_csrf\" value=\"t\"><button type=\"submit\">Approve</button></form>\n\
                    <form method=\"post\" action=\"/g/1/withdraw\" class=\"grant-withdraw\">\
                    <input type=\"hidden\" name=\"_csrf\" value=\"t\"><button type=\"submit\">Withdraw</button></form>\n</div>";
        let out = form_controls(page);
        assert_eq!(out.matches("<form ").count(), 1, "{out}");
        assert!(out.contains("<button>Approve</button>"), "{out}");
        assert!(out.contains("<button formaction=\"/g/1/withdraw\">Withdraw</button>"));
        assert!(out.contains("name=\"_csrf\" value=\"decoy-not-a-field-value\" disabled hidden>"));
        assert!(out.contains("<input type=\"hidden\" name=\"_csrf\" value=\"t\">"));
        assert!(out.contains("name=\"x_remember\" value=\"1\" checked>"));
        assert!(out.contains("<form method=\"POST\" action=\"/g/1/approve\""));
    }

    #[test]
    fn base_relative_writes_paths_against_a_base() {
        let out = base_relative(
            "<head>\n<title>t</title></head><a href=\"/\">h</a><form method=\"post\" action=\"/a/b\">",
        );
        assert_eq!(
            out,
            "<head>\n<base href=\"/\">\n<title>t</title></head><a href=\"\">h</a><form method=\"post\" action=\"a/b\">"
        );
    }
}
