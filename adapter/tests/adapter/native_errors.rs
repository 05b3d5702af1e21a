//! Native 400/401/403/404/409/422 keep their meaning in a bounded tool error;
//! no upstream body, `Location`, credential or raw bytes reach the caller or
//! the adapter's logs.

use crate::support::*;
use serde_json::json;

const STATUSES: [(u16, &str); 6] = [
    (400, "bad_request"),
    (401, "unauthenticated"),
    (403, "forbidden"),
    (404, "not_found"),
    (409, "conflict"),
    (422, "unprocessable"),
];

fn hostile(status: u16) -> Action {
    let body = json!({"message": format!("{SENTINEL} secret bearer-token-9e1f process-token-5c1d"), "url": "http://core/api/swagger"});
    Action::json(status, &body)
        .header("Location", &format!("http://evil.example/{SENTINEL}"))
        .header("WWW-Authenticate", &format!("token realm=\"{SENTINEL}\""))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn native_statuses_keep_their_meaning_for_reads_and_writes() {
    let upstream = ScriptedUpstream::start().await;
    let adapter = HttpAdapter::start(&upstream.origin(), TOKEN_ENV, &[]).await;
    let client = adapter.connect(Some("bearer-token-9e1f")).await;
    let mut expected_requests = 0;
    for (status, code) in STATUSES {
        let calls = [
            ("GET", GRANT_PATH, "get_agent_work_grant", grant_args()),
            (
                "POST",
                CONFIRM_PATH,
                "confirm_agent_work_grant",
                confirm_args(),
            ),
            (
                "POST",
                SUBMIT_PATH,
                "submit_agent_work_proposal",
                submit_args("t", "b"),
            ),
            (
                "GET",
                READBACK_PATH,
                "get_agent_work_submission",
                readback_args(),
            ),
            ("GET", LIST_PATH, "list_agent_work_grants", json!({})),
            (
                "GET",
                "/api/v1/repos/alice/lab",
                "get_repository",
                json!({"owner": "alice", "repo": "lab"}),
            ),
            (
                "POST",
                ISSUES_PATH,
                "create_issue",
                json!({"owner": "alice", "repo": "lab", "title": "t", "body": "b"}),
            ),
        ];
        for (method, path, tool, args) in calls {
            upstream.script(method, path, hostile(status));
            let result = call(&client, tool, args).await;
            expected_requests += 1;
            let error = expect_error(&result, code, Some(status));
            let text = error.to_string();
            for leak in [
                SENTINEL,
                "bearer-token-9e1f",
                "process-token-5c1d",
                "evil.example",
                "swagger",
            ] {
                assert!(
                    !text.contains(leak),
                    "{tool} {status} leaked {leak}: {text}"
                );
            }
            assert_eq!(
                upstream.count(),
                expected_requests,
                "{tool} {status}: one request, no retry"
            );
        }
    }
    // Nothing of it reached the logs either.
    let logs = adapter.stderr();
    for leak in [
        SENTINEL,
        "bearer-token-9e1f",
        "process-token-5c1d",
        "evil.example",
    ] {
        assert!(!logs.contains(leak), "logs leaked {leak}");
    }
    assert!(
        logs.contains("upstream answered"),
        "the adapter logs its upstream requests: {logs}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conflict_on_submit_names_no_receipt() {
    let upstream = ScriptedUpstream::start().await;
    upstream.script("POST", SUBMIT_PATH, hostile(409));
    let adapter = HttpAdapter::start(&upstream.origin(), TOKEN_ENV, &[]).await;
    let client = adapter.connect(None).await;
    let result = call(
        &client,
        "submit_agent_work_proposal",
        submit_args("t", "changed"),
    )
    .await;
    let error = expect_error(&result, "conflict", Some(409));
    assert!(error.get("field").is_none());
    assert_eq!(upstream.count(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn even_trace_logs_hold_no_credential_or_upstream_error_body() {
    let upstream = ScriptedUpstream::start().await;
    let env = [("AWG_TOKEN", "process-token-5c1d"), ("RUST_LOG", "trace")];
    let adapter = HttpAdapter::start(&upstream.origin(), &env, &[]).await;
    let client = adapter.connect(Some("bearer-token-9e1f")).await;
    upstream.script("POST", SUBMIT_PATH, hostile(409));
    expect_error(
        &call(&client, "submit_agent_work_proposal", submit_args("t", "b")).await,
        "conflict",
        Some(409),
    );
    upstream.script(
        "GET",
        GRANT_PATH,
        Action::body(200, &format!("not json {SENTINEL}")),
    );
    expect_error(
        &call(&client, "get_agent_work_grant", grant_args()).await,
        "malformed_response",
        Some(200),
    );
    let logs = adapter.stderr();
    assert!(
        logs.contains("TRACE") || logs.contains("DEBUG"),
        "RUST_LOG is honoured: {logs}"
    );
    for leak in [
        SENTINEL,
        "bearer-token-9e1f",
        "process-token-5c1d",
        "evil.example",
    ] {
        assert!(!logs.contains(leak), "trace logs leaked {leak}");
    }
}
