//! The adapter's small shared vocabulary: the credential a call runs with,
//! what a call does, why an answer is refused, and the contract's bounds.
//! The rules and their edges (`edges`) both take these; this module names
//! nothing of the crate but the bounded tool error, so `edges` takes them
//! without leading back into the rules that ask it. Each item is also named
//! where its rule lives (`config`, `tools`, `upstream`, `check`, `http`).

use std::fmt;

use crate::error::{ErrorCode, ToolError};

/// A credential for the Core. `Debug` never prints the secret.
#[derive(Clone, PartialEq, Eq)]
pub enum Credential {
    /// Sent as `Authorization: token T`.
    Token(String),
    /// Sent as HTTP Basic.
    Basic {
        /// Login name.
        user: String,
        /// Password or token used as password.
        password: String,
    },
}

impl fmt::Debug for Credential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Credential::Token(_) => f.write_str("Token(<redacted>)"),
            Credential::Basic { .. } => f.write_str("Basic(<redacted>)"),
        }
    }
}

/// Why a call has no usable credential (refused locally, no upstream request).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CredentialProblem {
    /// Neither a request bearer nor a process credential.
    Missing,
    /// The MCP request carried an `Authorization` header that is not a usable bearer.
    UnusableHeader,
}

/// What a call does, which decides how an unclear outcome is reported.
#[derive(Debug, Clone, Copy)]
pub enum Op {
    /// A GET: an unclear outcome is `upstream_error`, a bad body `malformed_response`.
    Read,
    /// A POST: every unclear outcome is `delivery_uncertain` with this read-back advice.
    Write(&'static str),
}

impl Op {
    /// The failure for an outcome that is not a clean success or a native refusal.
    pub fn unclear(self, status: Option<u16>, why: &str) -> ToolError {
        match self {
            Op::Read => ToolError::new(
                ErrorCode::UpstreamError,
                status,
                format!("the Core read failed: {why}"),
            ),
            Op::Write(advice) => ToolError::new(
                ErrorCode::DeliveryUncertain,
                status,
                format!(
                    "delivery uncertain ({why}): the Core may or may not have applied it. {advice}"
                ),
            ),
        }
    }

    /// The failure for a success status whose body is malformed or inconsistent.
    pub fn bad_body(self, status: u16, why: &str) -> ToolError {
        match self {
            Op::Read => ToolError::new(
                ErrorCode::MalformedResponse,
                Some(status),
                format!(
                    "the Core answered with a malformed or inconsistent body ({why}); nothing is published"
                ),
            ),
            Op::Write(_) => self.unclear(Some(status), &format!("inconsistent response: {why}")),
        }
    }
}

/// Why a body was refused (a short phrase for the tool error message).
pub type Reason = String;

/// Largest MCP request body accepted over HTTP.
pub const MAX_REQUEST_BODY: usize = 1024 * 1024;

/// Upper bound on an upstream body the adapter will read (a whole grant list page fits easily).
pub(crate) const MAX_BODY_BYTES: usize = 32 * 1024 * 1024;
