//! The edges of API authentication: each point where a credential is
//! judged, a function whose default is the contract (spec §1). As in
//! `service::edges`, a faults build bends exactly one point
//! (`crate::faults::auth`) while `auth/` reads as the contract only.

use crate::db::users::TokenRow;
use crate::domain::scopes::Scopes;
use crate::error::AppError;

/// The edges this build answers with: [`Honest`], or a faults build's.
pub(crate) use crate::faults::AuthEdges as Edge;

/// The bendable points of API authentication; every default is the contract.
pub(crate) trait Edges {
    /// Whether a credential of `scopes` passes a check for `scope`: only if
    /// it holds it (§1 scopes).
    fn holds_scope(scopes: &Scopes, scope: &str) -> bool {
        scopes.allows(scope)
    }

    /// The answer to a route that needs a caller and got no credential:
    /// 401 (§1).
    fn no_credential() -> AppError {
        AppError::Unauthorized("authentication required".to_string())
    }

    /// The scheme an `Authorization` header names, lowercased: a scheme's
    /// name is case-insensitive (§1, RFC 9110 §11.1).
    fn scheme(given: &str) -> String {
        given.to_ascii_lowercase()
    }

    /// A decoded Basic credential as `(login, secret)`: split at the first
    /// colon, as a login holds none and a password may (RFC 7617 §2).
    fn basic_pair(decoded: &str) -> Option<(&str, &str)> {
        decoded.split_once(':')
    }

    /// Whether a token found by its hash authenticates: always, as a
    /// deleted token is gone (§5 tokens). `as_password`: sent as a Basic
    /// password.
    fn token_live(_token: &TokenRow, _as_password: bool) -> bool {
        true
    }

    /// Whether a Basic login is looked up at all: not with NUL, which no
    /// login holds (§2).
    fn looks_up_login(login: &str) -> bool {
        !login.contains('\0')
    }
}

/// The contract at every edge.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Honest;

impl Edges for Honest {}
