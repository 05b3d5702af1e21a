//! Ordinary Issues (never attributed to a grant), reads, deletion and moves.

use super::access;
use super::edges::{Edge, Edges};
use crate::db::{self, issues::IssueRow, users::UserRow};
use crate::domain::json::{IssueGrantJson, IssueJson, IssueRepoJson, UserRef};
use crate::domain::permission::Permission;
use crate::domain::validate;
use crate::error::AppError;
use crate::state::AppState;

/// The Issue JSON of a row.
pub fn to_json(state: &AppState, issue: &IssueRow) -> IssueJson {
    IssueJson {
        id: issue.id,
        index: issue.index,
        number: issue.index,
        title: issue.title.clone(),
        body: issue.body.clone(),
        user: UserRef {
            id: issue.poster_id,
            login: issue.poster_login.clone(),
        },
        html_url: state.issue_url(&issue.repo_owner, &issue.repo_name, issue.index),
        repository_id: issue.repo_id,
        repository: IssueRepoJson {
            id: issue.repo_id,
            full_name: format!("{}/{}", issue.repo_owner, issue.repo_name),
        },
        agent_work_grant: issue.grant_id.zip(issue.request_key.clone()).map(
            |(grant_id, request_key)| IssueGrantJson {
                grant_id,
                request_key,
            },
        ),
        created_at: issue.created_at.clone(),
    }
}

/// Creates an ordinary Issue: `agent_work_grant` stays null whoever posts.
pub async fn create(
    state: &AppState,
    user: &UserRow,
    owner: &str,
    repo: &str,
    title: &str,
    body: &str,
) -> Result<IssueJson, AppError> {
    validate::title(title)?;
    validate::body(body)?;
    let mut tx = state.db.begin_write().await?;
    let repo = access::repo_with(&mut tx, Some(user), owner, repo, Permission::Write).await?;
    let marker = Edge::ordinary_issue_grant(&mut tx, user, repo.id).await?;
    let (id, _) = db::issues::insert(
        &mut tx,
        &db::issues::NewIssue {
            repo_id: repo.id,
            poster_id: user.id,
            title,
            body,
            grant: marker.as_ref().map(|(id, key)| (*id, key.as_str())),
            now: &db::now(),
        },
    )
    .await?;
    let issue = db::issues::by_id(&mut tx, id)
        .await?
        .ok_or_else(|| AppError::Internal("issue vanished in its transaction".into()))?;
    tx.commit().await?;
    Ok(to_json(state, &issue))
}

/// Reads Issue `index` of a repository visible to `user`.
pub async fn get(
    state: &AppState,
    user: Option<&UserRow>,
    owner: &str,
    repo: &str,
    index: i64,
) -> Result<IssueRow, AppError> {
    let mut conn = state.db.conn().await?;
    let (repo, _) = access::visible_repo(&mut conn, user, owner, repo).await?;
    db::issues::by_index(&mut conn, repo.id, index)
        .await?
        .ok_or(AppError::NotFound)
}

/// Edits the title and/or body of Issue `index` (as Forgejo's `PATCH`):
/// its poster or a repository admin may; anyone else who can see it gets
/// 403. Text rules are those of a new Issue. The Issue's grant binding and a
/// submission's stored input never change: a receipt keeps the text as
/// submitted, and replay compares with that (spec §10).
pub async fn edit(
    state: &AppState,
    user: &UserRow,
    owner: &str,
    repo: &str,
    index: i64,
    title: Option<&str>,
    body: Option<&str>,
) -> Result<IssueJson, AppError> {
    if let Some(title) = title {
        validate::title(title)?;
    }
    if let Some(body) = body {
        validate::body(body)?;
    }
    let mut tx = state.db.begin_write().await?;
    let (repo, perm) = access::visible_repo(&mut tx, Some(user), owner, repo).await?;
    let issue = db::issues::by_index(&mut tx, repo.id, index)
        .await?
        .ok_or(AppError::NotFound)?;
    if issue.poster_id != user.id && perm < Edge::edits_others_issues() {
        return Err(AppError::forbidden(
            "only the poster or a repository admin may edit an issue",
        ));
    }
    let (title, body) = (title.unwrap_or(&issue.title), body.unwrap_or(&issue.body));
    db::issues::update_text(&mut tx, issue.id, title, body).await?;
    let edited = db::issues::by_id(&mut tx, issue.id)
        .await?
        .ok_or_else(|| AppError::Internal("issue vanished in its transaction".into()))?;
    tx.commit().await?;
    Ok(to_json(state, &edited))
}

/// One page of a repository's Issues and their total.
pub async fn list(
    state: &AppState,
    user: Option<&UserRow>,
    owner: &str,
    repo: &str,
    page: i64,
    limit: i64,
) -> Result<(Vec<IssueJson>, i64), AppError> {
    let mut conn = state.db.conn().await?;
    let (repo, _) = access::visible_repo(&mut conn, user, owner, repo).await?;
    let total = db::issues::count(&mut conn, repo.id).await?;
    let offset = (page - 1).saturating_mul(limit);
    let rows = db::issues::page(&mut conn, repo.id, offset, limit).await?;
    Ok((rows.iter().map(|i| to_json(state, i)).collect(), total))
}

/// Deletes an Issue (repository or site admin). A receipt pointing at it
/// stays and from now on reads `issue_deleted`.
pub async fn delete(
    state: &AppState,
    user: &UserRow,
    owner: &str,
    repo: &str,
    index: i64,
) -> Result<(), AppError> {
    let mut tx = state.db.begin_write().await?;
    let repo = access::repo_with(&mut tx, Some(user), owner, repo, Edge::deletes_issues()).await?;
    let issue = db::issues::by_index(&mut tx, repo.id, index)
        .await?
        .ok_or(AppError::NotFound)?;
    db::issues::delete(&mut tx, issue.id).await?;
    Edge::after_issue_deleted(&mut tx, issue.id).await?;
    tx.commit().await?;
    Ok(())
}

/// Moves Issue `id` to `owner/repo` (site admin only, checked by the
/// handler); a receipt pointing at it then reads `issue_binding_changed`.
pub async fn move_issue(
    state: &AppState,
    user: &UserRow,
    id: i64,
    owner: &str,
    repo: &str,
) -> Result<IssueJson, AppError> {
    let mut tx = state.db.begin_write().await?;
    let issue = db::issues::by_id(&mut tx, id)
        .await?
        .ok_or(AppError::NotFound)?;
    let target = access::repo_with(&mut tx, Some(user), owner, repo, Permission::Admin).await?;
    Edge::check_issue_mover(&mut tx, user, issue.repo_id).await?;
    if target.id == issue.repo_id {
        return Err(AppError::invalid("the issue is already in that repository"));
    }
    db::issues::move_to(&mut tx, issue.id, target.id).await?;
    let moved = db::issues::by_id(&mut tx, id)
        .await?
        .ok_or_else(|| AppError::Internal("issue vanished in its transaction".into()))?;
    tx.commit().await?;
    Ok(to_json(state, &moved))
}
