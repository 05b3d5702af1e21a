//! Family 15: concurrency. Several requests are put in flight at once —
//! submissions through eight adapter sessions of one bot, approvals from two
//! browser sessions of one admin — and the Core must serialise them: one
//! creation and the rest replays or conflicts, one state change.
//!
//! The eight adapters are started first; the calls are then issued together
//! (`join_all`), so they reach the Core within a few milliseconds of each
//! other.

use grantgate_engine::prelude::*;

use crate::support::flows::{self, LAB, LAB_BOT, expect_same_receipt};
use crate::support::forms::accepted;

/// How many submissions are in flight at once.
const N: usize = 8;
const TITLE: &str = "Race: lab::cache_warmup";

/// alice approves a grant for lab-bot; returns `N` adapters of lab-bot (each
/// its own MCP session), the grant and its proposal.
async fn adapters_on_active_grant(
    ctx: &mut Ctx,
    task: &str,
) -> Step<(Vec<Bot>, GrantRef, Proposal)> {
    let alice = ctx.human("alice")?;
    ctx.step("alice logs in");
    alice.login().await?;
    let first = ctx.bot(LAB_BOT).await?;
    let (grant, proposal) = flows::active_grant(ctx, &alice, &first, LAB, task).await?;
    ctx.step(&format!("lab-bot opens {N} adapter sessions"));
    let mut bots = vec![first];
    while bots.len() < N {
        bots.push(ctx.bot(LAB_BOT).await?);
    }
    Ok((bots, grant, proposal))
}

/// `N` identical submissions in flight at once give exactly one 201, `N - 1`
/// 200s with the same receipt, and one Issue.
#[scenario(Concurrency, parity, clauses = ["S3.replay.identical", "S3.submit.atomic"])]
async fn identical_submissions_in_flight(ctx: &mut Ctx) -> Outcome {
    // One submission per adapter session; the Issue's readback is that
    // receipt.
    let (bots, grant, proposal) = adapters_on_active_grant(ctx, "Identical races").await?;
    let issue = NewIssue::new(TITLE, "Warm-up raced the first request.\n");

    ctx.step(&format!("{N} identical submissions are sent at once"));
    let replies = join_all(bots.iter().map(|b| b.submit(&grant, &proposal, &issue))).await;
    let replies = replies.into_iter().collect::<Step<Vec<ToolReply>>>()?;
    let mut statuses: Vec<Option<i64>> = replies.iter().map(ToolReply::native_status).collect();
    statuses.sort();
    let mut want = vec![Some(200); N - 1];
    want.push(Some(201));
    ctx.expect_eq("native statuses, sorted", statuses.clone(), want)?;
    let created = replies
        .iter()
        .find(|r| r.native_status() == Some(201))
        .ok_or_else(|| Abort::failed("no submission answered 201"))?
        .submitted()?
        .receipt;
    for reply in &replies {
        let receipt = reply.submitted()?.receipt;
        expect_same_receipt(
            ctx,
            "every answer carries the one receipt",
            &receipt,
            &created,
        )?;
    }

    ctx.step("one Issue, and the key reads back as that receipt");
    ctx.expect_eq(
        "Issues in alice/lab",
        flows::issue_count(ctx, LAB).await?,
        1,
    )?;
    let back = ctx
        .native(LAB_BOT)?
        .submission(&grant, &issue.request_key)
        .await?;
    ctx.expect_status("native readback", back.status, 200)?;
    expect_same_receipt(ctx, "the readback", &back.submitted()?.receipt, &created)?;
    let stored = ctx.setup().issue(LAB, created.issue.index).await?.issue()?;
    ctx.expect_eq("its body", stored.body.as_str(), issue.body.as_str())?;
    ctx.observe("statuses", &statuses);
    ctx.observe("the receipt", &created.raw);
    Ok(())
}

/// `N` submissions of one request key with different bodies, in flight at
/// once, give one 201, `N - 1` 409s and one Issue holding the winner's body.
#[scenario(Concurrency, parity, clauses = ["S3.replay.conflict", "S3.submit.atomic"])]
async fn one_key_different_bodies_in_flight(ctx: &mut Ctx) -> Outcome {
    // The 409s are `conflict` through the adapter.
    let (bots, grant, proposal) = adapters_on_active_grant(ctx, "Conflicting races").await?;
    let key = NewIssue::new(TITLE, "").request_key;
    let issues: Vec<NewIssue> = (1..=N)
        .map(|i| NewIssue::new(TITLE, &format!("Variant {i} of the report.\n")).with_key(&key))
        .collect();

    ctx.step(&format!(
        "{N} submissions of one key, each with its own body, are sent at once"
    ));
    let calls = bots.iter().zip(&issues);
    let replies = join_all(calls.map(|(b, i)| b.submit(&grant, &proposal, i))).await;
    let replies = replies.into_iter().collect::<Step<Vec<ToolReply>>>()?;
    let outcomes: Vec<(Option<&str>, Option<i64>)> = replies
        .iter()
        .map(|r| (r.error_code(), r.native_status()))
        .collect();
    let winners: Vec<usize> = (0..N)
        .filter(|&i| outcomes[i] == (None, Some(201)))
        .collect();
    ctx.expect_eq("submissions answered 201", winners.len(), 1)?;
    let conflicts = outcomes
        .iter()
        .filter(|o| **o == (Some("conflict"), Some(409)))
        .count();
    ctx.expect_eq("submissions answered 409 conflict", conflicts, N - 1)?;
    let winner = &issues[winners[0]];
    let created = replies[winners[0]].submitted()?.receipt;

    ctx.step("one Issue, holding the winner's body; the key reads back as its receipt");
    let listed = ctx.setup().issues(LAB).await?;
    ctx.expect_eq("Issues in alice/lab", listed.len(), 1)?;
    ctx.expect_eq("its body", listed[0].body.as_str(), winner.body.as_str())?;
    let back = ctx.native(LAB_BOT)?.submission(&grant, &key).await?;
    ctx.expect_status("native readback", back.status, 200)?;
    expect_same_receipt(ctx, "the readback", &back.submitted()?.receipt, &created)?;
    ctx.observe("outcomes", &(winners.len(), conflicts));
    Ok(())
}

/// Two approvals of the same `state_revision`, posted at once from two
/// sessions of alice, give one accepted, one 409, and one state change.
#[scenario(Concurrency, parity, clauses = ["S4.stale", "S2.revision"])]
async fn concurrent_approvals_one_wins(ctx: &mut Ctx) -> Outcome {
    // Accepted is a redirect or the resulting page (spec §4); the grant is
    // then `active` at revision 3.
    let alice = ctx.human("alice")?;
    let second = ctx.second_browser("alice")?;
    ctx.step("alice logs in twice, in two browsers");
    alice.login().await?;
    second.login().await?;
    let bot = ctx.bot(LAB_BOT).await?;
    ctx.step("alice prepares a grant and lab-bot confirms it");
    let (grant, _) = alice
        .prepare_grant(LAB, LAB_BOT, "Approvals race", "summary")
        .await?;
    let proposal = bot.read_proposal(&grant).await?;
    let confirmed = bot.confirm(&grant, &proposal).await?;
    ctx.expect_tool_ok("lab-bot confirms", &confirmed)?;

    ctx.step("each browser loads the approve form at revision 2");
    let forms = [
        alice.decision_form(&grant, Decision::Approve).await?,
        second.decision_form(&grant, Decision::Approve).await?,
    ];
    for form in &forms {
        let revision = form.field(fields::STATE_REVISION);
        ctx.expect_eq("the form's state_revision", revision, Some("2"))?;
    }

    ctx.step("both approvals are posted at once");
    let browsers = [&alice, &second];
    let pages = join_all(browsers.iter().zip(&forms).map(|(h, f)| h.submit(f))).await;
    let pages = pages.into_iter().collect::<Step<Vec<Page>>>()?;
    let mut outcomes: Vec<String> = pages
        .iter()
        .map(|p| match (accepted(p), p.first_redirect()) {
            (true, _) => "accepted".to_owned(),
            (false, None) => p.status.to_string(),
            (false, Some((status, _))) => format!("{status} to {}", p.status),
        })
        .collect();
    outcomes.sort_unstable();
    ctx.expect_eq(
        "one accepted and one 409",
        outcomes.clone(),
        vec!["409".to_owned(), "accepted".to_owned()],
    )?;

    ctx.step("one state change: active at revision 3, approved by alice");
    let read = ctx.native(LAB_BOT)?.get_grant(&grant).await?.grant()?;
    ctx.expect_eq(
        "state and revision",
        read.status(),
        (state::ACTIVE.to_owned(), 3),
    )?;
    let approver = read.approved_by.map(|u| u.login);
    ctx.expect_eq("approved_by", approver, Some("alice".to_owned()))?;
    ctx.observe("outcomes", &outcomes);
    Ok(())
}
