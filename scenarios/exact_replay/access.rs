//! Family 16 (spec §10, seed 003), second half: lost access blocks a replay
//! until it is restored; after an uncertain response only the identical
//! request may be retried; the request key is the caller's own — the
//! adapter takes it under no other name and never makes one up.

use grantgate_engine::prelude::*;

use super::replay_checks::{BODY, TITLE, active, expect_native_replay, issue_text};
use crate::support::flows::{self, LAB, LAB_BOT, Watch, submit_ok};
use crate::support::proxied::{SUBMIT, expect_no_receipt};

/// An identical replay by a bot removed from the private repository is 404
/// and writes nothing; restored as a collaborator, it answers 200 with the
/// same receipt.
#[scenario(ExactReplay, parity, clauses = ["S10.blocked", "S10.restored"])]
async fn exact_replay_access_lost_and_restored(ctx: &mut Ctx) -> Outcome {
    // The 404 is `not_found` through the adapter.
    let bot = ctx.bot(LAB_BOT).await?;
    let (grant, proposal) = active(ctx, &bot, "exact replay: lost access").await?;
    ctx.step("lab-bot submits through its adapter");
    let submission = NewIssue::new(TITLE, BODY);
    let receipt = submit_ok(ctx, &bot, &grant, &proposal, &submission, 201).await?;
    let watch = Watch::new(LAB_BOT, LAB)
        .grant(&grant)
        .key(&grant, &submission.request_key);
    let before = watch.take(ctx).await?;

    ctx.step("alice removes lab-bot from the collaborators; lab-bot replays identically");
    ctx.setup().remove_collaborator(LAB, LAB_BOT).await?;
    let native = ctx.native(LAB_BOT)?;
    let answer = native.submit(&grant, &proposal, &submission).await?;
    flows::expect_native_error(ctx, "the native replay without access", &answer, 404)?;
    let reply = bot.submit(&grant, &proposal, &submission).await?;
    flows::expect_tool_refusal(
        ctx,
        "the adapter's replay without access",
        &reply,
        "not_found",
        404,
    )?;
    let denied = (answer.status, reply.error_code().map(str::to_owned));

    ctx.step("lab-bot is a write collaborator again; nothing was written meanwhile");
    ctx.setup().add_collaborator(LAB, LAB_BOT, "write").await?;
    watch
        .expect_unchanged(ctx, "after the replays without access", &before)
        .await?;

    ctx.step("the identical replay answers 200 with the same receipt again");
    let answer = native.submit(&grant, &proposal, &submission).await?;
    expect_native_replay(ctx, "the native replay with access", &answer, &receipt)?;
    let replay = submit_ok(ctx, &bot, &grant, &proposal, &submission, 200).await?;
    flows::expect_same_receipt(ctx, "the adapter's replay with access", &replay, &receipt)?;
    watch
        .expect_unchanged(ctx, "after the replays with access", &before)
        .await?;
    ctx.observe("without access, then with it", &(denied, answer.status));
    Ok(())
}

/// After a lost response, a retry under the same key with changed text is 409
/// and writes nothing, while the identical retry answers 200 with the
/// receipt.
#[scenario(ExactReplay, parity, clauses = ["S10.uncertain-retry", "S6.uncertain"])]
async fn exact_replay_after_lost_response(ctx: &mut Ctx) -> Outcome {
    // The Core committed but the answer never arrived: the adapter reports
    // `delivery_uncertain` and the readback finds the submission. After the
    // changed retry (`conflict`) there is one Issue, and the readback and the
    // Issue keep the original text.
    let bot = ctx.bot_builder(LAB_BOT).via_proxy().start().await?;
    let (grant, proposal) = active(ctx, &bot, "exact replay: lost response").await?;
    let proxy = ctx.proxy().await?;

    ctx.step("the Core commits lab-bot's submission, but the answer is lost");
    proxy.inject("POST", SUBMIT, Fault::DropResponse);
    let submission = NewIssue::new(TITLE, BODY);
    let lost = bot.submit(&grant, &proposal, &submission).await?;
    expect_no_receipt(ctx, "the lost submit", &lost, "delivery_uncertain", None)?;
    ctx.expect_eq("one POST reached the proxy", proxy.count("POST", SUBMIT), 1)?;

    ctx.step("lab-bot reads back the same key");
    let back = bot.submission(&grant, &submission.request_key).await?;
    ctx.expect_tool_ok("the readback", &back)?;
    let receipt = back.submitted()?.receipt;
    ctx.expect_eq(
        "the receipt is the caller's key's",
        (receipt.grant_id, receipt.request_key.as_str()),
        (grant.id, submission.request_key.as_str()),
    )?;
    let original = (submission.title.clone(), submission.body.clone());
    ctx.expect_eq(
        "the Issue holds the original text",
        issue_text(ctx, receipt.issue.index).await?,
        original.clone(),
    )?;
    let watch = Watch::new(LAB_BOT, LAB)
        .grant(&grant)
        .key(&grant, &submission.request_key);
    let before = watch.take(ctx).await?;

    ctx.step("lab-bot retries under the same key with changed text");
    let mut seen = Vec::new();
    for (what, changed) in [
        (
            "another title",
            NewIssue::new("Retried: another title", BODY),
        ),
        (
            "another body",
            NewIssue::new(TITLE, "Retried with another body.\n"),
        ),
    ] {
        let changed = changed.with_key(&submission.request_key);
        let reply = bot.submit(&grant, &proposal, &changed).await?;
        flows::expect_tool_refusal(ctx, &format!("{what}: refused"), &reply, "conflict", 409)?;
        watch
            .expect_unchanged(ctx, &format!("after the retry with {what}"), &before)
            .await?;
        seen.push(reply.error_code().map(str::to_owned));
    }
    ctx.expect_eq("one Issue", flows::issue_count(ctx, LAB).await?, 1)?;
    let back = bot.submission(&grant, &submission.request_key).await?;
    ctx.expect_tool_ok("the same-key readback", &back)?;
    flows::expect_same_receipt(
        ctx,
        "the readback is the original receipt",
        &back.submitted()?.receipt,
        &receipt,
    )?;
    ctx.expect_eq(
        "the Issue still holds the original text",
        issue_text(ctx, receipt.issue.index).await?,
        original,
    )?;

    ctx.step("the identical retry answers 200 with the receipt");
    let replay = submit_ok(ctx, &bot, &grant, &proposal, &submission, 200).await?;
    flows::expect_same_receipt(ctx, "the identical retry", &replay, &receipt)?;
    let answer = ctx
        .native(LAB_BOT)?
        .submit(&grant, &proposal, &submission)
        .await?;
    expect_native_replay(ctx, "the native identical retry", &answer, &receipt)?;
    ctx.expect_eq("still one Issue", flows::issue_count(ctx, LAB).await?, 1)?;
    ctx.observe("changed retries", &seen);
    Ok(())
}

/// The submit tool takes the request key only as `request_key`, refusing any
/// other spelling or a missing key before the Core, so the adapter never
/// makes a key up.
#[scenario(ExactReplay, parity, clauses = ["S6.inputs.no-invented-key", "S6.inputs.unknown"])]
async fn exact_replay_key_is_the_callers(ctx: &mut Ctx) -> Outcome {
    // A `requestId` or `request_id` input, beside the key or instead of it,
    // is refused as unknown (`invalid_input` naming it); a submit without any
    // key is refused naming `request_key`; zero POSTs reach the proxy.
    let bot = ctx.bot_builder(LAB_BOT).via_proxy().start().await?;
    let (grant, proposal) = active(ctx, &bot, "exact replay: the caller's key").await?;
    let proxy = ctx.proxy().await?;
    let watch = Watch::new(LAB_BOT, LAB).grant(&grant);
    let before = watch.take(ctx).await?;

    let key = NewIssue::new(TITLE, BODY).request_key;
    let with_key = {
        let mut args = core_api::grant_args(&grant);
        args["proposal_schema"] = json!(proposal.schema);
        args["proposal_version"] = json!(proposal.version);
        args["proposal_digest"] = json!(proposal.digest);
        args["title"] = json!(TITLE);
        args["body"] = json!(BODY);
        args["request_key"] = json!(key);
        args
    };
    let without_key = {
        let mut args = with_key.clone();
        if let Some(members) = args.as_object_mut() {
            members.remove("request_key");
        }
        args
    };
    let mut cases = Vec::new();
    for alias in ["requestId", "request_id"] {
        let mut beside = with_key.clone();
        beside[alias] = json!(key);
        cases.push((format!("{alias} beside request_key"), beside, alias));
        let mut instead = without_key.clone();
        instead[alias] = json!(key);
        cases.push((format!("{alias} instead of request_key"), instead, alias));
    }
    cases.push(("no key at all".to_owned(), without_key, "request_key"));

    let mut seen = Vec::new();
    for (what, arguments, field) in cases {
        ctx.step(&format!("lab-bot submits with {what}"));
        let reply = bot.call("submit_agent_work_proposal", arguments).await?;
        expect_no_receipt(ctx, &what, &reply, "invalid_input", None)?;
        ctx.expect_eq(
            &format!("{what}: the refusal names the input"),
            reply.error_field(),
            Some(field),
        )?;
        ctx.expect_eq(
            &format!("{what}: no POST reached the Core"),
            proxy.count("POST", SUBMIT),
            0,
        )?;
        seen.push((what, reply.error_field().map(str::to_owned)));
    }
    watch
        .expect_unchanged(ctx, "after the refused submits", &before)
        .await?;
    ctx.expect_eq("no Issue", flows::issue_count(ctx, LAB).await?, 0)?;
    ctx.observe("refusals", &seen);
    Ok(())
}
