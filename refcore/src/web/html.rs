//! HTML escaping and the shared page layout. Everything user-supplied goes
//! through [`escape`]; nothing else builds markup from input.

use axum::response::Html;

/// Escapes text for element content and attribute values. `\r` becomes a
/// character reference because HTML parsers turn a literal CR into LF, and
/// the contract keeps text byte for byte.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    for ch in text.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\r' => out.push_str("&#13;"),
            other => out.push(other),
        }
    }
    out
}

/// A `<pre>` block holding `text` exactly. Parsers drop one newline right
/// after `<pre>`, so one is always written there to be dropped instead of
/// the text's own.
pub fn pre(class: &str, text: &str) -> String {
    format!("<pre class=\"{class}\">\n{}</pre>", escape(text))
}

/// A hidden form input.
pub fn hidden(name: &str, value: &str) -> String {
    format!(
        "<input type=\"hidden\" name=\"{}\" value=\"{}\">",
        escape(name),
        escape(value)
    )
}

/// A whole page. `user` is the signed-in login shown in the header.
pub fn page(title: &str, user: Option<&str>, body: &str) -> Html<String> {
    let who = match user {
        Some(login) => format!("<span class=\"signed-in-user\">{}</span>", escape(login)),
        None => "<a href=\"/user/login\">Sign in</a>".to_string(),
    };
    Html(format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>{} - refcore</title>\n</head>\n<body>\n\
         <header><a href=\"/\">refcore</a> {who}</header>\n<main>\n{body}\n</main>\n</body>\n</html>\n",
        escape(title)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_quotes_and_carriage_returns() {
        assert_eq!(
            escape("<a href=\"x\">'&'</a>\r\n"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;&#13;\n"
        );
    }

    #[test]
    fn pre_survives_a_leading_newline() {
        assert_eq!(pre("b", "\nx"), "<pre class=\"b\">\n\nx</pre>");
    }
}
