//! Credentials: over HTTP the MCP request's own bearer wins over the process
//! configuration; stdio uses the process token or Basic credentials; with
//! none at all the call is refused locally.

use crate::support::*;
use rmcp::{model::ProtocolVersion, service::ClientLifecycleMode};
use serde_json::json;

const BASIC_ENV: &[(&str, &str)] = &[
    ("AWG_BASIC_USER", "lab-bot"),
    ("AWG_BASIC_PASSWORD", "pass-word-3b7e"),
];
/// base64("lab-bot:pass-word-3b7e").
const BASIC_HEADER: &str = "Basic bGFiLWJvdDpwYXNzLXdvcmQtM2I3ZQ==";

async fn authorization_of_one_read(upstream: &ScriptedUpstream, client: &Client) -> String {
    upstream.script(
        "GET",
        GRANT_PATH,
        Action::json(200, &grant(17, "awaiting_agent")),
    );
    ok(&call(client, "get_agent_work_grant", grant_args()).await);
    let last = upstream.requests().pop().unwrap();
    last.header("authorization")
        .expect("an Authorization header")
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_bearer_wins_over_the_process_token() {
    let upstream = ScriptedUpstream::start().await;
    let adapter = HttpAdapter::start(&upstream.origin(), TOKEN_ENV, &[]).await;
    let with_bearer = adapter.connect(Some("request-bearer-81d0")).await;
    let without = adapter.connect(None).await;
    assert_eq!(
        authorization_of_one_read(&upstream, &with_bearer).await,
        "token request-bearer-81d0"
    );
    assert_eq!(
        authorization_of_one_read(&upstream, &without).await,
        "token process-token-5c1d"
    );
    // Two sessions side by side keep their own credential.
    assert_eq!(
        authorization_of_one_read(&upstream, &with_bearer).await,
        "token request-bearer-81d0"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_bearer_wins_over_process_basic_and_basic_is_used_without_it() {
    let upstream = ScriptedUpstream::start().await;
    let adapter = HttpAdapter::start(&upstream.origin(), BASIC_ENV, &[]).await;
    let with_bearer = adapter.connect(Some("request-bearer-81d0")).await;
    assert_eq!(
        authorization_of_one_read(&upstream, &with_bearer).await,
        "token request-bearer-81d0"
    );
    let without = adapter.connect(None).await;
    assert_eq!(
        authorization_of_one_read(&upstream, &without).await,
        BASIC_HEADER
    );
    assert!(!adapter.stderr().contains("pass-word-3b7e"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_without_any_credential_is_refused_locally() {
    let upstream = ScriptedUpstream::start().await;
    let adapter = HttpAdapter::start(&upstream.origin(), &[], &[]).await;
    let client = adapter.connect(None).await;
    let error = expect_error(
        &call(&client, "get_agent_work_grant", grant_args()).await,
        "unauthenticated",
        None,
    );
    assert!(error.get("field").is_none());
    // Input is still checked first.
    let error = expect_error(
        &call(&client, "get_agent_work_grant", json!({})).await,
        "invalid_input",
        None,
    );
    assert_eq!(error["field"], "owner");
    assert_eq!(upstream.count(), 0);
    // With a bearer the same adapter works.
    let client = adapter.connect(Some("request-bearer-81d0")).await;
    assert_eq!(
        authorization_of_one_read(&upstream, &client).await,
        "token request-bearer-81d0"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_uses_the_process_token_or_basic() {
    let upstream = ScriptedUpstream::start().await;
    let config = || client_config(ProtocolVersion::V_2025_11_25);
    let client = stdio(
        &upstream.origin(),
        TOKEN_ENV,
        config(),
        ClientLifecycleMode::Initialize,
    )
    .await;
    assert_eq!(
        authorization_of_one_read(&upstream, &client).await,
        "token process-token-5c1d"
    );
    let client = stdio(
        &upstream.origin(),
        BASIC_ENV,
        config(),
        ClientLifecycleMode::Initialize,
    )
    .await;
    assert_eq!(
        authorization_of_one_read(&upstream, &client).await,
        BASIC_HEADER
    );
    let client = stdio(
        &upstream.origin(),
        &[],
        config(),
        ClientLifecycleMode::Initialize,
    )
    .await;
    let before = upstream.count();
    expect_error(
        &call(&client, "get_agent_work_grant", grant_args()).await,
        "unauthenticated",
        None,
    );
    assert_eq!(upstream.count(), before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn contradictory_credential_environment_stops_the_start() {
    let stderr = start_error(
        &["--core-url", "http://127.0.0.1:9"],
        &[
            ("AWG_TOKEN", "t-6a2c"),
            ("AWG_BASIC_USER", "bot"),
            ("AWG_BASIC_PASSWORD", "p-6a2c"),
        ],
    )
    .await;
    assert!(stderr.contains("AWG_TOKEN"), "{stderr}");
    assert!(
        !stderr.contains("t-6a2c") && !stderr.contains("p-6a2c"),
        "{stderr}"
    );
}
