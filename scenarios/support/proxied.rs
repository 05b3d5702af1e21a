//! A bot behind the fault proxy: the routes of alice/lab's grants as the
//! proxy matches them, an active grant reached through the proxy, and what
//! a refused or committed tool call must leave.

use grantgate_engine::prelude::*;

use crate::support::flows::{self, LAB, LAB_BOT};

/// The submit route of any grant of alice/lab, as the proxy matches it.
pub(crate) const SUBMIT: &str = "/api/v1/repos/alice/lab/agent-work-grants/*/issues";
/// The grant route.
pub(crate) const GRANT: &str = "/api/v1/repos/alice/lab/agent-work-grants/*";
/// The confirm route of alice/lab's grants, as the proxy matches it.
pub(crate) const CONFIRM: &str = "/api/v1/repos/alice/lab/agent-work-grants/*/confirm";
/// The submission readback route.
pub(crate) const READBACK: &str = "/api/v1/repos/alice/lab/agent-work-grants/*/submissions/*";
pub(crate) const TITLE: &str = "Flaky test: lab::sync_timeout";
pub(crate) const BODY: &str = "Observed 3 failures in 20 runs.\n";

/// alice prepares and approves a grant for lab-bot, whose adapter reaches the
/// Core through the fault proxy; nothing is faulted yet.
pub(crate) async fn proxied_active_grant(
    ctx: &mut Ctx,
    task: &str,
) -> Step<(Bot, GrantRef, Proposal)> {
    let alice = ctx.human("alice")?;
    ctx.step("alice logs in");
    alice.login().await?;
    let bot = ctx.bot_builder(LAB_BOT).via_proxy().start().await?;
    let (grant, proposal) = flows::active_grant(ctx, &alice, &bot, LAB, task).await?;
    Ok((bot, grant, proposal))
}

/// Checks a refused tool call: `code`, `native_status`, and no receipt (no
/// structured content, no `grant` or `submission` in the error).
pub(crate) fn expect_no_receipt(
    ctx: &Ctx,
    what: &str,
    reply: &ToolReply,
    code: &str,
    native_status: Option<i64>,
) -> Step<()> {
    ctx.expect_tool_error(what, reply, code)?;
    ctx.expect_eq(
        &format!("{what}: native_status"),
        reply.native_status(),
        native_status,
    )?;
    let leaked = reply.structured.is_some()
        || reply
            .error
            .as_ref()
            .is_some_and(|e| e.get("submission").is_some() || e.get("grant").is_some());
    ctx.expect(
        &format!("{what}: no receipt published"),
        !leaked,
        &reply.text,
    )
}

/// Reads the submission back cleanly through the adapter and checks that it
/// is the committed one: the key, `submitted`, an Issue of the repository
/// posted by lab-bot and bound to the grant. Returns the receipt.
pub(crate) async fn expect_committed(
    ctx: &Ctx,
    bot: &Bot,
    grant: &GrantRef,
    submission: &NewIssue,
) -> Step<Receipt> {
    let back = bot.submission(grant, &submission.request_key).await?;
    ctx.expect_eq("readback native status", back.native_status(), Some(200))?;
    let receipt = back.submitted()?.receipt;
    ctx.expect_eq(
        "the receipt's (key, grant, status)",
        (
            receipt.request_key.as_str(),
            receipt.grant_id,
            receipt.status.as_str(),
        ),
        (submission.request_key.as_str(), grant.id, "submitted"),
    )?;
    let answer = ctx.setup().issue(LAB, receipt.issue.index).await?;
    ctx.expect_status("the receipt's Issue exists natively", answer.status, 200)?;
    let issue = answer.issue()?;
    ctx.expect_eq("its title", issue.title.as_str(), submission.title.as_str())?;
    ctx.expect_eq("its poster", issue.user.login.as_str(), LAB_BOT)?;
    ctx.expect_eq(
        "its grant binding",
        issue.agent_work_grant,
        Some(GrantMarker {
            grant_id: grant.id,
            request_key: submission.request_key.clone(),
        }),
    )?;
    Ok(receipt)
}

/// The grant is still `active`, as lab-bot reads it natively.
pub(crate) async fn expect_still_active(ctx: &Ctx, grant: &GrantRef) -> Step<()> {
    let (now, _) = flows::native_status(ctx, LAB_BOT, grant).await?;
    ctx.expect_eq("grant state", now, state::ACTIVE.to_owned())
}
