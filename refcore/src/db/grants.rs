//! Grant rows: insertion, reads (optionally row-locked), the agent's list
//! and compare-and-swap state changes.

use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

use crate::domain::envelope;
use crate::domain::grant::{Grant, GrantState};
use crate::domain::json::UserRef;
use crate::faults::fault;

const GRANT_SELECT: &str = "SELECT g.id, g.repo_id, o.login AS repo_owner, r.name AS repo_name, \
     g.agent_id, a.login AS agent_login, g.prepared_by, p.login AS prepared_login, \
     g.approved_by, ap.login AS approved_login, g.state, g.state_revision, g.task, g.summary, \
     g.digest, g.created_at, g.updated_at, g.confirmed_at, g.approved_at, g.revoked_at, \
     g.repository_grant, g.repository_grant_digest, g.repository_grant_paths \
     FROM agent_work_grants g \
     JOIN repositories r ON r.id = g.repo_id \
     JOIN users o ON o.id = r.owner_id \
     JOIN users a ON a.id = g.agent_id \
     JOIN users p ON p.id = g.prepared_by \
     LEFT JOIN users ap ON ap.id = g.approved_by";

fn grant_from(row: &AnyRow) -> Result<Grant, sqlx::Error> {
    let state: String = row.try_get("state")?;
    let approved_by: Option<i64> = row.try_get("approved_by")?;
    let approved_login: Option<String> = row.try_get("approved_login")?;
    let envelope_text: Option<String> = row.try_get("repository_grant")?;
    let envelope_digest: Option<String> = row.try_get("repository_grant_digest")?;
    let envelope_paths: Option<i64> = row.try_get("repository_grant_paths")?;
    Ok(Grant {
        id: row.try_get("id")?,
        repo_id: row.try_get("repo_id")?,
        repo_owner: row.try_get("repo_owner")?,
        repo_name: row.try_get("repo_name")?,
        agent: UserRef {
            id: row.try_get("agent_id")?,
            login: row.try_get("agent_login")?,
        },
        prepared_by: UserRef {
            id: row.try_get("prepared_by")?,
            login: row.try_get("prepared_login")?,
        },
        approved_by: approved_by
            .zip(approved_login)
            .map(|(id, login)| UserRef { id, login }),
        state: GrantState::parse(&state)
            .ok_or_else(|| sqlx::Error::Decode(format!("unknown grant state {state:?}").into()))?,
        state_revision: row.try_get("state_revision")?,
        task: row.try_get("task")?,
        summary: row.try_get("summary")?,
        digest: row.try_get("digest")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
        confirmed_at: row.try_get("confirmed_at")?,
        approved_at: row.try_get("approved_at")?,
        revoked_at: row.try_get("revoked_at")?,
        envelope: envelope_text.zip(envelope_digest).zip(envelope_paths).map(
            |((canonical, digest), path_count)| envelope::Stored {
                canonical,
                digest,
                path_count,
            },
        ),
    })
}

/// What a new grant needs.
#[derive(Debug)]
pub struct NewGrant<'a> {
    /// Repository.
    pub repo_id: i64,
    /// The bot.
    pub agent_id: i64,
    /// The preparing human.
    pub prepared_by: i64,
    /// Task text.
    pub task: &'a str,
    /// Summary text.
    pub summary: &'a str,
    /// RFC 3339.
    pub now: &'a str,
    /// The repository grant envelope, if the human attached one.
    pub envelope: Option<&'a envelope::Stored>,
}

/// Inserts a grant in `awaiting_agent`, revision 1, and stores its digest,
/// which covers the id the insert produced. Call inside a write transaction.
pub async fn insert(conn: &mut AnyConnection, new: &NewGrant<'_>) -> Result<i64, sqlx::Error> {
    let row = sqlx::query(
        "INSERT INTO agent_work_grants (repo_id, agent_id, prepared_by, state, state_revision, \
         task, summary, digest, created_at, updated_at, repository_grant, \
         repository_grant_digest, repository_grant_paths) \
         VALUES ($1, $2, $3, 'awaiting_agent', 1, $4, $5, '', $6, $6, $7, $8, $9) RETURNING id",
    )
    .bind(new.repo_id)
    .bind(new.agent_id)
    .bind(new.prepared_by)
    .bind(new.task)
    .bind(new.summary)
    .bind(new.now)
    .bind(new.envelope.map(|e| e.canonical.clone()))
    .bind(new.envelope.map(|e| e.digest.clone()))
    .bind(new.envelope.map(|e| e.path_count))
    .fetch_one(&mut *conn)
    .await?;
    let id: i64 = row.try_get("id")?;
    let digest = crate::domain::digest::proposal_digest(
        id,
        new.repo_id,
        new.agent_id,
        new.task,
        new.summary,
    );
    sqlx::query("UPDATE agent_work_grants SET digest = $1 WHERE id = $2")
        .bind(digest)
        .bind(id)
        .execute(conn)
        .await?;
    Ok(id)
}

/// Reads a grant; `lock` is [`crate::db::Db::for_update`] inside write
/// transactions and `""` otherwise.
pub async fn by_id(
    conn: &mut AnyConnection,
    id: i64,
    lock: &str,
) -> Result<Option<Grant>, sqlx::Error> {
    // PostgreSQL refuses FOR UPDATE on the nullable side of an outer join,
    // so the lock names the grant table only.
    let lock = if lock.is_empty() {
        String::new()
    } else {
        format!("{lock} OF g")
    };
    let row = sqlx::query(&format!("{GRANT_SELECT} WHERE g.id = $1{lock}"))
        .bind(id)
        .fetch_optional(conn)
        .await?;
    row.as_ref().map(grant_from).transpose()
}

/// The visibility rule of the agent's list in SQL: the agent can still read
/// the repository (public, owner, collaborator, or site admin).
const AGENT_VISIBLE: &str = "g.agent_id = $1 AND (r.private = 0 OR r.owner_id = $1 OR $2 = 1 \
     OR EXISTS (SELECT 1 FROM collaborators c WHERE c.repo_id = r.id AND c.user_id = $1))";

/// [`AGENT_VISIBLE`], or only the agent test under `list-shows-invisible-grants`
/// (`$2` stays referenced so both backends accept the same binds).
fn agent_visible() -> &'static str {
    if fault!(ListShowsInvisibleGrants) {
        "g.agent_id = $1 AND $2 IN (0, 1)"
    } else {
        AGENT_VISIBLE
    }
}

fn state_filter(states: &[GrantState]) -> String {
    let names: Vec<String> = states.iter().map(|s| format!("'{}'", s.as_str())).collect();
    format!("g.state IN ({})", names.join(", "))
}

/// One page of the agent's visible grants in `states`, ascending id.
pub async fn agent_page(
    conn: &mut AnyConnection,
    agent_id: i64,
    agent_is_admin: bool,
    states: &[GrantState],
    offset: i64,
    limit: i64,
) -> Result<Vec<Grant>, sqlx::Error> {
    let rows = sqlx::query(&format!(
        "{GRANT_SELECT} WHERE {} AND {} ORDER BY g.id ASC LIMIT $3 OFFSET $4",
        agent_visible(),
        state_filter(states)
    ))
    .bind(agent_id)
    .bind(i64::from(agent_is_admin))
    .bind(limit)
    .bind(offset)
    .fetch_all(conn)
    .await?;
    rows.iter().map(grant_from).collect()
}

/// How many grants [`agent_page`] pages through.
pub async fn agent_count(
    conn: &mut AnyConnection,
    agent_id: i64,
    agent_is_admin: bool,
    states: &[GrantState],
) -> Result<i64, sqlx::Error> {
    let row = sqlx::query(&format!(
        "SELECT COUNT(*) AS n FROM agent_work_grants g JOIN repositories r ON r.id = g.repo_id \
         WHERE {} AND {}",
        agent_visible(),
        state_filter(states)
    ))
    .bind(agent_id)
    .bind(i64::from(agent_is_admin))
    .fetch_one(conn)
    .await?;
    row.try_get("n")
}

/// Every grant of a repository, ascending id, for the browser list.
pub async fn for_repo(conn: &mut AnyConnection, repo_id: i64) -> Result<Vec<Grant>, sqlx::Error> {
    let rows = sqlx::query(&format!(
        "{GRANT_SELECT} WHERE g.repo_id = $1 ORDER BY g.id ASC"
    ))
    .bind(repo_id)
    .fetch_all(conn)
    .await?;
    rows.iter().map(grant_from).collect()
}

/// A compare-and-swap state change: applies only if the grant is still in
/// `from` at `revision`. Returns whether it applied.
pub async fn transition(
    conn: &mut AnyConnection,
    id: i64,
    from: GrantState,
    revision: i64,
    to: GrantState,
    actor_id: i64,
    now: &str,
) -> Result<bool, sqlx::Error> {
    let stamp = match to {
        GrantState::AwaitingHuman => "confirmed_at = $5",
        GrantState::Active => "approved_at = $5, approved_by = $6",
        GrantState::Revoked => "revoked_at = $5",
        GrantState::AwaitingAgent => "updated_at = $5",
    };
    let sql = format!(
        "UPDATE agent_work_grants SET state = $1, state_revision = state_revision + 1, \
         updated_at = $5, {stamp} WHERE id = $2 AND state = $3 AND state_revision = $4"
    );
    let mut query = sqlx::query(&sql)
        .bind(to.as_str())
        .bind(id)
        .bind(from.as_str())
        .bind(revision)
        .bind(now);
    if to == GrantState::Active {
        query = query.bind(actor_id);
    }
    let done = query.execute(conn).await?;
    Ok(done.rows_affected() == 1)
}
