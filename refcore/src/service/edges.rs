//! The edges of the service's rules: who may do what, and what a step
//! does beside its one change, each a function whose default is the
//! contract. A service asks [`Edge`] at the edge instead of deciding
//! inline, so a faults build can bend exactly that point
//! (`crate::faults::service`) while `service/` reads as the contract only.

use sqlx::AnyConnection;

use super::human::Preparation;
use crate::db::{self, Db, oauth::CodeRow, repos::RepoRow, users::UserRow};
use crate::domain::envelope::Envelope;
use crate::domain::grant::{Grant, GrantState, Transition};
use crate::domain::permission::Permission;
use crate::error::AppError;

/// The edges this build answers with: [`Honest`], or a faults build's.
pub(crate) use crate::faults::ServiceEdges as Edge;

/// The bendable points of the service's rules; every default is the
/// contract. Static dispatch: an edge may be async and hold a connection.
pub(crate) trait Edges {
    /// The permission that edits another person's Issue: admin (§5).
    fn edits_others_issues() -> Permission {
        Permission::Admin
    }

    /// The permission that deletes an Issue: admin (§5).
    fn deletes_issues() -> Permission {
        Permission::Admin
    }

    /// The permission that adds or removes a collaborator: admin (§5).
    fn manages_collaborators() -> Permission {
        Permission::Admin
    }

    /// Whether a user's own credential may manage its tokens: only its
    /// password (§5 tokens).
    fn manages_own_tokens(by_password: bool) -> bool {
        by_password
    }

    /// Whether an authorize `client_id` is looked up at all: not with NUL,
    /// which no registered id holds (§9, §2).
    fn looks_up_client_id(client_id: &str) -> bool {
        !client_id.contains('\0')
    }

    /// The grant an ordinary Issue is attributed to: none (§1 Issue).
    async fn ordinary_issue_grant(
        _conn: &mut AnyConnection,
        _user: &UserRow,
        _repo_id: i64,
    ) -> Result<Option<(i64, String)>, AppError> {
        Ok(None)
    }

    /// What deleting Issue `issue_id` does besides: nothing; its receipt
    /// stays and reads `issue_deleted` (§3 Submission).
    async fn after_issue_deleted(
        _conn: &mut AnyConnection,
        _issue_id: i64,
    ) -> Result<(), AppError> {
        Ok(())
    }

    /// What moving an Issue checks besides the target: nothing, as only a
    /// site admin reaches the move (its handler checks).
    async fn check_issue_mover(
        _conn: &mut AnyConnection,
        _user: &UserRow,
        _source_repo_id: i64,
    ) -> Result<(), AppError> {
        Ok(())
    }

    /// Whether a permission administers a repository's grants: admin (§4).
    fn administers_grants(perm: Permission) -> bool {
        perm >= Permission::Admin
    }

    /// An envelope a preparation's prose holds: never read (§8: only the
    /// `repository_grant` field is authority).
    fn envelope_in_prose(_form: &Preparation<'_>) -> Option<Envelope> {
        None
    }

    /// A grant's task or summary as stored: whole (§2).
    fn stored_text(text: &str) -> &str {
        text
    }

    /// Whether `user` may be a grant's agent: a bot only (§2).
    fn may_be_agent(user: &UserRow) -> bool {
        user.is_bot()
    }

    /// A decision taken before the grant lock: none, as every decision is
    /// compared and written under it (§2 compare-and-swap).
    async fn decided_before_lock(
        _db: &Db,
        _repo: &RepoRow,
        _grant_id: i64,
        _revision: i64,
        _transition: Transition,
    ) -> Result<Option<GrantState>, AppError> {
        Ok(None)
    }

    /// Whether a grant of repository `grant_repo` is decided under `repo`'s
    /// forms: only its own (§3 "addressed only under its own repository").
    fn grant_in_repo(grant_repo: i64, repo: i64) -> bool {
        grant_repo == repo
    }

    /// Whether the form's `state_revision` is the grant's (§4 stale).
    fn revision_current(grant: i64, form: i64) -> bool {
        grant == form
    }

    /// Whether a decision is written: always (§4).
    fn writes_decision(_transition: Transition) -> bool {
        true
    }

    /// Who a decision records as deciding: the human who posted it (§2).
    fn decided_by(_grant: &Grant, user: &UserRow) -> i64 {
        user.id
    }

    /// A code redeemed at the token endpoint: taken, so it redeems once (§9).
    async fn redeem_code(
        conn: &mut AnyConnection,
        code_hash: &str,
    ) -> Result<Option<CodeRow>, sqlx::Error> {
        db::oauth::take_code(conn, code_hash).await
    }
}

/// The contract at every edge.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Honest;

impl Edges for Honest {}
