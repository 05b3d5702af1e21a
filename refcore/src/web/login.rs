//! Signing in and out, and the home page.

use axum::extract::{RawQuery, State};
use axum::http::header::{LOCATION, SET_COOKIE};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};

use super::edges::{Edge, Edges};
use super::html::{self, escape, hidden};
use super::session::{self, Session};
use crate::auth::secrets;
use crate::db;
use crate::domain::validate;
use crate::error::{AppError, PageError};
use crate::extract::{FormBody, Params};
use crate::state::AppState;

/// The `X-Csrf-Token` header, the alternative to the `_csrf` field.
pub fn csrf_header(headers: &HeaderMap) -> Option<&str> {
    headers.get("x-csrf-token").and_then(|v| v.to_str().ok())
}

/// The notice of a failed login.
pub(crate) const LOGIN_FAILED: &str =
    "Username or password is incorrect, or this account cannot sign in.";

/// The login page's body: the notice of a failed attempt, if any, and the form.
pub(crate) fn login_form(csrf: &str, message: Option<&str>, redirect_to: Option<&str>) -> String {
    let message = message
        .map(|m| format!("<p class=\"flash-error\">{}</p>", escape(m)))
        .unwrap_or_default();
    let redirect_to = redirect_to
        .map(|to| hidden("redirect_to", to))
        .unwrap_or_default();
    format!(
        "<h1>Sign in</h1>{message}\n<form method=\"post\" action=\"/user/login\" class=\"login\">\n{}{redirect_to}\n\
         <label>Username <input type=\"text\" name=\"user_name\" autocomplete=\"username\" required></label>\n\
         <label>Password <input type=\"password\" name=\"password\" autocomplete=\"current-password\" required></label>\n\
         <button type=\"submit\">Sign in</button>\n</form>",
        hidden("_csrf", csrf)
    )
}

/// Where a successful login sends the browser: `redirect_to` when it is a
/// local path (the open-redirect guard of [`validate::is_local_redirect`]),
/// else `/`. A target that fails the guard is dropped, not refused.
fn local_target(redirect_to: Option<&str>) -> Option<&str> {
    redirect_to.filter(|to| validate::is_local_redirect(to))
}

/// `GET /user/login[?redirect_to=/local/path]`: makes sure an (anonymous)
/// session exists so the form can carry a `_csrf` bound to it; a local
/// `redirect_to` rides along in the form. An undecodable query is ignored,
/// as before `redirect_to` existed.
pub async fn login_show(
    State(state): State<AppState>,
    session: Session,
    RawQuery(query): RawQuery,
) -> Result<Response, PageError> {
    let params = Params::from_query(query.as_deref()).unwrap_or_default();
    let redirect_to = local_target(params.get("redirect_to").ok().flatten());
    let (session, cookie) = match session.id {
        Some(_) => (session, None),
        None => {
            let (id, cookie) = session::create(&state, None).await?;
            (
                Session {
                    id: Some(id),
                    user: None,
                },
                Some(cookie),
            )
        }
    };
    let user = session.user.as_ref().map(|u| u.login.as_str());
    let page = html::page(
        "Sign in",
        user,
        &login_form(&session.csrf(&state), None, redirect_to),
    );
    let mut response = page.into_response();
    if let Some(cookie) = cookie
        && let Ok(value) = cookie.parse()
    {
        response.headers_mut().insert(SET_COOKIE, value);
    }
    Ok(response)
}

/// `POST /user/login` (`_csrf`, `user_name`, `password`, optional
/// `redirect_to`): on success a new session id (the anonymous one is
/// discarded) and 303 to the local `redirect_to`, else to `/`.
pub async fn login_submit(
    State(state): State<AppState>,
    session: Session,
    headers: HeaderMap,
    FormBody(form): FormBody,
) -> Result<Response, PageError> {
    if Edge::login_checks_csrf() {
        session.check_csrf(&state, &form, csrf_header(&headers))?;
    }
    let login = form.get("user_name")?.unwrap_or("");
    let password = form.get("password")?.unwrap_or("");
    let redirect_to = local_target(form.get("redirect_to")?);
    let user = if validate::is_name(login) {
        let mut conn = state.db.conn().await?;
        db::users::by_login(&mut conn, login).await?
    } else {
        None
    };
    let stored = user
        .as_ref()
        .filter(|u| !u.is_bot())
        .and_then(|u| u.password_hash.clone());
    let verified = secrets::verify_password(password.to_string(), stored).await;
    let Some(user) = user.filter(|_| verified) else {
        let body = login_form(&session.csrf(&state), Some(LOGIN_FAILED), redirect_to);
        return Ok((StatusCode::UNAUTHORIZED, html::page("Sign in", None, &body)).into_response());
    };
    if let Some(old) = &session.id {
        session::destroy(&state, old).await?;
    }
    let (_, cookie) = session::create(&state, Some(user.id)).await?;
    Ok((
        StatusCode::SEE_OTHER,
        [
            (LOCATION, redirect_to.unwrap_or("/").to_string()),
            (SET_COOKIE, cookie),
        ],
    )
        .into_response())
}

/// `POST /user/logout`: ends the session and clears the cookie.
pub async fn logout_submit(
    State(state): State<AppState>,
    session: Session,
    headers: HeaderMap,
    FormBody(form): FormBody,
) -> Result<Response, PageError> {
    if Edge::logout_checks_csrf() {
        session.check_csrf(&state, &form, csrf_header(&headers))?;
    }
    if let Some(id) = &session.id
        && Edge::logout_ends_session()
    {
        session::destroy(&state, id).await?;
    }
    let cookie = session::set_cookie(&state, "", Some(0));
    Ok((
        StatusCode::SEE_OTHER,
        [(LOCATION, "/user/login".to_string()), (SET_COOKIE, cookie)],
    )
        .into_response())
}

/// The home page's body for a signed-in person: who, and the logout form.
pub(crate) fn home_body(login: &str, csrf: &str) -> String {
    format!(
        "<h1>refcore</h1>\n<p>Signed in as <span class=\"home-user\">{}</span>.</p>\n\
         <form method=\"post\" action=\"/user/logout\" class=\"logout\">{}<button type=\"submit\">Sign out</button></form>",
        escape(login),
        hidden("_csrf", csrf)
    )
}

/// `GET /`: who is signed in, and the sign-out form.
pub async fn home_show(
    State(state): State<AppState>,
    session: Session,
) -> Result<Response, PageError> {
    let Some(user) = &session.user else {
        let body = "<h1>refcore</h1><p><a href=\"/user/login\">Sign in</a></p>";
        return Ok(html::page("Home", None, body).into_response());
    };
    let body = home_body(&user.login, &session.csrf(&state));
    Ok(html::page("Home", Some(&user.login), &body).into_response())
}

/// The fallback for unknown browser paths.
pub async fn not_found_page() -> PageError {
    PageError(AppError::NotFound)
}
