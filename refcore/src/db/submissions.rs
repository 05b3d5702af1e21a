//! Submission receipts, read together with where their Issue is now.

use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

use crate::domain::json::UserRef;
use crate::domain::submission::Submission;

pub(crate) const SUBMISSION_SELECT: &str = "SELECT s.grant_id, s.request_key, s.title, s.body, \
     s.submitted_by, u.login AS submitter_login, s.issue_id, s.issue_index, s.issue_repo_id, \
     s.issue_html_url, s.created_at, i.repo_id AS now_repo_id, i.idx AS now_index \
     FROM agent_work_submissions s JOIN users u ON u.id = s.submitted_by \
     LEFT JOIN issues i ON i.id = s.issue_id";

pub(crate) fn submission_from(row: &AnyRow) -> Result<Submission, sqlx::Error> {
    let now_repo: Option<i64> = row.try_get("now_repo_id")?;
    let now_index: Option<i64> = row.try_get("now_index")?;
    Ok(Submission {
        grant_id: row.try_get("grant_id")?,
        request_key: row.try_get("request_key")?,
        title: row.try_get("title")?,
        body: row.try_get("body")?,
        submitted_by: UserRef {
            id: row.try_get("submitted_by")?,
            login: row.try_get("submitter_login")?,
        },
        issue_id: row.try_get("issue_id")?,
        issue_index: row.try_get("issue_index")?,
        issue_repo_id: row.try_get("issue_repo_id")?,
        issue_html_url: row.try_get("issue_html_url")?,
        created_at: row.try_get("created_at")?,
        current: now_repo.zip(now_index),
    })
}

/// Finds the receipt of `request_key` in a grant.
pub async fn find(
    conn: &mut AnyConnection,
    grant_id: i64,
    request_key: &str,
) -> Result<Option<Submission>, sqlx::Error> {
    let row = sqlx::query(&format!(
        "{SUBMISSION_SELECT} WHERE s.grant_id = $1 AND s.request_key = $2"
    ))
    .bind(grant_id)
    .bind(request_key)
    .fetch_optional(conn)
    .await?;
    row.as_ref().map(submission_from).transpose()
}

/// Every receipt of a grant, oldest first.
pub async fn for_grant(
    conn: &mut AnyConnection,
    grant_id: i64,
) -> Result<Vec<Submission>, sqlx::Error> {
    let rows = sqlx::query(&format!(
        "{SUBMISSION_SELECT} WHERE s.grant_id = $1 ORDER BY s.id ASC"
    ))
    .bind(grant_id)
    .fetch_all(conn)
    .await?;
    rows.iter().map(submission_from).collect()
}

/// What a new receipt stores.
#[derive(Debug)]
pub struct NewSubmission<'a> {
    /// The grant.
    pub grant_id: i64,
    /// The key.
    pub request_key: &'a str,
    /// Title as submitted.
    pub title: &'a str,
    /// Body as submitted.
    pub body: &'a str,
    /// The bot.
    pub submitted_by: i64,
    /// The Issue made in the same transaction.
    pub issue_id: i64,
    /// Its index.
    pub issue_index: i64,
    /// Its repository.
    pub issue_repo_id: i64,
    /// Its address.
    pub issue_html_url: &'a str,
    /// RFC 3339.
    pub now: &'a str,
}

/// Stores a receipt; a spent key is a unique violation.
pub async fn insert(conn: &mut AnyConnection, new: &NewSubmission<'_>) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO agent_work_submissions (grant_id, request_key, title, body, submitted_by, \
         issue_id, issue_index, issue_repo_id, issue_html_url, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
    )
    .bind(new.grant_id)
    .bind(new.request_key)
    .bind(new.title)
    .bind(new.body)
    .bind(new.submitted_by)
    .bind(new.issue_id)
    .bind(new.issue_index)
    .bind(new.issue_repo_id)
    .bind(new.issue_html_url)
    .bind(new.now)
    .execute(conn)
    .await?;
    Ok(())
}
