//! The service's faults: [`Bent`] answers each edge of the service's rules
//! (`service::edges`) as the active fault bends it, and honestly otherwise.
//! Each override names the faults it serves.

use sqlx::AnyConnection;

use crate::db::{self, oauth::CodeRow, users::UserRow};
use crate::domain::grant::GrantState;
use crate::domain::permission::Permission;
use crate::error::AppError;
use crate::service::access;
use crate::service::edges::{Edges, Honest};

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
}
