//! The grant state machine of spec §2 and the grant JSON.
//!
//! `awaiting_agent` → confirm → `awaiting_human` → approve → `active`; a
//! human may withdraw from any of these to `revoked`, which is final. Every
//! change bumps `state_revision` by one; the database layer applies a change
//! only if the revision it read is still current (compare-and-swap).

use serde::Serialize;

use super::digest::{SCHEMA, VERSION};
use super::edges::edges;
use super::envelope;
use super::json::UserRef;
pub use super::model::GrantState;
use crate::error::AppError;

/// A change a caller asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transition {
    /// The agent confirms the proposal.
    Confirm,
    /// A repository admin approves.
    Approve,
    /// A repository admin withdraws.
    Withdraw,
}

impl Transition {
    /// The state a transition leads to from `from`, or a 409 explaining why
    /// it is not allowed there.
    pub fn apply(self, from: GrantState) -> Result<GrantState, AppError> {
        match (self, from) {
            (Transition::Confirm, GrantState::AwaitingAgent) => Ok(GrantState::AwaitingHuman),
            (Transition::Approve, from) if edges().approvable(from) => Ok(GrantState::Active),
            (Transition::Withdraw, GrantState::Revoked) => {
                Err(AppError::conflict("grant is already revoked"))
            }
            (Transition::Withdraw, _) => Ok(GrantState::Revoked),
            (Transition::Confirm, state) => Err(AppError::conflict(format!(
                "grant is {}, only an awaiting_agent grant can be confirmed",
                state.as_str()
            ))),
            (Transition::Approve, state) => Err(AppError::conflict(format!(
                "grant is {}, only an awaiting_human grant can be approved",
                state.as_str()
            ))),
        }
    }
}

/// The proposal triple a bot repeats to confirm or submit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Triple {
    /// Must be `agent_work_grant.v1`.
    pub schema: String,
    /// Must be 1.
    pub version: i64,
    /// Must equal the grant's digest.
    pub digest: String,
}

impl Triple {
    /// 409 unless the triple is exactly the grant's proposal.
    pub fn check_against(&self, grant_digest: &str) -> Result<(), AppError> {
        let digest_matches = edges().digest_matches(&self.digest, grant_digest);
        if self.schema == SCHEMA && self.version == VERSION && digest_matches {
            Ok(())
        } else {
            Err(AppError::conflict(
                "proposal does not match the grant's current proposal",
            ))
        }
    }
}

/// A grant row with the logins it refers to, as the database returns it.
#[derive(Debug, Clone)]
pub struct Grant {
    /// Grant id.
    pub id: i64,
    /// Repository id.
    pub repo_id: i64,
    /// Repository owner login.
    pub repo_owner: String,
    /// Repository name.
    pub repo_name: String,
    /// The agent.
    pub agent: UserRef,
    /// Who prepared it.
    pub prepared_by: UserRef,
    /// Who approved it.
    pub approved_by: Option<UserRef>,
    /// Current state.
    pub state: GrantState,
    /// Compare-and-swap counter.
    pub state_revision: i64,
    /// The task, whole.
    pub task: String,
    /// The summary, whole.
    pub summary: String,
    /// Proposal digest.
    pub digest: String,
    /// RFC 3339 timestamps.
    pub created_at: String,
    /// Last change.
    pub updated_at: String,
    /// When the agent confirmed.
    pub confirmed_at: Option<String>,
    /// When a human approved.
    pub approved_at: Option<String>,
    /// When a human withdrew.
    pub revoked_at: Option<String>,
    /// The repository grant envelope attached at preparation (spec §8).
    pub envelope: Option<envelope::Stored>,
}

/// `repository` inside the grant JSON.
#[derive(Debug, Clone, Serialize)]
pub struct GrantRepoJson {
    /// Repository id.
    pub id: i64,
    /// Owner login.
    pub owner: String,
    /// Name.
    pub name: String,
    /// `owner/name`.
    pub full_name: String,
}

/// `proposal` inside the grant JSON.
#[derive(Debug, Clone, Serialize)]
pub struct ProposalJson {
    /// Always `agent_work_grant.v1`.
    pub schema: &'static str,
    /// Always 1.
    pub version: i64,
    /// The digest.
    pub digest: String,
}

/// `repository_grant` inside the grant JSON (spec §8): bounded evidence
/// only, never the patterns.
#[derive(Debug, Clone, Serialize)]
pub struct RepositoryGrantJson {
    /// Lowercase hex SHA-256 of the canonical envelope's JCS text.
    pub digest: String,
    /// How many path patterns it allows.
    pub path_count: i64,
    /// Never shown by the contract ([`Edges::shown_patterns`](super::edges::Edges::shown_patterns)).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allowed_paths: Option<Vec<String>>,
}

/// The grant JSON of spec §2, member for member.
#[derive(Debug, Clone, Serialize)]
pub struct GrantJson {
    /// Grant id.
    pub id: i64,
    /// The repository.
    pub repository: GrantRepoJson,
    /// The agent.
    pub agent: UserRef,
    /// Who prepared it.
    pub prepared_by: UserRef,
    /// Who approved it.
    pub approved_by: Option<UserRef>,
    /// State name.
    pub state: &'static str,
    /// Compare-and-swap counter.
    pub state_revision: i64,
    /// The task.
    pub task: String,
    /// The summary.
    pub summary: String,
    /// The proposal.
    pub proposal: ProposalJson,
    /// RFC 3339.
    pub created_at: String,
    /// RFC 3339.
    pub updated_at: String,
    /// RFC 3339 or null.
    pub confirmed_at: Option<String>,
    /// RFC 3339 or null.
    pub approved_at: Option<String>,
    /// RFC 3339 or null.
    pub revoked_at: Option<String>,
    /// The envelope's evidence (spec §8), or null.
    pub repository_grant: Option<RepositoryGrantJson>,
}

impl Grant {
    /// The wire form.
    pub fn to_json(&self) -> GrantJson {
        GrantJson {
            id: self.id,
            repository: GrantRepoJson {
                id: self.repo_id,
                owner: self.repo_owner.clone(),
                name: self.repo_name.clone(),
                full_name: format!("{}/{}", self.repo_owner, self.repo_name),
            },
            agent: self.agent.clone(),
            prepared_by: self.prepared_by.clone(),
            approved_by: self.approved_by.clone(),
            state: self.state.as_str(),
            state_revision: self.state_revision,
            task: self.task.clone(),
            summary: self.summary.clone(),
            proposal: ProposalJson {
                schema: SCHEMA,
                version: VERSION,
                digest: self.digest.clone(),
            },
            created_at: wire_time(&self.created_at),
            updated_at: wire_time(&self.updated_at),
            confirmed_at: self.confirmed_at.as_deref().map(wire_time),
            approved_at: self.approved_at.as_deref().map(wire_time),
            revoked_at: self.revoked_at.as_deref().map(wire_time),
            repository_grant: self.envelope.as_ref().map(|e| RepositoryGrantJson {
                digest: e.digest.clone(),
                path_count: e.path_count,
                allowed_paths: edges().shown_patterns(e.patterns()),
            }),
        }
    }
}

/// A stored RFC 3339 timestamp as the API shows it (its edge:
/// [`Edges::wire_time`](super::edges::Edges::wire_time)).
pub fn wire_time(stored: &str) -> String {
    edges().wire_time(stored)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transitions_follow_the_spec() {
        use GrantState::*;
        assert_eq!(
            Transition::Confirm.apply(AwaitingAgent).unwrap(),
            AwaitingHuman
        );
        assert_eq!(Transition::Approve.apply(AwaitingHuman).unwrap(), Active);
        for state in [AwaitingAgent, AwaitingHuman, Active] {
            assert_eq!(Transition::Withdraw.apply(state).unwrap(), Revoked);
        }
        for state in [AwaitingHuman, Active, Revoked] {
            assert!(Transition::Confirm.apply(state).is_err());
        }
        for state in [AwaitingAgent, Active, Revoked] {
            assert!(Transition::Approve.apply(state).is_err());
        }
        assert!(Transition::Withdraw.apply(Revoked).is_err());
    }

    #[test]
    fn triple_must_match_exactly() {
        let digest = "ab".repeat(32);
        let good = Triple {
            schema: SCHEMA.into(),
            version: 1,
            digest: digest.clone(),
        };
        assert!(good.check_against(&digest).is_ok());
        let mut bad = good.clone();
        bad.version = 2;
        assert!(bad.check_against(&digest).is_err());
        let mut bad = good.clone();
        bad.schema = "agent_work_grant.v2".into();
        assert!(bad.check_against(&digest).is_err());
        assert!(good.check_against(&"cd".repeat(32)).is_err());
    }
}
