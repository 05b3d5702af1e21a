//! The edges of the rules: the few points where a rule's answer is decided,
//! each one a method with the honest answer as its default.
//!
//! A rule asks [`edges`] at its edge instead of deciding inline, so a
//! faults build can bend exactly that point (`crate::faults`) while this
//! module, like the rest of `domain`, reads as the contract only. A default
//! build answers with [`Honest`], which overrides nothing.

use super::envelope;
use super::grant::GrantState;
use super::validate;

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

    /// The envelope's patterns as the grant JSON shows them: never, only
    /// its digest and count (§8 bounded evidence).
    fn shown_patterns(&self, _envelope: &envelope::Stored) -> Option<Vec<String>> {
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
        value.chars().count() > validate::MAX_TITLE_CHARS
    }

    /// Whether an Issue body is too long: over 262,144 bytes (§3 Submit).
    fn body_too_long(&self, value: &str) -> bool {
        value.len() > validate::MAX_BODY_BYTES
    }

    /// Whether `value` is a request key: a canonical lowercase UUIDv4 (§3).
    fn is_request_key(&self, value: &str) -> bool {
        validate::is_canonical_uuid_v4(value)
    }

    /// Whether a login may send a browser on to `target`: a local path only.
    fn is_local_redirect(&self, target: &str) -> bool {
        validate::is_local_path(target)
    }
}

/// The contract at every edge.
#[derive(Debug, Clone, Copy)]
pub struct Honest;

impl Edges for Honest {}

/// The edges this process answers with: [`Honest`], unless a faults build
/// bends them (`crate::faults::domain_edges`).
pub fn edges() -> &'static dyn Edges {
    crate::faults::domain_edges()
}
