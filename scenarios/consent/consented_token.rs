//! Family 18: delegated consent (spec §9) — what a consented token is. It
//! acts for the person who consented: ordinary activity under their name,
//! never grant approval (grant routes stay agent-only), at most
//! `read:repository write:issue`; and it lives in the adapter's memory
//! only.

use grantgate_engine::prelude::*;

use super::parked_calls::{READ_TOOL, consent_bot, park, read_args};
use crate::support::consent::CONSENTER;
use crate::support::flows::{LAB, LAB_BOT, Watch, active_grant};

/// Parks a call on a fresh consent bot, has alice consent, and returns the
/// bot (its session holding alice's token) and that token.
async fn consented(ctx: &mut Ctx) -> Step<(Bot, ConsentToken)> {
    let bot = consent_bot(ctx, Elicitation::Url).await?;
    let (pending, url) = park(ctx, &bot, "the session").await?;
    ctx.step("alice consents");
    let alice = ctx.human(CONSENTER)?;
    let (_, page) = alice.consent(url.url(), true).await?;
    ctx.expect_status("the callback accepts it", page.status, 200)?;
    ctx.expect_tool_ok("the parked call succeeds", &pending.finish().await?)?;
    let posts = ctx.token_posts().await?;
    ctx.expect_eq("one token POST", posts.len(), 1)?;
    let token = posts[0]
        .token()
        .ok_or_else(|| Abort::failed("the token answer carries no access_token"))?;
    Ok((bot, token))
}

/// Consent is not approval: alice's consented token gets 404 from the grant
/// tools for lab-bot's grant, changes nothing, and carries no more than the
/// requested scopes.
#[scenario(Consent, parity, clauses = ["S9.not-approval", "S9.token.scope", "S3.agent-only"])]
async fn consent_is_not_approval(ctx: &mut Ctx) -> Outcome {
    // alice is the repository's admin, who approves grants in her browser;
    // the grant tools are get, confirm and submit on lab-bot's active grant.
    // The token's scope is within what was requested and `read:repository
    // write:issue`, and a route needing `write:repository` refuses it;
    // `create_issue` through it is posted by alice with no grant marker.
    let alice = ctx.human(CONSENTER)?;
    alice.login().await?;
    let lab_bot = ctx.bot(LAB_BOT).await?;
    let (grant, proposal) = active_grant(ctx, &alice, &lab_bot, LAB, "task").await?;
    let (bot, token) = consented(ctx).await?;
    let watch = Watch::new(LAB_BOT, LAB).grant(&grant);
    let before = watch.take(ctx).await?;

    ctx.step("alice's token on the grant tools");
    let reply = bot.get_grant(&grant).await?;
    ctx.expect_tool_error("get_agent_work_grant", &reply, "not_found")?;
    ctx.expect_eq("native status", reply.native_status(), Some(404))?;
    let reply = bot.confirm(&grant, &proposal).await?;
    ctx.expect_tool_error("confirm_agent_work_grant", &reply, "not_found")?;
    let reply = bot
        .submit(&grant, &proposal, &NewIssue::new("by consent", "body"))
        .await?;
    ctx.expect_tool_error("submit_agent_work_proposal", &reply, "not_found")?;
    watch
        .expect_unchanged(ctx, "after the grant tools", &before)
        .await?;

    ctx.step("the token's scope");
    ctx.expect(
        "the token answer's scope is within read:repository write:issue",
        !token.scopes().is_empty()
            && token
                .scopes()
                .iter()
                .all(|s| oauth::MAX_SCOPES.contains(&s.as_str())),
        &format!("{:?}", token.scopes()),
    )?;
    let native = ctx.consent().native_with_consent(CONSENTER, &token)?;
    let answer = native
        .call(
            "PUT",
            &core_api::collaborator(LAB, "mallory"),
            Some(&json!({"permission": "read"})),
        )
        .await?;
    // Spec §3: 403, the credential lacks a scope (the repository is
    // alice's, so visible to it: not 404).
    ctx.expect_status(
        "adding a collaborator (write:repository) with it is refused",
        answer.status,
        403,
    )?;

    ctx.step("create_issue through alice's consent");
    let (owner, repo) = LAB.split_once('/').unwrap_or((LAB, ""));
    let reply = bot
        .call(
            "create_issue",
            json!({"owner": owner, "repo": repo, "title": "by consent", "body": "ordinary"}),
        )
        .await?;
    ctx.expect_tool_ok("create_issue succeeds", &reply)?;
    let made = reply.issue()?;
    let read = ctx.setup().issue(LAB, made.index).await?;
    ctx.expect_status("the Issue reads back", read.status, 200)?;
    let issue = read.issue()?;
    ctx.expect_eq(
        "posted by alice, not attributed to any grant",
        (issue.user.login.as_str(), issue.agent_work_grant.is_none()),
        (CONSENTER, true),
    )?;
    ctx.observe(
        "the consented Issue",
        &(issue.title, issue.body, issue.user.login),
    );
    Ok(())
}

/// No file of the adapter's own and not its log holds a consented token,
/// during a session or after it ends.
#[scenario(Consent, parity, clauses = ["S9.adapter.token-memory"])]
async fn no_consent_token_on_disk(ctx: &mut Ctx) -> Outcome {
    // Checked after a consented call and a second call, and again after the
    // session ends: every file under the adapter's working directory, `HOME`
    // and `TMPDIR`, and its log; the report is scanned for the token as a
    // registered secret. How the Core stores its own tokens is the Core's
    // business.
    let (bot, token) = consented(ctx).await?;
    let reply = bot.call(READ_TOOL, read_args()).await?;
    ctx.expect_tool_ok("a second call succeeds", &reply)?;
    ctx.step("the disk and the logs, with the session open");
    ctx.expect_eq(
        "places holding the token",
        ctx.consent().places_holding(&token)?,
        Vec::new(),
    )?;
    ctx.step("the session ends");
    bot.end_session().await?;
    let places = ctx.consent().places_holding(&token)?;
    ctx.expect_eq("places holding the token", places.clone(), Vec::new())?;
    ctx.observe("how many places hold the token", &places.len());
    Ok(())
}
