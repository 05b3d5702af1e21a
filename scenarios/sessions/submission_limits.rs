//! Family 13, continued: the value limits of a submission (spec §3 Submit).
//! A title is 1–255 characters — counted as characters, not bytes or
//! UTF-16 units — and not blank; a body is at most 262,144 bytes. Past a
//! limit the Core answers 422 natively and the adapter `unprocessable`, and
//! nothing is written; at the limit the text is accepted and read back
//! whole.

use grantgate_engine::prelude::*;

use crate::support::flows::{self, LAB, LAB_BOT, Watch};

/// The largest title, in characters.
const MAX_TITLE: usize = 255;
/// The largest body, in bytes.
const MAX_BODY: usize = 262_144;

/// `n` characters cycling through one-, two-, three- and four-byte ones
/// (`🚀` is also two UTF-16 units): a Core counting anything but characters
/// misjudges it.
fn title_of(n: usize) -> String {
    "Aé€🚀".chars().cycle().take(n).collect()
}

/// Exactly `n` bytes of multi-byte text with CRLF line ends.
fn body_of(n: usize) -> String {
    const LINE: &str = "Zeile ünïcødé — 🚀 <b>&amp;</b>\t\"quoted\"\r\n";
    let mut body = String::with_capacity(n);
    while body.len() + LINE.len() <= n {
        body.push_str(LINE);
    }
    while body.len() < n {
        body.push('x');
    }
    body
}

/// Submits each of `refused` natively (422 with an error body) and then,
/// under a fresh key, through the adapter (`unprocessable`, native status
/// 422), and checks that nothing was written: no Issue, no receipt under
/// any of the keys, the grant unchanged.
async fn expect_refused_everywhere(
    ctx: &Ctx,
    bot: &Bot,
    grant: &GrantRef,
    proposal: &Proposal,
    refused: &[(&str, NewIssue)],
) -> Step<()> {
    let native = ctx.native(LAB_BOT)?;
    let mut watch = Watch::new(LAB_BOT, LAB).grant(grant);
    let mut through_adapter = Vec::new();
    for (_, issue) in refused {
        let again = NewIssue::new(&issue.title, &issue.body);
        watch = watch
            .key(grant, &issue.request_key)
            .key(grant, &again.request_key);
        through_adapter.push(again);
    }
    let before = watch.take(ctx).await?;
    for ((what, issue), again) in refused.iter().zip(&through_adapter) {
        ctx.step(&format!(
            "lab-bot submits {what}, natively and through the adapter"
        ));
        let answer = native.submit(grant, proposal, issue).await?;
        flows::expect_native_error(ctx, &format!("native, {what}"), &answer, 422)?;
        let reply = bot.submit(grant, proposal, again).await?;
        flows::expect_tool_refusal(
            ctx,
            &format!("adapter, {what}"),
            &reply,
            "unprocessable",
            422,
        )?;
        ctx.observe(
            &format!("{what}: native, adapter"),
            &(answer.status, reply.error_code()),
        );
        watch
            .expect_unchanged(ctx, &format!("after {what}"), &before)
            .await?;
    }
    Ok(())
}

/// Submits `issue` natively and again (under a fresh key) through the
/// adapter; both are accepted with 201, and each Issue reads back natively
/// with exactly the title and body sent.
async fn expect_accepted_whole(
    ctx: &Ctx,
    bot: &Bot,
    grant: &GrantRef,
    proposal: &Proposal,
    what: &str,
    issue: &NewIssue,
) -> Step<()> {
    ctx.step(&format!(
        "lab-bot submits {what}, natively and through the adapter"
    ));
    let native = ctx.native(LAB_BOT)?;
    let answer = native.submit(grant, proposal, issue).await?;
    ctx.expect_status(&format!("native, {what}"), answer.status, 201)?;
    let by_native = answer.submitted()?.receipt;
    let again = NewIssue::new(&issue.title, &issue.body);
    let reply = bot.submit(grant, proposal, &again).await?;
    ctx.expect_tool_ok(&format!("adapter, {what}"), &reply)?;
    ctx.expect_eq("adapter native status", reply.native_status(), Some(201))?;
    let by_adapter = reply.submitted()?.receipt;

    for (path, receipt) in [("native", by_native), ("adapter", by_adapter)] {
        let back = native.issue(LAB, receipt.issue.index).await?;
        ctx.expect_status("the Issue reads back", back.status, 200)?;
        let back = back.issue()?;
        ctx.expect(
            &format!("{what} via {path}: the title reads back whole"),
            back.title == issue.title,
            &format!(
                "{} characters back of {}",
                back.title.chars().count(),
                issue.title.chars().count()
            ),
        )?;
        ctx.expect(
            &format!("{what} via {path}: the body reads back whole"),
            back.body == issue.body,
            &format!("{} bytes back of {}", back.body.len(), issue.body.len()),
        )?;
    }
    ctx.observe(
        &format!("{what} accepted"),
        &(issue.title.chars().count(), issue.body.len()),
    );
    Ok(())
}

/// A blank title or one of 256 characters is refused with 422 and writes
/// nothing; one of exactly 255 characters is accepted and read back whole.
#[scenario(Sessions, parity, clauses = ["S3.submit.title"])]
async fn title_limits(ctx: &mut Ctx) -> Outcome {
    // Blank: empty or only whitespace; multi-byte characters count as
    // characters. The adapter says `unprocessable`.
    let alice = ctx.human("alice")?;
    ctx.step("alice logs in");
    alice.login().await?;
    let bot = ctx.bot(LAB_BOT).await?;
    let (grant, proposal) = flows::active_grant(ctx, &alice, &bot, LAB, "task").await?;
    let long = title_of(MAX_TITLE + 1);
    ctx.expect_eq(
        "the long title: characters, bytes",
        (long.chars().count(), long.len()),
        (256, 640),
    )?;
    let refused = [
        ("an empty title", NewIssue::new("", "body")),
        ("a title of only whitespace", NewIssue::new(" \t ", "body")),
        ("a title of 256 characters", NewIssue::new(&long, "body")),
    ];
    expect_refused_everywhere(ctx, &bot, &grant, &proposal, &refused).await?;
    ctx.expect_eq(
        "no Issue in alice/lab",
        flows::issue_count(ctx, LAB).await?,
        0,
    )?;

    let max = NewIssue::new(&title_of(MAX_TITLE), "body");
    expect_accepted_whole(
        ctx,
        &bot,
        &grant,
        &proposal,
        "a title of 255 characters",
        &max,
    )
    .await?;
    ctx.expect_eq(
        "two Issues in alice/lab",
        flows::issue_count(ctx, LAB).await?,
        2,
    )?;
    Ok(())
}

/// A body of 262,145 bytes is refused with 422 and writes nothing; one of
/// exactly 262,144 bytes of multi-byte text is accepted and read back whole.
#[scenario(Sessions, parity, clauses = ["S3.submit.size"])]
async fn body_limits(ctx: &mut Ctx) -> Outcome {
    // The adapter says `unprocessable`.
    let alice = ctx.human("alice")?;
    ctx.step("alice logs in");
    alice.login().await?;
    let bot = ctx.bot(LAB_BOT).await?;
    let (grant, proposal) = flows::active_grant(ctx, &alice, &bot, LAB, "task").await?;
    let over = body_of(MAX_BODY + 1);
    let max = body_of(MAX_BODY);
    ctx.expect_eq("body sizes", (over.len(), max.len()), (262_145, 262_144))?;
    let refused = [("a body of 262,145 bytes", NewIssue::new("title", &over))];
    expect_refused_everywhere(ctx, &bot, &grant, &proposal, &refused).await?;
    ctx.expect_eq(
        "no Issue in alice/lab",
        flows::issue_count(ctx, LAB).await?,
        0,
    )?;

    let issue = NewIssue::new("title", &max);
    expect_accepted_whole(
        ctx,
        &bot,
        &grant,
        &proposal,
        "a body of 262,144 bytes",
        &issue,
    )
    .await?;
    ctx.expect_eq(
        "two Issues in alice/lab",
        flows::issue_count(ctx, LAB).await?,
        2,
    )?;
    Ok(())
}
