//! Uncertain delivery: redirects are never followed, each POST is sent exactly
//! once, and a lost response, timeout, unexpected status or malformed or
//! inconsistent write answer is `delivery_uncertain` with read-back advice.
//! The same faults on reads are `upstream_error` / `malformed_response`.

use crate::support::*;
use serde_json::{Value, json};

const REDIRECTS: [u16; 5] = [301, 302, 303, 307, 308];

fn assert_submit_advice(error: &Value) {
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("get_agent_work_submission"), "{message}");
    assert!(
        message.contains("same owner, repo, grant_id and request_key"),
        "{message}"
    );
    assert!(message.contains("never submit with a new key"), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redirects_are_never_followed() {
    let upstream = ScriptedUpstream::start().await;
    let elsewhere = ScriptedUpstream::start().await;
    let adapter = HttpAdapter::start(&upstream.origin(), TOKEN_ENV, &[]).await;
    let client = adapter.connect(None).await;
    for status in REDIRECTS {
        let same_origin = Action::body(status, "").header("Location", SUBMIT_PATH);
        let other_origin = Action::body(status, "")
            .header("Location", &format!("{}{SUBMIT_PATH}", elsewhere.origin()));
        for redirect in [same_origin, other_origin] {
            let before = upstream.count();
            upstream.script("POST", SUBMIT_PATH, redirect.clone());
            let result = call(&client, "submit_agent_work_proposal", submit_args("t", "b")).await;
            let error = expect_error(&result, "delivery_uncertain", Some(status));
            assert_submit_advice(&error);
            assert!(
                !error.to_string().contains("Location") && !error.to_string().contains("127.0.0.1")
            );
            assert_eq!(
                upstream.count(),
                before + 1,
                "exactly one POST for {status}"
            );
            upstream.script("GET", GRANT_PATH, redirect.header("X-Unused", "1"));
            let result = call(&client, "get_agent_work_grant", grant_args()).await;
            expect_error(&result, "upstream_error", Some(status));
            assert_eq!(upstream.count(), before + 2, "exactly one GET for {status}");
        }
    }
    assert_eq!(elsewhere.count(), 0, "a Location was followed");
    assert!(
        upstream
            .requests()
            .iter()
            .all(|r| r.header("authorization") == Some("token process-token-5c1d"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lost_responses_and_timeouts_are_uncertain_after_exactly_one_post() {
    let upstream = ScriptedUpstream::start().await;
    let adapter = HttpAdapter::start(
        &upstream.origin(),
        TOKEN_ENV,
        &["--upstream-timeout-ms", "400"],
    )
    .await;
    let client = adapter.connect(None).await;

    upstream.script("POST", SUBMIT_PATH, Action::Close);
    let error = expect_error(
        &call(&client, "submit_agent_work_proposal", submit_args("t", "b")).await,
        "delivery_uncertain",
        None,
    );
    assert_submit_advice(&error);
    assert_eq!(upstream.count(), 1);

    upstream.script(
        "POST",
        SUBMIT_PATH,
        Action::Hang(std::time::Duration::from_secs(3)),
    );
    let started = std::time::Instant::now();
    let error = expect_error(
        &call(&client, "submit_agent_work_proposal", submit_args("t", "b")).await,
        "delivery_uncertain",
        None,
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(2),
        "the configured timeout applies"
    );
    assert!(error["message"].as_str().unwrap().contains("timed out"));
    assert_eq!(upstream.count(), 2);

    // The caller then reads back with the same key: one GET, the receipt.
    upstream.script("GET", READBACK_PATH, Action::json(200, &receipt(KEY)));
    let answer = ok(&call(&client, "get_agent_work_submission", readback_args()).await);
    assert_eq!(answer["submission"]["request_key"], KEY);
    assert_eq!(answer["native_status"], 200);
    let posts = upstream
        .requests()
        .iter()
        .filter(|r| r.method == "POST")
        .count();
    assert_eq!(posts, 2, "no hidden second POST");

    upstream.script("POST", CONFIRM_PATH, Action::Close);
    let error = expect_error(
        &call(&client, "confirm_agent_work_grant", confirm_args()).await,
        "delivery_uncertain",
        None,
    );
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("get_agent_work_grant"),
        "{error}"
    );

    upstream.script("GET", GRANT_PATH, Action::Close);
    expect_error(
        &call(&client, "get_agent_work_grant", grant_args()).await,
        "upstream_error",
        None,
    );
    upstream.script(
        "GET",
        GRANT_PATH,
        Action::Hang(std::time::Duration::from_secs(3)),
    );
    expect_error(
        &call(&client, "get_agent_work_grant", grant_args()).await,
        "upstream_error",
        None,
    );
    assert_eq!(upstream.count(), 6);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unexpected_statuses_are_uncertain_for_writes() {
    let upstream = ScriptedUpstream::start().await;
    let adapter = HttpAdapter::start(&upstream.origin(), TOKEN_ENV, &[]).await;
    let client = adapter.connect(None).await;
    for status in [500, 502, 503, 202, 204, 418] {
        upstream.script("POST", SUBMIT_PATH, Action::json(status, &receipt(KEY)));
        let error = expect_error(
            &call(&client, "submit_agent_work_proposal", submit_args("t", "b")).await,
            "delivery_uncertain",
            Some(status),
        );
        assert_submit_advice(&error);
        upstream.script("GET", READBACK_PATH, Action::json(status, &receipt(KEY)));
        expect_error(
            &call(&client, "get_agent_work_submission", readback_args()).await,
            "upstream_error",
            Some(status),
        );
    }
    // Confirm answers 200 only; create_issue 201 only.
    upstream.script(
        "POST",
        CONFIRM_PATH,
        Action::json(201, &grant(17, "awaiting_human")),
    );
    expect_error(
        &call(&client, "confirm_agent_work_grant", confirm_args()).await,
        "delivery_uncertain",
        Some(201),
    );
    upstream.script("POST", ISSUES_PATH, Action::json(200, &issue(5, "t", "b")));
    let args = json!({"owner": "alice", "repo": "lab", "title": "t", "body": "b"});
    let error = expect_error(
        &call(&client, "create_issue", args).await,
        "delivery_uncertain",
        Some(200),
    );
    assert!(error["message"].as_str().unwrap().contains("list_issues"));
    assert_eq!(upstream.count(), 14);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_and_inconsistent_answers_publish_no_receipt() {
    let upstream = ScriptedUpstream::start().await;
    let adapter = HttpAdapter::start(&upstream.origin(), TOKEN_ENV, &[]).await;
    let client = adapter.connect(None).await;
    let mutate = |pointer: &str, value: Value| {
        let mut body = receipt(KEY);
        if pointer.is_empty() {
            return value;
        }
        *body.pointer_mut(pointer).unwrap() = value;
        body
    };
    let bad_bodies: Vec<(&str, Action)> = vec![
        (
            "not JSON",
            Action::body(201, &format!("<html>{SENTINEL}</html>")),
        ),
        (
            "truncated",
            Action::body(
                201,
                &format!("{{\"grant\": {{\"id\": 17, \"x\": \"{SENTINEL}"),
            ),
        ),
        (
            "invalid UTF-8",
            Action::Respond {
                status: 201,
                headers: vec![],
                body: b"{\"grant\": \"\xff\xfe\"}".to_vec(),
            },
        ),
        (
            "raw garbage",
            Action::Raw(
                format!("HTTP/1.1 201 Created\r\nContent-Length: 99\r\n\r\n{{{SENTINEL}")
                    .into_bytes(),
            ),
        ),
        (
            "not HTTP",
            Action::Raw(format!("{SENTINEL}\r\n\r\n").into_bytes()),
        ),
        ("array", Action::json(201, &json!([receipt(KEY)]))),
        (
            "other key",
            Action::json(
                201,
                &mutate(
                    "/submission/request_key",
                    json!("0b2f3c4d-1e2f-4a3b-8c4d-5e6f7a8b9c0d"),
                ),
            ),
        ),
        (
            "other grant",
            Action::json(201, &mutate("/grant/id", json!(18))),
        ),
        (
            "other submission grant",
            Action::json(201, &mutate("/submission/grant_id", json!(18))),
        ),
        (
            "other repository",
            Action::json(201, &mutate("/grant/repository/name", json!("other"))),
        ),
        (
            "issue elsewhere",
            Action::json(201, &mutate("/submission/issue/repository_id", json!(4))),
        ),
        (
            "no agent",
            Action::json(201, &mutate("/grant/agent", json!(null))),
        ),
        (
            "other submitter",
            Action::json(201, &mutate("/submission/submitted_by/id", json!(10))),
        ),
        (
            "id as string",
            Action::json(201, &mutate("/grant/id", json!("17"))),
        ),
        (
            "no submission",
            Action::json(201, &mutate("/submission", json!(null))),
        ),
        (
            "malformed digest",
            Action::json(201, &mutate("/grant/proposal/digest", json!("ab"))),
        ),
        (
            "other digest",
            Action::json(
                201,
                &mutate("/grant/proposal/digest", json!(DIGEST.replace('0', "1"))),
            ),
        ),
        (
            "not active",
            Action::json(201, &mutate("/grant/state", json!("revoked"))),
        ),
        (
            "review accepted",
            Action::json(201, &mutate("/submission/review_state", json!("accepted"))),
        ),
    ];
    for (what, action) in bad_bodies {
        // A read-back sends no triple and may find the grant revoked: those two
        // answers are inconsistent only as answers to a submit.
        let bad_for_reads = !matches!(what, "not active" | "other digest");
        let before = upstream.count();
        upstream.script("POST", SUBMIT_PATH, action.clone());
        let result = call(&client, "submit_agent_work_proposal", submit_args("t", "b")).await;
        let error = expect_error(&result, "delivery_uncertain", error_status(&action));
        assert_submit_advice(&error);
        assert!(!error.to_string().contains(SENTINEL), "{what} leaked");
        assert_eq!(upstream.count(), before + 1, "{what}: one POST");
        // The same body on the read-back route is malformed_response (or upstream_error if not HTTP).
        let read_action = match action {
            Action::Respond { headers, body, .. } => Action::Respond {
                status: 200,
                headers,
                body,
            },
            Action::Raw(bytes) => Action::Raw(
                String::from_utf8_lossy(&bytes)
                    .replace("201 Created", "200 OK")
                    .into_bytes(),
            ),
            other => other,
        };
        if !bad_for_reads {
            continue;
        }
        upstream.script("GET", READBACK_PATH, read_action);
        let result = call(&client, "get_agent_work_submission", readback_args()).await;
        let error = err(&result);
        assert!(
            error["code"] == "malformed_response" || error["code"] == "upstream_error",
            "{what}: {error}"
        );
        assert!(!error.to_string().contains(SENTINEL), "{what} leaked");
    }
    assert!(
        !adapter.stderr().contains(SENTINEL),
        "logs leaked upstream bytes"
    );
}

fn error_status(action: &Action) -> Option<u16> {
    match action {
        Action::Respond { status, .. } => Some(*status),
        Action::Raw(bytes) if bytes.starts_with(b"HTTP/1.1 201") => Some(201),
        _ => None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn new_and_replayed_submissions_succeed_with_their_native_status() {
    let upstream = ScriptedUpstream::start().await;
    let adapter = HttpAdapter::start(&upstream.origin(), TOKEN_ENV, &[]).await;
    let client = adapter.connect(None).await;
    upstream.script("POST", SUBMIT_PATH, Action::json(201, &receipt(KEY)));
    upstream.script("POST", SUBMIT_PATH, Action::json(200, &receipt(KEY)));
    let first = ok(&call(&client, "submit_agent_work_proposal", submit_args("t", "b")).await);
    let replay = ok(&call(&client, "submit_agent_work_proposal", submit_args("t", "b")).await);
    assert_eq!(first["native_status"], 201);
    assert_eq!(replay["native_status"], 200);
    assert_eq!(first["submission"], replay["submission"]);
    assert_eq!(
        first.as_object().unwrap().len(),
        3,
        "{{grant, submission, native_status}}"
    );
    upstream.script(
        "POST",
        CONFIRM_PATH,
        Action::json(200, &grant(17, "awaiting_human")),
    );
    let confirmed = ok(&call(&client, "confirm_agent_work_grant", confirm_args()).await);
    assert_eq!(
        confirmed,
        json!({"grant": grant(17, "awaiting_human"), "native_status": 200})
    );
    upstream.script(
        "GET",
        "/api/v1/repos/ALICE/Lab/agent-work-grants/17",
        Action::json(200, &grant(17, "awaiting_agent")),
    );
    let read = ok(&call(
        &client,
        "get_agent_work_grant",
        json!({"owner": "ALICE", "repo": "Lab", "grant_id": 17}),
    )
    .await);
    assert_eq!(read["grant"]["id"], 17);
    assert_eq!(
        upstream.requests()[3].path,
        "/api/v1/repos/ALICE/Lab/agent-work-grants/17"
    );
    // A confirm answer still awaiting_agent is inconsistent.
    upstream.script(
        "POST",
        CONFIRM_PATH,
        Action::json(200, &grant(17, "awaiting_agent")),
    );
    expect_error(
        &call(&client, "confirm_agent_work_grant", confirm_args()).await,
        "delivery_uncertain",
        Some(200),
    );
}
