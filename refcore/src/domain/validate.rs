//! Value rules for text, names and request keys. Text is strict UTF-8 kept
//! whole: nothing here trims or rewrites, it only accepts or refuses (422).

use crate::error::AppError;
use crate::faults::fault;

/// Largest Issue body, in bytes (spec §3).
pub const MAX_BODY_BYTES: usize = 262_144;
/// Largest Issue title, in characters (spec §3).
pub const MAX_TITLE_CHARS: usize = 255;
/// Largest grant task or summary, in bytes (refcore's choice, see
/// docs/contract.md): the same bound as an Issue body.
pub const MAX_GRANT_TEXT_BYTES: usize = 262_144;

/// Logins that would collide with top-level routes.
const RESERVED_LOGINS: [&str; 5] = ["api", "user", "assets", "explore", "login"];

/// Refuses NUL, which PostgreSQL cannot store; both backends answer 422.
pub fn no_nul(field: &str, value: &str) -> Result<(), AppError> {
    if value.contains('\0') && !fault!(NulAcceptedOnSqlite) {
        return Err(AppError::invalid(format!("{field} must not contain NUL")));
    }
    Ok(())
}

/// An Issue title: 1–255 characters, not only whitespace, no NUL.
pub fn title(value: &str) -> Result<(), AppError> {
    no_nul("title", value)?;
    if value.trim().is_empty() && !fault!(BlankTitleAccepted) {
        return Err(AppError::invalid("title must not be blank"));
    }
    if value.chars().count() > MAX_TITLE_CHARS && !fault!(TitleLimitOff) {
        return Err(AppError::invalid("title must be at most 255 characters"));
    }
    Ok(())
}

/// An Issue body: at most 262,144 bytes, no NUL; empty is allowed.
pub fn body(value: &str) -> Result<(), AppError> {
    no_nul("body", value)?;
    if value.len() > MAX_BODY_BYTES && !fault!(BodyLimitOff) {
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

/// Whether `value` is a canonical lowercase UUIDv4 (version 4, RFC 4122
/// variant), the only request-key form the contract accepts.
pub fn is_request_key(value: &str) -> bool {
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
    }
}
