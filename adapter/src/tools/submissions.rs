//! Submission tools: submit a proposal as an Issue under an active grant, and
//! read the receipt back by the caller's own request key.
//!
//! The request key is the caller's: the adapter never invents or replaces one.
//! A submit whose outcome is unknown is answered with `delivery_uncertain` and
//! the instruction to read back the same owner/repo/grant/key.

use reqwest::Method;
use rmcp::model::{JsonObject, Tool};
use serde_json::{Value, json};

use super::{Ctx, tool};
use crate::{
    check::{self, Expect},
    edges::{Edge, Edges},
    error::ToolError,
    schema,
    upstream::Op,
    validate::Args,
};

const SUBMIT_ADVICE: &str = "Read back with get_agent_work_submission using the same owner, repo, grant_id and request_key; never submit with a new key.";

pub(crate) const SUBMIT_FIELDS: &[&str] = &[
    "owner",
    "repo",
    "grant_id",
    "proposal_schema",
    "proposal_version",
    "proposal_digest",
    "request_key",
    "title",
    "body",
];

/// `tools/list` entries of the submission tools.
pub fn definitions() -> Vec<Tool> {
    let grant_id = schema::positive("The grant's native id (a JSON integer).");
    let mut submit = vec![
        ("owner", schema::owner()),
        ("repo", schema::repo()),
        ("grant_id", grant_id.clone()),
    ];
    submit.extend(schema::triple());
    submit.extend([
        ("request_key", schema::request_key()),
        (
            "title",
            schema::text("Issue title, sent whole (the Core accepts 1-255 characters, not blank)."),
        ),
        (
            "body",
            schema::text("Issue body, sent whole (the Core accepts up to 262144 bytes)."),
        ),
    ]);
    vec![
        tool(
            "submit_agent_work_proposal",
            "Open the Issue for an active grant, repeating the grant's exact proposal triple. Choose one UUIDv4 request_key per intended Issue and keep it: an identical retry with the same key returns the same receipt (200) and creates nothing. On delivery_uncertain, read back with get_agent_work_submission using the same key; never use a new key.",
            schema::closed(&submit, SUBMIT_FIELDS),
            schema::receipt(),
            false,
            true,
        ),
        tool(
            "get_agent_work_submission",
            "Read back the receipt of a submission by its grant and request_key: the Issue it created and its status (submitted, issue_deleted or issue_binding_changed). A receipt is not acceptance.",
            schema::closed(
                &[
                    ("owner", schema::owner()),
                    ("repo", schema::repo()),
                    ("grant_id", grant_id),
                    ("request_key", schema::request_key()),
                ],
                &["owner", "repo", "grant_id", "request_key"],
            ),
            schema::receipt(),
            true,
            true,
        ),
    ]
}

/// `submit_agent_work_proposal`: one POST, never repeated; 201 new, 200 replay.
pub async fn submit(args: Option<&JsonObject>, ctx: &Ctx) -> Result<Value, ToolError> {
    let args = Args::new(args, SUBMIT_FIELDS)?;
    let (owner, repo, grant_id) = (
        args.segment("owner")?,
        args.segment("repo")?,
        args.id("grant_id")?,
    );
    let proposal = args.proposal()?;
    let request_key = args.request_key()?;
    let (title, body) = (args.text("title")?, args.text("body")?);
    let credential = &ctx.credential().await?;
    let url = super::grant_url(ctx, &owner, &repo, grant_id, &["issues"]);
    let mut payload = proposal.to_body();
    payload.insert("request_key".into(), request_key.clone().into());
    payload.insert("title".into(), title.into());
    payload.insert("body".into(), body.into());
    let op = Op::Write(SUBMIT_ADVICE);
    let reply = ctx
        .upstream
        .call(
            Method::POST,
            url,
            credential,
            Some(&Value::Object(payload)),
            &[201, 200],
            op,
        )
        .await?;
    let consistent = Edge::receipt_consistent(check::receipt(
        &reply.body,
        Expect {
            owner: &owner,
            repo: &repo,
        },
        grant_id,
        &request_key,
    ))
    .and_then(|()| check::same_proposal(&reply.body["grant"], &proposal.digest))
    .and_then(
        |()| match reply.body["grant"].get("state").and_then(Value::as_str) {
            Some("active") => Ok(()),
            _ => Err("grant in a submit answer is not active".into()),
        },
    );
    consistent.map_err(|why| op.bad_body(reply.status, &why))?;
    Ok(receipt(reply.body, reply.status))
}

/// `get_agent_work_submission`.
pub async fn get(args: Option<&JsonObject>, ctx: &Ctx) -> Result<Value, ToolError> {
    let args = Args::new(args, &["owner", "repo", "grant_id", "request_key"])?;
    let (owner, repo, grant_id) = (
        args.segment("owner")?,
        args.segment("repo")?,
        args.id("grant_id")?,
    );
    let request_key = args.request_key()?;
    let credential = &ctx.credential().await?;
    let url = super::grant_url(ctx, &owner, &repo, grant_id, &["submissions", &request_key]);
    let reply = ctx
        .upstream
        .call(Method::GET, url, credential, None, &[200], Op::Read)
        .await?;
    Edge::receipt_consistent(check::receipt(
        &reply.body,
        Expect {
            owner: &owner,
            repo: &repo,
        },
        grant_id,
        &request_key,
    ))
    .map_err(|why| Op::Read.bad_body(reply.status, &why))?;
    Ok(receipt(reply.body, reply.status))
}

/// `{grant, submission, native_status}` from a checked native body.
fn receipt(mut body: Value, status: u16) -> Value {
    json!({
        "grant": body["grant"].take(),
        "submission": body["submission"].take(),
        "native_status": status,
    })
}
