//! Browser sessions: an opaque random id in an `HttpOnly; SameSite=Lax`
//! cookie, stored server-side as its SHA-256. Only this cookie authenticates
//! pages; an `Authorization` header (a bot's token) is ignored here.

use axum::extract::FromRequestParts;
use axum::http::header::COOKIE;
use axum::http::request::Parts;
use axum::response::Redirect;

use super::csrf;
use super::edges::{Edge, Edges};
use crate::auth::secrets;
use crate::db::{self, users::UserRow};
use crate::error::{AppError, PageError};
use crate::extract::Params;
use crate::state::AppState;

/// The cookie's name.
pub const COOKIE_NAME: &str = "refcore_session";
/// Sessions live one day.
const SESSION_SECS: i64 = 24 * 3600;

/// The request's session, if its cookie names a live one.
#[derive(Debug, Clone)]
pub struct Session {
    /// The raw session id (the cookie value); `None` without a live session.
    pub id: Option<String>,
    /// The signed-in human, if any. Bots never have sessions.
    pub user: Option<UserRow>,
}

fn cookie_value(parts: &Parts) -> Option<String> {
    for header in parts.headers.get_all(COOKIE) {
        let Ok(text) = header.to_str() else { continue };
        for pair in text.split(';').take(Edge::cookie_pairs()) {
            if let Some((name, value)) = pair.trim().split_once('=')
                && name == COOKIE_NAME
                && value.len() == 64
                && value.bytes().all(|b| b.is_ascii_hexdigit())
            {
                return Some(value.to_string());
            }
        }
    }
    None
}

impl FromRequestParts<AppState> for Session {
    type Rejection = PageError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, PageError> {
        if let Some(user) = Edge::signed_in_otherwise(parts, state).await? {
            return Ok(Session {
                id: None,
                user: Some(user),
            });
        }
        let Some(id) = cookie_value(parts) else {
            return Ok(Session {
                id: None,
                user: None,
            });
        };
        let mut conn = state.db.conn().await?;
        let found =
            db::sessions::find(&mut conn, &secrets::sha256_hex(&id), db::unix_now()).await?;
        let Some(user_id) = found else {
            return Ok(Session {
                id: None,
                user: None,
            });
        };
        let user = match user_id {
            Some(uid) => db::users::by_id(&mut conn, uid)
                .await?
                .filter(|u| !u.is_bot()),
            None => None,
        };
        Ok(Session { id: Some(id), user })
    }
}

impl Session {
    /// The signed-in human, or a redirect to the login page.
    pub fn user_or_login(&self) -> Result<&UserRow, Redirect> {
        self.user
            .as_ref()
            .ok_or_else(|| Redirect::to("/user/login"))
    }

    /// A fresh `_csrf` token for this session (empty without a session).
    pub fn csrf(&self, state: &AppState) -> String {
        match &self.id {
            Some(id) => csrf::issue(&state.secret_key, id, db::unix_now()),
            None => String::new(),
        }
    }

    /// 400 unless the form's `_csrf` (or the `X-Csrf-Token` header) is a
    /// live token of this session.
    pub fn check_csrf(
        &self,
        state: &AppState,
        form: &Params,
        header: Option<&str>,
    ) -> Result<(), PageError> {
        let (token, from_header) = match form.get("_csrf")? {
            Some(t) => (Some(t.to_string()), false),
            None => (header.map(str::to_string), true),
        };
        let ttl = Edge::csrf_ttl(state.csrf_ttl);
        let ok = match (&self.id, token) {
            (Some(id), Some(token)) => {
                csrf::verify(&state.secret_key, id, &token, db::unix_now(), ttl)
                    || Edge::csrf_of_another_session_passes(&token, from_header, ttl)
            }
            _ => false,
        };
        if ok
            || !Edge::csrf_required()
            || Edge::csrf_without_session_passes(self.id.is_none() && self.user.is_some())
        {
            return Ok(());
        }
        Err(AppError::bad_request(
            "The form's security token is missing, expired or belongs to another session. \
             Reload the page and try again.",
        )
        .into())
    }
}

/// Creates a session and returns its raw id and the `Set-Cookie` value.
pub async fn create(state: &AppState, user_id: Option<i64>) -> Result<(String, String), AppError> {
    let id = secrets::random_hex(32);
    let mut conn = state.db.conn().await?;
    // Creation is rare (login page, login): a good moment to drop the dead.
    db::sessions::purge_expired(&mut conn, db::unix_now()).await?;
    db::sessions::insert(
        &mut conn,
        &secrets::sha256_hex(&id),
        user_id,
        &db::now(),
        db::unix_now() + SESSION_SECS,
    )
    .await?;
    let cookie = set_cookie(state, &id, None);
    Ok((id, cookie))
}

/// Ends a session.
pub async fn destroy(state: &AppState, id: &str) -> Result<(), AppError> {
    let mut conn = state.db.conn().await?;
    db::sessions::delete(&mut conn, &secrets::sha256_hex(id)).await?;
    Ok(())
}

/// A `Set-Cookie` value; `max_age` `Some(0)` clears the cookie.
pub fn set_cookie(state: &AppState, value: &str, max_age: Option<i64>) -> String {
    let secure = if state.public_url.starts_with("https://") {
        "; Secure"
    } else {
        ""
    };
    let age = max_age
        .map(|a| format!("; Max-Age={a}"))
        .unwrap_or_default();
    format!("{COOKIE_NAME}={value}; Path=/; HttpOnly; SameSite=Lax{secure}{age}")
}
