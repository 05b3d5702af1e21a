//! The five native grant routes of spec §3, for the grant's agent only.

use axum::Json;
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use super::edges::{Edge, Edges};
use super::pagination;
use crate::auth::Caller;
use crate::domain::grant::{GrantJson, GrantState, Triple};
use crate::domain::submission::GrantSubmissionJson;
use crate::domain::validate;
use crate::error::AppError;
use crate::extract::{ApiPath, JsonBody, Params, path_id};
use crate::service::agent::{self, SubmitOutcome, SubmitRequest};
use crate::state::AppState;

const READ: &[&str] = &["read:repository"];

/// `GET /api/v1/agent-work-grants?state=&page=&limit=`.
pub async fn grants_list(
    State(state): State<AppState>,
    caller: Caller,
    RawQuery(query): RawQuery,
) -> Result<Response, AppError> {
    caller.require(READ)?;
    let params = Params::from_query(query.as_deref())?;
    let state_param = params.get("state")?.filter(|_| Edge::reads_state_filter());
    let states: Vec<GrantState> = match state_param {
        None => Edge::default_list_states().to_vec(),
        Some("all") => vec![
            GrantState::AwaitingAgent,
            GrantState::AwaitingHuman,
            GrantState::Active,
            GrantState::Revoked,
        ],
        Some(name) => vec![GrantState::parse(name).ok_or_else(|| {
            AppError::bad_request(
                "state must be awaiting_agent, awaiting_human, active, revoked or all",
            )
        })?],
    };
    let page = params.positive("page")?.unwrap_or(1);
    let limit = params.positive("limit")?.unwrap_or(agent::DEFAULT_LIMIT);
    let result = agent::list(&state.db, &caller, &states, page, limit).await?;
    let keep: Vec<(&str, &str)> = state_param.map(|s| ("state", s)).into_iter().collect();
    let headers = pagination::headers(
        &format!("{}/api/v1/agent-work-grants", state.public_url),
        &keep,
        page,
        result.limit,
        result.total,
    );
    Ok((headers, Json(result.grants)).into_response())
}

/// `GET /api/v1/repos/{owner}/{repo}/agent-work-grants/{id}`.
pub async fn grants_get(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath((owner, repo, id)): ApiPath<(String, String, String)>,
) -> Result<Json<GrantJson>, AppError> {
    caller.require(READ)?;
    let id = path_id(&id)?;
    Ok(Json(
        agent::get(&state.db, &caller, &owner, &repo, id).await?,
    ))
}

/// The confirm body: exactly the proposal triple.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfirmBody {
    proposal_schema: String,
    proposal_version: i64,
    proposal_digest: String,
}

/// `POST /api/v1/repos/{owner}/{repo}/agent-work-grants/{id}/confirm`.
pub async fn grants_confirm(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath((owner, repo, id)): ApiPath<(String, String, String)>,
    body: JsonBody,
) -> Result<Json<GrantJson>, AppError> {
    caller.require(Edge::grant_write_scopes())?;
    let body: ConfirmBody = body.parse()?;
    let id = path_id(&id)?;
    let triple = Triple {
        schema: body.proposal_schema,
        version: body.proposal_version,
        digest: body.proposal_digest,
    };
    Ok(Json(
        agent::confirm(&state.db, &caller, &owner, &repo, id, &triple).await?,
    ))
}

/// The submit body: the triple plus `request_key`, `title`, `body`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubmitBody {
    proposal_schema: String,
    proposal_version: i64,
    proposal_digest: String,
    request_key: String,
    title: String,
    body: String,
}

/// `POST /api/v1/repos/{owner}/{repo}/agent-work-grants/{id}/issues`.
pub async fn grants_submit(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath((owner, repo, id)): ApiPath<(String, String, String)>,
    raw: JsonBody,
) -> Result<Response, AppError> {
    caller.require(Edge::grant_write_scopes())?;
    let body: SubmitBody = raw.parse()?;
    validate::request_key(&body.request_key)?;
    validate::title(&body.title)?;
    validate::body(&body.body)?;
    let id = path_id(&id)?;
    let request = SubmitRequest {
        triple: Triple {
            schema: body.proposal_schema,
            version: body.proposal_version,
            digest: body.proposal_digest,
        },
        request_key: body.request_key,
        title: body.title,
        body: body.body,
        raw_digest: Edge::raw_digest(&raw.bytes),
    };
    let (outcome, json) = agent::submit(&state, &caller, &owner, &repo, id, &request).await?;
    let status = match outcome {
        SubmitOutcome::Created => StatusCode::CREATED,
        SubmitOutcome::Replayed => StatusCode::OK,
    };
    Ok((status, Json(json)).into_response())
}

/// `GET /api/v1/repos/{owner}/{repo}/agent-work-grants/{id}/submissions/{key}`.
pub async fn submissions_get(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath((owner, repo, id, key)): ApiPath<(String, String, String, String)>,
) -> Result<Json<GrantSubmissionJson>, AppError> {
    caller.require(READ)?;
    let id = path_id(&id)?;
    Ok(Json(
        agent::submission(&state.db, &caller, &owner, &repo, id, &key).await?,
    ))
}
