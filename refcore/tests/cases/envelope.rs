//! The repository grant envelope (spec §8): the prepare form's optional
//! field, the 422 page, the grant's bounded evidence, the admin's page, and
//! fail-closed submission.

use std::sync::Arc;

use serde_json::json;

use crate::check;
use crate::support::TestResult;
use crate::support::world::{Env, World, key, submission, triple};

const ENVELOPE: &str = r#"{"version":"1","allowed_paths":["src/","README.md"],
    "commit_count":{"min":1,"max":2},"publish":false}"#;
/// SHA-256 of `{"allowed_paths":["README.md","src/"],"commit_count":{"max":2,"min":1},"publish":false,"version":"1"}`.
const DIGEST: &str = "120b9091e6d574a361e022c58720171cc7416abf019cceeec6c37f44422a27d6";

/// Prepares through the form with `envelope` in `repository_grant`;
/// returns the answer.
async fn prepare(w: &World, envelope: &str) -> Result<crate::support::client::Resp, String> {
    w.post_prepare(
        &w.repo,
        &[
            ("agent", &w.bot),
            ("task", "Enveloped task"),
            ("summary", "s"),
            ("repository_grant", envelope),
        ],
    )
    .await
}

async fn grant_total(w: &World) -> Result<String, String> {
    let resp = w
        .api
        .get("/api/v1/agent-work-grants?state=all", &w.bot_auth)
        .await?
        .expect(200, "list")?;
    resp.header("x-total-count").ok_or("no total".into())
}

/// Valid envelope: 303, `{digest, path_count}` and nothing more in the API,
/// the patterns on the admin's page, submit 409 with nothing written; an
/// invalid one is a 422 page and no grant; an empty field is no envelope.
pub async fn envelope_lifecycle(env: Arc<Env>) -> TestResult {
    let w = World::new(&env).await?;
    let resp = prepare(&w, ENVELOPE).await?.expect(303, "prepare")?;
    let id: i64 = resp
        .header("location")
        .and_then(|l| l.rsplit('/').next().and_then(|s| s.parse().ok()))
        .ok_or("no grant id")?;
    let grant = w.grant(id).await?;
    check!(
        grant["repository_grant"] == json!({"digest": DIGEST, "path_count": 2}),
        "evidence: {}",
        grant["repository_grant"]
    );
    let page = w.browser.get(&format!("{}/{id}", w.pages())).await?;
    check!(
        page.text.contains("README.md") && page.text.contains(DIGEST),
        "the admin's page lacks the patterns or digest"
    );

    w.confirm(id).await?;
    w.decide(id, "approve").await?.expect(303, "approve")?;
    let digest = w.digest(id).await?;
    let k = key();
    let resp = w
        .api
        .post(
            &format!("{}/issues", w.grant_path(id)),
            &w.bot_auth,
            &submission(&digest, &k, "t", "b"),
        )
        .await?;
    check!(resp.status == 409, "enveloped submit: {}", resp.status);
    check!(
        resp.text.contains("not execution-enabled"),
        "409 says why: {}",
        resp.text
    );
    check!(w.issue_count().await? == 0, "an Issue was written");
    let back = w
        .api
        .get(
            &format!("{}/submissions/{k}", w.grant_path(id)),
            &w.bot_auth,
        )
        .await?;
    check!(back.status == 404, "readback: {}", back.status);

    // A bot's body with a repository_grant member is an unknown member.
    let mut body = triple(&digest);
    body["repository_grant"] = serde_json::from_str(ENVELOPE).map_err(|e| e.to_string())?;
    let resp = w
        .api
        .post(&format!("{}/confirm", w.grant_path(id)), &w.bot_auth, &body)
        .await?;
    check!(resp.status == 422, "confirm with member: {}", resp.status);

    let before = grant_total(&w).await?;
    for bad in [
        r#"{"version":"1","allowed_paths":["x/.git/y"],"commit_count":{"min":1,"max":1},"publish":false}"#,
        r#"{"version":"1","allowed_paths":["a"],"commit_count":{"min":1,"max":33},"publish":false}"#,
        r#"{"version":"1","allowed_paths":["a"],"commit_count":{"min":1,"max":1},"publish":true}"#,
        r#"{"version":1,"allowed_paths":["a"],"commit_count":{"min":1,"max":1},"publish":false}"#,
        " ",
    ] {
        let resp = prepare(&w, bad).await?;
        check!(resp.status == 422, "{bad}: {}", resp.status);
        check!(
            resp.text.contains("repository_grant"),
            "{bad}: the page names the field"
        );
    }
    check!(
        grant_total(&w).await? == before,
        "an invalid envelope made a grant"
    );

    let resp = prepare(&w, "").await?.expect(303, "empty field")?;
    let id: i64 = resp
        .header("location")
        .and_then(|l| l.rsplit('/').next().and_then(|s| s.parse().ok()))
        .ok_or("no grant id")?;
    check!(
        w.grant(id).await?["repository_grant"].is_null(),
        "empty field made an envelope"
    );
    Ok(())
}
