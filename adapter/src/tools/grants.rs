//! Grant tools: list the caller's grants, read one, confirm one.
//!
//! Confirmation is the bot's statement that it read the exact proposal; it is
//! not approval. The adapter sends the triple the caller repeated, never one
//! it fetched or computed itself.

use reqwest::Method;
use rmcp::model::{JsonObject, Tool};
use serde_json::{Value, json};

use super::{Ctx, tool};
use crate::{
    check::{self, Expect},
    edges::{Edge, Edges},
    error::ToolError,
    pagination::{self, LIMIT},
    schema,
    upstream::Op,
    validate::Args,
};

pub(crate) const CONFIRM_ADVICE: &str = "Read the grant with get_agent_work_grant (same owner, repo, grant_id) before deciding whether the identical confirmation is still needed.";

const GRANT_ID: &str = "The grant's native id (a JSON integer).";

/// The inputs of `confirm_agent_work_grant`.
pub(crate) const CONFIRM_INPUTS: &[&str] = &[
    "owner",
    "repo",
    "grant_id",
    "proposal_schema",
    "proposal_version",
    "proposal_digest",
];

fn context() -> Vec<(&'static str, Value)> {
    vec![
        ("owner", schema::owner()),
        ("repo", schema::repo()),
        ("grant_id", schema::positive(GRANT_ID)),
    ]
}

/// `tools/list` entries of the grant tools.
pub fn definitions() -> Vec<Tool> {
    let mut confirm_props = context();
    confirm_props.extend(schema::triple());
    vec![
        tool(
            "list_agent_work_grants",
            "List the agent work grants where you are the agent, one page of up to 30 in ascending id order. Omit state for every non-revoked grant. Continue with next_page until has_more is false; pages are fresh observations (snapshot: false).",
            schema::closed(
                &[
                    ("page", schema::positive("Page number, from 1 (default 1).")),
                    ("state", schema::state()),
                ],
                &[],
            ),
            schema::page("grants", schema::grant()),
            true,
            true,
        ),
        tool(
            "get_agent_work_grant",
            "Read one agent work grant: its task, summary, state and proposal triple.",
            schema::closed(&context(), &["owner", "repo", "grant_id"]),
            schema::single("grant", schema::grant()),
            true,
            true,
        ),
        tool(
            "confirm_agent_work_grant",
            "Confirm that you read the grant's proposal, repeating its exact triple (schema, version, digest). Moves awaiting_agent to awaiting_human; a human still has to approve. Confirmation is not approval.",
            schema::closed(&confirm_props, CONFIRM_INPUTS),
            schema::single("grant", schema::grant()),
            false,
            false,
        ),
    ]
}

/// `list_agent_work_grants`.
pub async fn list(args: Option<&JsonObject>, ctx: &Ctx) -> Result<Value, ToolError> {
    let args = Args::new(args, &["page", "state"])?;
    let (page, state) = (args.page()?, args.state()?);
    let credential = &ctx.credential().await?;
    let mut query = vec![("page", page.to_string()), ("limit", LIMIT.to_string())];
    if let Some(state) = state {
        query.push(("state", state));
    }
    let url = ctx.upstream.url(&["agent-work-grants"], &query);
    let reply = ctx
        .upstream
        .call(Method::GET, url, credential, None, &[200], Op::Read)
        .await?;
    pagination::page_result(&reply, page, "grants", |item| check::grant(item, None))
}

/// `get_agent_work_grant`.
pub async fn get(args: Option<&JsonObject>, ctx: &Ctx) -> Result<Value, ToolError> {
    let args = Args::new(args, &["owner", "repo", "grant_id"])?;
    let (owner, repo, grant_id) = (
        args.segment("owner")?,
        args.segment("repo")?,
        args.id("grant_id")?,
    );
    let credential = &ctx.credential().await?;
    let url = super::grant_url(ctx, &owner, &repo, grant_id, &[]);
    let reply = ctx
        .upstream
        .call(Method::GET, url, credential, None, &[200], Op::Read)
        .await?;
    let expect = Expect {
        owner: &owner,
        repo: &repo,
    };
    let verdict = check::grant_is(&reply.body, expect, grant_id);
    Edge::read_grant_consistent(&reply.body, grant_id, verdict)
        .map_err(|why| Op::Read.bad_body(reply.status, &why))?;
    Ok(json!({"grant": reply.body, "native_status": reply.status}))
}

/// `confirm_agent_work_grant`: one POST, never repeated.
pub async fn confirm(args: Option<&JsonObject>, ctx: &Ctx) -> Result<Value, ToolError> {
    let args = Args::new(args, CONFIRM_INPUTS)?;
    let (owner, repo, grant_id) = (
        args.segment("owner")?,
        args.segment("repo")?,
        args.id("grant_id")?,
    );
    let proposal = args.proposal()?;
    let credential = &ctx.credential().await?;
    let url = super::grant_url(ctx, &owner, &repo, grant_id, &["confirm"]);
    let op = Edge::confirm_op(CONFIRM_ADVICE);
    let payload = Value::Object(proposal.to_body());
    let reply = ctx
        .upstream
        .call(Method::POST, url, credential, Some(&payload), &[200], op)
        .await?;
    let consistent = check::grant_is(
        &reply.body,
        Expect {
            owner: &owner,
            repo: &repo,
        },
        grant_id,
    )
    .and_then(|()| check::same_proposal(&reply.body, &proposal.digest))
    .and_then(|()| match reply.body.get("state").and_then(Value::as_str) {
        Some("awaiting_human") => Ok(()),
        _ => Err("confirmed grant is not awaiting_human".into()),
    });
    consistent.map_err(|why| op.bad_body(reply.status, &why))?;
    Ok(json!({"grant": reply.body, "native_status": reply.status}))
}
