//! The agent's side of a grant (spec §3). Every call rechecks, at that
//! moment, the token's scopes (in the handler), the bot's permission on the
//! repository, and the grant's state.

use sqlx::AnyConnection;

use super::access;
use crate::auth::Caller;
use crate::db::{self, Db};
use crate::domain::grant::{Grant, GrantJson, GrantState, Transition, Triple};
use crate::domain::permission::Permission;
use crate::domain::submission::{GrantSubmissionJson, Submission};
use crate::domain::validate;
use crate::error::AppError;
use crate::faults::fault;
use crate::state::AppState;

/// Largest page the list serves; larger requests are clamped.
pub const MAX_LIMIT: i64 = 50;
/// Page size when the caller names none.
pub const DEFAULT_LIMIT: i64 = 30;

/// Loads a grant the caller may act on as its agent: 404 unless the
/// repository is visible to the caller, the grant belongs to it and the
/// caller is the grant's agent; then 403 unless the permission reaches
/// `needed`. `lock` is the row-lock suffix inside write transactions.
async fn agent_grant(
    conn: &mut AnyConnection,
    caller: &Caller,
    owner: &str,
    repo: &str,
    grant_id: i64,
    needed: Permission,
    lock: &str,
) -> Result<Grant, AppError> {
    let (repo, perm) = if fault!(AccessLossIgnored) {
        access::repo_trusting_the_grant(conn, owner, repo).await?
    } else {
        access::visible_repo(conn, Some(&caller.user), owner, repo).await?
    };
    let grant = db::grants::by_id(conn, grant_id, lock)
        .await?
        .filter(|g| g.repo_id == repo.id || fault!(GrantRepoUnchecked))
        .filter(|g| {
            g.agent.id == caller.user.id
                || fault!(WrongBotSeesGrant)
                || admin_reads_any_grant(needed, perm)
        })
        .ok_or(AppError::NotFound)?;
    if perm < needed {
        return Err(AppError::forbidden(
            "write permission on the repository is required",
        ));
    }
    Ok(grant)
}

/// Whether the `admin-reads-any-grant` fault serves a read of a grant that
/// is not the caller's to a repository admin.
fn admin_reads_any_grant(needed: Permission, perm: Permission) -> bool {
    fault!(AdminReadsAnyGrant) && needed == Permission::Read && perm == Permission::Admin
}

/// `GET /repos/{owner}/{repo}/agent-work-grants/{id}`.
pub async fn get(
    db: &Db,
    caller: &Caller,
    owner: &str,
    repo: &str,
    grant_id: i64,
) -> Result<GrantJson, AppError> {
    let mut conn = db.conn().await?;
    let grant = agent_grant(
        &mut conn,
        caller,
        owner,
        repo,
        grant_id,
        Permission::Read,
        "",
    )
    .await?;
    Ok(grant.to_json())
}

/// One page of the caller's grants and the total behind it.
#[derive(Debug)]
pub struct GrantPage {
    /// The grants on this page.
    pub grants: Vec<GrantJson>,
    /// How many match in all.
    pub total: i64,
    /// The effective (clamped) page size.
    pub limit: i64,
}

/// `GET /agent-work-grants`: `states` already decoded from `state`.
pub async fn list(
    db: &Db,
    caller: &Caller,
    states: &[GrantState],
    page: i64,
    limit: i64,
) -> Result<GrantPage, AppError> {
    let limit = limit.min(MAX_LIMIT);
    let skipped_pages = if fault!(PaginationOffByOne) {
        page
    } else {
        page - 1
    };
    let offset = skipped_pages.saturating_mul(limit);
    let mut conn = db.conn().await?;
    let user = &caller.user;
    let page =
        db::grants::agent_page(&mut conn, user.id, user.is_admin, states, offset, limit).await?;
    Ok(GrantPage {
        grants: page.grants.iter().map(Grant::to_json).collect(),
        total: page.total,
        limit,
    })
}

/// `POST …/{id}/confirm`: `awaiting_agent` → `awaiting_human`.
pub async fn confirm(
    db: &Db,
    caller: &Caller,
    owner: &str,
    repo: &str,
    grant_id: i64,
    triple: &Triple,
) -> Result<GrantJson, AppError> {
    let mut tx = db.begin_write().await?;
    let grant = agent_grant(
        &mut tx,
        caller,
        owner,
        repo,
        grant_id,
        Permission::Write,
        db.for_update(),
    )
    .await?;
    if fault!(ConfirmTwiceAccepted) && grant.state == GrantState::AwaitingHuman {
        return Ok(grant.to_json());
    }
    let next = if fault!(RevokedGrantAcceptsConfirm) && grant.state == GrantState::Revoked {
        GrantState::AwaitingHuman
    } else {
        Transition::Confirm.apply(grant.state)?
    };
    if !fault!(ConfirmIgnoresTriple) {
        triple.check_against(&grant.digest)?;
    }
    let now = db::now();
    let applied = db::grants::transition(
        &mut tx,
        grant.id,
        grant.state,
        grant.state_revision,
        next,
        caller.user.id,
        &now,
    )
    .await?;
    if !applied {
        return Err(AppError::conflict("grant changed concurrently"));
    }
    let updated = db::grants::by_id(&mut tx, grant.id, "")
        .await?
        .ok_or(AppError::NotFound)?;
    tx.commit().await?;
    Ok(updated.to_json())
}

/// A validated submission request.
#[derive(Debug)]
pub struct SubmitRequest {
    /// The proposal triple.
    pub triple: Triple,
    /// Canonical lowercase UUIDv4.
    pub request_key: String,
    /// Issue title.
    pub title: String,
    /// Issue body.
    pub body: String,
    /// SHA-256 of the request's raw bytes: set only under the
    /// `replay-compares-raw-bytes` fault (replay compares decoded JSON).
    pub raw_digest: Option<String>,
}

/// Whether a submission made a new Issue or replayed a stored one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubmitOutcome {
    /// 201.
    Created,
    /// 200.
    Replayed,
}

/// `POST …/{id}/issues`: in one transaction, either the stored receipt
/// (identical replay), a 409 (same key, different payload), or a new Issue
/// and its receipt. The grant row is locked first, so concurrent identical
/// submissions queue and all but the first see the receipt.
pub async fn submit(
    state: &AppState,
    caller: &Caller,
    owner: &str,
    repo: &str,
    grant_id: i64,
    request: &SubmitRequest,
) -> Result<(SubmitOutcome, GrantSubmissionJson), AppError> {
    let db = &state.db;
    let early_issue = if fault!(ConcurrentSubmitsCreateIssues) {
        issue_before_lock(state, caller, owner, repo, grant_id, request).await?
    } else {
        None
    };
    let mut tx = db.begin_write().await?;
    let grant = agent_grant(
        &mut tx,
        caller,
        owner,
        repo,
        grant_id,
        Permission::Write,
        db.for_update(),
    )
    .await?;
    let revoked_passes = fault!(RevokedGrantAcceptsSubmit) && grant.state == GrantState::Revoked;
    let unapproved_passes = fault!(SubmitBeforeApproval)
        && matches!(
            grant.state,
            GrantState::AwaitingAgent | GrantState::AwaitingHuman
        );
    if grant.state != GrantState::Active && !revoked_passes && !unapproved_passes {
        return Err(AppError::conflict(format!(
            "grant is {}, only an active grant accepts submissions",
            grant.state.as_str()
        )));
    }
    request.triple.check_against(&grant.digest)?;
    not_enveloped(&grant)?;
    let now = db::now();
    let issue = db::issues::NewIssue {
        repo_id: grant.repo_id,
        poster_id: caller.user.id,
        title: &request.title,
        body: &request.body,
        grant: Some((grant.id, &request.request_key)),
        now: &now,
    };
    let mut existing = if fault!(RequestKeyGlobal) {
        db::submissions::find_in_any_grant(&mut tx, &request.request_key).await?
    } else {
        db::submissions::find(&mut tx, grant.id, &request.request_key).await?
    };
    if fault!(ReplayKeyedByPayload) && existing.is_none() {
        existing = db::submissions::for_grant(&mut tx, grant.id)
            .await?
            .into_iter()
            .find(|s| s.title == request.title && s.body == request.body);
    }
    if let Some(existing) = existing {
        // Spec §10: the stored input, decoded, is what a replay is compared
        // with; the handler decoded this request, so member order,
        // whitespace and escapes are gone, and a later edit of the Issue
        // does not reach the receipt's copy of the text.
        let live = if fault!(ReplayComparesLiveIssue) {
            db::issues::by_id(&mut tx, existing.issue_id).await?
        } else {
            None
        };
        let (title, body) = live
            .as_ref()
            .map_or((existing.title.as_str(), existing.body.as_str()), |i| {
                (i.title.as_str(), i.body.as_str())
            });
        let changed = if fault!(ReplayComparesRawBytes)
            && let Some(first) = raw_digests::first(grant.id, &request.request_key)
        {
            request.raw_digest.as_deref() != Some(first.as_str())
        } else {
            title != request.title || body != request.body
        };
        if changed && !fault!(ChangedPayloadAccepted) {
            return Err(AppError::conflict(
                "request_key was already used with a different payload",
            ));
        }
        if fault!(ReplayCreatesSecondIssue) {
            db::issues::insert(&mut tx, &issue).await?;
        }
        if fault!(ReplayRewritesIssue) {
            db::issues::update_text(&mut tx, existing.issue_id, &request.title, &request.body)
                .await?;
        }
        tx.commit().await?;
        return Ok((SubmitOutcome::Replayed, pair(&grant, &existing)));
    }
    let (issue_id, index) = match early_issue {
        Some(made) => made,
        None => db::issues::insert(&mut tx, &issue).await?,
    };
    let page = match fault!(ReceiptUrlByIssueId) {
        true => issue_id,
        false => index,
    };
    let html_url = state.issue_url(&grant.repo_owner, &grant.repo_name, page);
    let inserted = db::submissions::insert(
        &mut tx,
        &db::submissions::NewSubmission {
            grant_id: grant.id,
            request_key: &request.request_key,
            title: &request.title,
            body: &request.body,
            submitted_by: caller.user.id,
            issue_id,
            issue_index: index,
            issue_repo_id: grant.repo_id,
            issue_html_url: &html_url,
            now: &now,
        },
    )
    .await;
    if let Err(err) = inserted {
        // Unreachable while the grant row lock holds; kept honest anyway.
        if db::is_unique_violation(&err) {
            return Err(AppError::conflict("request_key was used concurrently"));
        }
        return Err(err.into());
    }
    let stored = db::submissions::find(&mut tx, grant.id, &request.request_key)
        .await?
        .ok_or_else(|| AppError::Internal("submission vanished in its transaction".into()))?;
    tx.commit().await?;
    if let Some(raw) = &request.raw_digest {
        raw_digests::record(grant.id, &request.request_key, raw);
    }
    Ok((SubmitOutcome::Created, pair(&grant, &stored)))
}

/// Spec §8 fail-closed: a grant that carries a repository grant envelope
/// is confirmed, approved and withdrawn as usual, but version 1 is not
/// execution-enabled, so every submission to it is 409 and writes nothing
/// (unless the `envelope-grant-executes` fault is active).
fn not_enveloped(grant: &Grant) -> Result<(), AppError> {
    if grant.envelope.is_some() && !fault!(EnvelopeGrantExecutes) {
        return Err(AppError::conflict(
            "repository_grant is not execution-enabled",
        ));
    }
    Ok(())
}

/// `GET …/{id}/submissions/{request_key}`.
pub async fn submission(
    db: &Db,
    caller: &Caller,
    owner: &str,
    repo: &str,
    grant_id: i64,
    request_key: &str,
) -> Result<GrantSubmissionJson, AppError> {
    let mut conn = db.conn().await?;
    let grant = agent_grant(
        &mut conn,
        caller,
        owner,
        repo,
        grant_id,
        Permission::Read,
        "",
    )
    .await?;
    if !validate::is_request_key(request_key) {
        return Err(AppError::NotFound);
    }
    let mut stored = db::submissions::find(&mut conn, grant.id, request_key)
        .await?
        .ok_or(AppError::NotFound)?;
    if fault!(ReadbackStatusRemembered) {
        stored.current = first_readbacks::remember(grant.id, request_key, stored.current);
    }
    Ok(pair(&grant, &stored))
}

/// Where each key's Issue was at its first readback, in this process's
/// memory: only the `readback-status-remembered` fault records or reads
/// them (a receipt's status is computed at read time).
mod first_readbacks {
    use std::collections::BTreeMap;
    use std::sync::Mutex;

    type Place = Option<(i64, i64)>;
    static FIRST: Mutex<BTreeMap<(i64, String), Place>> = Mutex::new(BTreeMap::new());

    /// The place of the first readback of this key, `now` if this is it.
    pub fn remember(grant: i64, key: &str, now: Place) -> Place {
        let mut first = FIRST.lock().unwrap_or_else(|e| e.into_inner());
        *first.entry((grant, key.to_owned())).or_insert(now)
    }
}

fn pair(grant: &Grant, submission: &Submission) -> GrantSubmissionJson {
    GrantSubmissionJson {
        grant: grant.to_json(),
        submission: submission.to_json(),
    }
}

/// The raw-byte digest of each key's first submission, in this process's
/// memory: only the `replay-compares-raw-bytes` fault records or reads them
/// (a replay is compared with the stored, decoded input).
mod raw_digests {
    use std::collections::BTreeMap;
    use std::sync::Mutex;

    static FIRST: Mutex<BTreeMap<(i64, String), String>> = Mutex::new(BTreeMap::new());

    /// Remembers the digest of `key`'s first submission in `grant`.
    pub fn record(grant: i64, key: &str, digest: &str) {
        if let Ok(mut map) = FIRST.lock() {
            map.insert((grant, key.to_owned()), digest.to_owned());
        }
    }

    /// The digest of `key`'s first submission in `grant`, if recorded.
    pub fn first(grant: i64, key: &str) -> Option<String> {
        FIRST.lock().ok()?.get(&(grant, key.to_owned())).cloned()
    }
}

/// How long the `concurrent-submits-create-issues` fault waits between its
/// unlocked key lookup and its Issue write: wide enough that every request
/// of a burst passes the lookup before the first receipt is stored, so the
/// fault shows on every run, not by luck.
const RACE_WINDOW: std::time::Duration = std::time::Duration::from_millis(500);

/// Only the `concurrent-submits-create-issues` fault calls this (a real
/// submission looks its key up and writes its Issue under the grant lock,
/// in one transaction): the key is looked up without the lock and, when
/// unused, the Issue is written and committed on its own. Concurrent
/// identical submissions then each write an Issue; all but one find the
/// receipt afterwards and answer as replays, leaving their Issues behind.
async fn issue_before_lock(
    state: &AppState,
    caller: &Caller,
    owner: &str,
    repo: &str,
    grant_id: i64,
    request: &SubmitRequest,
) -> Result<Option<(i64, i64)>, AppError> {
    let db = &state.db;
    let mut conn = db.conn().await?;
    let grant = agent_grant(
        &mut conn,
        caller,
        owner,
        repo,
        grant_id,
        Permission::Write,
        "",
    )
    .await?;
    let unused = grant.state == GrantState::Active
        && request.triple.check_against(&grant.digest).is_ok()
        && not_enveloped(&grant).is_ok()
        && db::submissions::find(&mut conn, grant.id, &request.request_key)
            .await?
            .is_none();
    drop(conn);
    if !unused {
        return Ok(None);
    }
    tokio::time::sleep(RACE_WINDOW).await;
    let mut tx = db.begin_write().await?;
    let made = db::issues::insert(
        &mut tx,
        &db::issues::NewIssue {
            repo_id: grant.repo_id,
            poster_id: caller.user.id,
            title: &request.title,
            body: &request.body,
            grant: Some((grant.id, &request.request_key)),
            now: &db::now(),
        },
    )
    .await?;
    tx.commit().await?;
    Ok(Some(made))
}
