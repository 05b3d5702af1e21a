//! The four public tools, unchanged by grants: ordinary repository reads and
//! ordinary Issue creation, never attributed to a grant.

use reqwest::Method;
use rmcp::model::{JsonObject, Tool};
use serde_json::{Value, json};

use super::{Ctx, tool};
use crate::{
    check::{self, Expect},
    error::ToolError,
    pagination::{self, LIMIT},
    schema,
    upstream::Op,
    validate::Args,
};

const CREATE_ADVICE: &str =
    "Check with list_issues or get_issue whether the Issue exists before creating it again.";

/// `tools/list` entries of the public four.
pub fn definitions() -> Vec<Tool> {
    vec![
        tool(
            "get_repository",
            "Read one repository of the Core.",
            schema::closed(
                &[("owner", schema::owner()), ("repo", schema::repo())],
                &["owner", "repo"],
            ),
            schema::single("repository", schema::repository()),
            true,
            true,
        ),
        tool(
            "list_issues",
            "List a repository's Issues, one page of up to 30 in ascending index order. Continue with next_page until has_more is false; pages are fresh observations (snapshot: false).",
            schema::closed(
                &[
                    ("owner", schema::owner()),
                    ("repo", schema::repo()),
                    ("page", schema::positive("Page number, from 1 (default 1).")),
                ],
                &["owner", "repo"],
            ),
            schema::page("issues", schema::issue()),
            true,
            true,
        ),
        tool(
            "get_issue",
            "Read one Issue by its per-repository index.",
            schema::closed(
                &[
                    ("owner", schema::owner()),
                    ("repo", schema::repo()),
                    (
                        "index",
                        schema::positive("The Issue's index in the repository."),
                    ),
                ],
                &["owner", "repo", "index"],
            ),
            schema::single("issue", schema::issue()),
            true,
            true,
        ),
        tool(
            "create_issue",
            "Open an ordinary Issue (not attributed to any grant). Title and body are sent whole.",
            schema::closed(
                &[
                    ("owner", schema::owner()),
                    ("repo", schema::repo()),
                    ("title", schema::text("Issue title, sent whole.")),
                    ("body", schema::text("Issue body, sent whole.")),
                ],
                &["owner", "repo", "title", "body"],
            ),
            schema::single("issue", schema::issue()),
            false,
            false,
        ),
    ]
}

/// `get_repository`.
pub async fn get_repository(args: Option<&JsonObject>, ctx: &Ctx) -> Result<Value, ToolError> {
    let args = Args::new(args, &["owner", "repo"])?;
    let (owner, repo) = (args.segment("owner")?, args.segment("repo")?);
    let credential = &ctx.credential().await?;
    let url = ctx.upstream.url(&["repos", &owner, &repo], &[]);
    let reply = ctx
        .upstream
        .call(Method::GET, url, credential, None, &[200], Op::Read)
        .await?;
    check::repository(
        &reply.body,
        Expect {
            owner: &owner,
            repo: &repo,
        },
    )
    .map_err(|why| Op::Read.bad_body(reply.status, &why))?;
    Ok(json!({"repository": reply.body, "native_status": reply.status}))
}

/// `list_issues`.
pub async fn list_issues(args: Option<&JsonObject>, ctx: &Ctx) -> Result<Value, ToolError> {
    let args = Args::new(args, &["owner", "repo", "page"])?;
    let (owner, repo, page) = (args.segment("owner")?, args.segment("repo")?, args.page()?);
    let credential = &ctx.credential().await?;
    let query = [("page", page.to_string()), ("limit", LIMIT.to_string())];
    let url = ctx
        .upstream
        .url(&["repos", &owner, &repo, "issues"], &query);
    let reply = ctx
        .upstream
        .call(Method::GET, url, credential, None, &[200], Op::Read)
        .await?;
    let expect = Expect {
        owner: &owner,
        repo: &repo,
    };
    pagination::page_result(&reply, page, "issues", |item| check::issue(item, expect))
}

/// `get_issue`.
pub async fn get_issue(args: Option<&JsonObject>, ctx: &Ctx) -> Result<Value, ToolError> {
    let args = Args::new(args, &["owner", "repo", "index"])?;
    let (owner, repo, index) = (
        args.segment("owner")?,
        args.segment("repo")?,
        args.id("index")?,
    );
    let credential = &ctx.credential().await?;
    let url = ctx
        .upstream
        .url(&["repos", &owner, &repo, "issues", &index.to_string()], &[]);
    let reply = ctx
        .upstream
        .call(Method::GET, url, credential, None, &[200], Op::Read)
        .await?;
    let got = check::issue(
        &reply.body,
        Expect {
            owner: &owner,
            repo: &repo,
        },
    )
    .map_err(|why| Op::Read.bad_body(reply.status, &why))?;
    if got != index {
        return Err(Op::Read.bad_body(reply.status, "issue index differs from the requested one"));
    }
    Ok(json!({"issue": reply.body, "native_status": reply.status}))
}

/// `create_issue`: one POST, never repeated.
pub async fn create_issue(args: Option<&JsonObject>, ctx: &Ctx) -> Result<Value, ToolError> {
    let args = Args::new(args, &["owner", "repo", "title", "body"])?;
    let (owner, repo) = (args.segment("owner")?, args.segment("repo")?);
    let (title, body) = (args.text("title")?, args.text("body")?);
    let credential = &ctx.credential().await?;
    let url = ctx.upstream.url(&["repos", &owner, &repo, "issues"], &[]);
    let op = Op::Write(CREATE_ADVICE);
    let payload = json!({"title": title, "body": body});
    let reply = ctx
        .upstream
        .call(Method::POST, url, credential, Some(&payload), &[201], op)
        .await?;
    check::issue(
        &reply.body,
        Expect {
            owner: &owner,
            repo: &repo,
        },
    )
    .map_err(|why| op.bad_body(reply.status, &why))?;
    Ok(json!({"issue": reply.body, "native_status": reply.status}))
}
