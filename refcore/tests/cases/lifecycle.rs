//! The grant lifecycle over the native API and the browser forms: confirm,
//! approve, submit, replay, tombstones and withdrawal.

use std::sync::Arc;

use reqwest::Method;
use serde_json::json;

use crate::check;
use crate::support::TestResult;
use crate::support::browser::{has, text_of};
use crate::support::world::{Env, World, key, submission, triple};

/// Prepare → confirm → approve → submit; read the Issue back whole from the
/// API and the HTML, attributed to the bot and the grant.
pub async fn full_lifecycle(env: Arc<Env>) -> TestResult {
    let w = World::new(&env).await?;
    let task = "Task with CRLF\r\nand unicode é — 🚀 and <b>markup</b>";
    let id = w.prepare(task, "Summary  with  spaces ").await?;
    let grant = w.grant(id).await?;
    check!(
        grant["state"] == "awaiting_agent",
        "new grant state {}",
        grant["state"]
    );
    check!(
        grant["state_revision"] == 1,
        "new revision {}",
        grant["state_revision"]
    );
    check!(
        grant["task"] == task,
        "task not kept whole: {}",
        grant["task"]
    );
    check!(
        grant["summary"] == "Summary  with  spaces ",
        "summary changed"
    );
    check!(
        grant["agent"]["login"] == w.bot.as_str(),
        "agent {}",
        grant["agent"]
    );
    check!(
        grant["prepared_by"]["login"] == w.owner.as_str(),
        "prepared_by {}",
        grant["prepared_by"]
    );
    check!(
        grant["repository"]["full_name"] == format!("{}/{}", w.owner, w.repo),
        "repository {}",
        grant["repository"]
    );
    check!(
        grant["proposal"]["schema"] == "agent_work_grant.v1" && grant["proposal"]["version"] == 1,
        "proposal {}",
        grant["proposal"]
    );
    check!(
        grant["approved_by"].is_null() && grant["confirmed_at"].is_null(),
        "fresh grant has decisions"
    );

    let confirmed = w.confirm(id).await?;
    check!(
        confirmed["state"] == "awaiting_human" && confirmed["state_revision"] == 2,
        "after confirm {confirmed}"
    );
    check!(confirmed["confirmed_at"].is_string(), "confirmed_at unset");

    w.decide(id, "approve").await?.expect(303, "approve")?;
    let active = w.grant(id).await?;
    check!(
        active["state"] == "active" && active["state_revision"] == 3,
        "after approve {active}"
    );
    check!(
        active["approved_by"]["login"] == w.owner.as_str(),
        "approved_by {}",
        active["approved_by"]
    );

    let digest = active["proposal"]["digest"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let k = key();
    let body = "Line one\r\nLine two\n\n  indented\ttab & <tag> \"quoted\"\n";
    let created = w
        .api
        .post(
            &format!("{}/issues", w.grant_path(id)),
            &w.bot_auth,
            &submission(&digest, &k, "Flaky: test_x", body),
        )
        .await?
        .expect(201, "submit")?
        .json();
    let sub = &created["submission"];
    check!(
        sub["status"] == "submitted" && sub["review_state"] == "awaiting_review",
        "submission {sub}"
    );
    check!(
        sub["request_key"] == k.as_str() && sub["grant_id"] == id,
        "submission ids {sub}"
    );
    check!(
        sub["submitted_by"]["login"] == w.bot.as_str(),
        "submitted_by {}",
        sub["submitted_by"]
    );
    check!(created["grant"]["id"] == id, "grant in answer");
    let index = sub["issue"]["index"].as_i64().ok_or("no issue index")?;
    let html_url = sub["issue"]["html_url"]
        .as_str()
        .ok_or("no html_url")?
        .to_string();
    check!(
        html_url == format!("{}/{}/{}/issues/{index}", w.base, w.owner, w.repo),
        "html_url {html_url}"
    );

    let issue = w
        .api
        .get(
            &format!("/api/v1/repos/{}/{}/issues/{index}", w.owner, w.repo),
            &w.bot_auth,
        )
        .await?
        .expect(200, "issue")?
        .json();
    check!(
        issue["body"] == body && issue["title"] == "Flaky: test_x",
        "issue text {issue}"
    );
    check!(
        issue["user"]["login"] == w.bot.as_str(),
        "issue poster {}",
        issue["user"]
    );
    check!(
        issue["agent_work_grant"] == json!({"grant_id": id, "request_key": k}),
        "attribution {}",
        issue["agent_work_grant"]
    );
    check!(
        issue["id"] == sub["issue"]["id"] && issue["number"] == index,
        "issue ids {issue}"
    );

    let page = w
        .browser
        .get(&format!("/{}/{}/issues/{index}", w.owner, w.repo))
        .await?
        .expect(200, "issue page")?;
    check!(
        text_of(&page.text, "pre.issue-body").as_deref() == Some(body),
        "HTML body differs: {:?}",
        text_of(&page.text, "pre.issue-body")
    );
    check!(
        text_of(&page.text, ".issue-poster").as_deref() == Some(w.bot.as_str()),
        "HTML poster"
    );
    check!(
        text_of(&page.text, ".issue-grant").as_deref()
            == Some(format!("via agent work grant #{id}").as_str()),
        "HTML grant marker"
    );

    let readback = w
        .api
        .get(
            &format!("{}/submissions/{k}", w.grant_path(id)),
            &w.bot_auth,
        )
        .await?
        .expect(200, "readback")?
        .json();
    check!(
        readback["submission"] == created["submission"],
        "readback differs"
    );
    let grant_page = w
        .browser
        .get(&format!("{}/{id}", w.pages()))
        .await?
        .expect(200, "grant page")?;
    check!(
        text_of(&grant_page.text, ".receipt-key").as_deref() == Some(k.as_str()),
        "receipt on grant page"
    );
    check!(
        text_of(&grant_page.text, "pre.grant-task").as_deref() == Some(task),
        "task on grant page"
    );
    check!(
        !has(&grant_page.text, "form.grant-approve"),
        "approve form shown for an active grant"
    );
    check!(
        has(&grant_page.text, "form.grant-withdraw"),
        "withdraw form missing"
    );
    Ok(())
}

/// Confirm needs `awaiting_agent` and the exact triple; anything else is 409.
pub async fn confirm_rules(env: Arc<Env>) -> TestResult {
    let w = World::new(&env).await?;
    let id = w.prepare("t", "s").await?;
    let digest = w.digest(id).await?;
    let path = format!("{}/confirm", w.grant_path(id));
    let mut wrong_digest = triple(&digest);
    wrong_digest["proposal_digest"] = json!("0".repeat(64));
    let mut wrong_schema = triple(&digest);
    wrong_schema["proposal_schema"] = json!("agent_work_grant.v2");
    let mut wrong_version = triple(&digest);
    wrong_version["proposal_version"] = json!(2);
    for (what, body) in [
        ("digest", wrong_digest),
        ("schema", wrong_schema),
        ("version", wrong_version),
    ] {
        w.api
            .post(&path, &w.bot_auth, &body)
            .await?
            .expect(409, &format!("wrong {what}"))?;
    }
    check!(
        w.grant(id).await?["state_revision"] == 1,
        "a refused confirm changed the grant"
    );
    w.api
        .post(&path, &w.bot_auth, &triple(&digest))
        .await?
        .expect(200, "confirm")?;
    w.api
        .post(&path, &w.bot_auth, &triple(&digest))
        .await?
        .expect(409, "second confirm")?;
    // Submitting before approval is a state conflict.
    w.api
        .post(
            &format!("{}/issues", w.grant_path(id)),
            &w.bot_auth,
            &submission(&digest, &key(), "t", "b"),
        )
        .await?
        .expect(409, "submit before approval")?;
    // Preparing is not approval, confirming is not approval: still awaiting a human.
    check!(
        w.grant(id).await?["state"] == "awaiting_human",
        "confirm approved the grant"
    );
    Ok(())
}

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
