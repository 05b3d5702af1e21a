//! The edges of storage: the few points where a query's text carries a
//! rule, each a function whose default is the contract. As in
//! `service::edges`, a faults build bends exactly one point
//! (`crate::faults::db`) while `db/` reads as the contract only.

use crate::domain::model::GrantState;

/// The edges this build answers with: [`Honest`], or a faults build's.
pub(crate) use crate::faults::DbEdges as Edge;

/// The bendable points of storage; every default is the contract.
pub(crate) trait Edges {
    /// Which repositories an agent's grant list reaches, in SQL for the
    /// repository `r`: those the agent `$1` can read now (public, owner,
    /// collaborator, or site admin when `$2` is 1) (§3 list).
    fn listed_repos() -> &'static str {
        "(r.private = 0 OR r.owner_id = $1 OR $2 = 1 \
         OR EXISTS (SELECT 1 FROM collaborators c WHERE c.repo_id = r.id AND c.user_id = $1))"
    }

    /// What a transition to `to` stamps beside its state, in SQL (`$5` the
    /// time, `$6` the approver): its own step's time, and who approved
    /// (§2).
    fn transition_stamp(to: GrantState) -> &'static str {
        match to {
            GrantState::AwaitingHuman => "confirmed_at = $5",
            GrantState::Active => "approved_at = $5, approved_by = $6",
            GrantState::Revoked => "revoked_at = $5",
            GrantState::AwaitingAgent => "updated_at = $5",
        }
    }

    /// How far a transition moves `state_revision`: one, every time (§2).
    fn revision_step(_from: GrantState, _to: GrantState) -> i64 {
        1
    }

    /// An Issue's body as stored: whole (§3 submit).
    fn stored_body(body: &str) -> &str {
        body
    }

    /// What adding a collaborator who already is one does, in SQL: sets
    /// the permission given (§5).
    fn collaborator_again() -> &'static str {
        "DO UPDATE SET permission = excluded.permission"
    }

    /// How one of a user's tokens is deleted, in SQL (`$1` the user, `$2`
    /// the token): its row removed, so it no longer authenticates (§5).
    fn delete_token() -> &'static str {
        "DELETE FROM access_tokens WHERE user_id = $1 AND id = $2"
    }
}

/// The contract at every edge.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Honest;

impl Edges for Honest {}
