//! Whole text both ways: a 250 KiB body with multi-byte UTF-8, combining
//! marks, emoji and CRLF reaches the Core and comes back byte-identical,
//! over Streamable HTTP and over stdio.

use crate::support::*;
use rmcp::{model::ProtocolVersion, service::ClientLifecycleMode};
use serde_json::{Value, json};

/// About 250 KiB of awkward text.
fn awkward_text() -> String {
    let unit = "Ünïcödé e\u{301} a\u{308}\u{323} 👩🏽‍💻🧪 日本語テキスト\r\n\ttabs \"quotes\" \\ <b>&amp;</b> \u{200d}\u{feff} trailing spaces   \r\n";
    let mut text = String::from("  leading spaces kept\r\n");
    while text.len() < 250 * 1024 {
        text.push_str(unit);
    }
    text.push_str("\n\n");
    text
}

async fn round_trip(upstream: &ScriptedUpstream, client: &Client, text: &str) {
    // Submit: the Core receives exactly the text.
    upstream.script("POST", SUBMIT_PATH, Action::json(201, &receipt(KEY)));
    ok(&call(
        client,
        "submit_agent_work_proposal",
        submit_args(text, text),
    )
    .await);
    let sent = upstream.requests().pop().unwrap().json();
    assert!(
        sent["body"].as_str().unwrap() == text,
        "submit body altered"
    );
    assert!(
        sent["title"].as_str().unwrap() == text,
        "submit title altered"
    );
    // create_issue: sent whole, and the Core's echo comes back whole.
    upstream.script(
        "POST",
        ISSUES_PATH,
        Action::json(201, &issue(7, text, text)),
    );
    let args = json!({"owner": "alice", "repo": "lab", "title": text, "body": text});
    let answer = ok(&call(client, "create_issue", args).await);
    let sent = upstream.requests().pop().unwrap().json();
    assert!(
        sent["body"].as_str().unwrap().as_bytes() == text.as_bytes(),
        "create body altered"
    );
    assert!(
        answer["issue"]["body"].as_str().unwrap().as_bytes() == text.as_bytes(),
        "returned body altered"
    );
    // A grant's task and summary come back whole.
    let mut g = grant(17, "awaiting_agent");
    g["task"] = Value::from(text);
    g["summary"] = Value::from(text);
    upstream.script("GET", GRANT_PATH, Action::json(200, &g));
    let answer = ok(&call(client, "get_agent_work_grant", grant_args()).await);
    assert!(
        answer["grant"]["task"].as_str().unwrap().as_bytes() == text.as_bytes(),
        "task altered"
    );
    assert!(
        answer["grant"]["summary"] == g["summary"],
        "summary altered"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn whole_text_over_http() {
    let text = awkward_text();
    assert!(text.len() >= 250 * 1024 && text.contains("\r\n") && text.contains('\u{301}'));
    let upstream = ScriptedUpstream::start().await;
    let adapter = HttpAdapter::start(&upstream.origin(), TOKEN_ENV, &[]).await;
    let client = adapter.connect(None).await;
    round_trip(&upstream, &client, &text).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn whole_text_over_stdio() {
    let text = awkward_text();
    let upstream = ScriptedUpstream::start().await;
    let client = stdio(
        &upstream.origin(),
        TOKEN_ENV,
        client_config(ProtocolVersion::V_2025_11_25),
        ClientLifecycleMode::Initialize,
    )
    .await;
    round_trip(&upstream, &client, &text).await;
}
