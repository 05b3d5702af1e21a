//! `tools/list` is pinned: the public four stay exactly as they were, and every
//! schema is closed. Served to 2025-06-18, 2025-11-25 and 2026-07-28 clients
//! over Streamable HTTP and stdio.

use crate::support::*;
use rmcp::{model::ProtocolVersion, service::ClientLifecycleMode};
use serde_json::Value;

const SNAPSHOT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/snapshots/tools_list.json"
);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_list_matches_the_checked_in_snapshot() {
    let upstream = ScriptedUpstream::start().await;
    let adapter = HttpAdapter::start(&upstream.origin(), TOKEN_ENV, &[]).await;
    let client = adapter.connect(None).await;
    let tools = client.list_tools(None).await.unwrap().tools;
    let actual = serde_json::to_string_pretty(&tools).unwrap() + "\n";
    if std::env::var_os("AWG_UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(SNAPSHOT, &actual).unwrap();
    }
    let expected = std::fs::read_to_string(SNAPSHOT).unwrap_or_else(|e| {
        panic!("{SNAPSHOT}: {e}; run with AWG_UPDATE_SNAPSHOTS=1 once and review the file")
    });
    assert_eq!(
        actual, expected,
        "tools/list changed; review and update {SNAPSHOT} on purpose"
    );
    assert_eq!(upstream.count(), 0, "tools/list never calls the Core");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_public_four_keep_their_inputs_and_every_schema_is_closed() {
    let upstream = ScriptedUpstream::start().await;
    let adapter = HttpAdapter::start(&upstream.origin(), TOKEN_ENV, &[]).await;
    let client = adapter.connect(None).await;
    let tools = client.list_tools(None).await.unwrap().tools;
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        [
            "get_repository",
            "list_issues",
            "get_issue",
            "create_issue",
            "list_agent_work_grants",
            "get_agent_work_grant",
            "confirm_agent_work_grant",
            "submit_agent_work_proposal",
            "get_agent_work_submission",
        ]
    );
    let inputs = |name: &str| -> (Vec<String>, Vec<String>) {
        let tool = tools.iter().find(|t| t.name == name).unwrap();
        let schema = &tool.input_schema;
        let mut props: Vec<String> = schema["properties"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        props.sort();
        let mut required: Vec<String> = schema["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_owned())
            .collect();
        required.sort();
        (props, required)
    };
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    assert_eq!(
        inputs("get_repository"),
        (s(&["owner", "repo"]), s(&["owner", "repo"]))
    );
    assert_eq!(
        inputs("list_issues"),
        (s(&["owner", "page", "repo"]), s(&["owner", "repo"]))
    );
    assert_eq!(
        inputs("get_issue"),
        (
            s(&["index", "owner", "repo"]),
            s(&["index", "owner", "repo"])
        )
    );
    assert_eq!(
        inputs("create_issue"),
        (
            s(&["body", "owner", "repo", "title"]),
            s(&["body", "owner", "repo", "title"])
        )
    );
    assert_eq!(
        inputs("list_agent_work_grants"),
        (s(&["page", "state"]), s(&[]))
    );
    for tool in &tools {
        assert_eq!(
            tool.input_schema["additionalProperties"],
            Value::Bool(false),
            "{}",
            tool.name
        );
        let output = tool
            .output_schema
            .as_ref()
            .unwrap_or_else(|| panic!("{} has no output schema", tool.name));
        assert_eq!(
            output["additionalProperties"],
            Value::Bool(false),
            "{}",
            tool.name
        );
        for (name, prop) in tool.input_schema["properties"].as_object().unwrap() {
            if prop["type"] == "integer" && name != "proposal_version" {
                assert_eq!(prop["minimum"], 1, "{}.{name}", tool.name);
                assert_eq!(prop["maximum"], i64::MAX, "{}.{name}", tool.name);
            }
        }
    }
}

async fn assert_serves(client: Client, version: ProtocolVersion) {
    let info = client.peer_info().expect("server info");
    assert_eq!(info.protocol_version, version);
    let tools = client.list_tools(None).await.unwrap().tools;
    assert_eq!(tools.len(), 9);
    // A real call works on this revision too (refused locally, no upstream needed).
    let result = call(
        &client,
        "get_agent_work_grant",
        serde_json::json!({"owner": "alice"}),
    )
    .await;
    assert_eq!(
        expect_error(&result, "invalid_input", None)["field"],
        "repo"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_serves_2025_06_18_2025_11_25_and_the_newest_revision() {
    let upstream = ScriptedUpstream::start().await;
    let adapter = HttpAdapter::start(&upstream.origin(), TOKEN_ENV, &[]).await;
    for version in [ProtocolVersion::V_2025_06_18, ProtocolVersion::V_2025_11_25] {
        let client = adapter
            .connect_with(
                None,
                client_config(version.clone()),
                ClientLifecycleMode::Initialize,
            )
            .await;
        assert_serves(client, version).await;
    }
    let newest = ProtocolVersion::LATEST;
    let client = adapter
        .connect_with(
            None,
            client_config(newest.clone()),
            ClientLifecycleMode::Discover {
                preferred_versions: vec![newest.clone()],
            },
        )
        .await;
    assert_serves(client, newest).await;
    assert_eq!(upstream.count(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_serves_2025_06_18_2025_11_25_and_the_newest_revision() {
    let upstream = ScriptedUpstream::start().await;
    for version in [ProtocolVersion::V_2025_06_18, ProtocolVersion::V_2025_11_25] {
        let client = stdio(
            &upstream.origin(),
            TOKEN_ENV,
            client_config(version.clone()),
            ClientLifecycleMode::Initialize,
        )
        .await;
        assert_serves(client, version).await;
    }
    let newest = ProtocolVersion::LATEST;
    let lifecycle = ClientLifecycleMode::Discover {
        preferred_versions: vec![newest.clone()],
    };
    let client = stdio(
        &upstream.origin(),
        TOKEN_ENV,
        client_config(newest.clone()),
        lifecycle,
    )
    .await;
    assert_serves(client, newest).await;
    assert_eq!(upstream.count(), 0);
}
