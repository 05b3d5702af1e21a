//! The edges of the rules: the few points where a rule's answer is decided,
//! each one a method with the honest answer as its default.
//!
//! A rule asks [`edges`] at its edge instead of deciding inline, so a
//! faults build can bend exactly that point (`crate::faults`) while this
//! module, like the rest of `domain`, reads as the contract only. A default
//! build answers with [`Honest`], which overrides nothing.
//!
//! An edge takes plain values and the types of [`model`] only, and where
//! its rule's answer is computed elsewhere in `domain` it receives that
//! answer as a parameter: so this module names none of the rules that ask
//! it, and no import leads back here in a circle.

use serde_json::Value;

use super::model::{self, GrantState};
use crate::error::AppError;

/// The bendable points of the domain's rules; every default is the contract.
pub trait Edges: Sync {
    /// Whether an approve may leave `from`: only `awaiting_human` (§4).
    fn approvable(&self, from: GrantState) -> bool {
        from == GrantState::AwaitingHuman
    }

    /// Whether a triple's digest is the grant's: byte equality, as the
    /// digest is lowercase hex (§2).
    fn digest_matches(&self, given: &str, grant: &str) -> bool {
        given == grant
    }

    /// The task as the proposal digest binds it: whole (§2).
    fn bound_task<'a>(&self, task: &'a str) -> &'a str {
        task
    }

    /// The envelope's `patterns` as the grant JSON shows them: never, only
    /// its digest and count (§8 bounded evidence).
    fn shown_patterns(&self, _patterns: Vec<String>) -> Option<Vec<String>> {
        None
    }

    /// A stored RFC 3339 timestamp as the API shows it: unchanged.
    fn wire_time(&self, stored: &str) -> String {
        stored.to_owned()
    }

    /// Whether the Issue now at `now` (repository id, index) is still the
    /// receipt's: the same repository and index (§3 `status`).
    fn binding_kept(&self, receipt: (i64, i64), now: (i64, i64)) -> bool {
        now == receipt
    }

    /// Whether `write:{area}` implies `read:{area}`: for every area (§1).
    fn write_implies_read(&self, _area: &str) -> bool {
        true
    }

    /// Whether text holding NUL is refused: on every backend (§2).
    fn refuses_nul(&self) -> bool {
        true
    }

    /// Whether an Issue title counts as blank: only whitespace (§3 Submit).
    fn blank_title(&self, value: &str) -> bool {
        value.trim().is_empty()
    }

    /// Whether an Issue title is too long: over 255 characters (§3 Submit).
    fn title_too_long(&self, value: &str) -> bool {
        value.chars().count() > model::MAX_TITLE_CHARS
    }

    /// Whether an Issue body is too long: over 262,144 bytes (§3 Submit).
    fn body_too_long(&self, value: &str) -> bool {
        value.len() > model::MAX_BODY_BYTES
    }

    /// Whether `value` is a request key: a canonical lowercase UUIDv4 (§3),
    /// as `canonical` (`validate::is_canonical_uuid_v4`) says.
    fn is_request_key(&self, _value: &str, canonical: bool) -> bool {
        canonical
    }

    /// Whether a login may send a browser on to `target`: a local path only,
    /// as `local` (`validate::is_local_path`) says.
    fn is_local_redirect(&self, _target: &str, local: bool) -> bool {
        local
    }

    // Delegated consent (spec §9).

    /// Whether a request's redirect URI is `expected`: byte for byte.
    fn redirect_uri_matches(&self, expected: &str, given: &str) -> bool {
        given == expected
    }

    /// Whether an authorization request may name its redirect URI: only one
    /// registered for its client, as `registered`
    /// (`oauth::redirect_uri_registered`) says. (`response_type` tells the
    /// consent form, which carries none, from the authorize page.)
    fn redirect_uri_allowed(&self, _response_type: Option<&str>, registered: bool) -> bool {
        registered
    }

    /// Whether a `response_type` is the one served: `code`.
    fn response_type_ok(&self, response_type: &str) -> bool {
        response_type == model::RESPONSE_TYPE
    }

    /// The challenge method stored for `given`: `S256` only, required.
    fn challenge_method(&self, given: Option<&str>) -> Option<&'static str> {
        (given == Some(model::S256)).then_some(model::S256)
    }

    /// Whether `verifier` has a PKCE verifier's form (RFC 7636 §4.1), as
    /// `well_formed` (`oauth::is_pkce_string`) says.
    fn is_verifier(&self, _verifier: &str, well_formed: bool) -> bool {
        well_formed
    }

    /// Whether a requested scope name is granted: only an offered one.
    fn offered_scope(&self, name: &str) -> bool {
        model::OFFERED_SCOPES.contains(&name)
    }

    /// The scopes an issued token carries, in their stored form
    /// (`Scopes::stored`): the code's, `granted`.
    fn token_scopes(&self, granted: String) -> String {
        granted
    }

    /// The query added to a client's redirect URI: `params` URL-encoded,
    /// `encoded` (`oauth::encoded_query`).
    fn redirect_query(&self, _params: &[(&str, &str)], encoded: String) -> String {
        encoded
    }

    /// What joins a redirect URI and that query, keeping the URI's own:
    /// `separator` (`oauth::query_separator`).
    fn query_separator(&self, _redirect_uri: &str, separator: &'static str) -> &'static str {
        separator
    }

    /// The latest `expires_at` dead at `now`: `now` itself.
    fn expiry_horizon(&self, now: i64) -> i64 {
        now
    }

    /// Whether a code issued to `issued_to` redeems for `client`: the same.
    fn same_client(&self, issued_to: &str, client: &str) -> bool {
        issued_to == client
    }

    /// Whether a code's verifier proves possession for its challenge: as
    /// `matches` (`oauth::verifier_matches`) says.
    fn proves(&self, matches: bool) -> bool {
        matches
    }

    // The repository grant envelope (spec §8).

    /// Whether an envelope object may hold the member `key`: one of `allowed`.
    fn admits_member(&self, allowed: &[&str], key: &str) -> bool {
        allowed.contains(&key)
    }

    /// A `commit_count` member `value` as a JSON integer: `read`, its
    /// strict reading (`envelope::json_integer`).
    fn integer(&self, _value: &Value, read: Result<i64, AppError>) -> Result<i64, AppError> {
        read
    }

    /// Whether the envelope's `publish` is allowed: `false` only.
    fn publish_ok(&self, publish: &Value) -> bool {
        *publish == Value::Bool(false)
    }

    /// The largest `commit_count.max`.
    fn max_commits(&self) -> i64 {
        model::MAX_COMMITS
    }

    /// The path order the envelope digest is taken over: sorted.
    fn digest_order<'a>(&self, _given: &'a [String], sorted: &'a [String]) -> &'a [String] {
        sorted
    }

    /// The rule a pattern's segment breaks, if any: `.`, `..` or `.git` in
    /// any letter case.
    fn refused_segment(&self, segment: &str) -> Option<&'static str> {
        match segment {
            "." | ".." => Some("must not have a . or .. segment"),
            _ if segment.eq_ignore_ascii_case(".git") => Some("must not have a .git segment"),
            _ => None,
        }
    }
}

/// The contract at every edge.
#[derive(Debug, Clone, Copy)]
pub struct Honest;

impl Edges for Honest {}

/// The edges this build answers with: [`Honest`], or a faults build's.
#[cfg(feature = "faults")]
pub(crate) use crate::faults::domain::Bent as Edge;
/// The edges this build answers with: [`Honest`].
#[cfg(not(feature = "faults"))]
pub(crate) use Honest as Edge;

/// The edges this process answers with: [`Honest`], unless a faults build
/// bends them (`crate::faults::domain`).
pub fn edges() -> &'static dyn Edges {
    &Edge
}
