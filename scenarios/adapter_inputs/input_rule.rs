//! Family 14: the adapter's whole input rule, first part — every unknown
//! input and every malformed value is refused before any upstream request.
//!
//! Each call goes through the fault proxy, which counts every request, so
//! "zero requests reached the Core" is counted, not assumed. (The public
//! tools, a lost confirm answer and a clamping Core are in
//! `tools.rs`, the same family.)

use grantgate_engine::prelude::*;

use crate::support::proxied::{TITLE, expect_no_receipt, proxied_active_grant};

use crate::support::flows::{LAB, LAB_BOT, Watch};

/// The grant tools, each with a complete, valid set of inputs for `grant`.
pub(crate) fn valid_calls(
    grant: &GrantRef,
    proposal: &Proposal,
    issue: &NewIssue,
) -> Vec<(&'static str, Value)> {
    let with = |body: Value| {
        let mut args = core_api::grant_args(grant);
        if let (Some(args), Value::Object(body)) = (args.as_object_mut(), body) {
            args.extend(body);
        }
        args
    };
    vec![
        (
            "submit_agent_work_proposal",
            with(core_api::submit_body(proposal, issue)),
        ),
        (
            "confirm_agent_work_grant",
            with(core_api::confirm_body(proposal)),
        ),
        ("get_agent_work_grant", core_api::grant_args(grant)),
        (
            "get_agent_work_submission",
            with(json!({"request_key": issue.request_key})),
        ),
        ("list_agent_work_grants", json!({"page": 1})),
        (
            "create_issue",
            json!({"owner": grant.owner, "repo": grant.repo, "title": TITLE, "body": "b"}),
        ),
        (
            "get_issue",
            json!({"owner": grant.owner, "repo": grant.repo, "index": 1}),
        ),
        (
            "list_issues",
            json!({"owner": grant.owner, "repo": grant.repo, "page": 1}),
        ),
        (
            "get_repository",
            json!({"owner": grant.owner, "repo": grant.repo}),
        ),
    ]
}

/// `args` with `name` set to `value` (added, or replacing the valid value).
fn set(args: &Value, name: &str, value: Value) -> Value {
    let mut args = args.clone();
    if let Some(map) = args.as_object_mut() {
        map.insert(name.to_owned(), value);
    }
    args
}

/// One refused call: `invalid_input` naming `field`, no receipt, and not a
/// single request more at the proxy.
async fn expect_refused_locally(
    ctx: &mut Ctx,
    bot: &Bot,
    what: &str,
    tool: &str,
    args: Value,
    field: &str,
) -> Step<Value> {
    let proxy = ctx.proxy().await?;
    let before = proxy.requests().len();
    let reply = bot.call(tool, args).await?;
    expect_no_receipt(ctx, what, &reply, "invalid_input", None)?;
    ctx.expect_eq(
        &format!("{what}: the field named"),
        reply.error_field(),
        Some(field),
    )?;
    ctx.expect_eq(
        &format!("{what}: no request reached the Core"),
        proxy.requests().len(),
        before,
    )?;
    Ok(json!({"case": what, "code": reply.error_code(), "field": reply.error_field()}))
}

/// Every unknown input spec §6 names, and every other grant tool's input, is
/// refused as `invalid_input` naming it, before any request reaches the Core.
#[scenario(AdapterInputs, parity, clauses = ["S6.inputs.unknown", "S2.revision.not-in-api"])]
async fn unknown_inputs_refused(ctx: &mut Ctx) -> Outcome {
    // The unknown inputs: an approval, an issuer or agent id, scopes,
    // sponsorship, a `state_revision`, a `repository_grant`, a `requestId`, a
    // grant marker — each added to an otherwise valid call of every tool,
    // with a value, `null` or `false`. Nothing is written.
    let (bot, grant, proposal) = proxied_active_grant(ctx, "Unknown inputs").await?;
    let issue = NewIssue::new(TITLE, "Unknown inputs are refused.\n");
    let watch = Watch::new(LAB_BOT, LAB)
        .grant(&grant)
        .key(&grant, &issue.request_key);
    let before = watch.take(ctx).await?;
    let unknown: [(&str, Value); 11] = [
        ("approval", json!(true)),
        ("approved_by", json!("alice")),
        ("issuer_id", json!(2)),
        ("agent_id", json!(3)),
        ("scopes", json!(["write:issue", "write:repository"])),
        ("sponsorship", json!({"sponsor": "alice", "approved": true})),
        ("state_revision", json!(3)),
        (
            "repository_grant",
            json!({"version": "1", "allowed_paths": ["src/"],
                   "commit_count": {"min": 1, "max": 1}, "publish": false}),
        ),
        ("requestId", json!(issue.request_key)),
        ("request_id", json!(issue.request_key)),
        (
            "agent_work_grant",
            json!({"grant_id": grant.id, "request_key": issue.request_key}),
        ),
    ];
    let calls = valid_calls(&grant, &proposal, &issue);
    // Every other grant tool's inputs, with the values of its valid call:
    // a tool takes only its own (a list copied from another tool is a bug).
    let mut theirs: Vec<(String, Value)> = Vec::new();
    for (_, args) in &calls {
        for (name, value) in args.as_object().into_iter().flatten() {
            if !theirs.iter().any(|(n, _)| n == name) {
                theirs.push((name.clone(), value.clone()));
            }
        }
    }
    theirs.push(("page".into(), json!(1)));
    theirs.push(("state".into(), json!("all")));
    let mut seen = Vec::new();
    for (tool, args) in &calls {
        ctx.step(&format!(
            "lab-bot calls {tool} with each unknown input and each other tool's input added"
        ));
        // A public tool's inputs are Forgejo's own: only the grant tools'
        // lists are the spec's.
        let own = GRANT_TOOL_INPUTS.iter().find(|(t, _)| t == tool);
        let others = theirs
            .iter()
            .filter(|(n, _)| own.is_some_and(|(_, own)| !own.contains(&n.as_str())));
        // Each named unknown also as `null` and `false`: present is present,
        // whatever its value (a JSON Schema's additionalProperties).
        let blank: Vec<(&str, Value)> = unknown
            .iter()
            .flat_map(|(n, _)| [(*n, Value::Null), (*n, json!(false))])
            .collect();
        let named = unknown.iter().chain(&blank).map(|(n, v)| (*n, v));
        for (name, value) in named.chain(others.map(|(n, v)| (n.as_str(), v))) {
            let what = format!("{tool} with `{name}`");
            let call = set(args, name, value.clone());
            seen.push(expect_refused_locally(ctx, &bot, &what, tool, call, name).await?);
        }
    }

    ctx.step("nothing was written: Issues, the grant and the key are as before");
    watch
        .expect_unchanged(ctx, "after every unknown input", &before)
        .await?;
    ctx.observe("refusals", &seen);
    Ok(())
}

/// Every malformed value is refused as `invalid_input` naming its field,
/// before any request reaches the Core, and nothing is written.
#[scenario(AdapterInputs, parity, clauses = ["S6.inputs.strict"])]
async fn malformed_values_refused(ctx: &mut Ctx) -> Outcome {
    // The values: an id of 0, -1, 2^63, a float or a string; a
    // `proposal_version` of 1.0 or "1"; a digest in uppercase or one digit
    // short; a request key in uppercase, of another UUID version or in
    // braces; an `owner` or `repo` of `a/b`, `..` or empty; a `page` of 0; an
    // unknown `state`.
    let (bot, grant, proposal) = proxied_active_grant(ctx, "Malformed values").await?;
    let issue = NewIssue::new(TITLE, "Malformed values are refused.\n");
    let watch = Watch::new(LAB_BOT, LAB)
        .grant(&grant)
        .key(&grant, &issue.request_key);
    let before = watch.take(ctx).await?;
    let calls = valid_calls(&grant, &proposal, &issue);
    let args = |tool: &str| -> Step<Value> {
        calls
            .iter()
            .find(|(t, _)| *t == tool)
            .map(|(_, a)| a.clone())
            .ok_or_else(|| Abort::errored(format!("no valid call of {tool}")))
    };
    let (submit, confirm, get, readback, list) = (
        args("submit_agent_work_proposal")?,
        args("confirm_agent_work_grant")?,
        args("get_agent_work_grant")?,
        args("get_agent_work_submission")?,
        args("list_agent_work_grants")?,
    );
    let key = issue.request_key.clone();
    let other_version = format!("{}1{}", &key[..14], &key[15..]);
    let mut short = proposal.digest.clone();
    short.pop();
    let ids: [(&str, Value); 6] = [
        ("0", json!(0)),
        ("-1", json!(-1)),
        ("2^63", json!(9_223_372_036_854_775_808u64)),
        ("a float", json!(grant.id as f64 + 0.5)),
        ("a whole float", json!(grant.id as f64)),
        ("a string", json!(grant.id.to_string())),
    ];
    let mut cases: Vec<(String, &str, Value, &str)> = Vec::new();
    for (what, value) in &ids {
        for (tool, base) in [
            ("get_agent_work_grant", &get),
            ("confirm_agent_work_grant", &confirm),
            ("submit_agent_work_proposal", &submit),
            ("get_agent_work_submission", &readback),
        ] {
            let call = set(base, "grant_id", value.clone());
            cases.push((format!("{tool}: grant_id {what}"), tool, call, "grant_id"));
        }
    }
    for (what, value) in [("0", json!(0)), ("-1", json!(-1)), ("a string", json!("2"))] {
        let call = set(&list, "page", value);
        let tool = "list_agent_work_grants";
        cases.push((format!("list: page {what}"), tool, call, "page"));
    }
    for (what, version) in [("a whole float", json!(1.0)), ("a string", json!("1"))] {
        for (tool, base) in [
            ("confirm_agent_work_grant", &confirm),
            ("submit_agent_work_proposal", &submit),
        ] {
            let call = set(base, "proposal_version", version.clone());
            let what = format!("{tool}: proposal_version {what}");
            cases.push((what, tool, call, "proposal_version"));
        }
    }
    for (what, digest) in [
        ("uppercase", proposal.digest.to_uppercase()),
        ("one digit short", short),
    ] {
        for (tool, base) in [
            ("confirm_agent_work_grant", &confirm),
            ("submit_agent_work_proposal", &submit),
        ] {
            let call = set(base, "proposal_digest", json!(digest));
            let what = format!("{tool}: digest {what}");
            cases.push((what, tool, call, "proposal_digest"));
        }
    }
    for (what, bad_key) in [
        ("uppercase", key.to_uppercase()),
        ("of UUID version 1", other_version),
        ("in braces", format!("{{{key}}}")),
    ] {
        for (tool, base) in [
            ("submit_agent_work_proposal", &submit),
            ("get_agent_work_submission", &readback),
        ] {
            let call = set(base, "request_key", json!(bad_key));
            let what = format!("{tool}: request key {what}");
            cases.push((what, tool, call, "request_key"));
        }
    }
    for field in ["owner", "repo"] {
        for (what, segment) in [("a/b", "a/b"), ("..", ".."), ("empty", "")] {
            for (tool, base) in [
                ("get_agent_work_grant", &get),
                ("submit_agent_work_proposal", &submit),
            ] {
                let call = set(base, field, json!(segment));
                let what = format!("{tool}: {field} {what}");
                cases.push((what, tool, call, field));
            }
        }
    }
    let (get_issue, list_issues, create) = (
        args("get_issue")?,
        args("list_issues")?,
        args("create_issue")?,
    );
    for (what, value) in [
        ("0", json!(0)),
        ("a string", json!("1")),
        ("a float", json!(1.5)),
    ] {
        let call = set(&get_issue, "index", value);
        cases.push((
            format!("get_issue: index {what}"),
            "get_issue",
            call,
            "index",
        ));
    }
    let call = set(&list_issues, "page", json!(0));
    cases.push(("list_issues: page 0".into(), "list_issues", call, "page"));
    let call = set(&create, "owner", json!("a/b"));
    cases.push((
        "create_issue: owner a/b".into(),
        "create_issue",
        call,
        "owner",
    ));
    let call = set(&create, "repo", json!(".."));
    cases.push(("create_issue: repo ..".into(), "create_issue", call, "repo"));
    for state in ["pending", "ACTIVE", ""] {
        let call = set(&list, "state", json!(state));
        let what = format!("list: state {state:?}");
        cases.push((what, "list_agent_work_grants", call, "state"));
    }

    ctx.step(&format!("lab-bot makes {} malformed calls", cases.len()));
    let mut seen = Vec::new();
    for (what, tool, call, field) in cases {
        seen.push(expect_refused_locally(ctx, &bot, &what, tool, call, field).await?);
    }

    ctx.step("nothing was written: Issues, the grant and the key are as before");
    watch
        .expect_unchanged(ctx, "after every malformed value", &before)
        .await?;
    ctx.observe("refusals", &seen);
    Ok(())
}

/// The HTTP transport answers an `initialize` with a foreign `Origin` 403 and
/// opens no session, while the same request without `Origin` is served.
#[scenario(AdapterInputs, parity, clauses = ["S6.origin"])]
async fn foreign_origin_refused(ctx: &mut Ctx) -> Outcome {
    // Spec §6; MCP's Streamable HTTP transport answers a present, invalid
    // `Origin` with 403. Foreign: what a page of another site would post, or
    // a host whose name only begins with a loopback name. MCP clients send no
    // `Origin`.
    ctx.step("lab-bot's adapter starts");
    let bot = ctx.bot(LAB_BOT).await?;

    ctx.step("an initialize without Origin, as an MCP client sends it");
    let plain = bot.initialize_from(None).await?;
    ctx.expect(
        "it is served",
        (200..300).contains(&plain.status),
        &format!("status {}", plain.status),
    )?;

    // Another site, and names that only look like the loopback ones.
    for origin in FOREIGN_ORIGINS {
        ctx.step(&format!("the same initialize from a page on {origin}"));
        let foreign = bot.initialize_from(Some(origin)).await?;
        ctx.expect_status(&format!("{origin}: refused"), foreign.status, 403)?;
        ctx.expect(
            &format!("{origin}: no MCP session is opened for it"),
            foreign.header("mcp-session-id").is_none(),
            "an Mcp-Session-Id came back",
        )?;
    }
    ctx.observe("served without Origin", &plain.status);
    Ok(())
}

/// Origins of pages that are not the adapter's own: another site, hosts
/// whose names begin with a loopback name, and a sandboxed page's `null`.
const FOREIGN_ORIGINS: [&str; 5] = [
    "https://evil.example",
    "http://localhost.evil.test",
    "http://127.0.0.1.evil.test",
    "http://localhostevil.test",
    "null",
];

/// Each MCP revision spec §6 names is served with every tool of §6, and a
/// session the client ends with `DELETE` is gone.
#[scenario(AdapterInputs, parity, clauses = ["S6.revisions", "S6.tools.public", "S6.tools.grant", "S6.transports"])]
async fn protocol_revisions_served(ctx: &mut Ctx) -> Outcome {
    // A client asking for 2025-06-18 or 2025-11-25 in its `initialize` gets
    // that revision back (as MCP's lifecycle requires of a server that
    // supports it), a session, and every tool of §6 in `tools/list`, each
    // grant tool's `inputSchema` naming exactly its inputs in §6's table.
    // After `DELETE`, MCP's Streamable HTTP answers a request under the
    // session 404 (a server may also refuse the `DELETE` with 405 and keep
    // it).
    ctx.step("lab-bot's adapter starts");
    let bot = ctx.bot(LAB_BOT).await?;
    for version in ["2025-06-18", "2025-11-25"] {
        ctx.step(&format!(
            "a client of revision {version} initializes and lists the tools"
        ));
        let init = bot
            .post_mcp(&[], initialize(version, "grantgate-revision"))
            .await?;
        ctx.expect(
            "initialize is served",
            (200..300).contains(&init.status),
            &format!("status {}", init.status),
        )?;
        let agreed = rpc_message(&init)
            .and_then(|m| m["result"]["protocolVersion"].as_str().map(str::to_owned));
        ctx.expect_eq("the revision agreed", agreed.as_deref(), Some(version))?;
        let session = init.header("mcp-session-id").unwrap_or_default();
        let headers = [
            ("Mcp-Session-Id", session.as_str()),
            ("MCP-Protocol-Version", version),
        ];
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let initialized = bot.post_mcp(&headers, note).await?;
        ctx.expect(
            "notifications/initialized is accepted",
            (200..300).contains(&initialized.status),
            &format!("status {}", initialized.status),
        )?;
        let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
        let tools = bot.post_mcp(&headers, list).await?;
        let listed = rpc_message(&tools)
            .and_then(|m| m["result"]["tools"].as_array().cloned())
            .unwrap_or_default();
        let names: Vec<String> = listed
            .iter()
            .filter_map(|t| t["name"].as_str().map(str::to_owned))
            .collect();
        // A client fills a tool's arguments from its inputSchema: each grant
        // tool's properties are its inputs in spec §6's table, no fewer and
        // (unknown inputs being refused) no more.
        for (tool, inputs) in GRANT_TOOL_INPUTS {
            let schema = listed.iter().find(|t| t["name"] == *tool);
            let mut properties: Vec<&str> = schema
                .and_then(|t| t["inputSchema"]["properties"].as_object())
                .map(|p| p.keys().map(String::as_str).collect())
                .unwrap_or_default();
            properties.sort_unstable();
            let mut inputs = inputs.to_vec();
            inputs.sort_unstable();
            ctx.expect_eq(
                &format!("{tool}: inputSchema properties"),
                properties,
                inputs,
            )?;
        }
        let missing: Vec<&str> = TOOLS
            .iter()
            .copied()
            .filter(|t| !names.iter().any(|n| n == t))
            .collect();
        ctx.expect(
            "tools/list holds every tool of spec §6",
            missing.is_empty(),
            &format!("missing {missing:?} (status {})", tools.status),
        )?;
        ctx.step("the client ends its session with DELETE, then asks under it again");
        let ended = bot.delete_mcp(&headers).await?;
        let list = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"});
        let after = bot.post_mcp(&headers, list).await?;
        if ended.status != 405 {
            ctx.expect(
                "DELETE ends the session",
                (200..300).contains(&ended.status),
                &format!("status {}", ended.status),
            )?;
            ctx.expect_status("a request under the ended session", after.status, 404)?;
        }
        let statuses = (init.status, agreed, ended.status, after.status);
        ctx.observe(&format!("revision {version}"), &statuses);
    }
    Ok(())
}

/// The grant tools' inputs, as spec §6's table gives them.
const GRANT_TOOL_INPUTS: [(&str, &[&str]); 5] = [
    ("list_agent_work_grants", &["page", "state"]),
    ("get_agent_work_grant", &["owner", "repo", "grant_id"]),
    (
        "confirm_agent_work_grant",
        &[
            "owner",
            "repo",
            "grant_id",
            "proposal_schema",
            "proposal_version",
            "proposal_digest",
        ],
    ),
    (
        "submit_agent_work_proposal",
        &[
            "owner",
            "repo",
            "grant_id",
            "proposal_schema",
            "proposal_version",
            "proposal_digest",
            "request_key",
            "title",
            "body",
        ],
    ),
    (
        "get_agent_work_submission",
        &["owner", "repo", "grant_id", "request_key"],
    ),
];

/// The nine tools of spec §6.
const TOOLS: [&str; 9] = [
    "get_repository",
    "list_issues",
    "get_issue",
    "create_issue",
    "list_agent_work_grants",
    "get_agent_work_grant",
    "confirm_agent_work_grant",
    "submit_agent_work_proposal",
    "get_agent_work_submission",
];

/// The HTTP transport refuses an MCP request body over 1 MiB and opens no
/// session, and serves one of exactly 1 MiB.
#[scenario(AdapterInputs, parity, clauses = ["S6.http.body-limit"])]
async fn oversized_request_refused(ctx: &mut Ctx) -> Outcome {
    // Spec §6: an `initialize` of 1,048,577 bytes is refused with a 4xx, or
    // with the connection closed before it is read whole (RFC 9110 §15.5.14);
    // the same of 1,048,576 bytes is served.
    const MIB: usize = 1024 * 1024;
    ctx.step("lab-bot's adapter starts");
    let bot = ctx.bot(LAB_BOT).await?;
    ctx.step(&format!("an initialize of {} bytes", MIB + 1));
    // No answer at all when the connection closed mid-body: refused too.
    let oversized = bot
        .post_mcp_refusable(&[], padded_initialize(MIB + 1))
        .await?;
    if let Some(answer) = &oversized {
        ctx.expect(
            "it is refused",
            (400..500).contains(&answer.status),
            &format!("status {}", answer.status),
        )?;
        ctx.expect(
            "no MCP session is opened for it",
            answer.header("mcp-session-id").is_none(),
            "an Mcp-Session-Id came back",
        )?;
    }
    ctx.step(&format!("an initialize of {MIB} bytes"));
    let answer = bot.post_mcp(&[], padded_initialize(MIB)).await?;
    ctx.expect(
        "it is served",
        (200..300).contains(&answer.status),
        &format!("status {}", answer.status),
    )?;
    // (Whether the refusal came as a 4xx or a closed connection is the
    // transport's timing, not the backend's: not compared.)
    ctx.observe("served", &answer.status);
    Ok(())
}

/// An `initialize` whose JSON is exactly `size` bytes (as sent), the client
/// name padded.
fn padded_initialize(size: usize) -> Value {
    let bare = initialize("2025-06-18", "").to_string().len();
    initialize("2025-06-18", &"x".repeat(size.saturating_sub(bare)))
}
