//! The whole flow against a real refcore: a human prepares and approves
//! through real HTML forms, the bot works only through the adapter (over
//! Streamable HTTP with its own bearer, and over stdio with the process
//! token), and every answer is the Core's own.

use crate::support::{refcore::*, *};
use rmcp::{model::ProtocolVersion, service::ClientLifecycleMode};
use serde_json::{Value, json};

const OWNER: &str = "alice";
const OWNER_PASSWORD: &str = "alice-password-77e1";
const REPO: &str = "lab";
const BOT: &str = "lab-bot";

fn body_text() -> String {
    let unit = "Ünïcödé e\u{301} 👩🏽‍💻 日本語\r\n\t\"q\" \\ <b>&amp;</b>  \r\n";
    let mut text = String::from("  leading\r\n");
    while text.len() < 250 * 1024 {
        text.push_str(unit);
    }
    text
}

fn at(owner_repo_grant: i64) -> Value {
    json!({"owner": OWNER, "repo": REPO, "grant_id": owner_repo_grant})
}

fn with(mut base: Value, extra: Value) -> Value {
    for (k, v) in extra.as_object().unwrap() {
        base[k] = v.clone();
    }
    base
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_whole_flow_against_refcore() {
    let mut core = Refcore::start().await;
    core.user(OWNER, "individual", OWNER_PASSWORD).await;
    core.user(BOT, "bot", "bot-password-unused-1").await;
    core.user("other-bot", "bot", "bot-password-unused-2").await;
    core.admin(
        reqwest::Method::POST,
        &format!("/api/v1/admin/users/{OWNER}/repos"),
        json!({"name": REPO, "private": true}),
        201,
    )
    .await;
    for bot in [BOT, "other-bot"] {
        core.admin(
            reqwest::Method::PUT,
            &format!("/api/v1/repos/{OWNER}/{REPO}/collaborators/{bot}"),
            json!({"permission": "write"}),
            204,
        )
        .await;
    }
    let bot_token = core.token(BOT, &["read:repository", "write:issue"]).await;
    let read_only_token = core.token(BOT, &["read:repository"]).await;
    let other_token = core
        .token("other-bot", &["read:repository", "write:issue"])
        .await;
    let alice = Browser::new(&core.url);
    alice.login(OWNER, OWNER_PASSWORD).await;
    let task = "Triage the flaky tests: «whole» text, e\u{301}, 🧪.";
    let id = alice
        .prepare(OWNER, REPO, BOT, task, "Open one issue per flaky test.")
        .await;

    // The adapter runs with no process credential at all: the bot's own bearer is used.
    let adapter = HttpAdapter::start(&core.url, &[], &[]).await;
    let bot = adapter.connect(Some(&bot_token)).await;

    let listed = ok(&call(&bot, "list_agent_work_grants", json!({})).await);
    assert_eq!(listed["grants"][0]["id"], id);
    assert_eq!(
        (listed["has_more"].clone(), listed["snapshot"].clone()),
        (json!(false), json!(false))
    );
    let grant = ok(&call(&bot, "get_agent_work_grant", at(id)).await)["grant"].clone();
    assert_eq!(grant["state"], "awaiting_agent");
    assert_eq!(grant["task"], task);
    let triple = json!({
        "proposal_schema": grant["proposal"]["schema"], "proposal_version": grant["proposal"]["version"],
        "proposal_digest": grant["proposal"]["digest"],
    });

    // Wrong bot and missing scope are the Core's refusals, kept.
    let other = adapter.connect(Some(&other_token)).await;
    expect_error(
        &call(&other, "get_agent_work_grant", at(id)).await,
        "not_found",
        Some(404),
    );
    let read_only = adapter.connect(Some(&read_only_token)).await;
    expect_error(
        &call(
            &read_only,
            "confirm_agent_work_grant",
            with(at(id), triple.clone()),
        )
        .await,
        "forbidden",
        Some(403),
    );
    let unknown = adapter.connect(Some("not-a-real-token")).await;
    expect_error(
        &call(&unknown, "get_agent_work_grant", at(id)).await,
        "unauthenticated",
        Some(401),
    );

    // Submitting before approval is a conflict; confirming is not approval.
    let key = uuid::Uuid::new_v4().to_string();
    let text = body_text();
    let submit = with(
        at(id),
        with(
            triple.clone(),
            json!({"request_key": key, "title": "Flaky: test_a", "body": text}),
        ),
    );
    expect_error(
        &call(&bot, "submit_agent_work_proposal", submit.clone()).await,
        "conflict",
        Some(409),
    );
    let confirmed = ok(&call(
        &bot,
        "confirm_agent_work_grant",
        with(at(id), triple.clone()),
    )
    .await);
    assert_eq!(
        (
            confirmed["native_status"].clone(),
            confirmed["grant"]["state"].clone()
        ),
        (json!(200), json!("awaiting_human"))
    );
    expect_error(
        &call(
            &bot,
            "confirm_agent_work_grant",
            with(at(id), triple.clone()),
        )
        .await,
        "conflict",
        Some(409),
    );
    expect_error(
        &call(&bot, "submit_agent_work_proposal", submit.clone()).await,
        "conflict",
        Some(409),
    );

    alice.decide(OWNER, REPO, id, "approve").await;
    let created = ok(&call(&bot, "submit_agent_work_proposal", submit.clone()).await);
    assert_eq!(created["native_status"], 201);
    assert_eq!(created["submission"]["request_key"], key.as_str());
    assert_eq!(created["submission"]["status"], "submitted");
    let replay = ok(&call(&bot, "submit_agent_work_proposal", submit.clone()).await);
    assert_eq!(replay["native_status"], 200);
    assert_eq!(replay["submission"], created["submission"]);
    let changed = with(submit.clone(), json!({"body": "something else"}));
    expect_error(
        &call(&bot, "submit_agent_work_proposal", changed).await,
        "conflict",
        Some(409),
    );

    // The Issue holds the whole body, posted by the bot, marked with the grant.
    let index = created["submission"]["issue"]["index"].clone();
    let issue = ok(&call(
        &bot,
        "get_issue",
        json!({"owner": OWNER, "repo": REPO, "index": index}),
    )
    .await)["issue"]
        .clone();
    assert!(
        issue["body"].as_str().unwrap().as_bytes() == text.as_bytes(),
        "the body was altered"
    );
    assert_eq!(issue["user"]["login"], BOT);
    assert_eq!(
        issue["agent_work_grant"],
        json!({"grant_id": id, "request_key": key})
    );

    // Ordinary activity through the public tools carries no marker.
    let plain = ok(&call(
        &bot,
        "create_issue",
        json!({"owner": OWNER, "repo": REPO, "title": "Ordinary", "body": "plain"}),
    )
    .await);
    assert_eq!(
        (
            plain["native_status"].clone(),
            plain["issue"]["agent_work_grant"].clone()
        ),
        (json!(201), Value::Null)
    );
    let issues = ok(&call(&bot, "list_issues", json!({"owner": OWNER, "repo": REPO})).await);
    assert_eq!(issues["issues"].as_array().unwrap().len(), 2);
    assert_eq!(issues["has_more"], false);
    let repository = ok(&call(
        &bot,
        "get_repository",
        json!({"owner": OWNER, "repo": REPO}),
    )
    .await);
    assert_eq!(
        repository["repository"]["full_name"],
        format!("{OWNER}/{REPO}")
    );

    // Over stdio with the process token, the same receipt reads back.
    let stdio_env = [("AWG_TOKEN", bot_token.as_str())];
    let stdio_bot = stdio(
        &core.url,
        &stdio_env,
        client_config(ProtocolVersion::V_2025_06_18),
        ClientLifecycleMode::Initialize,
    )
    .await;
    let readback_args = with(at(id), json!({"request_key": key}));
    let readback = ok(&call(
        &stdio_bot,
        "get_agent_work_submission",
        readback_args.clone(),
    )
    .await);
    assert_eq!(readback["submission"], created["submission"]);

    // Withdrawal blocks confirm and submit; the receipt still reconciles.
    alice.decide(OWNER, REPO, id, "withdraw").await;
    let fresh = with(
        submit.clone(),
        json!({"request_key": uuid::Uuid::new_v4().to_string()}),
    );
    expect_error(
        &call(&bot, "submit_agent_work_proposal", fresh).await,
        "conflict",
        Some(409),
    );
    let after = ok(&call(&bot, "get_agent_work_submission", readback_args).await);
    assert_eq!(after["grant"]["state"], "revoked");
    assert_eq!(after["submission"]["status"], "submitted");
    let revoked = ok(&call(&bot, "list_agent_work_grants", json!({"state": "revoked"})).await);
    assert_eq!(revoked["grants"].as_array().unwrap().len(), 1);

    // 31 pending grants make two real pages of 30 and 1.
    for n in 0..31 {
        alice
            .prepare(OWNER, REPO, BOT, &format!("task {n}"), "summary")
            .await;
    }
    let first = ok(&call(&bot, "list_agent_work_grants", json!({})).await);
    assert_eq!(first["grants"].as_array().unwrap().len(), 30);
    assert_eq!(
        (first["has_more"].clone(), first["next_page"].clone()),
        (json!(true), json!(2))
    );
    let second = ok(&call(&bot, "list_agent_work_grants", json!({"page": 2})).await);
    assert_eq!(second["grants"].as_array().unwrap().len(), 1);
    assert_eq!(
        (second["has_more"].clone(), second["next_page"].clone()),
        (json!(false), Value::Null)
    );

    // The setup credential never reached the adapter's logs.
    let logs = adapter.stderr();
    for secret in [
        core.admin_token.as_str(),
        bot_token.as_str(),
        OWNER_PASSWORD,
    ] {
        assert!(
            !logs.contains(secret),
            "a credential reached the adapter's logs"
        );
    }
    assert!(core.is_running());
}

/// Prepares, confirms (through the adapter) and approves a grant; returns its id and triple.
async fn active_grant(alice: &Browser, bot: &Client, task: &str) -> (i64, Value) {
    let id = alice.prepare(OWNER, REPO, BOT, task, "summary").await;
    let grant = ok(&call(bot, "get_agent_work_grant", at(id)).await)["grant"].clone();
    let triple = json!({
        "proposal_schema": grant["proposal"]["schema"], "proposal_version": grant["proposal"]["version"],
        "proposal_digest": grant["proposal"]["digest"],
    });
    ok(&call(
        bot,
        "confirm_agent_work_grant",
        with(at(id), triple.clone()),
    )
    .await);
    alice.decide(OWNER, REPO, id, "approve").await;
    (id, triple)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tombstones_and_access_loss_read_back_through_the_adapter() {
    let core = Refcore::start().await;
    core.user(OWNER, "individual", OWNER_PASSWORD).await;
    core.user(BOT, "bot", "bot-password-unused-1").await;
    for repo in [REPO, "elsewhere"] {
        core.admin(
            reqwest::Method::POST,
            &format!("/api/v1/admin/users/{OWNER}/repos"),
            json!({"name": repo, "private": true}),
            201,
        )
        .await;
    }
    let collaborator = format!("/api/v1/repos/{OWNER}/{REPO}/collaborators/{BOT}");
    core.admin(
        reqwest::Method::PUT,
        &collaborator,
        json!({"permission": "write"}),
        204,
    )
    .await;
    let bot_token = core.token(BOT, &["read:repository", "write:issue"]).await;
    let alice = Browser::new(&core.url);
    alice.login(OWNER, OWNER_PASSWORD).await;
    let adapter = HttpAdapter::start(&core.url, &[("AWG_TOKEN", &bot_token)], &[]).await;
    let bot = adapter.connect(None).await;

    // Deleted Issue: the receipt says issue_deleted and the key stays spent.
    let (deleted_grant, triple) = active_grant(&alice, &bot, "first task").await;
    let key = uuid::Uuid::new_v4().to_string();
    let submit = with(
        at(deleted_grant),
        with(
            triple,
            json!({"request_key": key, "title": "to delete", "body": "b"}),
        ),
    );
    let created = ok(&call(&bot, "submit_agent_work_proposal", submit.clone()).await);
    let index = created["submission"]["issue"]["index"].as_i64().unwrap();
    core.admin(
        reqwest::Method::DELETE,
        &format!("/api/v1/repos/{OWNER}/{REPO}/issues/{index}"),
        Value::Null,
        204,
    )
    .await;
    let readback = ok(&call(
        &bot,
        "get_agent_work_submission",
        with(at(deleted_grant), json!({"request_key": key})),
    )
    .await);
    assert_eq!(readback["submission"]["status"], "issue_deleted");
    assert_eq!(
        readback["submission"]["issue"], created["submission"]["issue"],
        "the receipt is historical"
    );
    let replay = ok(&call(&bot, "submit_agent_work_proposal", submit).await);
    assert_eq!(
        (
            replay["native_status"].clone(),
            replay["submission"]["status"].clone()
        ),
        (json!(200), json!("issue_deleted"))
    );

    // Moved Issue: issue_binding_changed, receipt unchanged.
    let (moved_grant, triple) = active_grant(&alice, &bot, "second task").await;
    let key = uuid::Uuid::new_v4().to_string();
    let submit = with(
        at(moved_grant),
        with(
            triple,
            json!({"request_key": key, "title": "to move", "body": "b"}),
        ),
    );
    let created = ok(&call(&bot, "submit_agent_work_proposal", submit).await);
    let issue_id = created["submission"]["issue"]["id"].as_i64().unwrap();
    core.admin(
        reqwest::Method::POST,
        &format!("/api/v1/admin/issues/{issue_id}/move"),
        json!({"owner": OWNER, "repo": "elsewhere"}),
        200,
    )
    .await;
    let readback = ok(&call(
        &bot,
        "get_agent_work_submission",
        with(at(moved_grant), json!({"request_key": key})),
    )
    .await);
    assert_eq!(readback["submission"]["status"], "issue_binding_changed");
    assert_eq!(
        readback["submission"]["issue"],
        created["submission"]["issue"]
    );

    // Access loss: the collaborator is removed; the Core's 404 is kept and the list omits the grants.
    assert_eq!(
        ok(&call(&bot, "list_agent_work_grants", json!({"state": "all"})).await)["grants"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    core.admin(reqwest::Method::DELETE, &collaborator, Value::Null, 204)
        .await;
    expect_error(
        &call(&bot, "get_agent_work_grant", at(moved_grant)).await,
        "not_found",
        Some(404),
    );
    let listed = ok(&call(&bot, "list_agent_work_grants", json!({"state": "all"})).await);
    assert_eq!(listed["grants"], json!([]));
}
