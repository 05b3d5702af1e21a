//! Delegated consent (spec §9): registering a public client, checking an
//! authorization request, granting or denying it, and exchanging a code for
//! an ordinary access token of the consenting user. The rules are in
//! [`crate::domain::oauth`]; every change is one transaction.

use std::time::Duration;

use super::edges::{Edge, Edges};
use crate::auth::secrets;
use crate::db::{self, Db, oauth::AppRow, users::UserRow};
use crate::domain::oauth::{self, RawRequest, Redemption, Request, StoredCode};
use crate::domain::scopes::Scopes;
use crate::domain::validate;
use crate::error::AppError;

/// Most redirect URIs one application may register.
const MAX_REDIRECT_URIS: usize = 10;

/// Registers a public client for `owner`; its `client_id` is a new UUID.
pub async fn register(
    db: &Db,
    owner: &UserRow,
    name: &str,
    redirect_uris: &[String],
) -> Result<AppRow, AppError> {
    validate::name_label(name)?;
    if redirect_uris.is_empty() || redirect_uris.len() > MAX_REDIRECT_URIS {
        return Err(AppError::invalid("redirect_uris must hold 1-10 URIs"));
    }
    if let Some(i) = redirect_uris
        .iter()
        .position(|u| !oauth::is_registrable_redirect_uri(u))
    {
        return Err(AppError::invalid(format!(
            "redirect_uris[{i}] must be an absolute http(s) URL without a fragment, \
             at most 2048 bytes"
        )));
    }
    let client_id = uuid::Uuid::new_v4().to_string();
    let mut tx = db.begin_write().await?;
    let id = db::oauth::insert_app(
        &mut tx,
        &client_id,
        owner.id,
        name,
        redirect_uris,
        &db::now(),
    )
    .await?;
    let app = db::oauth::app_by_id(&mut tx, id)
        .await?
        .ok_or_else(|| AppError::Internal("application vanished in its transaction".into()))?;
    tx.commit().await?;
    Ok(app)
}

/// A checked authorization request with its application.
#[derive(Debug, Clone)]
pub struct Authorization {
    /// The application asking.
    pub app: AppRow,
    /// The request.
    pub request: Request,
}

/// Checks an authorization request (authorize page and consent form alike):
/// 400 for an unknown client or any rule of [`oauth::check`]. Nothing here
/// redirects: a request that fails is never sent back to its `redirect_uri`.
pub async fn authorize(db: &Db, raw: &RawRequest<'_>) -> Result<Authorization, AppError> {
    let client_id = raw
        .client_id
        .filter(|c| !c.is_empty())
        .ok_or_else(|| AppError::bad_request("client_id is required"))?;
    let app =
        if client_id.len() <= oauth::MAX_CLIENT_ID_BYTES && Edge::looks_up_client_id(client_id) {
            let mut conn = db.conn().await?;
            db::oauth::app_by_client_id(&mut conn, client_id).await?
        } else {
            None
        };
    let app = app.ok_or_else(|| AppError::bad_request("client_id names no application"))?;
    let request = oauth::check(raw, &app.redirect_uris).map_err(AppError::bad_request)?;
    Ok(Authorization { app, request })
}

/// `user` consents: mints a single-use code bound to the client, the user,
/// the redirect URI, the challenge and the scopes, and answers where to send
/// the browser (`redirect_uri?code=…&state=…`). The code has 256 random
/// bits; only its SHA-256 is stored.
pub async fn grant(
    db: &Db,
    user: &UserRow,
    authz: &Authorization,
    ttl: Duration,
) -> Result<String, AppError> {
    let code = secrets::random_hex(32);
    let now = db::unix_now();
    let request = &authz.request;
    let mut tx = db.begin_write().await?;
    // Minting is rarer than reading: a good moment to drop dead codes.
    db::oauth::purge_expired_codes(&mut tx, oauth::expiry_horizon(now)).await?;
    db::oauth::insert_code(
        &mut tx,
        &db::oauth::NewCode {
            code_hash: &secrets::sha256_hex(&code),
            app_id: authz.app.id,
            user_id: user.id,
            redirect_uri: &request.redirect_uri,
            code_challenge: &request.code_challenge,
            code_challenge_method: request.code_challenge_method,
            scopes: &request.scopes.stored(),
            now: &db::now(),
            expires_at: now + ttl.as_secs() as i64,
        },
    )
    .await?;
    tx.commit().await?;
    let mut params = vec![("code", code.as_str())];
    params.extend(request.state.as_deref().map(|s| ("state", s)));
    Ok(oauth::redirect_to_client(&request.redirect_uri, &params))
}

/// `user` declines: where to send the browser
/// (`redirect_uri?error=access_denied&state=…`). Nothing is stored.
pub fn deny(authz: &Authorization) -> String {
    let request = &authz.request;
    let mut params = vec![("error", "access_denied")];
    params.extend(request.state.as_deref().map(|s| ("state", s)));
    oauth::redirect_to_client(&request.redirect_uri, &params)
}

/// A token request of the authorization-code grant, its members present:
/// the code and what redeems it. No `Debug`: the code is a secret.
#[derive(Clone, Copy)]
pub struct TokenRequest<'a> {
    /// `code`.
    pub code: &'a str,
    /// `client_id`, `redirect_uri` and `code_verifier`.
    pub redemption: Redemption<'a>,
}

/// An issued access token: the secret appears only here (and never in its
/// `Debug`).
#[derive(serde::Serialize)]
pub struct IssuedToken {
    /// The secret, used like any other token of its user.
    pub access_token: String,
    /// Always `bearer`.
    pub token_type: &'static str,
    /// Seconds until it stops authenticating.
    pub expires_in: u64,
    /// Its scopes, space-separated.
    pub scope: String,
}

impl std::fmt::Debug for IssuedToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IssuedToken")
            .field("access_token", &"<hidden>")
            .field("token_type", &self.token_type)
            .field("expires_in", &self.expires_in)
            .field("scope", &self.scope)
            .finish()
    }
}

fn invalid_grant() -> AppError {
    AppError::OAuth {
        error: "invalid_grant",
        description: "the code is unknown, already used, expired, or does not match this \
                      client, redirect_uri or code_verifier",
    }
}

/// Exchanges a code for an access token of the consenting user. The code is
/// spent by this attempt whatever its outcome (deleted in the transaction
/// that reads it, committed even when a binding does not match), so of two
/// concurrent exchanges exactly one can succeed, and a stolen code gives a
/// thief one try at most. Every failure is the same `invalid_grant`.
///
/// The lock comes before the read: the transaction is [`Db::begin_write`],
/// which on SQLite holds the write lock from its `BEGIN IMMEDIATE` (tested
/// in `db::pool`), and the read is the `DELETE … RETURNING` of
/// [`db::oauth::take_code`], whose row lock makes a concurrent PostgreSQL
/// exchange wait and then find nothing.
pub async fn exchange(
    db: &Db,
    request: &TokenRequest<'_>,
    token_ttl: Duration,
) -> Result<IssuedToken, AppError> {
    let code_hash = secrets::sha256_hex(request.code);
    let mut tx = db.begin_write().await?;
    let found = Edge::redeem_code(&mut tx, &code_hash).await?;
    let Some(code) = found else {
        return Err(invalid_grant());
    };
    let app = db::oauth::app_by_id(&mut tx, code.app_id)
        .await?
        .ok_or_else(|| AppError::Internal("a code's application vanished".into()))?;
    let now = db::unix_now();
    let redeems = oauth::redeems(
        &StoredCode {
            client_id: &app.client_id,
            redirect_uri: &code.redirect_uri,
            code_challenge: &code.code_challenge,
            code_challenge_method: &code.code_challenge_method,
            expires_at: code.expires_at,
        },
        &request.redemption,
        now,
    );
    if !redeems {
        tx.commit().await?;
        return Err(invalid_grant());
    }
    let scopes = oauth::token_scopes(Scopes::from_stored(&code.scopes));
    let (_, secret) = super::setup::insert_token(
        &mut tx,
        code.user_id,
        &format!("oauth2:{}:{}", app.client_id, secrets::random_hex(8)),
        &scopes,
        Some(now + token_ttl.as_secs() as i64),
    )
    .await?;
    tx.commit().await?;
    Ok(IssuedToken {
        access_token: secret,
        token_type: "bearer",
        expires_in: token_ttl.as_secs(),
        scope: scopes.names().join(" "),
    })
}

#[cfg(test)]
mod tests {
    use super::IssuedToken;

    #[test]
    fn debug_hides_the_token() {
        let token = IssuedToken {
            access_token: "0123456789abcdef".into(),
            token_type: "bearer",
            expires_in: 60,
            scope: "write:issue".into(),
        };
        let shown = format!("{token:?}");
        assert!(!shown.contains("0123456789abcdef"), "{shown}");
        assert!(shown.contains("write:issue"), "{shown}");
    }
}
