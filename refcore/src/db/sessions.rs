//! Browser sessions. Only the SHA-256 of a session id is stored, so a copy
//! of the database does not hand out live sessions.

use sqlx::{AnyConnection, Row};

/// Stores a new session (anonymous when `user_id` is `None`).
pub async fn insert(
    conn: &mut AnyConnection,
    id_hash: &str,
    user_id: Option<i64>,
    now: &str,
    expires_at: i64,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO sessions (id_hash, user_id, created_at, expires_at) VALUES ($1, $2, $3, $4)",
    )
    .bind(id_hash)
    .bind(user_id)
    .bind(now)
    .bind(expires_at)
    .execute(conn)
    .await?;
    Ok(())
}

/// Looks a live session up: `Some(user_id)` (itself optional) if it exists
/// and has not expired at `now_unix`.
pub async fn find(
    conn: &mut AnyConnection,
    id_hash: &str,
    now_unix: i64,
) -> Result<Option<Option<i64>>, sqlx::Error> {
    let row = sqlx::query("SELECT user_id FROM sessions WHERE id_hash = $1 AND expires_at > $2")
        .bind(id_hash)
        .bind(now_unix)
        .fetch_optional(conn)
        .await?;
    match row {
        Some(row) => Ok(Some(row.try_get("user_id")?)),
        None => Ok(None),
    }
}

/// Ends a session.
pub async fn delete(conn: &mut AnyConnection, id_hash: &str) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM sessions WHERE id_hash = $1")
        .bind(id_hash)
        .execute(conn)
        .await?;
    Ok(())
}

/// Deletes every session that expired before `now_unix`.
pub async fn purge_expired(conn: &mut AnyConnection, now_unix: i64) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM sessions WHERE expires_at <= $1")
        .bind(now_unix)
        .execute(conn)
        .await?;
    Ok(())
}
