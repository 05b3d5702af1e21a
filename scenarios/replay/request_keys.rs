//! Family 4: replay — same key and payload, changed payload, distinct keys,
//! keys scoped to the grant.
//!
//! The witness that nothing was written is the repository's Issues, read one
//! by one through the setup surface, together with the stored receipt read
//! back through the adapter and the Issue itself read natively: after a
//! refused replay all three are what the first submission made.

use grantgate_engine::prelude::*;

use crate::support::flows::{self, LAB, LAB_BOT, submit_ok};

const TITLE: &str = "Replayed: «flaky» sync test";
const BODY: &str = "First line.\r\nSecond line — ünïcødé 🚀\r\n\r\n  indented\n";

/// Signs alice in and gives lab-bot an active grant on alice/lab.
async fn active(ctx: &mut Ctx, task: &str) -> Step<(Bot, GrantRef, Proposal)> {
    let alice = ctx.human("alice")?;
    ctx.step("alice logs in");
    alice.login().await?;
    let bot = ctx.bot(LAB_BOT).await?;
    let (grant, proposal) = flows::active_grant(ctx, &alice, &bot, LAB, task).await?;
    Ok((bot, grant, proposal))
}

/// Reads the Issue of `receipt` natively and checks its title, body and
/// grant binding.
async fn expect_issue(ctx: &Ctx, what: &str, receipt: &Receipt, submission: &NewIssue) -> Step<()> {
    let answer = ctx.native(LAB_BOT)?.issue(LAB, receipt.issue.index).await?;
    ctx.expect_status(
        &format!("{what}: the Issue reads natively"),
        answer.status,
        200,
    )?;
    let issue = answer.issue()?;
    ctx.expect_eq(
        &format!("{what}: the Issue is the receipt's, with the submitted title and body"),
        (issue.id, issue.title.as_str(), issue.body.as_str()),
        (
            receipt.issue.id,
            submission.title.as_str(),
            submission.body.as_str(),
        ),
    )?;
    ctx.expect_eq(
        &format!("{what}: the Issue is bound to the grant and key"),
        issue.agent_work_grant,
        Some(GrantMarker {
            grant_id: receipt.grant_id,
            request_key: submission.request_key.clone(),
        }),
    )
}

/// After a refused replay: one Issue, the stored receipt, the stored Issue.
async fn expect_nothing_written(
    ctx: &Ctx,
    bot: &Bot,
    grant: &GrantRef,
    original: &NewIssue,
    receipt: &Receipt,
) -> Step<()> {
    ctx.expect_eq(
        "the repository still holds one Issue",
        flows::issue_count(ctx, LAB).await?,
        1,
    )?;
    let back = bot.submission(grant, &original.request_key).await?;
    ctx.expect_tool_ok("the key reads back", &back)?;
    flows::expect_same_receipt(
        ctx,
        "the stored receipt is unchanged",
        &back.submitted()?.receipt,
        receipt,
    )?;
    expect_issue(ctx, "after the refusal", receipt, original).await
}

/// The same request key with the same triple, title and body answers 200
/// with the stored receipt, through the adapter and natively, and the
/// repository still holds one Issue.
#[scenario(Replay, parity, clauses = ["S3.replay.identical"])]
async fn replay_same_payload_one_issue(ctx: &mut Ctx) -> Outcome {
    let (bot, grant, proposal) = active(ctx, "replay task").await?;

    ctx.step("lab-bot submits an Issue");
    let submission = NewIssue::new(TITLE, BODY);
    let receipt = submit_ok(ctx, &bot, &grant, &proposal, &submission, 201).await?;
    ctx.expect_eq("one Issue", flows::issue_count(ctx, LAB).await?, 1)?;
    ctx.observe("first submission", &receipt.raw);

    ctx.step("lab-bot sends the identical submission again through the adapter");
    let replay = submit_ok(ctx, &bot, &grant, &proposal, &submission, 200).await?;
    flows::expect_same_receipt(ctx, "the same receipt", &replay, &receipt)?;
    ctx.expect_eq("still one Issue", flows::issue_count(ctx, LAB).await?, 1)?;
    ctx.observe("adapter replay", &replay.raw);

    ctx.step("lab-bot sends it once more, natively");
    let answer = ctx
        .native(LAB_BOT)?
        .submit(&grant, &proposal, &submission)
        .await?;
    ctx.expect_status("a native replay answers 200", answer.status, 200)?;
    flows::expect_same_receipt(
        ctx,
        "the same receipt natively",
        &answer.submitted()?.receipt,
        &receipt,
    )?;
    ctx.expect_eq("still one Issue", flows::issue_count(ctx, LAB).await?, 1)?;

    ctx.step("the key reads back the one Issue");
    expect_nothing_written(ctx, &bot, &grant, &submission, &receipt).await
}

/// Same key, one changed element: every variant 409, nothing written.
async fn changed_payload(ctx: &mut Ctx, variants: &[(&str, NewIssue)]) -> Outcome {
    let (bot, grant, proposal) = active(ctx, "replay task").await?;
    ctx.step("lab-bot submits an Issue");
    let original = NewIssue::new(TITLE, BODY);
    let receipt = submit_ok(ctx, &bot, &grant, &proposal, &original, 201).await?;

    for (what, changed) in variants {
        ctx.step(&format!("lab-bot replays the key with {what}"));
        let changed = changed.with_key(&original.request_key);
        let reply = bot.submit(&grant, &proposal, &changed).await?;
        flows::expect_tool_refusal(ctx, &format!("{what}: refused"), &reply, "conflict", 409)?;
        let answer = ctx
            .native(LAB_BOT)?
            .submit(&grant, &proposal, &changed)
            .await?;
        flows::expect_native_error(ctx, &format!("{what}: refused natively"), &answer, 409)?;
        expect_nothing_written(ctx, &bot, &grant, &original, &receipt).await?;
        ctx.observe(what, &(reply.error_code(), answer.status));
    }
    Ok(())
}

/// The same request key with a changed title (even by one trailing space or
/// a letter's case) answers 409 and writes nothing: one Issue, the stored
/// receipt and title.
#[scenario(Replay, parity, clauses = ["S3.replay.conflict", "S10.text-exact"])]
async fn replay_changed_title_conflict(ctx: &mut Ctx) -> Outcome {
    changed_payload(
        ctx,
        &[
            (
                "a trailing space in the title",
                NewIssue::new(&format!("{TITLE} "), BODY),
            ),
            (
                "a letter's case changed in the title",
                NewIssue::new(&TITLE.replace("Replayed", "replayed"), BODY),
            ),
            ("another title", NewIssue::new("Another title", BODY)),
        ],
    )
    .await
}

/// The same request key with a changed body (CRLF made LF, a trailing space,
/// other text, empty) answers 409 and writes nothing: one Issue, the stored
/// receipt and body.
#[scenario(Replay, parity, clauses = ["S3.replay.conflict", "S10.text-exact"])]
async fn replay_changed_body_conflict(ctx: &mut Ctx) -> Outcome {
    changed_payload(
        ctx,
        &[
            (
                "the body's CRLF made LF",
                NewIssue::new(TITLE, &BODY.replace("\r\n", "\n")),
            ),
            (
                "a trailing space in the body",
                NewIssue::new(TITLE, &format!("{BODY} ")),
            ),
            ("another body", NewIssue::new(TITLE, "Another body.")),
            ("an empty body", NewIssue::new(TITLE, "")),
        ],
    )
    .await
}

/// The same request key with a changed proposal schema, version or digest
/// answers 409 natively (the adapter refuses the first two itself, the
/// digest with conflict) and writes nothing.
#[scenario(Replay, parity, clauses = ["S3.replay.conflict", "S3.submit.triple"])]
async fn replay_changed_triple_conflict(ctx: &mut Ctx) -> Outcome {
    let (bot, grant, proposal) = active(ctx, "replay task").await?;
    ctx.step("lab-bot submits an Issue");
    let original = NewIssue::new(TITLE, BODY);
    let receipt = submit_ok(ctx, &bot, &grant, &proposal, &original, 201).await?;

    for (element, changed) in flows::changed_triples(&proposal) {
        ctx.step(&format!("lab-bot replays the key with another {element}"));
        let answer = ctx
            .native(LAB_BOT)?
            .submit(&grant, &changed, &original)
            .await?;
        flows::expect_native_error(
            ctx,
            &format!("another {element}: refused natively"),
            &answer,
            409,
        )?;
        let reply = bot.submit(&grant, &changed, &original).await?;
        // The adapter knows the only schema and version; a digest only the
        // Core can judge.
        let code = if element == "digest" {
            "conflict"
        } else {
            "invalid_input"
        };
        ctx.expect_tool_error(
            &format!("another {element}: refused by the adapter"),
            &reply,
            code,
        )?;
        expect_nothing_written(ctx, &bot, &grant, &original, &receipt).await?;
        ctx.observe(element, &(answer.status, reply.error_code()));
    }

    ctx.step("the unchanged replay still answers 200");
    let replay = submit_ok(ctx, &bot, &grant, &proposal, &original, 200).await?;
    flows::expect_same_receipt(ctx, "the same receipt", &replay, &receipt)
}

/// Two submissions with distinct request keys and identical title and body
/// create two distinct Issues, each read back under its own key.
#[scenario(Replay, parity, clauses = ["S3.replay.scope", "S3.submit.request-key"])]
async fn replay_distinct_keys_distinct_issues(ctx: &mut Ctx) -> Outcome {
    let (bot, grant, proposal) = active(ctx, "replay task").await?;

    ctx.step("lab-bot submits the same title and body under two keys");
    let one = NewIssue::new(TITLE, BODY);
    let two = NewIssue::new(TITLE, BODY);
    let first = submit_ok(ctx, &bot, &grant, &proposal, &one, 201).await?;
    let second = submit_ok(ctx, &bot, &grant, &proposal, &two, 201).await?;
    ctx.expect(
        "two distinct Issues",
        first.issue.id != second.issue.id && first.issue.index != second.issue.index,
        &format!(
            "{} and {}",
            json_text(&first.issue),
            json_text(&second.issue)
        ),
    )?;
    ctx.expect_eq("two Issues", flows::issue_count(ctx, LAB).await?, 2)?;

    ctx.step("each key reads back its own Issue");
    for (submission, receipt) in [(&one, &first), (&two, &second)] {
        let back = bot.submission(&grant, &submission.request_key).await?;
        ctx.expect_tool_ok("the key reads back", &back)?;
        flows::expect_same_receipt(ctx, "its own receipt", &back.submitted()?.receipt, receipt)?;
        expect_issue(ctx, "each Issue", receipt, submission).await?;
    }
    ctx.observe("two submissions", &(&first.raw, &second.raw));
    Ok(())
}

/// The same request key in a second grant is a new submission there, and each
/// grant's key still reads back and replays its own Issue.
#[scenario(Replay, parity, clauses = ["S3.replay.scope"])]
async fn replay_key_scoped_to_grant(ctx: &mut Ctx) -> Outcome {
    // The second submission creates a second Issue, bound to that grant.
    let (bot, first_grant, first_proposal) = active(ctx, "first task").await?;
    let alice = ctx.human("alice")?;
    let (second_grant, second_proposal) =
        flows::active_grant(ctx, &alice, &bot, LAB, "second task").await?;

    ctx.step("lab-bot submits under one key in the first grant");
    let in_first = NewIssue::new(TITLE, BODY);
    let first = submit_ok(ctx, &bot, &first_grant, &first_proposal, &in_first, 201).await?;

    ctx.step("lab-bot submits under the same key in the second grant");
    let in_second = in_first.clone();
    let second = submit_ok(ctx, &bot, &second_grant, &second_proposal, &in_second, 201).await?;
    ctx.expect(
        "a second, distinct Issue",
        first.issue.id != second.issue.id,
        &format!(
            "{} and {}",
            json_text(&first.issue),
            json_text(&second.issue)
        ),
    )?;
    ctx.expect_eq("two Issues", flows::issue_count(ctx, LAB).await?, 2)?;

    ctx.step("each grant's key reads back and replays its own Issue");
    for (grant, proposal, submission, receipt) in [
        (&first_grant, &first_proposal, &in_first, &first),
        (&second_grant, &second_proposal, &in_second, &second),
    ] {
        let back = bot.submission(grant, &submission.request_key).await?;
        ctx.expect_tool_ok("the key reads back in its grant", &back)?;
        flows::expect_same_receipt(ctx, "its own receipt", &back.submitted()?.receipt, receipt)?;
        expect_issue(ctx, &format!("grant {}", grant.id), receipt, submission).await?;
        let replay = submit_ok(ctx, &bot, grant, proposal, submission, 200).await?;
        flows::expect_same_receipt(ctx, "the replay is its own receipt", &replay, receipt)?;
    }
    ctx.expect_eq("still two Issues", flows::issue_count(ctx, LAB).await?, 2)?;
    ctx.observe("two grants, one key", &(&first.raw, &second.raw));
    Ok(())
}
