//! The agent's side of a grant (spec §3). Every call rechecks, at that
//! moment, the token's scopes (in the handler), the bot's permission on the
//! repository, and the grant's state.

use sqlx::AnyConnection;

use super::edges::{Edge, Edges};
pub use super::model::SubmitRequest;
use crate::auth::Caller;
use crate::db::{self, Db};
use crate::domain::grant::{Grant, GrantJson, GrantState, Triple};
use crate::domain::permission::Permission;
use crate::domain::submission::{GrantSubmissionJson, Submission};
use crate::domain::validate;
use crate::error::AppError;
use crate::state::AppState;

/// Largest page the list serves; larger requests are clamped.
pub const MAX_LIMIT: i64 = 50;
/// Page size when the caller names none.
pub const DEFAULT_LIMIT: i64 = 30;

/// Loads a grant the caller may act on as its agent: 404 unless the
/// repository is visible to the caller, the grant belongs to it and the
/// caller is the grant's agent; then 403 unless the permission reaches
/// `needed`. `lock` is the row-lock suffix inside write transactions.
pub(crate) async fn agent_grant(
    conn: &mut AnyConnection,
    caller: &Caller,
    owner: &str,
    repo: &str,
    grant_id: i64,
    needed: Permission,
    lock: &str,
) -> Result<Grant, AppError> {
    let (repo, perm) = Edge::agent_repo(conn, &caller.user, owner, repo).await?;
    let grant = db::grants::by_id(conn, grant_id, lock)
        .await?
        .filter(|g| Edge::reaches_grant(g, repo.id, &caller.user, needed, perm))
        .ok_or(AppError::NotFound)?;
    if perm < needed {
        return Err(AppError::forbidden(
            "write permission on the repository is required",
        ));
    }
    Ok(grant)
}

/// `GET /repos/{owner}/{repo}/agent-work-grants/{id}`.
pub async fn get(
    db: &Db,
    caller: &Caller,
    owner: &str,
    repo: &str,
    grant_id: i64,
) -> Result<GrantJson, AppError> {
    let mut conn = db.conn().await?;
    let grant = agent_grant(
        &mut conn,
        caller,
        owner,
        repo,
        grant_id,
        Permission::Read,
        "",
    )
    .await?;
    Ok(grant.to_json())
}

/// One page of the caller's grants and the total behind it.
#[derive(Debug)]
pub struct GrantPage {
    /// The grants on this page.
    pub grants: Vec<GrantJson>,
    /// How many match in all.
    pub total: i64,
    /// The effective (clamped) page size.
    pub limit: i64,
}

/// `GET /agent-work-grants`: `states` already decoded from `state`.
pub async fn list(
    db: &Db,
    caller: &Caller,
    states: &[GrantState],
    page: i64,
    limit: i64,
) -> Result<GrantPage, AppError> {
    let limit = limit.min(MAX_LIMIT);
    let offset = Edge::pages_before(page).saturating_mul(limit);
    let mut conn = db.conn().await?;
    let user = &caller.user;
    let page =
        db::grants::agent_page(&mut conn, user.id, user.is_admin, states, offset, limit).await?;
    Ok(GrantPage {
        grants: page.grants.iter().map(Grant::to_json).collect(),
        total: page.total,
        limit,
    })
}

/// `POST …/{id}/confirm`: `awaiting_agent` → `awaiting_human`.
pub async fn confirm(
    db: &Db,
    caller: &Caller,
    owner: &str,
    repo: &str,
    grant_id: i64,
    triple: &Triple,
) -> Result<GrantJson, AppError> {
    let mut tx = db.begin_write().await?;
    let grant = agent_grant(
        &mut tx,
        caller,
        owner,
        repo,
        grant_id,
        Permission::Write,
        db.for_update(),
    )
    .await?;
    let Some(next) = Edge::confirmed(&grant, triple)? else {
        return Ok(grant.to_json());
    };
    let now = db::now();
    let applied = db::grants::transition(
        &mut tx,
        grant.id,
        grant.state,
        grant.state_revision,
        next,
        caller.user.id,
        &now,
    )
    .await?;
    if !applied {
        return Err(AppError::conflict("grant changed concurrently"));
    }
    let updated = db::grants::by_id(&mut tx, grant.id, "")
        .await?
        .ok_or(AppError::NotFound)?;
    tx.commit().await?;
    Ok(updated.to_json())
}

/// Whether a submission made a new Issue or replayed a stored one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubmitOutcome {
    /// 201.
    Created,
    /// 200.
    Replayed,
}

/// `POST …/{id}/issues`: in one transaction, either the stored receipt
/// (identical replay), a 409 (same key, different payload), or a new Issue
/// and its receipt. The grant row is locked first, so concurrent identical
/// submissions queue and all but the first see the receipt.
pub async fn submit(
    state: &AppState,
    caller: &Caller,
    owner: &str,
    repo: &str,
    grant_id: i64,
    request: &SubmitRequest,
) -> Result<(SubmitOutcome, GrantSubmissionJson), AppError> {
    let db = &state.db;
    let early_issue =
        Edge::issue_before_lock(state, caller, owner, repo, grant_id, request).await?;
    let mut tx = db.begin_write().await?;
    let grant = agent_grant(
        &mut tx,
        caller,
        owner,
        repo,
        grant_id,
        Permission::Write,
        db.for_update(),
    )
    .await?;
    if !Edge::accepts_submissions(grant.state) {
        return Err(AppError::conflict(format!(
            "grant is {}, only an active grant accepts submissions",
            grant.state.as_str()
        )));
    }
    request.triple.check_against(&grant.digest)?;
    not_enveloped(&grant)?;
    let now = db::now();
    let issue = db::issues::NewIssue {
        repo_id: grant.repo_id,
        poster_id: caller.user.id,
        title: &request.title,
        body: &request.body,
        grant: Some((grant.id, &request.request_key)),
        now: &now,
    };
    if let Some(existing) = Edge::receipt(&mut tx, grant.id, request).await? {
        Edge::replay(&mut tx, grant.id, &existing, request, &issue).await?;
        tx.commit().await?;
        return Ok((SubmitOutcome::Replayed, pair(&grant, &existing)));
    }
    let (issue_id, index) = match early_issue {
        Some(made) => made,
        None => db::issues::insert(&mut tx, &issue).await?,
    };
    let number = Edge::issue_number(issue_id, index);
    let html_url = state.issue_url(&grant.repo_owner, &grant.repo_name, number);
    let inserted = db::submissions::insert(
        &mut tx,
        &db::submissions::NewSubmission {
            grant_id: grant.id,
            request_key: &request.request_key,
            title: &request.title,
            body: &request.body,
            submitted_by: caller.user.id,
            issue_id,
            issue_index: index,
            issue_repo_id: grant.repo_id,
            issue_html_url: &html_url,
            now: &now,
        },
    )
    .await;
    if let Err(err) = inserted {
        // Unreachable while the grant row lock holds; kept honest anyway.
        if db::is_unique_violation(&err) {
            return Err(AppError::conflict("request_key was used concurrently"));
        }
        return Err(err.into());
    }
    let stored = db::submissions::find(&mut tx, grant.id, &request.request_key)
        .await?
        .ok_or_else(|| AppError::Internal("submission vanished in its transaction".into()))?;
    tx.commit().await?;
    Edge::after_submitted(grant.id, request);
    Ok((SubmitOutcome::Created, pair(&grant, &stored)))
}

/// Spec §8 fail-closed: a grant that carries a repository grant envelope
/// is confirmed, approved and withdrawn as usual, but version 1 is not
/// execution-enabled, so every submission to it is 409 and writes nothing.
pub(crate) fn not_enveloped(grant: &Grant) -> Result<(), AppError> {
    if grant.envelope.is_some() && !Edge::executes_envelope() {
        return Err(AppError::conflict(
            "repository_grant is not execution-enabled",
        ));
    }
    Ok(())
}

/// `GET …/{id}/submissions/{request_key}`.
pub async fn submission(
    db: &Db,
    caller: &Caller,
    owner: &str,
    repo: &str,
    grant_id: i64,
    request_key: &str,
) -> Result<GrantSubmissionJson, AppError> {
    let mut conn = db.conn().await?;
    let grant = agent_grant(
        &mut conn,
        caller,
        owner,
        repo,
        grant_id,
        Permission::Read,
        "",
    )
    .await?;
    if !validate::is_request_key(request_key) {
        return Err(AppError::NotFound);
    }
    let mut stored = db::submissions::find(&mut conn, grant.id, request_key)
        .await?
        .ok_or(AppError::NotFound)?;
    stored.current = Edge::read_back(grant.id, request_key, stored.current);
    Ok(pair(&grant, &stored))
}

fn pair(grant: &Grant, submission: &Submission) -> GrantSubmissionJson {
    GrantSubmissionJson {
        grant: grant.to_json(),
        submission: submission.to_json(),
    }
}
