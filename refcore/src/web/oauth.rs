//! The browser half of delegated consent (spec §9): the authorize page and
//! the consent form. A request that fails a rule is a 400 page, never a
//! redirect; only a checked request is sent back to its `redirect_uri`.

use axum::extract::{RawQuery, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Redirect, Response};

use super::edges::{Edge, Edges};
use super::html::{self, escape, hidden};
use super::login::csrf_header;
use super::session::Session;
use crate::domain::oauth::{self as rules, RawRequest};
use crate::error::{AppError, PageError};
use crate::extract::{FormBody, Params};
use crate::service::oauth::{self, Authorization};
use crate::state::AppState;

/// The authorize page's path.
pub const AUTHORIZE_PATH: &str = crate::domain::oauth::AUTHORIZE_PATH;

/// The consent form's action.
pub const GRANT_PATH: &str = "/login/oauth/grant";

/// The request members of a query or form; `with_response_type` is false on
/// the consent form, which does not carry `response_type`.
fn raw_request(params: &Params, with_response_type: bool) -> Result<RawRequest<'_>, AppError> {
    Ok(RawRequest {
        response_type: if with_response_type {
            Some(params.get("response_type")?.unwrap_or(""))
        } else {
            None
        },
        client_id: params.get("client_id")?,
        redirect_uri: params.get("redirect_uri")?,
        state: params.get("state")?,
        code_challenge: params.get("code_challenge")?,
        code_challenge_method: params.get("code_challenge_method")?,
        scope: params.get("scope")?,
    })
}

/// `GET /login/oauth/authorize?response_type=code&client_id&redirect_uri&state&code_challenge&code_challenge_method=S256&scope`:
/// checks the request first (400 page; a query longer than
/// [`rules::MAX_AUTHORIZE_QUERY_BYTES`] too); then, without a signed-in session,
/// 303 to the login page, which comes back here after signing in; with one,
/// the consent page.
pub async fn authorize_show(
    State(state): State<AppState>,
    session: Session,
    RawQuery(query): RawQuery,
) -> Result<Response, PageError> {
    // Longer than any request refcore reads: refused so the way back after
    // signing in (the login form's `redirect_to`) always fits.
    if !rules::query_within_bounds(query.as_deref().unwrap_or("")) {
        return Err(AppError::bad_request("the request is too long").into());
    }
    let params = Params::from_query(query.as_deref())?;
    let authz = oauth::authorize(&state.db, &raw_request(&params, true)?).await?;
    let Some(user) = &session.user else {
        let back = format!("{AUTHORIZE_PATH}?{}", query.unwrap_or_default());
        let back: String = url::form_urlencoded::byte_serialize(back.as_bytes()).collect();
        return Ok(Redirect::to(&format!("/user/login?redirect_to={back}")).into_response());
    };
    let body = consent_form(&authz, &user.login, &session.csrf(&state));
    Ok(html::page(
        &format!("Authorize {}", authz.app.name),
        Some(&user.login),
        &body,
    )
    .into_response())
}

/// The consent page's content: who asks, for whom, for what, and one form
/// with the request and the two answers.
pub(crate) fn consent_form(authz: &Authorization, login: &str, csrf: &str) -> String {
    let request = &authz.request;
    let scopes: String = request
        .scopes
        .names()
        .iter()
        .map(|s| format!("<li><code class=\"oauth-scope\">{}</code></li>", escape(s)))
        .collect();
    let fields = [
        ("_csrf", csrf),
        ("client_id", authz.app.client_id.as_str()),
        ("redirect_uri", request.redirect_uri.as_str()),
        ("state", request.state.as_deref().unwrap_or("")),
        ("code_challenge", request.code_challenge.as_str()),
        ("code_challenge_method", request.code_challenge_method),
        ("scope", request.scope.as_deref().unwrap_or("")),
    ];
    let hidden_fields: String = fields.iter().map(|(n, v)| hidden(n, v)).collect();
    format!(
        "<h1>Authorize <span class=\"oauth-app\">{app}</span></h1>\n\
         <p class=\"oauth-consent\">The application <strong class=\"oauth-app-name\">{app}</strong> \
         asks to act as <span class=\"oauth-user\">{login}</span> with these scopes:</p>\n\
         <ul class=\"oauth-scopes\">{scopes}</ul>\n\
         <p class=\"oauth-note\">It acts as you in ordinary activity; it never approves agent \
         work grants. If you authorize, you will be sent to \
         <code class=\"oauth-redirect-uri\">{redirect}</code>.</p>\n\
         <form method=\"post\" action=\"{GRANT_PATH}\" class=\"oauth-grant\">\n{hidden_fields}\n\
         <button type=\"submit\" name=\"granted\" value=\"true\">Authorize</button>\n\
         <button type=\"submit\" name=\"granted\" value=\"false\">Deny</button>\n</form>",
        app = escape(&authz.app.name),
        login = escape(login),
        redirect = escape(&request.redirect_uri),
    )
}

/// `POST /login/oauth/grant` (`_csrf`, the request, `granted`): `_csrf`
/// first (400), then the signed-in user, then the request again (400 page);
/// `granted=true` → 303 to `redirect_uri?code=…&state=…`, `granted=false` →
/// 303 to `redirect_uri?error=access_denied&state=…`.
pub async fn grant_submit(
    State(state): State<AppState>,
    session: Session,
    headers: HeaderMap,
    FormBody(form): FormBody,
) -> Result<Response, PageError> {
    if Edge::consent_checks_csrf() {
        session.check_csrf(&state, &form, csrf_header(&headers))?;
    }
    let user = match session.user_or_login() {
        Ok(u) => u,
        Err(redirect) => return Ok(redirect.into_response()),
    };
    let authz = oauth::authorize(&state.db, &raw_request(&form, false)?).await?;
    let location = match form.get("granted")? {
        Some("true") => oauth::grant(&state.db, user, &authz, state.oauth_code_ttl).await?,
        Some("false") => oauth::deny(&authz),
        _ => return Err(AppError::bad_request("granted must be true or false").into()),
    };
    Ok(Redirect::to(&location).into_response())
}
