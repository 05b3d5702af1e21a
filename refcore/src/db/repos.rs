//! Repositories, collaborators and the per-repository Issue index counter.

use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

use super::edges::{Edge, Edges};
use crate::domain::permission::Permission;

/// A repository row with its owner's login.
#[derive(Debug, Clone)]
pub struct RepoRow {
    /// Id.
    pub id: i64,
    /// Owner id.
    pub owner_id: i64,
    /// Owner login.
    pub owner_login: String,
    /// Name as created.
    pub name: String,
    /// Visibility.
    pub private: bool,
}

impl RepoRow {
    /// `owner/name`.
    pub fn full_name(&self) -> String {
        format!("{}/{}", self.owner_login, self.name)
    }
}

const REPO_SELECT: &str = "SELECT r.id, r.owner_id, u.login AS owner_login, r.name, r.private \
     FROM repositories r JOIN users u ON u.id = r.owner_id";

fn repo_from(row: &AnyRow) -> Result<RepoRow, sqlx::Error> {
    Ok(RepoRow {
        id: row.try_get("id")?,
        owner_id: row.try_get("owner_id")?,
        owner_login: row.try_get("owner_login")?,
        name: row.try_get("name")?,
        private: row.try_get::<i64, _>("private")? != 0,
    })
}

/// Finds `owner/name`, case-insensitively.
pub async fn by_name(
    conn: &mut AnyConnection,
    owner: &str,
    name: &str,
) -> Result<Option<RepoRow>, sqlx::Error> {
    let row = sqlx::query(&format!(
        "{REPO_SELECT} WHERE u.lower_login = $1 AND r.lower_name = $2"
    ))
    .bind(owner.to_ascii_lowercase())
    .bind(name.to_ascii_lowercase())
    .fetch_optional(conn)
    .await?;
    row.as_ref().map(repo_from).transpose()
}

/// Finds a repository by id.
pub async fn by_id(conn: &mut AnyConnection, id: i64) -> Result<Option<RepoRow>, sqlx::Error> {
    let row = sqlx::query(&format!("{REPO_SELECT} WHERE r.id = $1"))
        .bind(id)
        .fetch_optional(conn)
        .await?;
    row.as_ref().map(repo_from).transpose()
}

/// Creates a repository; a taken name is a unique violation.
pub async fn insert(
    conn: &mut AnyConnection,
    owner_id: i64,
    name: &str,
    private: bool,
    now: &str,
) -> Result<i64, sqlx::Error> {
    let row = sqlx::query(
        "INSERT INTO repositories (owner_id, name, lower_name, private, created_at) \
         VALUES ($1, $2, $3, $4, $5) RETURNING id",
    )
    .bind(owner_id)
    .bind(name)
    .bind(name.to_ascii_lowercase())
    .bind(i64::from(private))
    .bind(now)
    .fetch_one(conn)
    .await?;
    row.try_get("id")
}

/// Changes visibility.
pub async fn set_private(
    conn: &mut AnyConnection,
    repo_id: i64,
    private: bool,
) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE repositories SET private = $1 WHERE id = $2")
        .bind(i64::from(private))
        .bind(repo_id)
        .execute(conn)
        .await?;
    Ok(())
}

/// The collaborator level of a user, if any.
pub async fn collaborator(
    conn: &mut AnyConnection,
    repo_id: i64,
    user_id: i64,
) -> Result<Option<Permission>, sqlx::Error> {
    let row =
        sqlx::query("SELECT permission FROM collaborators WHERE repo_id = $1 AND user_id = $2")
            .bind(repo_id)
            .bind(user_id)
            .fetch_optional(conn)
            .await?;
    match row {
        Some(row) => Ok(Permission::parse(&row.try_get::<String, _>("permission")?)),
        None => Ok(None),
    }
}

/// Adds or changes a collaborator (upsert works on both backends).
pub async fn set_collaborator(
    conn: &mut AnyConnection,
    repo_id: i64,
    user_id: i64,
    permission: Permission,
) -> Result<(), sqlx::Error> {
    let on_conflict = Edge::collaborator_again();
    sqlx::query(&format!(
        "INSERT INTO collaborators (repo_id, user_id, permission) VALUES ($1, $2, $3) \
         ON CONFLICT (repo_id, user_id) {on_conflict}"
    ))
    .bind(repo_id)
    .bind(user_id)
    .bind(permission.name())
    .execute(conn)
    .await?;
    Ok(())
}

/// Removes a collaborator; false when there was none.
pub async fn remove_collaborator(
    conn: &mut AnyConnection,
    repo_id: i64,
    user_id: i64,
) -> Result<bool, sqlx::Error> {
    let done = sqlx::query("DELETE FROM collaborators WHERE repo_id = $1 AND user_id = $2")
        .bind(repo_id)
        .bind(user_id)
        .execute(conn)
        .await?;
    Ok(done.rows_affected() == 1)
}

/// Allocates the next Issue index. The `UPDATE` locks the repository row
/// until the transaction ends, so concurrent Issues in one repository get
/// distinct indexes on both backends; indexes are never reused.
pub async fn next_issue_index(conn: &mut AnyConnection, repo_id: i64) -> Result<i64, sqlx::Error> {
    let row = sqlx::query(
        "UPDATE repositories SET last_issue_index = last_issue_index + 1 WHERE id = $1 \
         RETURNING last_issue_index",
    )
    .bind(repo_id)
    .fetch_one(conn)
    .await?;
    row.try_get("last_issue_index")
}
