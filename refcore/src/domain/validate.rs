//! Value rules for text, names and request keys. Text is strict UTF-8 kept
//! whole: nothing here trims or rewrites, it only accepts or refuses (422).

use super::edges::edges;
use crate::error::AppError;

/// Longest `redirect_to` the login form follows, in bytes: the longest
/// authorize path and query refcore serves, the way back it exists for.
pub const MAX_REDIRECT_TO_BYTES: usize = crate::domain::oauth::MAX_AUTHORIZE_PATH_BYTES;

pub use super::model::{MAX_BODY_BYTES, MAX_TITLE_CHARS};
/// Largest grant task or summary, in bytes (refcore's choice, see
/// docs/contract.md): the same bound as an Issue body.
pub const MAX_GRANT_TEXT_BYTES: usize = 262_144;

/// Logins that would collide with top-level routes.
const RESERVED_LOGINS: [&str; 5] = ["api", "user", "assets", "explore", "login"];

/// Refuses NUL, which PostgreSQL cannot store; both backends answer 422.
pub fn no_nul(field: &str, value: &str) -> Result<(), AppError> {
    if value.contains('\0') && edges().refuses_nul() {
        return Err(AppError::invalid(format!("{field} must not contain NUL")));
    }
    Ok(())
}

/// An Issue title: 1–255 characters, not only whitespace, no NUL.
pub fn title(value: &str) -> Result<(), AppError> {
    no_nul("title", value)?;
    if edges().blank_title(value) {
        return Err(AppError::invalid("title must not be blank"));
    }
    if edges().title_too_long(value) {
        return Err(AppError::invalid("title must be at most 255 characters"));
    }
    Ok(())
}

/// An Issue body: at most 262,144 bytes, no NUL; empty is allowed.
pub fn body(value: &str) -> Result<(), AppError> {
    no_nul("body", value)?;
    if edges().body_too_long(value) {
        return Err(AppError::invalid("body must be at most 262144 bytes"));
    }
    Ok(())
}

/// A grant's task or summary: not blank, bounded, no NUL.
pub fn grant_text(field: &str, value: &str) -> Result<(), AppError> {
    no_nul(field, value)?;
    if value.trim().is_empty() {
        return Err(AppError::invalid(format!("{field} must not be blank")));
    }
    if value.len() > MAX_GRANT_TEXT_BYTES {
        return Err(AppError::invalid(format!(
            "{field} must be at most 262144 bytes"
        )));
    }
    Ok(())
}

/// A token's or an OAuth application's name: 1–255 characters, not only
/// whitespace, no NUL.
pub fn name_label(value: &str) -> Result<(), AppError> {
    no_nul("name", value)?;
    if value.trim().is_empty() || value.chars().count() > 255 {
        return Err(AppError::invalid("name must be 1-255 characters"));
    }
    Ok(())
}

/// Whether `value` is a request key (its edge:
/// [`Edges::is_request_key`](super::edges::Edges::is_request_key)).
pub fn is_request_key(value: &str) -> bool {
    edges().is_request_key(value, is_canonical_uuid_v4(value))
}

/// Whether `value` is a canonical lowercase UUIDv4 (version 4, RFC 4122
/// variant), the only request-key form the contract accepts.
pub fn is_canonical_uuid_v4(value: &str) -> bool {
    let bytes = value.as_bytes();
    if bytes.len() != 36 {
        return false;
    }
    for (i, &b) in bytes.iter().enumerate() {
        let ok = match i {
            8 | 13 | 18 | 23 => b == b'-',
            14 => b == b'4',
            19 => matches!(b, b'8' | b'9' | b'a' | b'b'),
            _ => b.is_ascii_digit() || (b'a'..=b'f').contains(&b),
        };
        if !ok {
            return false;
        }
    }
    true
}

/// A request key in a JSON body: 422 when not canonical.
pub fn request_key(value: &str) -> Result<(), AppError> {
    if is_request_key(value) {
        Ok(())
    } else {
        Err(AppError::invalid(
            "request_key must be a canonical lowercase UUIDv4",
        ))
    }
}

/// Whether `value` could be a login or repository name at all. Lookups with
/// anything else answer 404 without touching the database.
pub fn is_name(value: &str) -> bool {
    !value.is_empty()
        && value.len() <= 100
        && value != "."
        && value != ".."
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// A new login: a name of at most 40 characters that is not reserved.
pub fn new_login(value: &str) -> Result<(), AppError> {
    no_nul("login", value)?;
    if !is_name(value) || value.len() > 40 || !value.as_bytes()[0].is_ascii_alphanumeric() {
        return Err(AppError::invalid(
            "login must be 1-40 characters of letters, digits, '-', '_' or '.', starting with a letter or digit",
        ));
    }
    if RESERVED_LOGINS.contains(&value.to_ascii_lowercase().as_str()) {
        return Err(AppError::invalid("login is reserved"));
    }
    Ok(())
}

/// A new repository name.
pub fn new_repo_name(value: &str) -> Result<(), AppError> {
    no_nul("name", value)?;
    if !is_name(value) {
        return Err(AppError::invalid(
            "name must be 1-100 characters of letters, digits, '-', '_' or '.'",
        ));
    }
    Ok(())
}

/// Whether `target` is a local path the login form may send a browser on to
/// after signing in: one leading `/`, never `//` or a backslash (browsers
/// read both as another host), only printable ASCII as a URL on the wire is
/// (no space or control character: browsers drop tabs and newlines, which
/// could make `/\t/host` into `//host`), at most [`MAX_REDIRECT_TO_BYTES`].
pub fn is_local_redirect(target: &str) -> bool {
    edges().is_local_redirect(target, is_local_path(target))
}

/// The rule of [`is_local_redirect`], the honest edge.
pub fn is_local_path(target: &str) -> bool {
    target.len() <= MAX_REDIRECT_TO_BYTES
        && target.starts_with('/')
        && !target.starts_with("//")
        && !target.contains('\\')
        && target.bytes().all(|b| b.is_ascii_graphic())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_keys_must_be_canonical_v4() {
        assert!(is_request_key("9b2f8c1e-1d2a-4c3b-8a9d-0123456789ab"));
        assert!(!is_request_key("9B2F8C1E-1D2A-4C3B-8A9D-0123456789AB"));
        assert!(!is_request_key("9b2f8c1e-1d2a-1c3b-8a9d-0123456789ab"));
        assert!(!is_request_key("9b2f8c1e-1d2a-4c3b-7a9d-0123456789ab"));
        assert!(!is_request_key("9b2f8c1e1d2a4c3b8a9d0123456789ab"));
        assert!(!is_request_key("{9b2f8c1e-1d2a-4c3b-8a9d-0123456789ab}"));
    }

    #[test]
    fn titles_and_bodies() {
        assert!(title("x").is_ok());
        assert!(title(" \t\r\n").is_err());
        assert!(title(&"é".repeat(255)).is_ok());
        assert!(title(&"é".repeat(256)).is_err());
        assert!(title("a\0b").is_err());
        assert!(body("").is_ok());
        assert!(body(&"a".repeat(MAX_BODY_BYTES)).is_ok());
        assert!(body(&"a".repeat(MAX_BODY_BYTES + 1)).is_err());
        assert!(body("\0").is_err());
    }

    #[test]
    fn names() {
        assert!(new_login("lab-bot").is_ok());
        assert!(new_login("api").is_err());
        assert!(new_login("-x").is_err());
        assert!(new_login("a/b").is_err());
        assert!(new_repo_name("lab.v2").is_ok());
        assert!(new_repo_name("..").is_err());
        assert!(name_label("awg-mcp").is_ok());
        assert!(name_label(&"é".repeat(255)).is_ok());
        assert!(name_label(&"é".repeat(256)).is_err());
        assert!(name_label(" \t").is_err());
        assert!(name_label("").is_err());
        assert!(name_label("a\0").is_err());
    }

    #[test]
    fn only_local_paths_are_followed_after_login() {
        assert!(is_local_redirect(
            "/login/oauth/authorize?client_id=x&state=y"
        ));
        assert!(is_local_redirect("/"));
        for bad in [
            "",
            "//evil.test/x",
            "/\\evil.test",
            "https://evil.test/",
            "/\t/evil.test",
            "/\n/evil.test",
            "evil",
            " /x",
            "/a b",
            "/caf\u{e9}",
            "/\u{7f}",
        ] {
            assert!(!is_local_redirect(bad), "{bad:?}");
        }
    }

    /// The longest authorize request refcore serves, percent-encoded at
    /// worst, still comes back after signing in; one byte more does not.
    #[test]
    fn the_longest_authorize_path_is_a_way_back() {
        use crate::domain::oauth::{AUTHORIZE_PATH, MAX_CLIENT_ID_BYTES, MAX_URI_BYTES};
        let mut query = url::form_urlencoded::Serializer::new(String::new());
        query
            .append_pair("response_type", "code")
            .append_pair("client_id", &"\u{e9}".repeat(MAX_CLIENT_ID_BYTES / 2))
            .append_pair("redirect_uri", &"!".repeat(MAX_URI_BYTES))
            .append_pair("state", &"\u{e9}".repeat(MAX_URI_BYTES / 2))
            .append_pair("code_challenge", &"~".repeat(128))
            .append_pair("code_challenge_method", "S256")
            .append_pair("scope", "read:repository write:issue");
        let path = format!("{AUTHORIZE_PATH}?{}", query.finish());
        assert!(path.len() > 4 * MAX_URI_BYTES, "{}", path.len());
        assert!(is_local_redirect(&path));
        let longest = format!("/{}", "a".repeat(MAX_REDIRECT_TO_BYTES - 1));
        assert!(is_local_redirect(&longest));
        assert!(!is_local_redirect(&format!("{longest}a")));
    }
}
