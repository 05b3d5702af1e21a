//! The human side of a grant (spec §4): only repository admins, only through
//! browser sessions. Preparing is not approval; approval and withdrawal are
//! compare-and-swap on the `state_revision` the form carried.

use super::access;
use super::edges::{Edge, Edges};
use crate::db::{self, Db, repos::RepoRow, users::UserRow};
use crate::domain::envelope;
use crate::domain::grant::{Grant, Transition};
use crate::domain::submission::Submission;
use crate::domain::validate;
use crate::error::AppError;

/// 404 unless `user` is an admin of `owner/repo` (no hint that it exists).
pub async fn admin_repo(
    db: &Db,
    user: &UserRow,
    owner: &str,
    repo: &str,
) -> Result<RepoRow, AppError> {
    let mut conn = db.conn().await?;
    let (repo, perm) = access::visible_repo(&mut conn, Some(user), owner, repo).await?;
    if !Edge::administers_grants(perm) {
        return Err(AppError::NotFound);
    }
    Ok(repo)
}

/// Every grant of a repository, for its list page.
pub async fn list(db: &Db, repo: &RepoRow) -> Result<Vec<Grant>, AppError> {
    let mut conn = db.conn().await?;
    Ok(db::grants::for_repo(&mut conn, repo.id).await?)
}

/// A grant of `repo` with its receipts, for its page.
pub async fn show(
    db: &Db,
    repo: &RepoRow,
    grant_id: i64,
) -> Result<(Grant, Vec<Submission>), AppError> {
    let mut conn = db.conn().await?;
    let grant = db::grants::by_id(&mut conn, grant_id, "")
        .await?
        .filter(|g| g.repo_id == repo.id)
        .ok_or(AppError::NotFound)?;
    let receipts = db::submissions::for_grant(&mut conn, grant.id).await?;
    Ok((grant, receipts))
}

/// What a human fills in to prepare a grant.
#[derive(Debug, Clone, Copy)]
pub struct Preparation<'a> {
    /// The bot's login.
    pub agent: &'a str,
    /// The task, whole.
    pub task: &'a str,
    /// The summary, whole.
    pub summary: &'a str,
    /// The `repository_grant` field as typed (spec §8); absent or empty
    /// means no envelope.
    pub repository_grant: Option<&'a str>,
}

/// The envelope a preparation carries: only its own `repository_grant`
/// field, parsed strictly (spec §8). Task and summary are prose and never
/// authority.
fn envelope_of(form: &Preparation<'_>) -> Result<Option<envelope::Stored>, AppError> {
    let explicit = envelope::parse(form.repository_grant)?;
    let adopted = || Edge::envelope_in_prose(form.task, form.summary);
    Ok(explicit.or_else(adopted).map(|e| e.stored()))
}

/// Prepares a grant for bot `form.agent`: `awaiting_agent`, revision 1,
/// with the envelope the form carries, if any.
pub async fn prepare(
    db: &Db,
    user: &UserRow,
    repo: &RepoRow,
    form: &Preparation<'_>,
) -> Result<i64, AppError> {
    let (agent_login, task, summary) = (form.agent, form.task, form.summary);
    validate::grant_text("task", task)?;
    validate::grant_text("summary", summary)?;
    validate::no_nul("agent", agent_login)?;
    let (task, summary) = (Edge::stored_text(task), Edge::stored_text(summary));
    let envelope = envelope_of(form)?;
    let mut tx = db.begin_write().await?;
    let agent = if validate::is_name(agent_login) {
        db::users::by_login(&mut tx, agent_login).await?
    } else {
        None
    };
    let agent = agent
        .filter(Edge::may_be_agent)
        .ok_or_else(|| AppError::invalid("agent must be the login of an existing bot user"))?;
    let now = db::now();
    let id = db::grants::insert(
        &mut tx,
        &db::grants::NewGrant {
            repo_id: repo.id,
            agent_id: agent.id,
            prepared_by: user.id,
            task,
            summary,
            now: &now,
            envelope: envelope.as_ref(),
        },
    )
    .await?;
    tx.commit().await?;
    Ok(id)
}

/// Applies `transition` (approve or withdraw) if the grant is still at
/// `revision`; 409 when it changed or the state does not allow it.
pub async fn decide(
    db: &Db,
    user: &UserRow,
    repo: &RepoRow,
    grant_id: i64,
    revision: i64,
    transition: Transition,
) -> Result<(), AppError> {
    let early = Edge::decided_before_lock(db, repo, grant_id, revision, transition).await?;
    let mut tx = db.begin_write().await?;
    let grant = db::grants::by_id(&mut tx, grant_id, db.for_update())
        .await?
        .filter(|g| Edge::grant_in_repo(g.repo_id, repo.id))
        .ok_or(AppError::NotFound)?;
    if early.is_none() && !Edge::revision_current(grant.state_revision, revision) {
        return Err(stale());
    }
    let next = match early {
        Some(next) => next,
        None => transition.apply(grant.state)?,
    };
    let applied = !Edge::writes_decision(transition)
        || db::grants::transition(
            &mut tx,
            grant.id,
            grant.state,
            grant.state_revision,
            next,
            Edge::decided_by(&grant, user),
            &db::now(),
        )
        .await?;
    if !applied {
        return Err(stale());
    }
    tx.commit().await?;
    Ok(())
}

/// The 409 of a decision whose `state_revision` is no longer the grant's.
pub(crate) fn stale() -> AppError {
    AppError::conflict(
        "The grant changed since this page was loaded. Reload the grant and decide again.",
    )
}
