//! The service's faults: [`Bent`] answers each edge of the service's rules
//! (`service::edges`) as the active fault bends it, and honestly otherwise.
//! Each override names the faults it serves.

use sqlx::AnyConnection;

use serde_json::Value;

use crate::db::{self, Db, oauth::CodeRow, repos::RepoRow, users::UserRow};
use crate::domain::envelope::{self, Envelope};
use crate::domain::grant::{Grant, GrantState, Transition};
use crate::domain::permission::Permission;
use crate::error::AppError;
use crate::service::access;
use crate::service::edges::{Edges, Honest};
use crate::service::human::{Preparation, stale};

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
            db::submissions::delete_for_issue(conn, issue_id).await?;
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
            return db::oauth::peek_code(conn, code_hash).await;
        }
        Honest::redeem_code(conn, code_hash).await
    }

    /// `write-collaborator-administers-grants`.
    fn administers_grants(perm: Permission) -> bool {
        (fault!(WriteCollaboratorAdministersGrants) && perm >= Permission::Write)
            || Honest::administers_grants(perm)
    }

    /// `envelope-adopted-from-task`: the task's, else the summary's.
    fn envelope_in_prose(form: &Preparation<'_>) -> Option<Envelope> {
        if fault!(EnvelopeAdoptedFromTask) {
            return found_in_text(form.task).or_else(|| found_in_text(form.summary));
        }
        Honest::envelope_in_prose(form)
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
}

/// How long the `concurrent-decisions-both-apply` fault waits between its
/// unlocked check and its write: wide enough that both forms of a
/// simultaneous pair pass the check, so the fault shows on every run.
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
