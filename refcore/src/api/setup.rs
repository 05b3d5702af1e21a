//! The setup surface of spec §5: users, tokens, repositories and
//! collaborators. Site-admin privilege for fixtures only.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use super::edges::{Edge, Edges};
use crate::auth::Caller;
use crate::domain::json::RepoJson;
use crate::domain::permission::Permission;
use crate::error::AppError;
use crate::extract::{ApiPath, JsonBody, path_id};
use crate::service::setup;
use crate::state::AppState;

/// `POST /admin/users` body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateUserBody {
    login: String,
    email: String,
    #[serde(default)]
    password: Option<String>,
    #[serde(default, rename = "type")]
    kind: Option<String>,
}

/// `POST /api/v1/admin/users` → 201 user.
pub async fn users_create(
    State(state): State<AppState>,
    caller: Caller,
    body: JsonBody,
) -> Result<Response, AppError> {
    caller.require_site_admin("write:admin")?;
    let body: CreateUserBody = body.parse()?;
    let kind = body.kind.as_deref().unwrap_or("individual");
    let user = setup::create_user(
        &state.db,
        &body.login,
        &body.email,
        body.password.as_deref(),
        kind,
        false,
    )
    .await?;
    Ok((StatusCode::CREATED, Json(user.to_json())).into_response())
}

/// `POST /users/{login}/tokens` body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateTokenBody {
    name: String,
    scopes: Vec<String>,
}

/// `POST /api/v1/users/{login}/tokens` → 201 `{id, name, sha1, scopes}`.
pub async fn tokens_create(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(login): ApiPath<String>,
    body: JsonBody,
) -> Result<Response, AppError> {
    let target = setup::user_named(&state.db, &login).await?;
    setup::may_manage_tokens(&caller, &target)?;
    let body: CreateTokenBody = body.parse()?;
    let minted = setup::mint_token(&state.db, &target, &body.name, &body.scopes).await?;
    Ok((StatusCode::CREATED, Json(minted)).into_response())
}

/// `DELETE /api/v1/users/{login}/tokens/{id}` → 204.
pub async fn tokens_delete(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath((login, id)): ApiPath<(String, String)>,
) -> Result<StatusCode, AppError> {
    let target = setup::user_named(&state.db, &login).await?;
    setup::may_manage_tokens(&caller, &target)?;
    setup::delete_token(&state.db, &target, path_id(&id)?).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `POST /admin/users/{login}/repos` body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateRepoBody {
    name: String,
    #[serde(default)]
    private: bool,
}

/// `POST /api/v1/admin/users/{login}/repos` → 201 repository.
pub async fn repos_create(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(login): ApiPath<String>,
    body: JsonBody,
) -> Result<Response, AppError> {
    caller.require_site_admin("write:admin")?;
    let body: CreateRepoBody = body.parse()?;
    let owner = setup::user_named(&state.db, &login).await?;
    let repo = setup::create_repo(&state, &owner, &body.name, body.private).await?;
    Ok((StatusCode::CREATED, Json(repo)).into_response())
}

/// `PATCH /repos/{owner}/{repo}` body: only visibility can change.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EditRepoBody {
    private: Option<bool>,
}

/// `PATCH /api/v1/repos/{owner}/{repo}` (repository admin) → 200 repository.
pub async fn repos_edit(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath((owner, repo)): ApiPath<(String, String)>,
    body: JsonBody,
) -> Result<Json<RepoJson>, AppError> {
    caller.require(&["write:repository"])?;
    let body: EditRepoBody = body.parse()?;
    let user = Some(&caller.user);
    let json = match body.private {
        Some(private) => setup::set_private(&state, &caller.user, &owner, &repo, private).await?,
        None => setup::get_repo(&state, user, &owner, &repo).await?,
    };
    Ok(Json(json))
}

/// `PUT /repos/{owner}/{repo}/collaborators/{login}` body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CollaboratorBody {
    #[serde(default)]
    permission: Option<String>,
}

/// `PUT /api/v1/repos/{owner}/{repo}/collaborators/{login}` → 204. An empty
/// body means `write`, as in Forgejo.
pub async fn collaborators_put(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath((owner, repo, login)): ApiPath<(String, String, String)>,
    body: JsonBody,
) -> Result<StatusCode, AppError> {
    Edge::require_collaborator_scope(&caller)?;
    let requested = if body.is_empty() {
        None
    } else {
        body.parse::<CollaboratorBody>()?.permission
    };
    let level = match requested.as_deref() {
        None => Permission::Write,
        Some(name) => Permission::parse(name)
            .ok_or_else(|| AppError::invalid("permission must be read, write or admin"))?,
    };
    setup::set_collaborator(&state.db, &caller.user, &owner, &repo, &login, Some(level)).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `DELETE /api/v1/repos/{owner}/{repo}/collaborators/{login}` → 204.
pub async fn collaborators_delete(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath((owner, repo, login)): ApiPath<(String, String, String)>,
) -> Result<StatusCode, AppError> {
    caller.require(&["write:repository"])?;
    setup::set_collaborator(&state.db, &caller.user, &owner, &repo, &login, None).await?;
    Ok(StatusCode::NO_CONTENT)
}
