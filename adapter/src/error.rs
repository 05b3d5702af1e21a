//! The crate's two error families.
//!
//! [`ConfigError`] stops the process before it serves anything (the binary
//! turns it into exit status 2). [`ToolError`] is the bounded answer a tool
//! call gives when it cannot succeed: it becomes an MCP tool result with
//! `isError: true`, never a protocol error, so the calling model sees the
//! code, the native status and a short message that the adapter wrote itself.

use rmcp::model::{CallToolResult, ContentBlock};
use serde::Serialize;

/// Why the adapter refused to start.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// `--core-url` (or `--public-url`) is not a bare `http(s)://host[:port]` origin.
    #[error("{flag} {url} is not a bare http(s) origin: {reason}")]
    CoreUrl {
        /// The flag that carried it.
        flag: &'static str,
        /// The value (never with userinfo).
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The consent-mode flags do not fit together or with the rest.
    #[error("consent mode: {0}")]
    Consent(String),
    /// An `--allowed-origin` entry is not an origin either.
    #[error("--allowed-origin {origin} is not an http(s) origin: {reason}")]
    AllowedOrigin { origin: String, reason: String },
    /// `--listen` names a non-loopback address without `--allow-remote`.
    #[error(
        "--listen {addr} is not a loopback address; pass --allow-remote to serve other hosts on purpose"
    )]
    RemoteListen { addr: std::net::SocketAddr },
    /// `--public-url` names a non-loopback origin without `--allow-remote`.
    #[error(
        "--public-url {url} is not a loopback origin; pass --allow-remote to take consent callbacks from other hosts on purpose"
    )]
    RemotePublicUrl { url: String },
    /// The credential environment variables contradict each other.
    #[error("credential environment: {0}")]
    Credentials(String),
    /// `AWG_FAULT` is set, but a default build has no faults.
    #[error(
        "AWG_FAULT is set but this awg-mcp was built without the `faults` feature, so no fault can be active; unset AWG_FAULT or use a faults build (docs/faults.md)"
    )]
    NotAFaultsBuild,
    /// `AWG_FAULT` names no built-in fault.
    #[error("AWG_FAULT={name:?} names no built-in fault; valid names: {valid}")]
    UnknownFault {
        /// The name given (cut to 60 characters).
        name: String,
        /// Every valid name, comma-separated.
        valid: String,
    },
    /// The upstream HTTP client could not be built.
    #[error("upstream client: {0}")]
    Client(String),
}

/// The stable error codes of the tool surface (see `docs/adapter.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// Refused locally before any upstream request.
    InvalidInput,
    /// Native 400.
    BadRequest,
    /// Native 401, or no usable credential at all (then `native_status` is null).
    Unauthenticated,
    /// Native 403.
    Forbidden,
    /// Native 404 (missing or invisible to this caller).
    NotFound,
    /// Native 409.
    Conflict,
    /// Native 422.
    Unprocessable,
    /// A POST whose outcome is unknown; the caller must read back, never resend blindly.
    DeliveryUncertain,
    /// A GET that failed without a native meaning (lost, timed out, redirect, odd status).
    UpstreamError,
    /// A GET whose success body was malformed or inconsistent; nothing is published.
    MalformedResponse,
    /// Consent mode: the person must consent in a browser first; the message ends with the URL.
    AuthRequired,
    /// Consent mode: the person declined (at the Core, or the client's elicitation), or the client cancelled the parked call.
    ConsentDenied,
    /// Consent mode: the callback's code could not be exchanged for a token.
    ConsentFailed,
    /// Consent mode: no consent arrived before `--consent-timeout-secs`.
    ConsentTimeout,
}

/// Longest message a tool error may carry, in characters.
pub const MAX_MESSAGE_CHARS: usize = 300;

/// A bounded tool failure: what the caller may learn, and nothing more.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[error("{code:?} (native status {native_status:?}): {message}")]
pub struct ToolError {
    /// Stable machine-readable code.
    pub code: ErrorCode,
    /// The upstream HTTP status when there was one.
    pub native_status: Option<u16>,
    /// Short human text written by the adapter (never upstream bytes).
    pub message: String,
    /// The offending input field, only for `invalid_input`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
}

impl ToolError {
    /// A failure with the given code and status; the message is cut to the bound.
    pub fn new(code: ErrorCode, native_status: Option<u16>, message: impl Into<String>) -> Self {
        let message: String = message.into();
        let message = message.chars().take(MAX_MESSAGE_CHARS).collect();
        Self {
            code,
            native_status,
            message,
            field: None,
        }
    }

    /// `auth_required`: `prose` (bounded as usual), a space, then the whole
    /// authorize URL as the message's last word. The URL is not cut: its
    /// length is bounded by the configuration (see `docs/adapter.md`).
    pub fn auth_required(prose: &str, url: &str) -> Self {
        let mut error = Self::new(ErrorCode::AuthRequired, None, prose);
        error.message.push(' ');
        error.message.push_str(url);
        error
    }

    /// A local refusal of one input field; no upstream request was made.
    pub fn invalid(field: &str, message: impl Into<String>) -> Self {
        let mut error = Self::new(ErrorCode::InvalidInput, None, message);
        error.field = Some(field.chars().take(100).collect());
        error
    }

    /// The MCP tool result: `isError: true`, one text item holding this JSON, no structured content.
    pub fn into_result(self) -> CallToolResult {
        let text = serde_json::to_string(&self).unwrap_or_else(|_| {
            r#"{"code":"upstream_error","native_status":null,"message":"error"}"#.to_owned()
        });
        CallToolResult::error(vec![ContentBlock::text(text)])
    }
}
