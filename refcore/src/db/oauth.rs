//! OAuth applications and authorization codes (spec §9). A code is stored
//! only as its SHA-256 and is deleted by the statement that redeems it, so
//! of two concurrent exchanges exactly one finds it.

use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

/// A registered OAuth application (a public client).
#[derive(Debug, Clone)]
pub struct AppRow {
    /// Id.
    pub id: i64,
    /// The public `client_id`, a UUID.
    pub client_id: String,
    /// Who registered it.
    pub owner_id: i64,
    /// Its name, shown on the consent page.
    pub name: String,
    /// Its redirect URIs, exactly as registered.
    pub redirect_uris: Vec<String>,
    /// Registration time, RFC 3339.
    pub created_at: String,
}

const APP_COLUMNS: &str = "a.id, a.client_id, a.owner_id, a.name, a.redirect_uris, a.created_at";

fn app_from(row: &AnyRow) -> Result<AppRow, sqlx::Error> {
    let uris: String = row.try_get("redirect_uris")?;
    Ok(AppRow {
        id: row.try_get("id")?,
        client_id: row.try_get("client_id")?,
        owner_id: row.try_get("owner_id")?,
        name: row.try_get("name")?,
        redirect_uris: serde_json::from_str(&uris).map_err(|e| sqlx::Error::Decode(e.into()))?,
        created_at: row.try_get("created_at")?,
    })
}

/// Inserts an application; returns its id.
pub async fn insert_app(
    conn: &mut AnyConnection,
    client_id: &str,
    owner_id: i64,
    name: &str,
    redirect_uris: &[String],
    now: &str,
) -> Result<i64, sqlx::Error> {
    let uris = serde_json::to_string(redirect_uris).map_err(|e| sqlx::Error::Encode(e.into()))?;
    let row = sqlx::query(
        "INSERT INTO oauth_applications (client_id, owner_id, name, redirect_uris, created_at) \
         VALUES ($1, $2, $3, $4, $5) RETURNING id",
    )
    .bind(client_id)
    .bind(owner_id)
    .bind(name)
    .bind(uris)
    .bind(now)
    .fetch_one(conn)
    .await?;
    row.try_get("id")
}

/// Finds an application by its `client_id`.
pub async fn app_by_client_id(
    conn: &mut AnyConnection,
    client_id: &str,
) -> Result<Option<AppRow>, sqlx::Error> {
    let row = sqlx::query(&format!(
        "SELECT {APP_COLUMNS} FROM oauth_applications a WHERE a.client_id = $1"
    ))
    .bind(client_id)
    .fetch_optional(conn)
    .await?;
    row.as_ref().map(app_from).transpose()
}

/// Finds an application by id.
pub async fn app_by_id(conn: &mut AnyConnection, id: i64) -> Result<Option<AppRow>, sqlx::Error> {
    let row = sqlx::query(&format!(
        "SELECT {APP_COLUMNS} FROM oauth_applications a WHERE a.id = $1"
    ))
    .bind(id)
    .fetch_optional(conn)
    .await?;
    row.as_ref().map(app_from).transpose()
}

/// What a new authorization code binds.
#[derive(Debug, Clone, Copy)]
pub struct NewCode<'a> {
    /// SHA-256 of the code, hex.
    pub code_hash: &'a str,
    /// The application it is issued to.
    pub app_id: i64,
    /// The consenting user.
    pub user_id: i64,
    /// The exact redirect URI of the request.
    pub redirect_uri: &'a str,
    /// The PKCE challenge.
    pub code_challenge: &'a str,
    /// Its method.
    pub code_challenge_method: &'a str,
    /// Granted scopes, stored form.
    pub scopes: &'a str,
    /// Creation time, RFC 3339.
    pub now: &'a str,
    /// Unix seconds from which it is expired.
    pub expires_at: i64,
}

/// Stores a code.
pub async fn insert_code(conn: &mut AnyConnection, code: &NewCode<'_>) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO oauth_codes (code_hash, app_id, user_id, redirect_uri, code_challenge, \
         code_challenge_method, scopes, created_at, expires_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
    )
    .bind(code.code_hash)
    .bind(code.app_id)
    .bind(code.user_id)
    .bind(code.redirect_uri)
    .bind(code.code_challenge)
    .bind(code.code_challenge_method)
    .bind(code.scopes)
    .bind(code.now)
    .bind(code.expires_at)
    .execute(conn)
    .await?;
    Ok(())
}

/// A stored code.
#[derive(Debug, Clone)]
pub struct CodeRow {
    /// The application it was issued to.
    pub app_id: i64,
    /// The consenting user.
    pub user_id: i64,
    /// The redirect URI it is bound to.
    pub redirect_uri: String,
    /// The PKCE challenge.
    pub code_challenge: String,
    /// Its method.
    pub code_challenge_method: String,
    /// Granted scopes, stored form.
    pub scopes: String,
    /// Unix seconds from which it is expired.
    pub expires_at: i64,
}

pub(crate) const CODE_COLUMNS: &str =
    "app_id, user_id, redirect_uri, code_challenge, code_challenge_method, scopes, expires_at";

pub(crate) fn code_from(row: &AnyRow) -> Result<CodeRow, sqlx::Error> {
    Ok(CodeRow {
        app_id: row.try_get("app_id")?,
        user_id: row.try_get("user_id")?,
        redirect_uri: row.try_get("redirect_uri")?,
        code_challenge: row.try_get("code_challenge")?,
        code_challenge_method: row.try_get("code_challenge_method")?,
        scopes: row.try_get("scopes")?,
        expires_at: row.try_get("expires_at")?,
    })
}

/// Deletes the code and returns what it was: the one statement that spends
/// it. A concurrent second caller waits for the first to commit (SQLite's
/// write lock, PostgreSQL's row lock) and then finds nothing.
pub async fn take_code(
    conn: &mut AnyConnection,
    code_hash: &str,
) -> Result<Option<CodeRow>, sqlx::Error> {
    let row = sqlx::query(&format!(
        "DELETE FROM oauth_codes WHERE code_hash = $1 RETURNING {CODE_COLUMNS}"
    ))
    .bind(code_hash)
    .fetch_optional(conn)
    .await?;
    row.as_ref().map(code_from).transpose()
}

/// Deletes every code that expired at `expired_at` or before.
pub async fn purge_expired_codes(
    conn: &mut AnyConnection,
    expired_at: i64,
) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM oauth_codes WHERE expires_at <= $1")
        .bind(expired_at)
        .execute(conn)
        .await?;
    Ok(())
}
