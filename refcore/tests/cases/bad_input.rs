//! Bad input never gives a 500 and never writes: the status the spec names
//! for each kind of mistake.

use std::sync::Arc;

use reqwest::Method;
use serde_json::json;

use crate::check;
use crate::support::TestResult;
use crate::support::world::{Env, World, key, submission, triple};

/// Malformed, mistyped, incomplete, oversized and mislabelled JSON bodies.
pub async fn json_bodies(env: Arc<Env>) -> TestResult {
    let w = World::new(&env).await?;
    let (id, digest) = w.active_grant().await?;
    let path = format!("{}/issues", w.grant_path(id));
    let good = submission(&digest, &key(), "Title", "Body");
    let json_ct = Some("application/json");
    let raw_cases: Vec<(&str, Option<&str>, Vec<u8>, u16)> = vec![
        ("truncated JSON", json_ct, b"{\"title\":".to_vec(), 400),
        ("empty body", json_ct, Vec::new(), 400),
        (
            "trailing garbage",
            json_ct,
            format!("{good} x").into_bytes(),
            400,
        ),
        (
            "non-UTF-8",
            json_ct,
            b"{\"title\":\"\xff\xfe\"}".to_vec(),
            400,
        ),
        (
            "no content type",
            None,
            serde_json::to_vec(&good).unwrap_or_default(),
            400,
        ),
        (
            "form content type",
            Some("application/x-www-form-urlencoded"),
            serde_json::to_vec(&good).unwrap_or_default(),
            400,
        ),
        ("too large", json_ct, vec![b' '; 2 * 1024 * 1024 + 10], 413),
    ];
    for (what, ct, body, status) in raw_cases {
        let resp = w
            .api
            .raw(Method::POST, &path, &w.bot_auth, ct, body)
            .await?;
        check!(
            resp.status == status,
            "{what}: expected {status}, got {} {}",
            resp.status,
            resp.text
        );
        check!(
            resp.json()["message"].is_string() && resp.json()["url"].is_string(),
            "{what}: error body {}",
            resp.text
        );
    }
    let mut cases = Vec::new();
    let mut v = good.clone();
    v["proposal_version"] = json!("1");
    cases.push(("version as string", v));
    let mut v = good.clone();
    v["proposal_version"] = json!(1.0);
    cases.push(("version as float", v));
    let mut v = good.clone();
    v["title"] = json!(5);
    cases.push(("title as number", v));
    let mut v = good.clone();
    v["body"] = json!(null);
    cases.push(("body null", v));
    let mut v = good.clone();
    v["state_revision"] = json!(3);
    cases.push(("unknown field state_revision", v));
    let mut v = good.clone();
    v["approved"] = json!(true);
    cases.push(("unknown field approved", v));
    let mut v = good.clone();
    v.as_object_mut().map(|o| o.remove("request_key"));
    cases.push(("missing request_key", v));
    cases.push(("array body", json!([good.clone()])));
    for (what, body) in cases {
        w.api
            .post(&path, &w.bot_auth, &body)
            .await?
            .expect(422, what)?;
    }
    // Confirm is just as strict.
    let id2 = w.prepare("t", "s").await?;
    let d2 = w.digest(id2).await?;
    let mut extra = triple(&d2);
    extra["request_key"] = json!(key());
    w.api
        .post(
            &format!("{}/confirm", w.grant_path(id2)),
            &w.bot_auth,
            &extra,
        )
        .await?
        .expect(422, "confirm with extra field")?;
    let mut typed = triple(&d2);
    typed["proposal_version"] = json!(true);
    w.api
        .post(
            &format!("{}/confirm", w.grant_path(id2)),
            &w.bot_auth,
            &typed,
        )
        .await?
        .expect(422, "confirm version bool")?;
    w.api
        .raw(
            Method::POST,
            &format!("{}/confirm", w.grant_path(id2)),
            &w.bot_auth,
            json_ct,
            b"nope".to_vec(),
        )
        .await?
        .expect(400, "confirm malformed")?;
    check!(
        w.grant(id2).await?["state_revision"] == 1,
        "a refused confirm changed the grant"
    );
    check!(w.issue_count().await? == 0, "bad input wrote an Issue");
    Ok(())
}

/// NUL, blank and overlong titles, oversized bodies and non-canonical keys
/// are 422 on both backends; the largest allowed values pass whole.
pub async fn text_values(env: Arc<Env>) -> TestResult {
    let w = World::new(&env).await?;
    let (id, digest) = w.active_grant().await?;
    let path = format!("{}/issues", w.grant_path(id));
    let upper = key().to_uppercase();
    let v1 = "9b2f8c1e-1d2a-1c3b-8a9d-0123456789ab".to_string();
    let cases: Vec<(&str, serde_json::Value)> = vec![
        ("NUL in title", submission(&digest, &key(), "a\u{0}b", "x")),
        ("NUL in body", submission(&digest, &key(), "t", "x\u{0}")),
        ("blank title", submission(&digest, &key(), " \t\r\n", "x")),
        ("empty title", submission(&digest, &key(), "", "x")),
        (
            "256-character title",
            submission(&digest, &key(), &"é".repeat(256), "x"),
        ),
        (
            "body over 262144 bytes",
            submission(&digest, &key(), "t", &"b".repeat(262_145)),
        ),
        ("uppercase key", submission(&digest, &upper, "t", "x")),
        ("UUIDv1 key", submission(&digest, &v1, "t", "x")),
        ("non-UUID key", submission(&digest, "my-key", "t", "x")),
    ];
    for (what, body) in cases {
        w.api
            .post(&path, &w.bot_auth, &body)
            .await?
            .expect(422, what)?;
    }
    check!(w.issue_count().await? == 0, "refused text wrote an Issue");
    // The largest body in its largest JSON form (every byte a \u00XX escape)
    // still fits under the transport limit.
    let controls = "\u{1}".repeat(262_144);
    w.api
        .post(
            &path,
            &w.bot_auth,
            &submission(&digest, &key(), "controls", &controls),
        )
        .await?
        .expect(201, "maximal escaped body")?;
    let title = "é".repeat(255);
    let body = "b".repeat(262_144);
    let made = w
        .api
        .post(
            &path,
            &w.bot_auth,
            &submission(&digest, &key(), &title, &body),
        )
        .await?
        .expect(201, "largest values")?
        .json();
    let index = made["submission"]["issue"]["index"]
        .as_i64()
        .ok_or("index")?;
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
        issue["title"] == title.as_str() && issue["body"].as_str().map(str::len) == Some(262_144),
        "largest values not kept whole"
    );
    // NUL through the other surfaces too.
    w.api
        .post(
            &format!("/api/v1/repos/{}/{}/issues", w.owner, w.repo),
            &w.bot_auth,
            &json!({"title": "x\u{0}", "body": ""}),
        )
        .await?
        .expect(422, "NUL in ordinary issue")?;
    w.api
        .post(
            "/api/v1/admin/users",
            &w.admin,
            &json!({"login": "nul\u{0}user", "email": "n@x.test", "type": "bot"}),
        )
        .await?
        .expect(422, "NUL in login")?;
    let resp = w
        .post_prepare(
            &w.repo,
            &[("agent", &w.bot), ("task", "a\u{0}b"), ("summary", "s")],
        )
        .await?;
    check!(resp.status == 422, "NUL in task form: {}", resp.status);
    let resp = w
        .post_prepare(
            &w.repo,
            &[("agent", &w.owner), ("task", "t"), ("summary", "s")],
        )
        .await?;
    check!(resp.status == 422, "human as agent: {}", resp.status);
    // The largest task and summary, percent-encoded non-ASCII, are accepted
    // whole; one byte more is 422.
    let big = "é".repeat(131_072);
    let id = w.prepare(&big, &big).await?;
    let grant = w.grant(id).await?;
    check!(
        grant["task"] == big.as_str() && grant["summary"] == big.as_str(),
        "largest task not kept whole"
    );
    let over = format!("{big}x");
    let resp = w
        .post_prepare(
            &w.repo,
            &[("agent", &w.bot), ("task", &over), ("summary", "s")],
        )
        .await?;
    check!(resp.status == 422, "task over the limit: {}", resp.status);
    Ok(())
}

/// Bad query values are 400, bad path values 404, never a 500 or a redirect.
pub async fn queries_and_paths(env: Arc<Env>) -> TestResult {
    let w = World::new(&env).await?;
    for query in [
        "page=0",
        "page=-1",
        "page=x",
        "limit=0",
        "limit=x",
        "state=bogus",
        "page=1&page=2",
        "state=%FF",
        "page=%",
    ] {
        let resp = w
            .api
            .get(&format!("/api/v1/agent-work-grants?{query}"), &w.bot_auth)
            .await?;
        check!(
            resp.status == 400,
            "query {query}: {} {}",
            resp.status,
            resp.text
        );
    }
    w.api
        .get(
            &format!("/api/v1/repos/{}/{}/issues?limit=x", w.owner, w.repo),
            &w.bot_auth,
        )
        .await?
        .expect(400, "issues limit=x")?;
    for path in [
        format!("/api/v1/repos/{}/{}/agent-work-grants/abc", w.owner, w.repo),
        format!("/api/v1/repos/{}/{}/agent-work-grants/0", w.owner, w.repo),
        format!(
            "/api/v1/repos/{}/{}/agent-work-grants/99999999999999999999",
            w.owner, w.repo
        ),
        format!(
            "/api/v1/repos/{}/{}/agent-work-grants/1/submissions/not-a-key",
            w.owner, w.repo
        ),
        format!("/api/v1/repos/{}/%00/agent-work-grants/1", w.owner),
        format!("/api/v1/repos/{}/%FF/agent-work-grants/1", w.owner),
        "/api/v1/no/such/route".to_string(),
    ] {
        let resp = w.api.get(&path, &w.bot_auth).await?;
        check!(
            resp.status == 404,
            "path {path}: {} {}",
            resp.status,
            resp.text
        );
        check!(
            resp.json()["message"].is_string(),
            "path {path}: not a JSON error"
        );
    }
    // Wrong method on an API route: 405, JSON, no redirect.
    let resp = w
        .api
        .call(
            Method::DELETE,
            "/api/v1/agent-work-grants",
            &w.bot_auth,
            None,
        )
        .await?;
    check!(
        resp.status == 405 && resp.json()["message"].is_string(),
        "DELETE list: {}",
        resp.status
    );
    Ok(())
}
