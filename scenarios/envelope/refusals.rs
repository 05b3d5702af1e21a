//! Family 17, continued (spec §8): what never becomes an envelope. Every
//! envelope that breaks a rule of the grammar is a 422 page and creates no
//! grant; task and summary prose that holds an envelope's JSON, and a bot's
//! request with a `repository_grant` member, never create or change one.

use grantgate_engine::prelude::*;

use crate::support::envelopes::{envelope, typed};
use crate::support::flows::{self, LAB, LAB_BOT};

/// A valid envelope with `member` replaced by `value` (or removed, for
/// `None`), inside `commit_count` when `member` is `min`, `max` or another
/// name prefixed `commit_count.`.
fn changed(member: &str, value: Option<Value>) -> String {
    let mut e = envelope(&["src/"], 1, 1);
    let target = match member.strip_prefix("commit_count.") {
        Some(inner) => (e.get_mut("commit_count"), inner),
        None => (Some(&mut e), member),
    };
    if let (Some(Value::Object(object)), name) = target {
        match value {
            Some(v) => {
                object.insert(name.to_owned(), v);
            }
            None => {
                object.remove(name);
            }
        }
    }
    typed(&e)
}

fn paths(paths: Value) -> String {
    changed("allowed_paths", Some(paths))
}

/// Every invalid envelope of the table, as `(what, JSON text)`.
fn invalid_envelopes() -> Vec<(&'static str, String)> {
    vec![
        ("an empty pattern", paths(json!([""]))),
        ("a leading /", paths(json!(["/abs"]))),
        ("a backslash", paths(json!(["a\\b"]))),
        ("a .. segment", paths(json!(["../x"]))),
        ("a .. segment inside", paths(json!(["a/../b"]))),
        ("a . segment", paths(json!(["./x"]))),
        ("an empty segment", paths(json!(["a//b"]))),
        ("a .git segment inside", paths(json!(["x/.git/y"]))),
        ("the .git subtree", paths(json!([".git/"]))),
        (
            "duplicate patterns",
            paths(json!(["src/", "docs/", "src/"])),
        ),
        ("no patterns", paths(json!([]))),
        ("patterns as one string", paths(json!("src/"))),
        ("a pattern that is a number", paths(json!([1]))),
        ("min 0", changed("commit_count.min", Some(json!(0)))),
        ("max 33", changed("commit_count.max", Some(json!(33)))),
        ("min > max", typed(&envelope(&["src/"], 3, 2))),
        ("min 1.5", changed("commit_count.min", Some(json!(1.5)))),
        ("max 1.0", changed("commit_count.max", Some(json!(1.0)))),
        ("min \"1\"", changed("commit_count.min", Some(json!("1")))),
        ("version 1, a number", changed("version", Some(json!(1)))),
        ("version \"2\"", changed("version", Some(json!("2")))),
        ("publish true", changed("publish", Some(json!(true)))),
        (
            "publish \"false\"",
            changed("publish", Some(json!("false"))),
        ),
        ("an extra member", changed("scope", Some(json!("all")))),
        (
            "an extra member in commit_count",
            changed("commit_count.step", Some(json!(1))),
        ),
        ("no version", changed("version", None)),
        ("no allowed_paths", changed("allowed_paths", None)),
        ("no commit_count", changed("commit_count", None)),
        ("no publish", changed("publish", None)),
        ("no commit_count.max", changed("commit_count.max", None)),
        (
            "commit_count as an array",
            changed("commit_count", Some(json!([1, 1]))),
        ),
        ("an array, not an object", "[]".to_owned()),
        ("JSON null", "null".to_owned()),
        ("not JSON", "{\"version\": \"1\",".to_owned()),
        (
            "the envelope wrapped in a repository_grant member",
            json!({"repository_grant": envelope(&["src/"], 1, 1)}).to_string(),
        ),
    ]
}

/// Each invalid envelope, one for every rule of §8, is a 422 page and creates
/// no grant.
#[scenario(Envelope, parity, clauses = ["S8.invalid", "S8.grammar", "S8.version", "S8.paths", "S8.paths.refused", "S8.paths.git", "S8.counts", "S8.publish"])]
async fn invalid_envelopes_refused(ctx: &mut Ctx) -> Outcome {
    // More than thirty: patterns empty, leading `/`, backslash, `.`/`..`,
    // empty segment, `.git`, duplicates, none; counts 0, 33, min > max,
    // `1.5`, `1.0`, `"1"`; version `1`; `publish: true`; unknown and missing
    // members at both levels; not an object. The agent's grant total is read
    // through the API after each.
    let alice = ctx.human("alice")?;
    ctx.step("alice logs in");
    alice.login().await?;
    let before = flows::grant_total(ctx, LAB_BOT).await?;
    let cases = invalid_envelopes();
    ctx.expect(
        "at least 20 invalid envelopes",
        cases.len() >= 20,
        &cases.len().to_string(),
    )?;
    let mut statuses = Vec::new();
    for (what, text) in &cases {
        ctx.step(&format!("alice prepares a grant with {what}"));
        let (grant, page) = alice
            .prepare_grant_with_envelope(LAB, LAB_BOT, "Invalid envelope.", "summary", text)
            .await?;
        ctx.expect_status(&format!("{what}: the answer"), page.status, 422)?;
        ctx.expect_eq(&format!("{what}: no redirect"), page.first_redirect(), None)?;
        ctx.expect_eq(&format!("{what}: no grant page"), grant, None)?;
        ctx.expect_eq(
            &format!("{what}: the agent's grant total"),
            flows::grant_total(ctx, LAB_BOT).await?,
            before,
        )?;
        statuses.push((*what, page.status));
    }
    ctx.observe("invalid envelopes", &statuses);
    Ok(())
}

/// An envelope is never synthesised: not from a grant's task and summary, nor
/// from a bot's confirm or submit, which are refused for carrying one.
#[scenario(Envelope, parity, clauses = ["S8.never-synthesised", "S8.immutable", "S3.submit.body", "S3.confirm.body"])]
async fn envelope_never_synthesised(ctx: &mut Ctx) -> Outcome {
    // A task and a summary holding a valid envelope's JSON give
    // `repository_grant: null`, and submit works (201). A confirm or submit
    // with a `repository_grant` member is 422 natively and `invalid_input`
    // through the adapter with zero upstream requests (counted at the fault
    // proxy), and the grant still has no envelope.
    let alice = ctx.human("alice")?;
    ctx.step("alice logs in");
    alice.login().await?;
    let bot = ctx.bot_builder(LAB_BOT).via_proxy().start().await?;
    let proxy = ctx.proxy().await?;
    let native = ctx.native(LAB_BOT)?;
    let inner = envelope(&["src/", "docs/"], 1, 3);
    let task = format!("Work only under this envelope:\n{}\n", typed(&inner));
    // What the Core receives: a real browser sends line breaks as CRLF.
    let task = alice.as_submitted(&task);
    let summary = json!({"repository_grant": inner}).to_string();

    ctx.step("alice prepares a grant whose task and summary hold an envelope");
    let (grant, _) = alice.prepare_grant(LAB, LAB_BOT, &task, &summary).await?;
    let read = native.get_grant(&grant).await?.grant()?;
    ctx.expect_eq("repository_grant", read.envelope()?, None)?;
    ctx.expect_eq("the task is kept whole", read.task, task.clone())?;

    ctx.step("lab-bot confirms with a repository_grant member");
    let proposal = bot.read_proposal(&grant).await?;
    let mut body = core_api::confirm_body(&proposal);
    body["repository_grant"] = inner.clone();
    let answer = native
        .call("POST", &core_api::confirm(&grant), Some(&body))
        .await?;
    flows::expect_native_error(ctx, "native confirm", &answer, 422)?;
    let mut args = core_api::grant_args(&grant);
    args["repository_grant"] = inner.clone();
    for (name, value) in [
        ("proposal_schema", json!(proposal.schema)),
        ("proposal_version", json!(proposal.version)),
        ("proposal_digest", json!(proposal.digest)),
    ] {
        args[name] = value;
    }
    expect_refused_locally(ctx, &bot, &proxy, "confirm_agent_work_grant", args).await?;
    ctx.expect_eq(
        "the grant still awaits its agent",
        flows::native_status(ctx, LAB_BOT, &grant).await?,
        (state::AWAITING_AGENT.to_owned(), 1),
    )?;

    ctx.step("lab-bot confirms properly, alice approves");
    ctx.expect_tool_ok("the agent confirms", &bot.confirm(&grant, &proposal).await?)?;
    alice.approve(&grant).await?;

    ctx.step("lab-bot submits with a repository_grant member");
    let issue = NewIssue::new("Never synthesised", "Prose is not authority.\n");
    let mut body = core_api::submit_body(&proposal, &issue);
    body["repository_grant"] = inner.clone();
    let answer = native
        .call("POST", &core_api::submit(&grant), Some(&body))
        .await?;
    flows::expect_native_error(ctx, "native submit", &answer, 422)?;
    let mut args = core_api::grant_args(&grant);
    if let (Some(args), Value::Object(body)) = (args.as_object_mut(), body) {
        args.extend(body);
    }
    expect_refused_locally(ctx, &bot, &proxy, "submit_agent_work_proposal", args).await?;
    ctx.expect_eq("no Issue yet", flows::issue_count(ctx, LAB).await?, 0)?;

    ctx.step("lab-bot submits properly: the grant works as one without an envelope");
    let reply = bot.submit(&grant, &proposal, &issue).await?;
    ctx.expect_tool_ok("the submission", &reply)?;
    ctx.expect_eq("native status", reply.native_status(), Some(201))?;
    let after = native.get_grant(&grant).await?.grant()?;
    ctx.expect_eq("repository_grant at the end", after.envelope()?, None)?;
    ctx.observe("never synthesised: submit", &reply.native_status());
    Ok(())
}

/// A tool call the adapter must refuse as `invalid_input` naming
/// `repository_grant`, with not one request more at the proxy.
async fn expect_refused_locally(
    ctx: &Ctx,
    bot: &Bot,
    proxy: &FaultProxy,
    tool: &str,
    args: Value,
) -> Step<()> {
    let before = proxy.requests().len();
    let reply = bot.call(tool, args).await?;
    ctx.expect_tool_error(
        &format!("{tool} with repository_grant"),
        &reply,
        "invalid_input",
    )?;
    ctx.expect_eq(
        &format!("{tool}: the field named"),
        reply.error_field(),
        Some("repository_grant"),
    )?;
    ctx.expect_eq(
        &format!("{tool}: no request reached the Core"),
        proxy.requests().len(),
        before,
    )
}
