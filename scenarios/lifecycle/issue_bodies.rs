//! Family 3, continued: Issue bodies at the contract's limits — the maximal
//! body read back whole everywhere, and NUL refused on every backend.

use grantgate_engine::prelude::*;

use super::issue_text::{BODY, TASK, TITLE, expect_issue_page};
use crate::support::flows::{self, LAB, LAB_BOT};

/// The maximal body: 262,144 bytes of multi-byte text, CRLF and markup.
fn large_body() -> String {
    const MAX: usize = 262_144;
    const LINE: &str = "Zeile ünïcødé — 🚀 <b>&amp;</b>\t\"quoted\"  \r\n";
    let mut body = String::with_capacity(MAX);
    while body.len() + LINE.len() <= MAX - 2 {
        body.push_str(LINE);
    }
    while body.len() < MAX - 2 {
        body.push('x');
    }
    body.push_str("\r\n");
    body
}

/// An Issue body of the maximal 262,144 bytes, submitted through the adapter,
/// reads back byte for byte, poster and grant included, on every surface.
#[scenario(Lifecycle, parity, clauses = ["S3.submit.size", "S2.text.whole", "S6.text.whole", "S4.issue-page"])]
async fn large_body_read_back(ctx: &mut Ctx) -> Outcome {
    // The body holds multi-byte text, CRLF and markup; posted by the bot and
    // bound to the grant. Surfaces: the adapter (its readback, `get_issue`,
    // and `list_issues` with four more such Issues: a page over 1 MiB), the
    // native API and the HTML page.
    let alice = ctx.human("alice")?;
    ctx.step("alice logs in");
    alice.login().await?;
    let bot = ctx.bot(LAB_BOT).await?;
    let (grant, proposal) = flows::active_grant(ctx, &alice, &bot, LAB, TASK).await?;
    let body = large_body();
    ctx.expect_eq("the body is the maximal size", body.len(), 262_144)?;

    ctx.step("lab-bot submits an Issue with the maximal body");
    let submission = NewIssue::new(TITLE, &body);
    let submitted = bot.submit(&grant, &proposal, &submission).await?;
    ctx.expect_tool_ok("submit succeeds", &submitted)?;
    ctx.expect_eq("native status", submitted.native_status(), Some(201))?;
    let receipt = submitted.submitted()?.receipt;
    ctx.expect_eq("submitted by", receipt.submitted_by.login.as_str(), LAB_BOT)?;

    ctx.step("lab-bot reads the submission back through the adapter");
    let back = bot.submission(&grant, &submission.request_key).await?;
    ctx.expect_tool_ok("get_agent_work_submission succeeds", &back)?;
    ctx.expect_eq(
        "same Issue",
        back.submitted()?.receipt.issue,
        receipt.issue.clone(),
    )?;

    ctx.step("the native API shows the whole body, posted by lab-bot, bound to the grant");
    let answer = ctx.native(LAB_BOT)?.issue(LAB, receipt.issue.index).await?;
    ctx.expect_status("issue read", answer.status, 200)?;
    let native = answer.issue()?;
    ctx.expect_eq("issue id", native.id, receipt.issue.id)?;
    ctx.expect_eq("title", native.title.as_str(), TITLE)?;
    ctx.expect(
        "body byte for byte",
        native.body == body,
        &format!("{} bytes back of {}", native.body.len(), body.len()),
    )?;
    ctx.expect_eq("poster", native.user.login.as_str(), LAB_BOT)?;
    ctx.expect_eq(
        "grant binding",
        native.agent_work_grant.clone(),
        Some(GrantMarker {
            grant_id: grant.id,
            request_key: submission.request_key.clone(),
        }),
    )?;

    ctx.step("lab-bot reads it with get_issue: the whole body");
    let (owner, repo) = (&grant.owner, &grant.repo);
    let index = receipt.issue.index;
    let reply = bot
        .call(
            "get_issue",
            json!({"owner": owner, "repo": repo, "index": index}),
        )
        .await?;
    ctx.expect_tool_ok("get_issue", &reply)?;
    let read = reply.issue()?;
    ctx.expect(
        "get_issue: body byte for byte",
        read.body == body,
        &format!("{} bytes back of {}", read.body.len(), body.len()),
    )?;

    // Four more: one list page of five is over 1 MiB, and still passed whole.
    ctx.step("lab-bot opens four more with create_issue; list_issues gives all five whole");
    for n in 1..=4 {
        let args =
            json!({"owner": owner, "repo": repo, "title": format!("{TITLE} {n}"), "body": body});
        ctx.expect_tool_ok("create_issue", &bot.call("create_issue", args).await?)?;
    }
    let reply = bot
        .call("list_issues", json!({"owner": owner, "repo": repo}))
        .await?;
    ctx.expect_tool_ok("list_issues", &reply)?;
    let bodies: Vec<usize> = reply.issues()?.iter().map(|i| i.body.len()).collect();
    ctx.expect_eq(
        "list_issues: five whole bodies",
        bodies,
        vec![body.len(); 5],
    )?;

    ctx.step("alice reads the Issue page: poster, whole body, grant marker");
    let shown = expect_issue_page(ctx, &alice, &grant, receipt.issue.index, &body).await?;
    ctx.observe(
        "the large Issue",
        &json!({
            "bytes": native.body.len(),
            "page": shown,
            "poster": native.user.login,
            "binding": native.agent_work_grant.map(|m| m.grant_id),
        }),
    );
    Ok(())
}

/// A title or body holding NUL (U+0000) is refused with 422 on every backend,
/// natively and through the adapter, and nothing is written.
#[scenario(Lifecycle, parity, clauses = ["S2.text.nul", "S3.statuses"])]
async fn nul_refused_on_every_backend(ctx: &mut Ctx) -> Outcome {
    // The adapter says `unprocessable`; nothing: no Issue, no submission
    // under its key.
    // Spec §2: SQLite could store NUL and PostgreSQL cannot; both refuse it.
    let alice = ctx.human("alice")?;
    ctx.step("alice logs in");
    alice.login().await?;
    let bot = ctx.bot(LAB_BOT).await?;
    let (grant, proposal) = flows::active_grant(ctx, &alice, &bot, LAB, TASK).await?;
    let in_title = NewIssue::new("Flaky\u{0}test", BODY);
    let in_body = NewIssue::new(TITLE, "before\u{0}after");
    let watch = flows::Watch::new(LAB_BOT, LAB)
        .grant(&grant)
        .key(&grant, &in_title.request_key)
        .key(&grant, &in_body.request_key);
    let before = watch.take(ctx).await?;

    ctx.step("lab-bot submits a title holding NUL natively");
    let native = ctx.native(LAB_BOT)?;
    let answer = native.submit(&grant, &proposal, &in_title).await?;
    ctx.observe("native answer to NUL in the title", &answer.status);
    flows::expect_native_error(ctx, "NUL in the title", &answer, 422)?;

    ctx.step("lab-bot submits a body holding NUL through the adapter");
    let reply = bot.submit(&grant, &proposal, &in_body).await?;
    ctx.observe("adapter error for NUL in the body", &reply.error_code());
    ctx.expect_tool_error("NUL in the body", &reply, "unprocessable")?;

    ctx.step("nothing was written");
    watch
        .expect_unchanged(ctx, "after the NUL submissions", &before)
        .await?;
    let issues = flows::issue_count(ctx, LAB).await?;
    ctx.observe("Issues in alice/lab", &issues);
    ctx.expect_eq("Issues in alice/lab", issues, 0)?;
    for key in [&in_title.request_key, &in_body.request_key] {
        let back = native.submission(&grant, key).await?;
        ctx.expect_status("no submission under the key", back.status, 404)?;
    }
    Ok(())
}
