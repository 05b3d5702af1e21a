//! Family 9: adapter faults, third part — an upstream error's body,
//! `Location` and headers never reach the caller or the log, and inputs of
//! the wrong type never leave the adapter.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};

use grantgate_engine::prelude::*;

use crate::support::flows::{self, LAB};
use crate::support::proxied::{
    BODY, GRANT, SUBMIT, TITLE, expect_no_receipt, expect_still_active, proxied_active_grant,
};

/// An upstream error keeps its native meaning through the adapter, while the
/// marker and credential in its body and `Location` reach neither the MCP
/// result nor the log.
#[scenario(AdapterFaults, parity, clauses = ["S6.errors.meaning", "S6.errors.no-echo"])]
async fn upstream_body_never_echoed(ctx: &mut Ctx) -> Outcome {
    // Native meaning: 400 `bad_request` … 422 `unprocessable`, 5xx uncertain.
    let (bot, grant, proposal) = proxied_active_grant(ctx, "Bodies are never echoed").await?;
    let proxy = ctx.proxy().await?;
    let marker = format!("gg-marker-{}", random_hex());
    // Looks like a credential; registered so the report never shows it even
    // if an adapter leaks it.
    let credential = format!("ggfake{}", random_hex());
    ctx.register_secret(&credential);
    let canned = |status: u16| Canned {
        status,
        headers: vec![
            (
                "location".into(),
                format!("http://internal.invalid/{marker}?token={credential}"),
            ),
            (
                "x-upstream-debug".into(),
                format!("{marker} token {credential}"),
            ),
        ],
        body: json!({
            "message": format!("{marker}: denied for token {credential}"),
            "url": format!("http://internal.invalid/{marker}"),
        })
        .to_string()
        .into(),
    };
    let posts: [(u16, &str); 7] = [
        (400, "bad_request"),
        (401, "unauthenticated"),
        (403, "forbidden"),
        (404, "not_found"),
        (409, "conflict"),
        (422, "unprocessable"),
        (500, "delivery_uncertain"),
    ];
    let gets: [(u16, &str); 3] = [
        (404, "not_found"),
        (409, "conflict"),
        (503, "upstream_error"),
    ];
    let mut seen = Vec::new();
    for (status, code) in posts {
        ctx.step(&format!("a submit is answered {status} with a marked body"));
        proxy.inject("POST", SUBMIT, Fault::Respond(canned(status)));
        let reply = bot
            .submit(&grant, &proposal, &NewIssue::new(TITLE, BODY))
            .await?;
        let what = format!("submit answered {status}");
        expect_no_receipt(ctx, &what, &reply, code, Some(status.into()))?;
        expect_unmarked(ctx, &reply, &marker, &credential)?;
        seen.push(json!({"tool": reply.tool, "status": status, "code": code}));
    }
    for (status, code) in gets {
        ctx.step(&format!(
            "a grant read is answered {status} with a marked body"
        ));
        proxy.inject("GET", GRANT, Fault::Respond(canned(status)));
        let reply = bot.get_grant(&grant).await?;
        let what = format!("grant read answered {status}");
        expect_no_receipt(ctx, &what, &reply, code, Some(status.into()))?;
        expect_unmarked(ctx, &reply, &marker, &credential)?;
        seen.push(json!({"tool": reply.tool, "status": status, "code": code}));
    }
    ctx.expect_eq("every fault was used", proxy.pending_faults(), 0)?;
    ctx.expect_eq(
        "one POST per submit",
        proxy.count("POST", SUBMIT),
        posts.len(),
    )?;

    ctx.step("the adapter's log holds neither the marker nor the credential");
    let log = bot.adapter_log();
    ctx.expect(
        "no marker in the adapter's log",
        !log.contains(&marker),
        "the marker is in the log",
    )?;
    ctx.expect(
        "no credential in the adapter's log",
        !log.contains(&credential),
        "the credential is in the log",
    )?;

    ctx.step("nothing reached the Core: no Issue, the grant still active");
    ctx.expect_eq(
        "Issues in alice/lab",
        flows::issue_count(ctx, LAB).await?,
        0,
    )?;
    expect_still_active(ctx, &grant).await?;
    ctx.observe("error codes kept", &seen);
    Ok(())
}

/// Ids and pages of the wrong JSON type, and a submit without a request key,
/// are refused as `invalid_input` naming the field, before any request
/// reaches the Core.
#[scenario(AdapterFaults, parity, clauses = ["S6.inputs.strict", "S6.inputs.no-invented-key"])]
async fn strict_inputs_refused_before_upstream(ctx: &mut Ctx) -> Outcome {
    // Strings, floats and booleans for ids and pages (spec §6 strict inputs);
    // nothing is written, and the adapter never invents a key.
    let (bot, grant, proposal) = proxied_active_grant(ctx, "Strict inputs").await?;
    let proxy = ctx.proxy().await?;
    let before = proxy.requests().len();
    let (owner, repo, id) = (&grant.owner, &grant.repo, grant.id);
    let (schema, version, digest) = (&proposal.schema, proposal.version, &proposal.digest);
    let cases: [(&str, &str, Value, &str); 6] = [
        (
            "a grant id as a decimal string",
            "get_agent_work_grant",
            json!({"owner": owner, "repo": repo, "grant_id": id.to_string()}),
            "grant_id",
        ),
        (
            "a grant id as a float",
            "get_agent_work_grant",
            json!({"owner": owner, "repo": repo, "grant_id": id as f64}),
            "grant_id",
        ),
        (
            "a page as a decimal string",
            "list_agent_work_grants",
            json!({"page": "1"}),
            "page",
        ),
        (
            "a page as a boolean",
            "list_agent_work_grants",
            json!({"page": true}),
            "page",
        ),
        (
            "a submit with a string grant id",
            "submit_agent_work_proposal",
            json!({
                "owner": owner, "repo": repo, "grant_id": id.to_string(),
                "proposal_schema": schema, "proposal_version": version,
                "proposal_digest": digest,
                "request_key": NewIssue::new(TITLE, BODY).request_key,
                "title": TITLE, "body": BODY,
            }),
            "grant_id",
        ),
        (
            "a submit without a request key",
            "submit_agent_work_proposal",
            json!({
                "owner": owner, "repo": repo, "grant_id": id,
                "proposal_schema": schema, "proposal_version": version,
                "proposal_digest": digest, "title": TITLE, "body": BODY,
            }),
            "request_key",
        ),
    ];
    let mut seen = Vec::new();
    for (what, tool, args, field) in cases {
        ctx.step(&format!("lab-bot calls {tool} with {what}"));
        let reply = bot.call(tool, args).await?;
        expect_no_receipt(ctx, what, &reply, "invalid_input", None)?;
        ctx.expect_eq(
            &format!("{what}: the refused field"),
            reply.error_field(),
            Some(field),
        )?;
        ctx.expect_eq(
            "no request reached the proxy",
            proxy.requests().len(),
            before,
        )?;
        seen.push(json!({"case": what, "code": reply.error_code(), "field": field}));
    }

    ctx.step("nothing was written: no Issue");
    ctx.expect_eq(
        "Issues in alice/lab",
        flows::issue_count(ctx, LAB).await?,
        0,
    )?;
    ctx.observe("refusals", &seen);
    Ok(())
}

/// Checks that a tool result carries neither the marker nor the credential.
fn expect_unmarked(ctx: &Ctx, reply: &ToolReply, marker: &str, credential: &str) -> Step<()> {
    let structured = reply
        .structured
        .as_ref()
        .map(Value::to_string)
        .unwrap_or_default();
    let text = format!("{}{structured}", reply.text);
    ctx.expect(
        "the result does not echo the upstream body or Location",
        !text.contains(marker),
        &text,
    )?;
    ctx.expect(
        "the result does not echo the credential",
        !text.contains(credential),
        "the credential is in the result",
    )
}

/// 32 random hex digits, so that a marker is found only where it was sent.
fn random_hex() -> String {
    let word = || RandomState::new().build_hasher().finish();
    format!("{:016x}{:016x}", word(), word())
}
