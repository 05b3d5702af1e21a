//! The router: `/api` (JSON, never redirects) and the browser pages.

use std::time::Instant;

use axum::Router;
use axum::extract::{DefaultBodyLimit, Request};
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::{delete, get, post, put};

use crate::api::{grants, issues, meta, oauth, setup};
use crate::error::{AppError, PageError};
use crate::extract::BODY_LIMIT;
use crate::state::AppState;
use crate::web;

/// Builds the whole application for `state`.
pub fn app(state: AppState) -> Router {
    let grant = "/v1/repos/{owner}/{repo}/agent-work-grants/{id}";
    let api = Router::new()
        .route("/healthz", get(meta::healthz_get))
        .route("/v1/version", get(meta::version_get))
        .route("/v1/openapi.json", get(meta::openapi_get))
        .route("/v1/agent-work-grants", get(grants::grants_list))
        .route(grant, get(grants::grants_get))
        .route(&format!("{grant}/confirm"), post(grants::grants_confirm))
        .route(&format!("{grant}/issues"), post(grants::grants_submit))
        .route(
            &format!("{grant}/submissions/{{key}}"),
            get(grants::submissions_get),
        )
        .route(
            "/v1/repos/{owner}/{repo}",
            get(issues::repos_get).patch(setup::repos_edit),
        )
        .route(
            "/v1/repos/{owner}/{repo}/issues",
            get(issues::issues_list).post(issues::issues_create),
        )
        .route(
            "/v1/repos/{owner}/{repo}/issues/{index}",
            get(issues::issues_get)
                .patch(issues::issues_edit)
                .delete(issues::issues_delete),
        )
        .route(
            "/v1/repos/{owner}/{repo}/collaborators/{login}",
            put(setup::collaborators_put).delete(setup::collaborators_delete),
        )
        .route("/v1/admin/users", post(setup::users_create))
        .route("/v1/admin/users/{login}/repos", post(setup::repos_create))
        .route("/v1/admin/issues/{id}/move", post(issues::issues_move))
        .route("/v1/users/{login}/tokens", post(setup::tokens_create))
        .route(
            "/v1/user/applications/oauth2",
            post(oauth::applications_create),
        )
        .route(
            "/v1/users/{login}/tokens/{id}",
            delete(setup::tokens_delete),
        )
        .fallback(api_not_found)
        .method_not_allowed_fallback(api_method_not_allowed);

    let pages = "/{owner}/{repo}/agent-work-grants";
    let router = Router::new()
        .nest("/api", api)
        .route("/", get(web::login::home_show))
        .route(
            "/user/login",
            get(web::login::login_show).post(web::login::login_submit),
        )
        .route("/user/logout", post(web::login::logout_submit))
        .route(web::oauth::AUTHORIZE_PATH, get(web::oauth::authorize_show))
        .route(web::oauth::GRANT_PATH, post(web::oauth::grant_submit))
        .route(
            "/login/oauth/access_token",
            post(oauth::access_token_create),
        )
        .route(
            pages,
            get(web::grants::grants_list_page).post(web::grants::grants_create),
        )
        .route(&format!("{pages}/new"), get(web::grants::grants_new_page))
        .route(
            &format!("{pages}/{{id}}"),
            get(web::grants::grants_show_page),
        )
        .route(
            &format!("{pages}/{{id}}/approve"),
            post(web::grants::grants_approve),
        )
        .route(
            &format!("{pages}/{{id}}/withdraw"),
            post(web::grants::grants_withdraw),
        )
        .route(
            "/{owner}/{repo}/issues/{index}",
            get(web::issues::issues_show_page),
        )
        .fallback(web::login::not_found_page)
        .method_not_allowed_fallback(page_method_not_allowed)
        .layer(DefaultBodyLimit::max(BODY_LIMIT));
    // The faults that only change what a surface sends rewrite its answers.
    #[cfg(feature = "faults")]
    let router = crate::faults::answers::wrap(router);
    crate::hostile::wrap(crate::variants::wrap(router, &state))
        .layer(middleware::from_fn(log_request))
        .with_state(state)
}

async fn api_not_found() -> AppError {
    AppError::NotFound
}

async fn api_method_not_allowed() -> AppError {
    AppError::MethodNotAllowed
}

async fn page_method_not_allowed() -> PageError {
    PageError(AppError::MethodNotAllowed)
}

/// One debug line per request: method, path and status. Never the query,
/// headers or body, which may carry credentials or user text.
async fn log_request(request: Request, next: Next) -> Response {
    let method = request.method().clone();
    let path = request.uri().path().to_string();
    let started = Instant::now();
    let response = next.run(request).await;
    tracing::debug!(%method, %path, status = response.status().as_u16(), elapsed_ms = started.elapsed().as_millis() as u64, "request");
    response
}
