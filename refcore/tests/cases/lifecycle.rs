//! The grant lifecycle over the native API and the browser forms: prepare,
//! confirm, approve, submit, and the rules of confirmation.

use std::sync::Arc;

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
