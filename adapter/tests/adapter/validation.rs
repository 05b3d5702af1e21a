//! Strict inputs (spec §6): every refusal is a tool error naming the field,
//! made before any upstream request — counted at the upstream.

use crate::support::*;
use rmcp::{model::ProtocolVersion, service::ClientLifecycleMode};
use serde_json::{Value, json};

/// `(tool, arguments, offending field)`.
fn cases() -> Vec<(&'static str, Value, &'static str)> {
    let with = |base: Value, key: &str, value: Value| {
        let mut args = base;
        args[key] = value;
        args
    };
    let without = |base: Value, key: &str| {
        let mut args = base;
        args.as_object_mut().unwrap().remove(key);
        args
    };
    let mut cases = vec![];
    // IDs: JSON integers in 1..=i64::MAX only.
    for bad in [
        json!("17"),
        json!(17.0),
        json!(17.5),
        json!(true),
        json!(0),
        json!(-17),
        json!(9_223_372_036_854_775_808u64),
        json!(null),
        json!([17]),
    ] {
        cases.push((
            "get_agent_work_grant",
            with(grant_args(), "grant_id", bad.clone()),
            "grant_id",
        ));
        cases.push((
            "submit_agent_work_proposal",
            with(submit_args("t", "b"), "grant_id", bad),
            "grant_id",
        ));
    }
    cases.push((
        "get_agent_work_grant",
        without(grant_args(), "grant_id"),
        "grant_id",
    ));
    // owner / repo: single path segments.
    for bad in [
        json!("a/b"),
        json!(".."),
        json!("."),
        json!(""),
        json!("a b"),
        json!("a%2Fb"),
        json!("a?b"),
        json!(5),
        json!("é"),
    ] {
        cases.push((
            "get_agent_work_grant",
            with(grant_args(), "owner", bad.clone()),
            "owner",
        ));
        cases.push((
            "get_agent_work_submission",
            with(readback_args(), "repo", bad),
            "repo",
        ));
    }
    cases.push(("get_repository", json!({"owner": "alice"}), "repo"));
    // The proposal triple, exactly.
    for bad in [
        json!("agent_work_grant.v2"),
        json!("AGENT_WORK_GRANT.V1"),
        json!(" agent_work_grant.v1"),
        json!(1),
    ] {
        cases.push((
            "confirm_agent_work_grant",
            with(confirm_args(), "proposal_schema", bad),
            "proposal_schema",
        ));
    }
    for bad in [json!(2), json!("1"), json!(1.0), json!(true), json!(0)] {
        cases.push((
            "confirm_agent_work_grant",
            with(confirm_args(), "proposal_version", bad.clone()),
            "proposal_version",
        ));
        cases.push((
            "submit_agent_work_proposal",
            with(submit_args("t", "b"), "proposal_version", bad),
            "proposal_version",
        ));
    }
    for bad in [
        json!(DIGEST.to_uppercase()),
        json!(&DIGEST[..63]),
        json!(format!("{DIGEST}0")),
        json!(DIGEST.replace('f', "g")),
        json!(null),
    ] {
        cases.push((
            "confirm_agent_work_grant",
            with(confirm_args(), "proposal_digest", bad),
            "proposal_digest",
        ));
    }
    cases.push((
        "confirm_agent_work_grant",
        without(confirm_args(), "proposal_digest"),
        "proposal_digest",
    ));
    // Request keys: canonical lowercase UUIDv4, never invented.
    for bad in [
        json!(KEY.to_uppercase()),
        json!("9b2f3c4d-1e2f-1a3b-8c4d-5e6f7a8b9c0d"),
        json!("9b2f3c4d-1e2f-4a3b-cc4d-5e6f7a8b9c0d"),
        json!(format!("{{{KEY}}}")),
        json!(KEY.replace('-', "")),
        json!("../../../../admin"),
        json!(""),
        json!(7),
    ] {
        cases.push((
            "submit_agent_work_proposal",
            with(submit_args("t", "b"), "request_key", bad.clone()),
            "request_key",
        ));
        cases.push((
            "get_agent_work_submission",
            with(readback_args(), "request_key", bad),
            "request_key",
        ));
    }
    cases.push((
        "submit_agent_work_proposal",
        without(submit_args("t", "b"), "request_key"),
        "request_key",
    ));
    // Title and body are strings (kept whole, but strings).
    cases.push((
        "submit_agent_work_proposal",
        with(submit_args("t", "b"), "title", json!(5)),
        "title",
    ));
    cases.push((
        "submit_agent_work_proposal",
        with(submit_args("t", "b"), "body", json!(null)),
        "body",
    ));
    cases.push((
        "submit_agent_work_proposal",
        without(submit_args("t", "b"), "body"),
        "body",
    ));
    cases.push((
        "create_issue",
        json!({"owner": "alice", "repo": "lab", "body": "b"}),
        "title",
    ));
    // Unknown inputs: approvals, issuer or agent IDs, scopes, sponsorship, state_revision.
    for extra in [
        "approved",
        "approved_by",
        "issuer_id",
        "agent_id",
        "scopes",
        "sponsor",
        "state_revision",
        "token",
    ] {
        cases.push((
            "submit_agent_work_proposal",
            with(submit_args("t", "b"), extra, json!(1)),
            extra,
        ));
        cases.push((
            "confirm_agent_work_grant",
            with(confirm_args(), extra, json!(true)),
            extra,
        ));
    }
    // Spec §8: a bot's `repository_grant` is never authority: refused as an
    // unknown input by every grant tool, whatever its content.
    let envelope = json!({"version": "1", "allowed_paths": ["src/"],
                          "commit_count": {"min": 1, "max": 1}, "publish": false});
    for (tool, args) in [
        ("submit_agent_work_proposal", submit_args("t", "b")),
        ("confirm_agent_work_grant", confirm_args()),
        ("get_agent_work_grant", grant_args()),
        ("list_agent_work_grants", json!({})),
    ] {
        cases.push((
            tool,
            with(args, "repository_grant", envelope.clone()),
            "repository_grant",
        ));
    }
    cases.push((
        "get_repository",
        json!({"owner": "alice", "repo": "lab", "ref": "main"}),
        "ref",
    ));
    cases.push(("list_agent_work_grants", json!({"limit": 50}), "limit"));
    // Pages and the state filter.
    for bad in [json!(0), json!("2"), json!(2.0), json!(-1), json!(null)] {
        cases.push((
            "list_agent_work_grants",
            json!({"page": bad.clone()}),
            "page",
        ));
        cases.push((
            "list_issues",
            json!({"owner": "alice", "repo": "lab", "page": bad}),
            "page",
        ));
    }
    for bad in [json!("open"), json!("ALL"), json!(""), json!(1)] {
        cases.push(("list_agent_work_grants", json!({"state": bad}), "state"));
    }
    cases.push((
        "get_issue",
        json!({"owner": "alice", "repo": "lab", "index": "4"}),
        "index",
    ));
    cases
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_inputs_are_refused_with_the_field_and_zero_upstream_requests_over_http() {
    let upstream = ScriptedUpstream::start().await;
    let adapter = HttpAdapter::start(&upstream.origin(), TOKEN_ENV, &[]).await;
    let client = adapter.connect(Some("bearer-token")).await;
    let cases = cases();
    assert!(cases.len() > 100);
    for (tool, args, field) in cases {
        let result = call(&client, tool, args.clone()).await;
        let error = expect_error(&result, "invalid_input", None);
        assert_eq!(error["field"], field, "{tool} {args}: {error}");
    }
    assert_eq!(upstream.count(), 0, "an invalid input reached the Core");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_inputs_are_refused_over_stdio_too() {
    let upstream = ScriptedUpstream::start().await;
    let config = client_config(ProtocolVersion::V_2025_06_18);
    let client = stdio(
        &upstream.origin(),
        TOKEN_ENV,
        config,
        ClientLifecycleMode::Initialize,
    )
    .await;
    for (tool, args, field) in cases().into_iter().step_by(7) {
        let result = call(&client, tool, args.clone()).await;
        assert_eq!(
            expect_error(&result, "invalid_input", None)["field"],
            field,
            "{tool} {args}"
        );
    }
    assert_eq!(upstream.count(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_tool_is_a_protocol_error_and_calls_nothing() {
    let upstream = ScriptedUpstream::start().await;
    let adapter = HttpAdapter::start(&upstream.origin(), TOKEN_ENV, &[]).await;
    let client = adapter.connect(None).await;
    let params = rmcp::model::CallToolRequestParams::new("approve_agent_work_grant");
    assert!(client.call_tool(params).await.is_err());
    assert_eq!(upstream.count(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_valid_input_is_sent_once_with_the_exact_fields() {
    let upstream = ScriptedUpstream::start().await;
    upstream.script("POST", SUBMIT_PATH, Action::json(201, &receipt(KEY)));
    let adapter = HttpAdapter::start(&upstream.origin(), TOKEN_ENV, &[]).await;
    let client = adapter.connect(None).await;
    let result = call(
        &client,
        "submit_agent_work_proposal",
        submit_args("A title", "A body"),
    )
    .await;
    let answer = ok(&result);
    assert_eq!(answer["native_status"], 201);
    assert_eq!(answer["submission"]["request_key"], KEY);
    let requests = upstream.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].method, "POST");
    assert_eq!(
        requests[0].json(),
        json!({"proposal_schema": "agent_work_grant.v1", "proposal_version": 1, "proposal_digest": DIGEST,
               "request_key": KEY, "title": "A title", "body": "A body"})
    );
}
