//! Consent mode (spec §9): a person consents in the Core's browser instead of
//! pasting a token, and the adapter keeps the token in memory for that one
//! MCP session.
//!
//! A tour:
//! - [`pkce`]: random secrets and the S256 challenge.
//! - [`store`]: the states (single use, expiring, bound to a session and a
//!   verifier) and the per-session tokens, behind one lock.
//! - `model`: the store's data and the token answer's bound, which the
//!   edges (`crate::edges`) take too.
//! - [`flow`]: what a tool call without a credential does — deliver the
//!   authorize URL by URL-mode elicitation and park, or end `auth_required`.
//! - [`callback`]: `GET /mcp/oauth/callback`, which spends a state and makes
//!   the one token POST ([`exchange`]).
//! - [`sessions`]: rmcp's session manager, wrapped so that a closed session
//!   drops its states and token at once.

pub mod callback;
pub mod exchange;
pub mod flow;
pub(crate) mod model;
pub mod pkce;
pub mod sessions;
pub mod store;

pub use flow::ConsentCall;
pub use sessions::{SessionGuard, Sessions};
pub use store::Consent;

/// The callback route, on the same server as `/mcp`.
pub const CALLBACK_PATH: &str = "/mcp/oauth/callback";

/// The scopes asked for: what the tools need, nothing more.
pub const SCOPE: &str = "read:repository write:issue";
