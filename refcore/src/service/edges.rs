//! The edges of the service's rules: who may do what, and what a step
//! does beside its one change, each a function whose default is the
//! contract. A service asks [`Edge`] at the edge instead of deciding
//! inline, so a faults build can bend exactly that point
//! (`crate::faults::service`) while `service/` reads as the contract only.

use sqlx::AnyConnection;

use super::access;
use super::model::{SubmitRequest, key_reused};
use crate::auth::Caller;
use crate::db::{self, Db, issues::NewIssue, oauth::CodeRow, repos::RepoRow, users::UserRow};
use crate::domain::envelope::Envelope;
use crate::domain::grant::{Grant, GrantState, Transition, Triple};
use crate::domain::permission::Permission;
use crate::domain::submission::Submission;
use crate::error::AppError;
use crate::state::AppState;

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

    /// An envelope a preparation's prose (its `task` and `summary`) holds:
    /// never read (§8: only the `repository_grant` field is authority).
    fn envelope_in_prose(_task: &str, _summary: &str) -> Option<Envelope> {
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

    // The agent's side of a grant (§3).

    /// The repository an agent's call names, and the caller's permission on
    /// it as it is now: 404 unless the caller sees it (§3 "every call
    /// rechecks").
    async fn agent_repo(
        conn: &mut AnyConnection,
        user: &UserRow,
        owner: &str,
        repo: &str,
    ) -> Result<(RepoRow, Permission), AppError> {
        access::visible_repo(conn, Some(user), owner, repo).await
    }

    /// Whether an agent's call under repository `repo_id` reaches `grant`:
    /// only under the grant's own repository, and only by its agent (§3).
    /// `needed` is what the call needs, `perm` what the caller holds.
    fn reaches_grant(
        grant: &Grant,
        repo_id: i64,
        user: &UserRow,
        _needed: Permission,
        _perm: Permission,
    ) -> bool {
        grant.repo_id == repo_id && grant.agent.id == user.id
    }

    /// How many pages an agent's list skips before `page`: pages count
    /// from 1 (§3 list).
    fn pages_before(page: i64) -> i64 {
        page - 1
    }

    /// The state a confirm moves `grant` to: `awaiting_human`, from
    /// `awaiting_agent` only, and only with the grant's triple (§3 confirm).
    /// `None` answers the grant as it is, writing nothing.
    fn confirmed(grant: &Grant, triple: &Triple) -> Result<Option<GrantState>, AppError> {
        let next = Transition::Confirm.apply(grant.state)?;
        triple.check_against(&grant.digest)?;
        Ok(Some(next))
    }

    /// An Issue `(id, index)` a submission writes before it takes the grant
    /// lock: none, as its key is looked up and its Issue written under the
    /// lock, in one transaction (§3 idempotency).
    async fn issue_before_lock(
        _state: &AppState,
        _caller: &Caller,
        _owner: &str,
        _repo: &str,
        _grant_id: i64,
        _request: &SubmitRequest,
    ) -> Result<Option<(i64, i64)>, AppError> {
        Ok(None)
    }

    /// Whether a grant in `state` accepts submissions: `active` only (§3).
    fn accepts_submissions(state: GrantState) -> bool {
        state == GrantState::Active
    }

    /// Whether a grant with a repository grant envelope executes: never, as
    /// version 1 is not execution-enabled (§8 fail-closed).
    fn executes_envelope() -> bool {
        false
    }

    /// The receipt a submission would replay: its key's, in its grant
    /// (§3 idempotency).
    async fn receipt(
        conn: &mut AnyConnection,
        grant_id: i64,
        request: &SubmitRequest,
    ) -> Result<Option<Submission>, AppError> {
        Ok(db::submissions::find(conn, grant_id, &request.request_key).await?)
    }

    /// A replay of `receipt` (the Issue `issue` is not written): 409 if its
    /// payload differs from the receipt's stored input, else it writes
    /// nothing. Spec §10: the stored input, decoded, is what a replay is
    /// compared with; the handler decoded this request, so member order,
    /// whitespace and escapes are gone, and a later edit of the Issue does
    /// not reach the receipt's copy of the text.
    async fn replay(
        _conn: &mut AnyConnection,
        _grant_id: i64,
        receipt: &Submission,
        request: &SubmitRequest,
        _issue: &NewIssue<'_>,
    ) -> Result<(), AppError> {
        if receipt.title != request.title || receipt.body != request.body {
            return Err(key_reused());
        }
        Ok(())
    }

    /// The number a receipt's Issue address ends in: the Issue's index in
    /// its repository, not its id (§3 `html_url`).
    fn issue_number(_issue_id: i64, index: i64) -> i64 {
        index
    }

    /// What a stored submission leaves besides its receipt: nothing (§3).
    fn after_submitted(_grant_id: i64, _request: &SubmitRequest) {}

    /// Where a receipt reads its Issue as being: where it is now, as a
    /// receipt's status is computed at read time (§3 `status`).
    fn read_back(_grant_id: i64, _key: &str, now: Option<(i64, i64)>) -> Option<(i64, i64)> {
        now
    }
}

/// The contract at every edge.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Honest;

impl Edges for Honest {}
