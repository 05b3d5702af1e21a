//! The service's faults: [`Bent`] answers each edge of the service's rules
//! (`service::edges`) as the active fault bends it, and honestly otherwise.
//! Each override names the faults it serves.

use sqlx::AnyConnection;

use serde_json::Value;

use crate::auth::Caller;
use crate::db::{self, Db, issues::NewIssue, oauth::CodeRow, repos::RepoRow, users::UserRow};
use crate::domain::envelope::{self, Envelope};
use crate::domain::grant::{Grant, GrantState, Transition, Triple};
use crate::domain::permission::Permission;
use crate::domain::submission::Submission;
use crate::error::AppError;
use crate::service::access;
use crate::service::agent::{agent_grant, not_enveloped};
use crate::service::edges::{Edges, Honest};
use crate::service::human::stale;
use crate::service::model::{SubmitRequest, key_reused};
use crate::state::AppState;

/// The service's edges in a faults build.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bent;

impl Edges for Bent {
    /// `issue-edit-by-writer`.
    fn edits_others_issues() -> Permission {
        if fault!(IssueEditByWriter) {
            return Permission::Write;
        }
        Honest::edits_others_issues()
    }

    /// `writer-deletes-issues`.
    fn deletes_issues() -> Permission {
        if fault!(WriterDeletesIssues) {
            return Permission::Write;
        }
        Honest::deletes_issues()
    }

    /// `writer-manages-collaborators`.
    fn manages_collaborators() -> Permission {
        if fault!(WriterManagesCollaborators) {
            return Permission::Write;
        }
        Honest::manages_collaborators()
    }

    /// `token-mints-tokens`: the user's own API token too.
    fn manages_own_tokens(by_password: bool) -> bool {
        fault!(TokenMintsTokens) || Honest::manages_own_tokens(by_password)
    }

    /// `client-id-nul-reaches-database` (active on PostgreSQL only).
    fn looks_up_client_id(client_id: &str) -> bool {
        fault!(ClientIdNulReachesDatabase) || Honest::looks_up_client_id(client_id)
    }

    /// `attribution-on-ordinary-issues`: the poster's first active grant in
    /// the repository, with a fresh key.
    async fn ordinary_issue_grant(
        conn: &mut AnyConnection,
        user: &UserRow,
        repo_id: i64,
    ) -> Result<Option<(i64, String)>, AppError> {
        if !fault!(AttributionOnOrdinaryIssues) {
            return Honest::ordinary_issue_grant(conn, user, repo_id).await;
        }
        let active = [GrantState::Active];
        let page = db::grants::agent_page(conn, user.id, user.is_admin, &active, 0, 50).await?;
        Ok(page
            .grants
            .into_iter()
            .find(|g| g.repo_id == repo_id)
            .map(|g| (g.id, uuid::Uuid::new_v4().to_string())))
    }

    /// `deleted-issue-frees-key`: the Issue's receipt goes with it.
    async fn after_issue_deleted(conn: &mut AnyConnection, issue_id: i64) -> Result<(), AppError> {
        if fault!(DeletedIssueFreesKey) {
            super::db::delete_receipts_of_issue(conn, issue_id).await?;
            return Ok(());
        }
        Honest::after_issue_deleted(conn, issue_id).await
    }

    /// `repo-admin-moves-issues`: the handler skipped its site-admin check,
    /// so the caller, who administers the target, must administer the
    /// Issue's repository too.
    async fn check_issue_mover(
        conn: &mut AnyConnection,
        user: &UserRow,
        source_repo_id: i64,
    ) -> Result<(), AppError> {
        if fault!(RepoAdminMovesIssues) && !user.is_admin {
            let source = db::repos::by_id(conn, source_repo_id)
                .await?
                .ok_or(AppError::NotFound)?;
            if access::permission(conn, Some(user), &source).await? < Permission::Admin {
                return Err(AppError::NotFound);
            }
            return Ok(());
        }
        Honest::check_issue_mover(conn, user, source_repo_id).await
    }

    /// `oauth-code-reusable`: the code is read, not spent.
    async fn redeem_code(
        conn: &mut AnyConnection,
        code_hash: &str,
    ) -> Result<Option<CodeRow>, sqlx::Error> {
        if fault!(OauthCodeReusable) {
            return super::db::peek_code(conn, code_hash).await;
        }
        Honest::redeem_code(conn, code_hash).await
    }

    /// `write-collaborator-administers-grants`.
    fn administers_grants(perm: Permission) -> bool {
        (fault!(WriteCollaboratorAdministersGrants) && perm >= Permission::Write)
            || Honest::administers_grants(perm)
    }

    /// `envelope-adopted-from-task`: the task's, else the summary's.
    fn envelope_in_prose(task: &str, summary: &str) -> Option<Envelope> {
        if fault!(EnvelopeAdoptedFromTask) {
            return found_in_text(task).or_else(|| found_in_text(summary));
        }
        Honest::envelope_in_prose(task, summary)
    }

    /// `grant-text-trimmed`.
    fn stored_text(text: &str) -> &str {
        if fault!(GrantTextTrimmed) {
            return text.trim();
        }
        Honest::stored_text(text)
    }

    /// `prepare-accepts-human-agent`.
    fn may_be_agent(user: &UserRow) -> bool {
        fault!(PrepareAcceptsHumanAgent) || Honest::may_be_agent(user)
    }

    /// `concurrent-decisions-both-apply`.
    async fn decided_before_lock(
        db: &Db,
        repo: &RepoRow,
        grant_id: i64,
        revision: i64,
        transition: Transition,
    ) -> Result<Option<GrantState>, AppError> {
        if fault!(ConcurrentDecisionsBothApply) {
            return Ok(Some(
                decision_before_lock(db, repo, grant_id, revision, transition).await?,
            ));
        }
        Honest::decided_before_lock(db, repo, grant_id, revision, transition).await
    }

    /// `grant-forms-any-repository`.
    fn grant_in_repo(grant_repo: i64, repo: i64) -> bool {
        fault!(GrantFormsAnyRepository) || Honest::grant_in_repo(grant_repo, repo)
    }

    /// `stale-revision-accepted`.
    fn revision_current(grant: i64, form: i64) -> bool {
        fault!(StaleRevisionAccepted) || Honest::revision_current(grant, form)
    }

    /// `approve-keeps-state`: the approve answers as usual, unwritten.
    fn writes_decision(transition: Transition) -> bool {
        !(fault!(ApproveKeepsState) && transition == Transition::Approve)
            && Honest::writes_decision(transition)
    }

    /// `approved-by-preparer`.
    fn decided_by(grant: &Grant, user: &UserRow) -> i64 {
        if fault!(ApprovedByPreparer) {
            return grant.prepared_by.id;
        }
        Honest::decided_by(grant, user)
    }

    /// `access-loss-ignored`: the repository by name, write assumed,
    /// whatever the caller's permission is now.
    async fn agent_repo(
        conn: &mut AnyConnection,
        user: &UserRow,
        owner: &str,
        repo: &str,
    ) -> Result<(RepoRow, Permission), AppError> {
        if fault!(AccessLossIgnored) {
            let repo = db::repos::by_name(conn, owner, repo)
                .await?
                .ok_or(AppError::NotFound)?;
            return Ok((repo, Permission::Write));
        }
        Honest::agent_repo(conn, user, owner, repo).await
    }

    /// `grant-repo-unchecked`, `wrong-bot-sees-grant`,
    /// `admin-reads-any-grant` (a read, by a repository admin).
    fn reaches_grant(
        grant: &Grant,
        repo_id: i64,
        user: &UserRow,
        needed: Permission,
        perm: Permission,
    ) -> bool {
        if fault!(GrantRepoUnchecked) {
            return grant.agent.id == user.id;
        }
        let admin_read = needed == Permission::Read && perm == Permission::Admin;
        if fault!(WrongBotSeesGrant) || (fault!(AdminReadsAnyGrant) && admin_read) {
            return grant.repo_id == repo_id;
        }
        Honest::reaches_grant(grant, repo_id, user, needed, perm)
    }

    /// `pagination-off-by-one`.
    fn pages_before(page: i64) -> i64 {
        if fault!(PaginationOffByOne) {
            return page;
        }
        Honest::pages_before(page)
    }

    /// `confirm-twice-accepted` (answered unchanged),
    /// `revoked-grant-accepts-confirm`, `confirm-ignores-triple`.
    fn confirmed(grant: &Grant, triple: &Triple) -> Result<Option<GrantState>, AppError> {
        match grant.state {
            GrantState::AwaitingHuman if fault!(ConfirmTwiceAccepted) => Ok(None),
            GrantState::Revoked if fault!(RevokedGrantAcceptsConfirm) => {
                triple.check_against(&grant.digest)?;
                Ok(Some(GrantState::AwaitingHuman))
            }
            _ if fault!(ConfirmIgnoresTriple) => Ok(Some(Transition::Confirm.apply(grant.state)?)),
            _ => Honest::confirmed(grant, triple),
        }
    }

    /// `concurrent-submits-create-issues`.
    async fn issue_before_lock(
        state: &AppState,
        caller: &Caller,
        owner: &str,
        repo: &str,
        grant_id: i64,
        request: &SubmitRequest,
    ) -> Result<Option<(i64, i64)>, AppError> {
        if fault!(ConcurrentSubmitsCreateIssues) {
            return unlocked_issue(state, caller, owner, repo, grant_id, request).await;
        }
        Honest::issue_before_lock(state, caller, owner, repo, grant_id, request).await
    }

    /// `revoked-grant-accepts-submit`, `submit-before-approval`.
    fn accepts_submissions(state: GrantState) -> bool {
        match state {
            GrantState::Revoked if fault!(RevokedGrantAcceptsSubmit) => true,
            GrantState::AwaitingAgent | GrantState::AwaitingHuman
                if fault!(SubmitBeforeApproval) =>
            {
                true
            }
            _ => Honest::accepts_submissions(state),
        }
    }

    /// `envelope-grant-executes`.
    fn executes_envelope() -> bool {
        fault!(EnvelopeGrantExecutes) || Honest::executes_envelope()
    }

    /// `request-key-global` (the key's oldest receipt in any grant),
    /// `replay-keyed-by-payload` (else this grant's receipt of the same
    /// title and body).
    async fn receipt(
        conn: &mut AnyConnection,
        grant_id: i64,
        request: &SubmitRequest,
    ) -> Result<Option<Submission>, AppError> {
        if fault!(RequestKeyGlobal) {
            return Ok(super::db::receipt_in_any_grant(conn, &request.request_key).await?);
        }
        let found = Honest::receipt(conn, grant_id, request).await?;
        if fault!(ReplayKeyedByPayload) && found.is_none() {
            let receipts = db::submissions::for_grant(conn, grant_id).await?;
            return Ok(receipts
                .into_iter()
                .find(|s| s.title == request.title && s.body == request.body));
        }
        Ok(found)
    }

    /// `replay-compares-live-issue` (the Issue's text now, while it
    /// exists), `replay-compares-raw-bytes` (the first request's bytes,
    /// once recorded), `changed-payload-accepted`; then
    /// `replay-creates-second-issue`, `replay-rewrites-issue`.
    async fn replay(
        conn: &mut AnyConnection,
        grant_id: i64,
        receipt: &Submission,
        request: &SubmitRequest,
        issue: &NewIssue<'_>,
    ) -> Result<(), AppError> {
        if fault!(ReplayComparesLiveIssue)
            && let Some(live) = db::issues::by_id(conn, receipt.issue_id).await?
        {
            let now = Submission {
                title: live.title,
                body: live.body,
                ..receipt.clone()
            };
            return Honest::replay(conn, grant_id, &now, request, issue).await;
        }
        if fault!(ReplayComparesRawBytes)
            && let Some(first) = raw_digests::first(grant_id, &request.request_key)
        {
            if request.raw_digest.as_deref() != Some(first.as_str()) {
                return Err(key_reused());
            }
            return Ok(());
        }
        if fault!(ChangedPayloadAccepted) {
            return Ok(());
        }
        Honest::replay(conn, grant_id, receipt, request, issue).await?;
        if fault!(ReplayCreatesSecondIssue) {
            db::issues::insert(conn, issue).await?;
        }
        if fault!(ReplayRewritesIssue) {
            db::issues::update_text(conn, receipt.issue_id, &request.title, &request.body).await?;
        }
        Ok(())
    }

    /// `receipt-url-by-issue-id`.
    fn issue_number(issue_id: i64, index: i64) -> i64 {
        if fault!(ReceiptUrlByIssueId) {
            return issue_id;
        }
        Honest::issue_number(issue_id, index)
    }

    /// `replay-compares-raw-bytes`: the first request's digest is kept.
    fn after_submitted(grant_id: i64, request: &SubmitRequest) {
        if fault!(ReplayComparesRawBytes)
            && let Some(raw) = &request.raw_digest
        {
            raw_digests::record(grant_id, &request.request_key, raw);
        }
        Honest::after_submitted(grant_id, request);
    }

    /// `readback-status-remembered`: where the Issue was at the key's
    /// first readback.
    fn read_back(grant_id: i64, key: &str, now: Option<(i64, i64)>) -> Option<(i64, i64)> {
        if fault!(ReadbackStatusRemembered) {
            return first_readbacks::remember(grant_id, key, now);
        }
        Honest::read_back(grant_id, key, now)
    }
}

/// How long a race fault (`concurrent-decisions-both-apply`,
/// `concurrent-submits-create-issues`) waits between its unlocked check and
/// its write: wide enough that every request of a simultaneous burst passes
/// the check first, so the fault shows on every run, not by luck.
const RACE_WINDOW: std::time::Duration = std::time::Duration::from_millis(500);

/// For `concurrent-decisions-both-apply` (a real decision compares the
/// revision under the grant lock): the revision and
/// the state are checked on a plain read, and the write that follows applies
/// to whatever the grant is by then. Two forms posted at once with the same
/// `state_revision` then both apply.
async fn decision_before_lock(
    db: &Db,
    repo: &RepoRow,
    grant_id: i64,
    revision: i64,
    transition: Transition,
) -> Result<GrantState, AppError> {
    let mut conn = db.conn().await?;
    let grant = db::grants::by_id(&mut conn, grant_id, "")
        .await?
        .filter(|g| g.repo_id == repo.id)
        .ok_or(AppError::NotFound)?;
    drop(conn);
    if grant.state_revision != revision {
        return Err(stale());
    }
    let next = transition.apply(grant.state)?;
    tokio::time::sleep(RACE_WINDOW).await;
    Ok(next)
}

/// For `envelope-adopted-from-task`: the first valid
/// envelope found in `text` (bare, or as the value of a `repository_grant`
/// member). A real Core never reads prose as authority (spec §8).
fn found_in_text(text: &str) -> Option<Envelope> {
    text.match_indices('{').find_map(|(i, _)| {
        let value = serde_json::Deserializer::from_str(&text[i..])
            .into_iter::<Value>()
            .next()?
            .ok()?;
        let inner = value.get("repository_grant").unwrap_or(&value);
        envelope::from_value(inner).ok()
    })
}

/// Where each key's Issue was at its first readback, in this process's
/// memory: only the `readback-status-remembered` fault records or reads
/// them (a receipt's status is computed at read time).
mod first_readbacks {
    use std::collections::BTreeMap;
    use std::sync::Mutex;

    type Place = Option<(i64, i64)>;
    static FIRST: Mutex<BTreeMap<(i64, String), Place>> = Mutex::new(BTreeMap::new());

    /// The place of the first readback of this key, `now` if this is it.
    pub fn remember(grant: i64, key: &str, now: Place) -> Place {
        let mut first = FIRST.lock().unwrap_or_else(|e| e.into_inner());
        *first.entry((grant, key.to_owned())).or_insert(now)
    }
}

/// The raw-byte digest of each key's first submission, in this process's
/// memory: only the `replay-compares-raw-bytes` fault records or reads them
/// (a replay is compared with the stored, decoded input).
mod raw_digests {
    use std::collections::BTreeMap;
    use std::sync::Mutex;

    static FIRST: Mutex<BTreeMap<(i64, String), String>> = Mutex::new(BTreeMap::new());

    /// Remembers the digest of `key`'s first submission in `grant`.
    pub fn record(grant: i64, key: &str, digest: &str) {
        if let Ok(mut map) = FIRST.lock() {
            map.insert((grant, key.to_owned()), digest.to_owned());
        }
    }

    /// The digest of `key`'s first submission in `grant`, if recorded.
    pub fn first(grant: i64, key: &str) -> Option<String> {
        FIRST.lock().ok()?.get(&(grant, key.to_owned())).cloned()
    }
}

/// For `concurrent-submits-create-issues` (a real submission looks its key
/// up and writes its Issue under the grant lock, in one transaction): the
/// key is looked up without the lock and, when unused, the Issue is written
/// and committed on its own. Concurrent identical submissions then each
/// write an Issue; all but one find the receipt afterwards and answer as
/// replays, leaving their Issues behind.
async fn unlocked_issue(
    state: &AppState,
    caller: &Caller,
    owner: &str,
    repo: &str,
    grant_id: i64,
    request: &SubmitRequest,
) -> Result<Option<(i64, i64)>, AppError> {
    let db = &state.db;
    let mut conn = db.conn().await?;
    let grant = agent_grant(
        &mut conn,
        caller,
        owner,
        repo,
        grant_id,
        Permission::Write,
        "",
    )
    .await?;
    let unused = grant.state == GrantState::Active
        && request.triple.check_against(&grant.digest).is_ok()
        && not_enveloped(&grant).is_ok()
        && db::submissions::find(&mut conn, grant.id, &request.request_key)
            .await?
            .is_none();
    drop(conn);
    if !unused {
        return Ok(None);
    }
    tokio::time::sleep(RACE_WINDOW).await;
    let mut tx = db.begin_write().await?;
    let made = db::issues::insert(
        &mut tx,
        &db::issues::NewIssue {
            repo_id: grant.repo_id,
            poster_id: caller.user.id,
            title: &request.title,
            body: &request.body,
            grant: Some((grant.id, &request.request_key)),
            now: &db::now(),
        },
    )
    .await?;
    tx.commit().await?;
    Ok(Some(made))
}
