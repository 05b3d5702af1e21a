//! Receipts over time: replay and conflict, tombstones after deletion and
//! moves, and what withdrawal leaves readable.

use std::sync::Arc;

use reqwest::Method;
use serde_json::json;

use crate::check;
use crate::support::TestResult;
use crate::support::browser::has;
use crate::support::world::{Env, World, key, submission, triple};

/// Same key + same payload → 200 and one Issue; any difference → 409 and
/// nothing written; distinct keys → distinct Issues even with equal text.
pub async fn replay_and_conflict(env: Arc<Env>) -> TestResult {
    let w = World::new(&env).await?;
    let (id, digest) = w.active_grant().await?;
    let path = format!("{}/issues", w.grant_path(id));
    let k = key();
    let first = w
        .api
        .post(&path, &w.bot_auth, &submission(&digest, &k, "Same", "Body"))
        .await?
        .expect(201, "first")?
        .json();
    let again = w
        .api
        .post(&path, &w.bot_auth, &submission(&digest, &k, "Same", "Body"))
        .await?
        .expect(200, "replay")?
        .json();
    check!(
        first["submission"] == again["submission"],
        "replay answered a different receipt"
    );
    check!(w.issue_count().await? == 1, "replay created an Issue");
    for (what, body) in [
        ("title", submission(&digest, &k, "Other", "Body")),
        ("body", submission(&digest, &k, "Same", "Body ")),
        ("digest", submission(&"a".repeat(64), &k, "Same", "Body")),
    ] {
        w.api
            .post(&path, &w.bot_auth, &body)
            .await?
            .expect(409, &format!("changed {what}"))?;
    }
    check!(
        w.issue_count().await? == 1,
        "a conflicting replay wrote an Issue"
    );
    let other = w
        .api
        .post(
            &path,
            &w.bot_auth,
            &submission(&digest, &key(), "Same", "Body"),
        )
        .await?
        .expect(201, "distinct key")?
        .json();
    check!(
        other["submission"]["issue"]["id"] != first["submission"]["issue"]["id"],
        "distinct keys shared an Issue"
    );
    check!(
        w.issue_count().await? == 2,
        "distinct key did not make a second Issue"
    );
    // Keys are scoped to the grant: the same key in another grant is new there.
    let (id2, digest2) = w.active_grant().await?;
    w.api
        .post(
            &format!("{}/issues", w.grant_path(id2)),
            &w.bot_auth,
            &submission(&digest2, &k, "Same", "Body"),
        )
        .await?
        .expect(201, "same key in another grant")?;
    w.api
        .get(
            &format!("{}/submissions/{}", w.grant_path(id), key()),
            &w.bot_auth,
        )
        .await?
        .expect(404, "unknown key readback")?;
    Ok(())
}

/// Deleted Issue → `issue_deleted`, key stays spent; moved Issue →
/// `issue_binding_changed`; the receipt keeps its historical binding.
pub async fn tombstones(env: Arc<Env>) -> TestResult {
    let w = World::new(&env).await?;
    let (id, digest) = w.active_grant().await?;
    let path = format!("{}/issues", w.grant_path(id));
    let k = key();
    let made = w
        .api
        .post(&path, &w.bot_auth, &submission(&digest, &k, "Doomed", "x"))
        .await?
        .expect(201, "submit")?
        .json();
    let index = made["submission"]["issue"]["index"]
        .as_i64()
        .ok_or("index")?;
    w.api
        .call(
            Method::DELETE,
            &format!("/api/v1/repos/{}/{}/issues/{index}", w.owner, w.repo),
            &w.bot_auth,
            None,
        )
        .await?
        .expect(403, "bot deletes an Issue")?;
    w.api
        .call(
            Method::DELETE,
            &format!("/api/v1/repos/{}/{}/issues/{index}", w.owner, w.repo),
            &w.admin,
            None,
        )
        .await?
        .expect(204, "delete")?;
    let read = w
        .api
        .get(
            &format!("{}/submissions/{k}", w.grant_path(id)),
            &w.bot_auth,
        )
        .await?
        .expect(200, "readback")?
        .json();
    check!(
        read["submission"]["status"] == "issue_deleted",
        "status after delete {}",
        read["submission"]["status"]
    );
    check!(
        read["submission"]["issue"] == made["submission"]["issue"],
        "historical binding changed"
    );
    let replay = w
        .api
        .post(&path, &w.bot_auth, &submission(&digest, &k, "Doomed", "x"))
        .await?
        .expect(200, "replay after delete")?
        .json();
    check!(
        replay["submission"]["status"] == "issue_deleted",
        "replay status {}",
        replay["submission"]["status"]
    );
    check!(
        w.issue_count().await? == 0,
        "replay after delete made an Issue"
    );
    w.api
        .post(&path, &w.bot_auth, &submission(&digest, &k, "Doomed!", "x"))
        .await?
        .expect(409, "changed replay after delete")?;

    let k2 = key();
    let moved = w
        .api
        .post(&path, &w.bot_auth, &submission(&digest, &k2, "Mover", "y"))
        .await?
        .expect(201, "submit 2")?
        .json();
    let other = format!("elsewhere-{}", crate::support::world::unique());
    w.create_repo(&w.owner, &other, true).await?;
    let issue_id = moved["submission"]["issue"]["id"]
        .as_i64()
        .ok_or("issue id")?;
    let after = w
        .api
        .post(
            &format!("/api/v1/admin/issues/{issue_id}/move"),
            &w.admin,
            &json!({"owner": w.owner, "repo": other}),
        )
        .await?
        .expect(200, "move")?
        .json();
    check!(
        after["repository"]["full_name"] == format!("{}/{other}", w.owner),
        "moved issue {after}"
    );
    check!(
        after["agent_work_grant"]["grant_id"] == id,
        "move lost the attribution"
    );
    let read = w
        .api
        .get(
            &format!("{}/submissions/{k2}", w.grant_path(id)),
            &w.bot_auth,
        )
        .await?
        .expect(200, "readback 2")?
        .json();
    check!(
        read["submission"]["status"] == "issue_binding_changed",
        "status after move {}",
        read["submission"]["status"]
    );
    check!(
        read["submission"]["issue"] == moved["submission"]["issue"],
        "binding rewritten by move"
    );
    w.api
        .post(
            &format!("/api/v1/admin/issues/{issue_id}/move"),
            &w.bot_auth,
            &json!({"owner": w.owner, "repo": w.repo}),
        )
        .await?
        .expect(403, "bot moves an Issue")?;
    Ok(())
}

/// Withdrawal from each live state: confirm and submit then 409 (replays
/// included), readback still 200, list shows it only under `revoked`/`all`.
pub async fn withdrawal(env: Arc<Env>) -> TestResult {
    let w = World::new(&env).await?;
    // From awaiting_agent.
    let a = w.prepare("a", "a").await?;
    w.decide(a, "withdraw")
        .await?
        .expect(303, "withdraw awaiting_agent")?;
    let digest_a = w.digest(a).await?;
    w.api
        .post(
            &format!("{}/confirm", w.grant_path(a)),
            &w.bot_auth,
            &triple(&digest_a),
        )
        .await?
        .expect(409, "confirm revoked")?;
    let ga = w.grant(a).await?;
    check!(
        ga["state"] == "revoked" && ga["state_revision"] == 2 && ga["revoked_at"].is_string(),
        "revoked grant {ga}"
    );
    // From awaiting_human.
    let b = w.prepare("b", "b").await?;
    w.confirm(b).await?;
    w.decide(b, "withdraw")
        .await?
        .expect(303, "withdraw awaiting_human")?;
    check!(w.grant(b).await?["state"] == "revoked", "b not revoked");
    // From active, after a submission.
    let (c, digest) = w.active_grant().await?;
    let k = key();
    let path = format!("{}/issues", w.grant_path(c));
    w.api
        .post(&path, &w.bot_auth, &submission(&digest, &k, "Before", "x"))
        .await?
        .expect(201, "submit")?;
    w.decide(c, "withdraw")
        .await?
        .expect(303, "withdraw active")?;
    w.api
        .post(&path, &w.bot_auth, &submission(&digest, &k, "Before", "x"))
        .await?
        .expect(409, "replay after withdrawal")?;
    w.api
        .post(
            &path,
            &w.bot_auth,
            &submission(&digest, &key(), "After", "x"),
        )
        .await?
        .expect(409, "new submit after withdrawal")?;
    check!(
        w.issue_count().await? == 1,
        "withdrawn grant wrote an Issue"
    );
    let read = w
        .api
        .get(&format!("{}/submissions/{k}", w.grant_path(c)), &w.bot_auth)
        .await?
        .expect(200, "readback after withdrawal")?
        .json();
    check!(
        read["grant"]["state"] == "revoked" && read["submission"]["status"] == "submitted",
        "readback {read}"
    );
    // No withdraw form on a revoked grant, and a second withdrawal is refused.
    let page = w
        .browser
        .get(&format!("{}/{c}", w.pages()))
        .await?
        .expect(200, "revoked page")?;
    check!(
        !has(&page.text, "form.grant-withdraw") && !has(&page.text, "form.grant-approve"),
        "forms on a revoked grant"
    );
    // List: default omits revoked grants; revoked and all show them.
    let ids = |v: serde_json::Value| -> Vec<i64> {
        v.as_array()
            .map(|a| a.iter().filter_map(|g| g["id"].as_i64()).collect())
            .unwrap_or_default()
    };
    let default = ids(w
        .api
        .get("/api/v1/agent-work-grants", &w.bot_auth)
        .await?
        .expect(200, "list")?
        .json());
    check!(
        default.is_empty(),
        "default list shows revoked grants: {default:?}"
    );
    let revoked = ids(w
        .api
        .get("/api/v1/agent-work-grants?state=revoked", &w.bot_auth)
        .await?
        .expect(200, "list revoked")?
        .json());
    check!(revoked == vec![a, b, c], "revoked list {revoked:?}");
    let all = ids(w
        .api
        .get("/api/v1/agent-work-grants?state=all", &w.bot_auth)
        .await?
        .expect(200, "list all")?
        .json());
    check!(all == vec![a, b, c], "all list {all:?}");
    Ok(())
}
