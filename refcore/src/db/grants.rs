//! Grant rows: insertion, reads (optionally row-locked), the agent's list
//! and compare-and-swap state changes.

use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

use super::edges::{Edge, Edges};
use crate::domain::envelope;
use crate::domain::grant::{Grant, GrantState};
use crate::domain::json::UserRef;

const GRANT_COLUMNS: &str = "g.id, g.repo_id, o.login AS repo_owner, r.name AS repo_name, \
     g.agent_id, a.login AS agent_login, g.prepared_by, p.login AS prepared_login, \
     g.approved_by, ap.login AS approved_login, g.state, g.state_revision, g.task, g.summary, \
     g.digest, g.created_at, g.updated_at, g.confirmed_at, g.approved_at, g.revoked_at, \
     g.repository_grant, g.repository_grant_digest, g.repository_grant_paths";

/// The joins that name a grant's repository, owner, agent, preparer and
/// approver; `g` must already be in scope.
const GRANT_JOINS: &str = "JOIN repositories r ON r.id = g.repo_id \
     JOIN users o ON o.id = r.owner_id \
     JOIN users a ON a.id = g.agent_id \
     JOIN users p ON p.id = g.prepared_by \
     LEFT JOIN users ap ON ap.id = g.approved_by";

/// A `SELECT` of whole grants from `source`, which binds `g`.
fn select_from(source: &str) -> String {
    format!("SELECT {GRANT_COLUMNS} FROM {source} {GRANT_JOINS}")
}

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
    let row = sqlx::query(&format!(
        "{} WHERE g.id = $1{lock}",
        select_from("agent_work_grants g")
    ))
    .bind(id)
    .fetch_optional(conn)
    .await?;
    row.as_ref().map(grant_from).transpose()
}

fn state_filter(states: &[GrantState]) -> String {
    let names: Vec<String> = states.iter().map(|s| format!("'{}'", s.as_str())).collect();
    format!("g.state IN ({})", names.join(", "))
}

/// One page of the agent's list and the count behind it.
#[derive(Debug)]
pub struct AgentPage {
    /// The page's grants, ascending id.
    pub grants: Vec<Grant>,
    /// How many visible grants the list pages through.
    pub total: i64,
}

/// One page of the agent's visible grants in `states`, ascending id, and
/// their total.
///
/// Why three small queries rather than one: visibility is a property of the
/// repository, not of the grant, and the cost of a page must not depend on
/// the plan the database picks (a PostgreSQL table just filled has no
/// statistics; a prepared statement may run a generic plan that guesses
/// `LIMIT $n` at a tenth of the table). The former single query joined,
/// tested and sorted every one of the agent's grants for each page.
/// 1. The agent's grants counted per repository, on the index
///    `(agent_id, repo_id, state)`; each repository's visibility tested
///    once. This gives the total and the unreadable repositories.
/// 2. The page's ids on `(agent_id, id)`, leaving those repositories out
///    (usually there are none): no join, no row but the id read.
/// 3. Those rows, by primary key, with their joins. Visibility is tested
///    again on them, so a repository that becomes unreadable between the
///    steps never shows; like any count taken apart from its page, the
///    total may then be one change behind.
pub async fn agent_page(
    conn: &mut AnyConnection,
    agent_id: i64,
    agent_is_admin: bool,
    states: &[GrantState],
    offset: i64,
    limit: i64,
) -> Result<AgentPage, sqlx::Error> {
    let states = state_filter(states);
    let (total, hidden) = count_per_repo(conn, agent_id, agent_is_admin, &states).await?;
    let ids = if offset < total {
        page_ids(conn, agent_id, &states, &hidden, offset, limit).await?
    } else {
        Vec::new()
    };
    let grants = if ids.is_empty() {
        Vec::new()
    } else {
        visible_by_ids(conn, agent_id, agent_is_admin, &ids).await?
    };
    Ok(AgentPage { grants, total })
}

/// Step 1 of [`agent_page`]: how many of the agent's grants in `states` the
/// agent can read, and the repositories it cannot read.
async fn count_per_repo(
    conn: &mut AnyConnection,
    agent_id: i64,
    agent_is_admin: bool,
    states: &str,
) -> Result<(i64, Vec<i64>), sqlx::Error> {
    let per_repo = sqlx::query(&format!(
        "SELECT per.repo_id, per.n, \
         CAST(CASE WHEN {} THEN 1 ELSE 0 END AS BIGINT) AS visible \
         FROM (SELECT g.repo_id, COUNT(*) AS n FROM agent_work_grants g \
         WHERE g.agent_id = $1 AND {states} GROUP BY g.repo_id) per \
         JOIN repositories r ON r.id = per.repo_id",
        Edge::listed_repos()
    ))
    .bind(agent_id)
    .bind(i64::from(agent_is_admin))
    .fetch_all(conn)
    .await?;
    let (mut total, mut hidden) = (0, Vec::new());
    for row in &per_repo {
        if row.try_get::<i64, _>("visible")? == 1 {
            total += row.try_get::<i64, _>("n")?;
        } else {
            hidden.push(row.try_get::<i64, _>("repo_id")?);
        }
    }
    Ok((total, hidden))
}

/// Step 2 of [`agent_page`]: the page's ids, outside the `hidden`
/// repositories.
async fn page_ids(
    conn: &mut AnyConnection,
    agent_id: i64,
    states: &str,
    hidden: &[i64],
    offset: i64,
    limit: i64,
) -> Result<Vec<i64>, sqlx::Error> {
    let hidden_filter = if hidden.is_empty() {
        String::new()
    } else {
        format!(" AND g.repo_id NOT IN ({})", placeholders(4, hidden.len()))
    };
    let sql = format!(
        "SELECT g.id FROM agent_work_grants g WHERE g.agent_id = $1 AND {states}{hidden_filter} \
         ORDER BY g.id ASC LIMIT $2 OFFSET $3"
    );
    let mut query = sqlx::query_scalar::<_, i64>(&sql)
        .bind(agent_id)
        .bind(limit)
        .bind(offset);
    for repo_id in hidden {
        query = query.bind(*repo_id);
    }
    query.fetch_all(conn).await
}

/// Step 3 of [`agent_page`]: the grants `ids` (at most a page) whose
/// repository the agent can read, ascending id.
async fn visible_by_ids(
    conn: &mut AnyConnection,
    agent_id: i64,
    agent_is_admin: bool,
    ids: &[i64],
) -> Result<Vec<Grant>, sqlx::Error> {
    let sql = format!(
        "{} WHERE g.id IN ({}) AND {} ORDER BY g.id ASC",
        select_from("agent_work_grants g"),
        placeholders(3, ids.len()),
        Edge::listed_repos()
    );
    let mut query = sqlx::query(&sql)
        .bind(agent_id)
        .bind(i64::from(agent_is_admin));
    for id in ids {
        query = query.bind(*id);
    }
    let rows = query.fetch_all(conn).await?;
    rows.iter().map(grant_from).collect()
}

/// `$first, $first+1, …`: `count` numbered placeholders.
fn placeholders(first: usize, count: usize) -> String {
    let names: Vec<String> = (first..first + count).map(|i| format!("${i}")).collect();
    names.join(", ")
}

/// Every grant of a repository, ascending id, for the browser list.
pub async fn for_repo(conn: &mut AnyConnection, repo_id: i64) -> Result<Vec<Grant>, sqlx::Error> {
    let rows = sqlx::query(&format!(
        "{} WHERE g.repo_id = $1 ORDER BY g.id ASC",
        select_from("agent_work_grants g")
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
    let stamp = Edge::transition_stamp(to);
    let step = Edge::revision_step(from, to);
    let sql = format!(
        "UPDATE agent_work_grants SET state = $1, state_revision = state_revision + {step}, \
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
