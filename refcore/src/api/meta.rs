//! Version, health and the OpenAPI document.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};

use crate::state::AppState;

/// The OpenAPI 3.1 document, maintained by hand next to the routes; a test
/// checks that every operation in it is routed.
pub const OPENAPI: &str = include_str!("../openapi.json");

/// The optional extensions refcore supports beyond the contract, as it
/// declares them to a gate (`docs/contract.md`, "Extensions"): the
/// `CORE_CSRF_TTL_SECS` launch variable, the `PATCH
/// /api/v1/repos/{owner}/{repo}` `{private}` setup route (`repo-visibility`),
/// the `PATCH …/issues/{index}` `{title?, body?}` edit (`issue-edit`) and
/// `DELETE /api/v1/users/{login}/tokens/{id}` (`token-delete`), and the
/// `CORE_OAUTH_CODE_TTL_SECS` launch variable (lifetime of an OAuth
/// authorization code, spec §9).
pub const EXTENSIONS: &[&str] = &[
    "CORE_CSRF_TTL_SECS",
    "CORE_OAUTH_CODE_TTL_SECS",
    "repo-visibility",
    "issue-edit",
    "token-delete",
];

/// `GET /api/v1/version`.
pub async fn version_get(State(state): State<AppState>) -> Json<serde_json::Value> {
    Json(serde_json::json!({
        "version": env!("CARGO_PKG_VERSION"),
        "contract": "agent_work_grant.v1",
        "database": state.db.backend().name(),
        "extensions": EXTENSIONS,
    }))
}

/// `GET /api/healthz`: 200 when the database answers (migrations ran before
/// the listener opened), 503 otherwise.
pub async fn healthz_get(State(state): State<AppState>) -> Response {
    if state.db.ping().await {
        (StatusCode::OK, Json(serde_json::json!({"status": "pass"}))).into_response()
    } else {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(serde_json::json!({"status": "fail"})),
        )
            .into_response()
    }
}

/// `GET /api/v1/openapi.json`.
pub async fn openapi_get() -> Response {
    ([(CONTENT_TYPE, "application/json")], OPENAPI).into_response()
}
