//! Users and their access tokens.

use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

use super::edges::{Edge, Edges};

use crate::domain::json::{UserJson, UserRef};

/// A user row.
#[derive(Debug, Clone)]
pub struct UserRow {
    /// Id.
    pub id: i64,
    /// Login as created.
    pub login: String,
    /// E-mail.
    pub email: String,
    /// Argon2 PHC string; `None` means no password login.
    pub password_hash: Option<String>,
    /// `individual` or `bot`.
    pub kind: String,
    /// Site admin.
    pub is_admin: bool,
}

impl UserRow {
    /// `{id, login}`.
    pub fn to_ref(&self) -> UserRef {
        UserRef {
            id: self.id,
            login: self.login.clone(),
        }
    }

    /// Whether this user is a bot.
    pub fn is_bot(&self) -> bool {
        self.kind == "bot"
    }

    /// The admin API's user JSON.
    pub fn to_json(&self) -> UserJson {
        UserJson {
            id: self.id,
            login: self.login.clone(),
            email: self.email.clone(),
            kind: self.kind.clone(),
            is_admin: self.is_admin,
        }
    }
}

const USER_COLUMNS: &str = "u.id, u.login, u.email, u.password_hash, u.kind, u.is_admin";

fn user_from(row: &AnyRow) -> Result<UserRow, sqlx::Error> {
    Ok(UserRow {
        id: row.try_get("id")?,
        login: row.try_get("login")?,
        email: row.try_get("email")?,
        password_hash: row.try_get("password_hash")?,
        kind: row.try_get("kind")?,
        is_admin: row.try_get::<i64, _>("is_admin")? != 0,
    })
}

/// Inserts a user; a taken login surfaces as a unique violation.
pub async fn insert(
    conn: &mut AnyConnection,
    login: &str,
    email: &str,
    password_hash: Option<&str>,
    kind: &str,
    is_admin: bool,
    now: &str,
) -> Result<i64, sqlx::Error> {
    let row = sqlx::query(
        "INSERT INTO users (login, lower_login, email, password_hash, kind, is_admin, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
    )
    .bind(login)
    .bind(login.to_ascii_lowercase())
    .bind(email)
    .bind(password_hash)
    .bind(kind)
    .bind(i64::from(is_admin))
    .bind(now)
    .fetch_one(conn)
    .await?;
    row.try_get("id")
}

/// Finds a user by login, case-insensitively as Forgejo does.
pub async fn by_login(
    conn: &mut AnyConnection,
    login: &str,
) -> Result<Option<UserRow>, sqlx::Error> {
    let row = sqlx::query(&format!(
        "SELECT {USER_COLUMNS} FROM users u WHERE u.lower_login = $1"
    ))
    .bind(login.to_ascii_lowercase())
    .fetch_optional(conn)
    .await?;
    row.as_ref().map(user_from).transpose()
}

/// Finds a user by id.
pub async fn by_id(conn: &mut AnyConnection, id: i64) -> Result<Option<UserRow>, sqlx::Error> {
    let row = sqlx::query(&format!(
        "SELECT {USER_COLUMNS} FROM users u WHERE u.id = $1"
    ))
    .bind(id)
    .fetch_optional(conn)
    .await?;
    row.as_ref().map(user_from).transpose()
}

/// A stored token (the secret itself is never stored).
#[derive(Debug, Clone)]
pub struct TokenRow {
    /// Token id.
    pub id: i64,
    /// Its name.
    pub name: String,
    /// Stored scopes (see [`crate::domain::scopes::Scopes::stored`]).
    pub scopes: String,
}

/// What a new token row holds besides its owner.
#[derive(Debug, Clone, Copy)]
pub struct NewToken<'a> {
    /// Its name, unique per user.
    pub name: &'a str,
    /// The SHA-256 of its secret.
    pub token_hash: &'a str,
    /// Stored scopes (see [`crate::domain::scopes::Scopes::stored`]).
    pub scopes: &'a str,
    /// Creation time, RFC 3339.
    pub now: &'a str,
    /// Unix seconds after which it no longer authenticates; `None` never.
    pub expires_at: Option<i64>,
}

/// Inserts a token; a name the user already used is a unique violation.
pub async fn insert_token(
    conn: &mut AnyConnection,
    user_id: i64,
    token: &NewToken<'_>,
) -> Result<i64, sqlx::Error> {
    let row = sqlx::query(
        "INSERT INTO access_tokens (user_id, name, token_hash, scopes, created_at, expires_at) \
         VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
    )
    .bind(user_id)
    .bind(token.name)
    .bind(token.token_hash)
    .bind(token.scopes)
    .bind(token.now)
    .bind(token.expires_at)
    .fetch_one(conn)
    .await?;
    row.try_get("id")
}

/// Finds a live token by the SHA-256 of its secret, with its owner: one
/// that expired at `now_unix` is no token.
pub async fn token_by_hash(
    conn: &mut AnyConnection,
    token_hash: &str,
    now_unix: i64,
) -> Result<Option<(TokenRow, UserRow)>, sqlx::Error> {
    let row = sqlx::query(&format!(
        "SELECT t.id AS token_id, t.name AS token_name, t.scopes AS token_scopes, {USER_COLUMNS} \
         FROM access_tokens t JOIN users u ON u.id = t.user_id \
         WHERE t.token_hash = $1 AND (t.expires_at IS NULL OR t.expires_at > $2)"
    ))
    .bind(token_hash)
    .bind(now_unix)
    .fetch_optional(conn)
    .await?;
    match row {
        Some(row) => Ok(Some((
            TokenRow {
                id: row.try_get("token_id")?,
                name: row.try_get("token_name")?,
                scopes: row.try_get("token_scopes")?,
            },
            user_from(&row)?,
        ))),
        None => Ok(None),
    }
}

/// Deletes one of a user's tokens; false when there was none.
pub async fn delete_token(
    conn: &mut AnyConnection,
    user_id: i64,
    token_id: i64,
) -> Result<bool, sqlx::Error> {
    let done = sqlx::query(Edge::delete_token())
        .bind(user_id)
        .bind(token_id)
        .execute(conn)
        .await?;
    Ok(done.rows_affected() == 1)
}
