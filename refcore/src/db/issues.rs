//! Issues: creation with a fresh per-repository index, reads, deletion and
//! moves between repositories.

use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

use super::edges::{Edge, Edges};

/// An Issue row with its poster's and repository's names.
#[derive(Debug, Clone)]
pub struct IssueRow {
    /// Global id.
    pub id: i64,
    /// Repository id.
    pub repo_id: i64,
    /// Repository owner login.
    pub repo_owner: String,
    /// Repository name.
    pub repo_name: String,
    /// Per-repository index.
    pub index: i64,
    /// Title.
    pub title: String,
    /// Body.
    pub body: String,
    /// Poster id.
    pub poster_id: i64,
    /// Poster login.
    pub poster_login: String,
    /// Set for grant submissions.
    pub grant_id: Option<i64>,
    /// Set for grant submissions.
    pub request_key: Option<String>,
    /// RFC 3339.
    pub created_at: String,
}

const ISSUE_SELECT: &str = "SELECT i.id, i.repo_id, o.login AS repo_owner, r.name AS repo_name, \
     i.idx, i.title, i.body, i.poster_id, p.login AS poster_login, i.grant_id, i.request_key, \
     i.created_at \
     FROM issues i JOIN repositories r ON r.id = i.repo_id JOIN users o ON o.id = r.owner_id \
     JOIN users p ON p.id = i.poster_id";

fn issue_from(row: &AnyRow) -> Result<IssueRow, sqlx::Error> {
    Ok(IssueRow {
        id: row.try_get("id")?,
        repo_id: row.try_get("repo_id")?,
        repo_owner: row.try_get("repo_owner")?,
        repo_name: row.try_get("repo_name")?,
        index: row.try_get("idx")?,
        title: row.try_get("title")?,
        body: row.try_get("body")?,
        poster_id: row.try_get("poster_id")?,
        poster_login: row.try_get("poster_login")?,
        grant_id: row.try_get("grant_id")?,
        request_key: row.try_get("request_key")?,
        created_at: row.try_get("created_at")?,
    })
}

/// What a new Issue needs.
#[derive(Debug)]
pub struct NewIssue<'a> {
    /// Repository.
    pub repo_id: i64,
    /// Poster.
    pub poster_id: i64,
    /// Title.
    pub title: &'a str,
    /// Body.
    pub body: &'a str,
    /// `(grant_id, request_key)` for grant submissions only.
    pub grant: Option<(i64, &'a str)>,
    /// RFC 3339.
    pub now: &'a str,
}

/// Inserts an Issue with the next index of its repository; returns
/// `(id, index)`. Call inside a write transaction.
pub async fn insert(
    conn: &mut AnyConnection,
    new: &NewIssue<'_>,
) -> Result<(i64, i64), sqlx::Error> {
    let index = super::repos::next_issue_index(conn, new.repo_id).await?;
    let row = sqlx::query(
        "INSERT INTO issues (repo_id, idx, title, body, poster_id, grant_id, request_key, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id",
    )
    .bind(new.repo_id)
    .bind(index)
    .bind(new.title)
    .bind(Edge::stored_body(new.body))
    .bind(new.poster_id)
    .bind(new.grant.map(|(g, _)| g))
    .bind(new.grant.map(|(_, k)| k.to_string()))
    .bind(new.now)
    .fetch_one(conn)
    .await?;
    Ok((row.try_get("id")?, index))
}

/// Finds an Issue by repository and index.
pub async fn by_index(
    conn: &mut AnyConnection,
    repo_id: i64,
    index: i64,
) -> Result<Option<IssueRow>, sqlx::Error> {
    let row = sqlx::query(&format!(
        "{ISSUE_SELECT} WHERE i.repo_id = $1 AND i.idx = $2"
    ))
    .bind(repo_id)
    .bind(index)
    .fetch_optional(conn)
    .await?;
    row.as_ref().map(issue_from).transpose()
}

/// Finds an Issue by global id.
pub async fn by_id(conn: &mut AnyConnection, id: i64) -> Result<Option<IssueRow>, sqlx::Error> {
    let row = sqlx::query(&format!("{ISSUE_SELECT} WHERE i.id = $1"))
        .bind(id)
        .fetch_optional(conn)
        .await?;
    row.as_ref().map(issue_from).transpose()
}

/// One page of a repository's Issues, ascending index.
pub async fn page(
    conn: &mut AnyConnection,
    repo_id: i64,
    offset: i64,
    limit: i64,
) -> Result<Vec<IssueRow>, sqlx::Error> {
    let rows = sqlx::query(&format!(
        "{ISSUE_SELECT} WHERE i.repo_id = $1 ORDER BY i.idx ASC LIMIT $2 OFFSET $3"
    ))
    .bind(repo_id)
    .bind(limit)
    .bind(offset)
    .fetch_all(conn)
    .await?;
    rows.iter().map(issue_from).collect()
}

/// How many Issues a repository has.
pub async fn count(conn: &mut AnyConnection, repo_id: i64) -> Result<i64, sqlx::Error> {
    let row = sqlx::query("SELECT COUNT(*) AS n FROM issues WHERE repo_id = $1")
        .bind(repo_id)
        .fetch_one(conn)
        .await?;
    row.try_get("n")
}

/// Replaces an Issue's title and body (an edit through the setup surface).
/// A receipt keeps the text as submitted: it lives in its own row.
pub async fn update_text(
    conn: &mut AnyConnection,
    id: i64,
    title: &str,
    body: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE issues SET title = $1, body = $2 WHERE id = $3")
        .bind(title)
        .bind(body)
        .bind(id)
        .execute(conn)
        .await?;
    Ok(())
}

/// Deletes an Issue. Its receipt, if any, stays: that is the tombstone.
pub async fn delete(conn: &mut AnyConnection, id: i64) -> Result<bool, sqlx::Error> {
    let done = sqlx::query("DELETE FROM issues WHERE id = $1")
        .bind(id)
        .execute(conn)
        .await?;
    Ok(done.rows_affected() == 1)
}

/// Moves an Issue to another repository under that repository's next index.
pub async fn move_to(conn: &mut AnyConnection, id: i64, repo_id: i64) -> Result<i64, sqlx::Error> {
    let index = super::repos::next_issue_index(conn, repo_id).await?;
    sqlx::query("UPDATE issues SET repo_id = $1, idx = $2 WHERE id = $3")
        .bind(repo_id)
        .bind(index)
        .bind(id)
        .execute(conn)
        .await?;
    Ok(index)
}
