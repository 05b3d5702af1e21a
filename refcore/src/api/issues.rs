//! Forgejo-like repository and Issue routes: what the adapter's four public
//! tools use, plus deletion and the admin move of the setup surface.

use axum::Json;
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use super::edges::{Edge, Edges};
use super::pagination;
use crate::auth::{Caller, MaybeCaller};
use crate::domain::json::{IssueJson, RepoJson};
use crate::error::AppError;
use crate::extract::{ApiPath, JsonBody, Params, path_id};
use crate::service::{issues, setup};
use crate::state::AppState;

/// Page size limits shared with the grant list.
const MAX_LIMIT: i64 = 50;
const DEFAULT_LIMIT: i64 = 30;

/// `GET /api/v1/repos/{owner}/{repo}`.
pub async fn repos_get(
    State(state): State<AppState>,
    MaybeCaller(caller): MaybeCaller,
    ApiPath((owner, repo)): ApiPath<(String, String)>,
) -> Result<Json<RepoJson>, AppError> {
    if let Some(c) = &caller {
        c.require(&["read:repository"])?;
    }
    let user = caller.as_ref().map(|c| &c.user);
    Ok(Json(setup::get_repo(&state, user, &owner, &repo).await?))
}

/// `GET /api/v1/repos/{owner}/{repo}/issues?page=&limit=`, ascending index.
pub async fn issues_list(
    State(state): State<AppState>,
    MaybeCaller(caller): MaybeCaller,
    ApiPath((owner, repo)): ApiPath<(String, String)>,
    RawQuery(query): RawQuery,
) -> Result<Response, AppError> {
    if let Some(c) = &caller {
        c.require(&["read:issue"])?;
    }
    let params = Params::from_query(query.as_deref())?;
    let page = params.positive("page")?.unwrap_or(1);
    let limit = params
        .positive("limit")?
        .unwrap_or(DEFAULT_LIMIT)
        .min(MAX_LIMIT);
    let user = caller.as_ref().map(|c| &c.user);
    let (items, total) = issues::list(&state, user, &owner, &repo, page, limit).await?;
    let headers = pagination::headers(
        &format!("{}/api/v1/repos/{owner}/{repo}/issues", state.public_url),
        &[],
        page,
        limit,
        total,
    );
    Ok((headers, Json(items)).into_response())
}

/// `GET /api/v1/repos/{owner}/{repo}/issues/{index}`.
pub async fn issues_get(
    State(state): State<AppState>,
    MaybeCaller(caller): MaybeCaller,
    ApiPath((owner, repo, index)): ApiPath<(String, String, String)>,
) -> Result<Json<IssueJson>, AppError> {
    if let Some(c) = &caller {
        c.require(&["read:issue"])?;
    }
    let index = path_id(&index)?;
    let user = caller.as_ref().map(|c| &c.user);
    let issue = issues::get(&state, user, &owner, &repo, index).await?;
    Ok(Json(issues::to_json(&state, &issue)))
}

/// The ordinary Issue body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateIssueBody {
    title: String,
    #[serde(default)]
    body: String,
}

/// `POST /api/v1/repos/{owner}/{repo}/issues`: never grant-attributed.
pub async fn issues_create(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath((owner, repo)): ApiPath<(String, String)>,
    body: JsonBody,
) -> Result<Response, AppError> {
    caller.require(&["write:issue"])?;
    let body: CreateIssueBody = body.parse()?;
    let issue =
        issues::create(&state, &caller.user, &owner, &repo, &body.title, &body.body).await?;
    Ok((StatusCode::CREATED, Json(issue)).into_response())
}

/// The edit body: either member may be left out (Forgejo's `EditIssueOption`,
/// narrowed to the text).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EditIssueBody {
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    body: Option<String>,
}

/// `PATCH /api/v1/repos/{owner}/{repo}/issues/{index}` (poster or repository
/// admin) → 201 Issue, as Forgejo answers an edit.
pub async fn issues_edit(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath((owner, repo, index)): ApiPath<(String, String, String)>,
    body: JsonBody,
) -> Result<Response, AppError> {
    caller.require(&["write:issue"])?;
    let body: EditIssueBody = body.parse()?;
    let index = path_id(&index)?;
    let issue = issues::edit(
        &state,
        &caller.user,
        &owner,
        &repo,
        index,
        body.title.as_deref(),
        body.body.as_deref(),
    )
    .await?;
    Ok((StatusCode::CREATED, Json(issue)).into_response())
}

/// `DELETE /api/v1/repos/{owner}/{repo}/issues/{index}` (repo or site admin).
pub async fn issues_delete(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath((owner, repo, index)): ApiPath<(String, String, String)>,
) -> Result<StatusCode, AppError> {
    caller.require(&["write:issue"])?;
    let index = path_id(&index)?;
    issues::delete(&state, &caller.user, &owner, &repo, index).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The move body: the target repository.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MoveBody {
    owner: String,
    repo: String,
}

/// `POST /api/v1/admin/issues/{id}/move` (site admin).
pub async fn issues_move(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
    body: JsonBody,
) -> Result<Json<IssueJson>, AppError> {
    Edge::require_mover(&caller)?;
    let body: MoveBody = body.parse()?;
    let id = path_id(&id)?;
    Ok(Json(
        issues::move_issue(&state, &caller.user, id, &body.owner, &body.repo).await?,
    ))
}
