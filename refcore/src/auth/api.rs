//! API authentication: `Authorization: token T`, `Bearer T`, or Basic with
//! `login:token` or `login:password` (spec §1). A credential that is present
//! but wrong is always 401, even on routes anonymous callers may use.

use axum::extract::FromRequestParts;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use base64::Engine;

use super::edges::{Edge, Edges};
use super::secrets;
use crate::db::{self, users::UserRow};
use crate::domain::scopes::Scopes;
use crate::error::AppError;
use crate::state::AppState;

/// An authenticated API caller: the user and what the credential allows.
#[derive(Debug, Clone)]
pub struct Caller {
    /// The user.
    pub user: UserRow,
    /// Scopes of the token, or every scope for a password.
    pub scopes: Scopes,
    /// Whether the credential was a password rather than a token.
    pub by_password: bool,
}

impl Caller {
    /// 403 unless the credential holds every scope in `needed`.
    pub fn require(&self, needed: &[&str]) -> Result<(), AppError> {
        for scope in needed {
            if !Edge::holds_scope(&self.scopes, scope) {
                return Err(AppError::forbidden(format!(
                    "token does not have at least one of required scope(s): [{scope}]"
                )));
            }
        }
        Ok(())
    }

    /// 403 unless the caller is a site admin whose credential holds `scope`.
    pub fn require_site_admin(&self, scope: &str) -> Result<(), AppError> {
        if !self.user.is_admin {
            return Err(AppError::forbidden("must be a site administrator"));
        }
        self.require(&[scope])
    }
}

/// A caller who may be anonymous (no `Authorization` header at all).
#[derive(Debug, Clone)]
pub struct MaybeCaller(pub Option<Caller>);

impl FromRequestParts<AppState> for MaybeCaller {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, AppError> {
        let Some(value) = parts.headers.get(AUTHORIZATION) else {
            return Ok(MaybeCaller(None));
        };
        let value = value
            .to_str()
            .map_err(|_| unauthorized())?
            .trim()
            .to_string();
        authenticate(&value, state)
            .await
            .map(|c| MaybeCaller(Some(c)))
    }
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, AppError> {
        match MaybeCaller::from_request_parts(parts, state).await? {
            MaybeCaller(Some(caller)) => Ok(caller),
            MaybeCaller(None) => Err(Edge::no_credential()),
        }
    }
}

fn unauthorized() -> AppError {
    AppError::Unauthorized("invalid credentials".to_string())
}

async fn authenticate(header: &str, state: &AppState) -> Result<Caller, AppError> {
    let (scheme, rest) = header.split_once(' ').ok_or_else(unauthorized)?;
    let rest = rest.trim();
    match Edge::scheme(scheme).as_str() {
        "token" | "bearer" => by_token(rest, None, state).await,
        "basic" => by_basic_header(rest, state).await,
        _ => Err(unauthorized()),
    }
}

/// A Basic credential, `rest` being its base64 `login:secret`.
async fn by_basic_header(rest: &str, state: &AppState) -> Result<Caller, AppError> {
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(rest)
        .map_err(|_| unauthorized())?;
    let decoded = String::from_utf8(decoded).map_err(|_| unauthorized())?;
    let (login, secret) = Edge::basic_pair(&decoded).ok_or_else(unauthorized)?;
    by_basic(login, secret, state).await
}

async fn by_token(token: &str, login: Option<&str>, state: &AppState) -> Result<Caller, AppError> {
    if token.is_empty() || token.contains('\0') {
        return Err(unauthorized());
    }
    let mut conn = state.db.conn().await?;
    let found =
        db::users::token_by_hash(&mut conn, &secrets::sha256_hex(token), db::unix_now()).await?;
    let (token, user) = found.ok_or_else(unauthorized)?;
    if !Edge::token_live(&token, login.is_some()) {
        return Err(unauthorized());
    }
    if let Some(login) = login
        && !login.eq_ignore_ascii_case(&user.login)
    {
        return Err(unauthorized());
    }
    Ok(Caller {
        user,
        scopes: Scopes::from_stored(&token.scopes),
        by_password: false,
    })
}

async fn by_basic(login: &str, secret: &str, state: &AppState) -> Result<Caller, AppError> {
    if secret.len() == 40
        && secret.bytes().all(|b| b.is_ascii_hexdigit())
        && let Ok(caller) = by_token(secret, Some(login), state).await
    {
        return Ok(caller);
    }
    if !Edge::looks_up_login(login) || secret.contains('\0') {
        return Err(unauthorized());
    }
    let user = {
        let mut conn = state.db.conn().await?;
        db::users::by_login(&mut conn, login).await?
    };
    let stored = user.as_ref().and_then(|u| u.password_hash.clone());
    let verified = secrets::verify_password(secret.to_string(), stored).await;
    let user = user.filter(|_| verified).ok_or_else(unauthorized)?;
    Ok(Caller {
        user,
        scopes: Scopes::everything(),
        by_password: true,
    })
}
