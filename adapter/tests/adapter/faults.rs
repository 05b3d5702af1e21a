//! The built-in faults (`docs/faults.md`). A default build refuses a set
//! `AWG_FAULT`; a faults build refuses unknown names, and each fault really
//! breaks the one rule of spec §6 it names, seen at a scripted upstream.
//! Without `AWG_FAULT` a faults build passes this crate's whole suite.

use std::process::{Command, Stdio};

/// Starts the adapter on stdio with `AWG_FAULT=value`; it must exit with
/// status 2 before serving. Returns its stderr.
fn refused_start(value: &str) -> String {
    let out = Command::new(crate::support::BIN)
        .env_clear()
        .args(["--core-url", "http://127.0.0.1:9"])
        .env("AWG_TOKEN", "process-token-5c1d")
        .env("AWG_FAULT", value)
        .stdin(Stdio::null())
        .output()
        .expect("spawn awg-mcp");
    assert_eq!(out.status.code(), Some(2), "AWG_FAULT={value}: {out:?}");
    assert!(out.stdout.is_empty(), "served anyway: {out:?}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[cfg(not(feature = "faults"))]
#[test]
fn a_default_build_refuses_a_fault() {
    let stderr = refused_start("adapter-retries-post");
    assert!(
        stderr.contains("AWG_FAULT is set") && stderr.contains("`faults` feature"),
        "{stderr}"
    );
}

#[cfg(feature = "faults")]
mod with_faults {
    use serde_json::{Value, json};

    use super::refused_start;
    use crate::support::*;

    /// An HTTP adapter with the process token and `AWG_FAULT=fault`, and a client.
    async fn faulty(
        upstream: &ScriptedUpstream,
        fault: &str,
        bearer: Option<&str>,
    ) -> (HttpAdapter, Client) {
        let env = [TOKEN_ENV[0], ("AWG_FAULT", fault)];
        let adapter = HttpAdapter::start(&upstream.origin(), &env, &[]).await;
        let client = adapter.connect(bearer).await;
        (adapter, client)
    }

    #[test]
    fn an_unknown_fault_is_refused_listing_the_valid_names() {
        let stderr = refused_start("adapter-retries");
        for name in [
            "adapter-retries-post",
            "adapter-publishes-inconsistent-receipt",
        ] {
            assert!(stderr.contains(name), "{name} not listed: {stderr}");
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn follows_redirect_reaches_another_origin() {
        let upstream = ScriptedUpstream::start().await;
        let elsewhere = ScriptedUpstream::start().await;
        let (_adapter, client) = faulty(&upstream, "adapter-follows-redirect", None).await;
        let location = format!("{}{GRANT_PATH}", elsewhere.origin());
        upstream.script(
            "GET",
            GRANT_PATH,
            Action::body(302, "").header("Location", &location),
        );
        elsewhere.script(
            "GET",
            GRANT_PATH,
            Action::json(200, &grant(17, "awaiting_agent")),
        );
        ok(&call(&client, "get_agent_work_grant", grant_args()).await);
        assert_eq!(elsewhere.count(), 1);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn retries_post_sends_a_hidden_second_post() {
        let upstream = ScriptedUpstream::start().await;
        let (_adapter, client) = faulty(&upstream, "adapter-retries-post", None).await;
        upstream.script("POST", SUBMIT_PATH, Action::Close);
        upstream.script("POST", SUBMIT_PATH, Action::json(200, &receipt(KEY)));
        ok(&call(&client, "submit_agent_work_proposal", submit_args("t", "b")).await);
        assert_eq!(upstream.count(), 2, "the lost POST was sent again");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn echoes_upstream_body_in_the_error() {
        let upstream = ScriptedUpstream::start().await;
        let (_adapter, client) = faulty(&upstream, "adapter-echoes-upstream-body", None).await;
        let body = json!({"message": SENTINEL, "url": "http://core/api/v1/openapi.json"});
        upstream.script("GET", GRANT_PATH, Action::json(409, &body));
        let error = expect_error(
            &call(&client, "get_agent_work_grant", grant_args()).await,
            "conflict",
            Some(409),
        );
        assert!(
            error["message"].as_str().unwrap().contains(SENTINEL),
            "{error}"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn accepts_string_ids() {
        let upstream = ScriptedUpstream::start().await;
        let (_adapter, client) = faulty(&upstream, "adapter-accepts-string-ids", None).await;
        upstream.script(
            "GET",
            GRANT_PATH,
            Action::json(200, &grant(17, "awaiting_agent")),
        );
        let mut args = grant_args();
        args["grant_id"] = json!("17");
        ok(&call(&client, "get_agent_work_grant", args).await);
        assert_eq!(upstream.count(), 1);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn invents_a_request_key() {
        let upstream = ScriptedUpstream::start().await;
        let (_adapter, client) = faulty(&upstream, "adapter-invents-request-key", None).await;
        let mut args = submit_args("t", "b");
        args.as_object_mut().unwrap().remove("request_key");
        // The canned receipt names another key, so the answer itself is refused;
        // the breach is the POST that reached the Core with a made-up key.
        upstream.script("POST", SUBMIT_PATH, Action::json(201, &receipt(KEY)));
        call(&client, "submit_agent_work_proposal", args).await;
        let posted: Value = upstream.requests()[0].json();
        let key = posted["request_key"]
            .as_str()
            .expect("a request_key was sent");
        assert!(awg_mcp::validate::is_uuid_v4(key) && key != KEY, "{key}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn forwards_the_process_credential_over_the_bearer() {
        let upstream = ScriptedUpstream::start().await;
        let (_adapter, client) = faulty(
            &upstream,
            "adapter-forwards-wrong-credential",
            Some("request-bearer-81d0"),
        )
        .await;
        upstream.script(
            "GET",
            GRANT_PATH,
            Action::json(200, &grant(17, "awaiting_agent")),
        );
        ok(&call(&client, "get_agent_work_grant", grant_args()).await);
        let sent = upstream.requests()[0]
            .header("authorization")
            .map(str::to_owned);
        assert_eq!(sent.as_deref(), Some("token process-token-5c1d"));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn publishes_an_inconsistent_receipt() {
        let upstream = ScriptedUpstream::start().await;
        let (_adapter, client) =
            faulty(&upstream, "adapter-publishes-inconsistent-receipt", None).await;
        let mut other = receipt(KEY);
        other["submission"]["request_key"] = json!("00000000-0000-4000-8000-000000000000");
        upstream.script("POST", SUBMIT_PATH, Action::json(201, &other));
        let published =
            ok(&call(&client, "submit_agent_work_proposal", submit_args("t", "b")).await);
        assert_ne!(published["submission"]["request_key"], KEY);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn ignores_origin_serves_a_foreign_page() {
        let upstream = ScriptedUpstream::start().await;
        let (adapter, _client) = faulty(&upstream, "adapter-ignores-origin", None).await;
        let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "page", "version": "0"}}});
        let answer = reqwest::Client::new()
            .post(&adapter.url)
            .header("Origin", "https://evil.example")
            .header("Accept", "application/json, text/event-stream")
            .json(&initialize)
            .send()
            .await
            .unwrap();
        // The honest adapter answers 403.
        assert_eq!(answer.status().as_u16(), 200);
        assert!(answer.headers().contains_key("mcp-session-id"));
    }
}
