//! What the agent's submission and its edges (`edges`) share: the request,
//! and the answer to a key used again with another payload. It names
//! nothing of `service`, so `edges` takes these without leading back into
//! the rules that ask it.

use crate::domain::grant::Triple;
use crate::error::AppError;

/// A validated submission request.
#[derive(Debug)]
pub struct SubmitRequest {
    /// The proposal triple.
    pub triple: Triple,
    /// Canonical lowercase UUIDv4.
    pub request_key: String,
    /// Issue title.
    pub title: String,
    /// Issue body.
    pub body: String,
    /// SHA-256 of the request's raw bytes: set only under the
    /// `replay-compares-raw-bytes` fault (a replay compares the decoded
    /// input, `Edges::replay`).
    pub raw_digest: Option<String>,
}

/// 409 for a replay whose payload differs from its receipt's (§3).
pub(crate) fn key_reused() -> AppError {
    AppError::conflict("request_key was already used with a different payload")
}
