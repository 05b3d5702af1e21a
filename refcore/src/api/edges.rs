//! The edges of the API's rules and of decoding a request (`extract`):
//! which scopes a route needs, which grants a list holds by default, what
//! a body or a query may be, and the public URL every link is built on,
//! each a function whose default is the contract. A route asks [`Edge`] at
//! the edge instead of deciding inline, so a faults build can bend exactly
//! that point (`crate::faults::api`) while `api/` and `extract` read as the
//! contract only.

use std::net::SocketAddr;

use crate::auth::Caller;
use crate::config::Config;
use crate::domain::model::GrantState;
use crate::error::AppError;

/// The edges this build answers with: [`Honest`], or a faults build's.
#[cfg(feature = "faults")]
pub(crate) use crate::faults::api::Bent as Edge;
/// The edges this build answers with: [`Honest`].
#[cfg(not(feature = "faults"))]
pub(crate) use Honest as Edge;

/// The bendable points of the API's rules; every default is the contract.
pub(crate) trait Edges {
    /// The scopes that confirm a grant or submit under it (§3).
    fn grant_write_scopes() -> &'static [&'static str] {
        &["read:repository", "write:issue"]
    }

    /// The grants a list without `state` holds: the live ones (§3).
    fn default_list_states() -> &'static [GrantState] {
        &[
            GrantState::AwaitingAgent,
            GrantState::AwaitingHuman,
            GrantState::Active,
        ]
    }

    /// Whether a list's `state` is read: yes (§3).
    fn reads_state_filter() -> bool {
        true
    }

    /// The raw body's digest a submit is compared by besides its decoded
    /// request: none, as replays are compared decoded (§3).
    fn raw_digest(_bytes: &[u8]) -> Option<String> {
        None
    }

    /// 403 unless `caller` may move an Issue: a site admin (§5).
    fn require_mover(caller: &Caller) -> Result<(), AppError> {
        caller.require_site_admin("write:admin")
    }

    /// 403 unless `caller`'s credential may add a collaborator (§5).
    fn require_collaborator_scope(caller: &Caller) -> Result<(), AppError> {
        caller.require(&["write:repository"])
    }

    /// Whether a JSON body must be an object: yes, as every body of the
    /// contract is one (§3).
    fn json_body_is_object() -> bool {
        true
    }

    /// Whether a JSON body with a NUL anywhere is refused: yes (§3).
    fn json_nul_refused() -> bool {
        true
    }

    /// The media type of a `Content-Type` value: before its parameters.
    fn media_type(content_type: &str) -> &str {
        content_type.split(';').next().unwrap_or(content_type)
    }

    /// What a percent escape at `at` of `raw` that is not well formed does
    /// besides the 400: nothing.
    fn malformed_escape(_raw: &[u8], _at: usize) {}

    /// A form or query component's bytes: `+` a space, then percent escapes
    /// decoded, so a typed `+` (sent as `%2B`) stays a `+`.
    fn decoded(raw: &[u8]) -> Vec<u8> {
        let plus: Vec<u8> = raw
            .iter()
            .map(|&b| if b == b'+' { b' ' } else { b })
            .collect();
        percent_encoding::percent_decode(&plus).collect()
    }

    /// A list's `page` or `limit` that is not a positive integer: 400 (§3).
    fn not_positive(name: &str) -> Result<Option<i64>, AppError> {
        Err(AppError::bad_request(format!(
            "{name} must be a positive integer"
        )))
    }

    /// The public URL without `CORE_PUBLIC_URL`: the address the Core is
    /// bound to (§5).
    fn bound_url(_config: &Config, bound: SocketAddr) -> String {
        format!("http://{bound}")
    }

    /// The public URL every link is built on, from `url` (`CORE_PUBLIC_URL`
    /// without a trailing `/`, or [`Edges::bound_url`]): as is (§5).
    fn public_url(url: String) -> String {
        url
    }
}

/// The contract at every edge.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Honest;

impl Edges for Honest {}
