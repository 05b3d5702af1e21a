//! The JSON half of delegated consent (spec §9): registering a public client
//! on the setup surface, and the token endpoint, a back-channel POST from
//! the client (no session, no `_csrf`) answered as RFC 6749 §5 says.

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::header::{CACHE_CONTROL, PRAGMA};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use crate::auth::Caller;
use crate::domain::oauth::{GRANT_TYPE, Redemption};
use crate::error::AppError;
use crate::extract::{JsonBody, Params, content_type_is};
use crate::service::oauth::{self, TokenRequest};
use crate::state::AppState;

/// `POST /user/applications/oauth2` body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateApplicationBody {
    name: String,
    redirect_uris: Vec<String>,
    /// Absent means `false`: refcore registers public clients only.
    #[serde(default)]
    confidential_client: bool,
}

/// `POST /api/v1/user/applications/oauth2` (`write:user`) → 201
/// `{id, client_id, name, redirect_uris, confidential_client, created}`.
/// A confidential client is refused with 422: refcore has no client secrets.
pub async fn applications_create(
    State(state): State<AppState>,
    caller: Caller,
    body: JsonBody,
) -> Result<Response, AppError> {
    caller.require(&["write:user"])?;
    let body: CreateApplicationBody = body.parse()?;
    if body.confidential_client {
        return Err(AppError::invalid(
            "confidential_client must be false: only public clients with PKCE are supported",
        ));
    }
    let app = oauth::register(&state.db, &caller.user, &body.name, &body.redirect_uris).await?;
    let json = serde_json::json!({
        "id": app.id,
        "client_id": app.client_id,
        "name": app.name,
        "redirect_uris": app.redirect_uris,
        "confidential_client": false,
        "created": app.created_at,
    });
    Ok((StatusCode::CREATED, Json(json)).into_response())
}

fn invalid_request(description: &'static str) -> AppError {
    AppError::OAuth {
        error: "invalid_request",
        description,
    }
}

/// The one value of `name` in a token request; empty counts as absent, a
/// repeated parameter is `invalid_request` (RFC 6749 §3.2).
fn member<'a>(form: &'a Params, name: &str) -> Result<Option<&'a str>, AppError> {
    match form.get(name) {
        Ok(value) => Ok(value.filter(|v| !v.is_empty())),
        Err(_) => Err(invalid_request("a parameter is given more than once")),
    }
}

/// `POST /login/oauth/access_token`, form `grant_type=authorization_code`,
/// `code`, `redirect_uri`, `client_id`, `code_verifier` → 200
/// `{access_token, token_type: "bearer", expires_in, scope}`, never cached.
/// A body that is not a form, a repeated or missing member →
/// `invalid_request`; another grant type → `unsupported_grant_type`;
/// anything wrong with the code → `invalid_grant`; all 400.
pub async fn access_token_create(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<Bytes, axum::extract::rejection::BytesRejection>,
) -> Result<Response, AppError> {
    let is_form = content_type_is(&headers, "application/x-www-form-urlencoded");
    let body = body.map_err(|_| invalid_request("the request body could not be read"))?;
    if !is_form {
        return Err(invalid_request(
            "the body must be application/x-www-form-urlencoded",
        ));
    }
    let form = Params::from_form(&body)
        .map_err(|_| invalid_request("the form is not valid URL-encoded UTF-8"))?;
    let get = |name: &'static str| member(&form, name);
    let missing = || {
        invalid_request("grant_type, code, redirect_uri, client_id and code_verifier are required")
    };
    match get("grant_type")? {
        None => return Err(missing()),
        Some(GRANT_TYPE) => {}
        Some(_) => {
            return Err(AppError::OAuth {
                error: "unsupported_grant_type",
                description: "only grant_type=authorization_code is supported",
            });
        }
    }
    let request = TokenRequest {
        code: get("code")?.ok_or_else(missing)?,
        redemption: Redemption {
            redirect_uri: get("redirect_uri")?.ok_or_else(missing)?,
            client_id: get("client_id")?.ok_or_else(missing)?,
            code_verifier: get("code_verifier")?.ok_or_else(missing)?,
        },
    };
    let token = oauth::exchange(&state.db, &request, state.oauth_token_ttl).await?;
    Ok((
        StatusCode::OK,
        [(CACHE_CONTROL, "no-store"), (PRAGMA, "no-cache")],
        Json(token),
    )
        .into_response())
}
