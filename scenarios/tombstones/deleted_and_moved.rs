//! Family 5: tombstones — deleted and moved Issues keep their receipts and
//! spend their keys.

use grantgate_engine::prelude::*;

use crate::support::flows::{self, LAB, LAB_BOT};

const TASK: &str = "Report flaky tests";
const TITLE: &str = "Flaky test: net::retry_backoff";
const BODY: &str = "Fails 2 in 10 runs.\nSeen on both runners.";
const ARCHIVE: &str = "alice/archive";

/// What every step of a tombstone scenario works with.
struct Tomb {
    alice: Human,
    bot: Bot,
    native: NativeClient,
    grant: GrantRef,
    proposal: Proposal,
    submission: NewIssue,
    /// The receipt as the 201 answer gave it.
    receipt: Receipt,
}

/// Once a submission's Issue is deleted, readback says `issue_deleted` with
/// the historical receipt, an identical replay returns it and a changed one
/// is 409.
#[scenario(Tombstones, parity, clauses = ["S3.receipt.status", "S3.receipt.historical", "S3.receipt.tombstone-key", "S5.setup.issue-delete"])]
async fn deleted_issue_leaves_a_tombstone(ctx: &mut Ctx) -> Outcome {
    // Through the adapter and the native API; the historical Issue id, index
    // and URL are unchanged. The identical replay answers 200 and creates
    // nothing; the changed one uses the spent key.
    let t = submitted(ctx).await?;
    let index = t.receipt.issue.index;

    ctx.step("the site admin deletes the Issue");
    let deleted = ctx.setup().delete_issue(LAB, index).await?;
    ctx.expect(
        "the setup surface deletes the Issue",
        (200..300).contains(&deleted.status),
        &format!("status {}", deleted.status),
    )?;
    let gone = ctx.setup().issue(LAB, index).await?;
    ctx.expect_status("the Issue is gone", gone.status, 404)?;
    ctx.expect_eq(
        "alice/lab holds no Issue",
        flows::issue_count(ctx, LAB).await?,
        0,
    )?;

    read_back_tombstone(ctx, &t, "issue_deleted").await?;
    replay_returns_tombstone(ctx, &t, "issue_deleted").await?;
    ctx.expect_eq(
        "the replays created no Issue in alice/lab",
        flows::issue_count(ctx, LAB).await?,
        0,
    )?;

    ctx.step("a changed replay with the spent key is refused and writes nothing");
    let watch = flows::Watch::new(LAB_BOT, LAB)
        .grant(&t.grant)
        .key(&t.grant, &t.submission.request_key);
    let before = watch.take(ctx).await?;
    let changed = NewIssue {
        title: format!("{TITLE} (again)"),
        ..t.submission.clone()
    };
    let answer = t.native.submit(&t.grant, &t.proposal, &changed).await?;
    flows::expect_native_error(ctx, "changed replay, natively", &answer, 409)?;
    let reply = t.bot.submit(&t.grant, &t.proposal, &changed).await?;
    flows::expect_tool_refusal(ctx, "changed replay, adapter", &reply, "conflict", 409)?;
    watch
        .expect_unchanged(ctx, "after the changed replay", &before)
        .await?;
    ctx.observe("the receipt after the changed replay", &before.receipts);
    let again = t
        .native
        .submission(&t.grant, &t.submission.request_key)
        .await?;
    ctx.expect_status("readback after the changed replay", again.status, 200)?;
    ctx.expect_eq(
        "the tombstone still names the historical Issue",
        again.submitted()?.receipt.issue,
        t.receipt.issue.clone(),
    )
}

/// Once a submission's Issue is moved away, readback says
/// `issue_binding_changed`; moved back, it reads `submitted` only at its old
/// index.
#[scenario(Tombstones, parity, clauses = ["S3.receipt.status", "S3.receipt.historical", "S5.setup.issue-move"])]
async fn moved_issue_changes_its_binding(ctx: &mut Ctx) -> Outcome {
    // Through the adapter and the native API, with the historical receipt
    // unchanged; an identical replay returns it with 200 and creates nothing,
    // and a changed replay with the spent key is 409.
    let t = submitted(ctx).await?;

    ctx.step("the site admin moves the Issue to alice/archive");
    ctx.setup().create_repo("alice", "archive", true).await?;
    let moved = ctx.setup().move_issue(t.receipt.issue.id, ARCHIVE).await?;
    ctx.expect_status("the setup surface moves the Issue", moved.status, 200)?;
    let old_place = ctx.setup().issue(LAB, t.receipt.issue.index).await?;
    ctx.expect_status("the Issue is no longer in alice/lab", old_place.status, 404)?;
    ctx.expect_eq(
        "Issues in (alice/lab, alice/archive)",
        issue_counts(ctx).await?,
        (0, 1),
    )?;

    read_back_tombstone(ctx, &t, "issue_binding_changed").await?;
    replay_returns_tombstone(ctx, &t, "issue_binding_changed").await?;
    ctx.expect_eq(
        "the replays created no Issue (alice/lab, alice/archive)",
        issue_counts(ctx).await?,
        (0, 1),
    )?;

    ctx.step("a changed replay with the spent key is refused");
    let watch = flows::Watch::new(LAB_BOT, LAB)
        .grant(&t.grant)
        .key(&t.grant, &t.submission.request_key);
    let before = watch.take(ctx).await?;
    let changed = NewIssue {
        body: format!("{BODY}\nMoved?"),
        ..t.submission.clone()
    };
    let answer = t.native.submit(&t.grant, &t.proposal, &changed).await?;
    flows::expect_native_error(ctx, "changed replay, natively", &answer, 409)?;
    watch
        .expect_unchanged(ctx, "after the changed replay", &before)
        .await?;
    ctx.expect_eq(
        "nothing written (alice/lab, alice/archive)",
        issue_counts(ctx).await?,
        (0, 1),
    )?;

    ctx.step("the site admin moves the Issue back to alice/lab");
    let back = ctx.setup().move_issue(t.receipt.issue.id, LAB).await?;
    ctx.expect_status("the setup surface moves it back", back.status, 200)?;
    // Back in its repository, it lives where the receipt says only if it
    // got its old index back (a Core's choice).
    let index = back.issue()?.index;
    let status = if index == t.receipt.issue.index {
        "submitted"
    } else {
        "issue_binding_changed"
    };
    read_back_tombstone(ctx, &t, status).await
}

/// Issues in alice/lab and in alice/archive, through the setup surface.
async fn issue_counts(ctx: &Ctx) -> Step<(usize, usize)> {
    Ok((
        flows::issue_count(ctx, LAB).await?,
        flows::issue_count(ctx, ARCHIVE).await?,
    ))
}

/// alice gives lab-bot an active grant and lab-bot submits one Issue
/// through the adapter.
async fn submitted(ctx: &mut Ctx) -> Step<Tomb> {
    let alice = ctx.human("alice")?;
    ctx.step("alice logs in");
    alice.login().await?;
    let bot = ctx.bot(LAB_BOT).await?;
    let native = ctx.native(LAB_BOT)?;
    let (grant, proposal) = flows::active_grant(ctx, &alice, &bot, LAB, TASK).await?;

    ctx.step("lab-bot submits an Issue through the grant");
    let submission = NewIssue::new(TITLE, BODY);
    let created = bot.submit(&grant, &proposal, &submission).await?;
    ctx.expect_tool_ok("submit succeeds", &created)?;
    ctx.expect_eq("native status", created.native_status(), Some(201))?;
    // The view requires the Issue's id, index, repository and URL.
    let receipt = created.submitted()?.receipt;
    ctx.expect_eq("status", receipt.status.as_str(), "submitted")?;
    ctx.expect_eq(
        "alice/lab holds one Issue",
        flows::issue_count(ctx, LAB).await?,
        1,
    )?;
    ctx.observe("the receipt", &receipt.raw);
    // Read back before the Issue changes too: a status is computed at
    // read time, never remembered from an earlier read (S3.receipt.status;
    // the explorer found `readback-status-remembered` this way first).
    ctx.step("lab-bot reads the submission back natively: `submitted`");
    let before = native.submission(&grant, &submission.request_key).await?;
    ctx.expect_status("native readback", before.status, 200)?;
    let status = before.submitted()?.receipt.status;
    ctx.expect_eq("status before", status.as_str(), "submitted")?;
    Ok(Tomb {
        alice,
        bot,
        native,
        grant,
        proposal,
        submission,
        receipt,
    })
}

/// Reads the submission back through the adapter, natively and on alice's
/// grant page: 200, the tombstone `status`, the historical Issue, still
/// awaiting review.
async fn read_back_tombstone(ctx: &Ctx, t: &Tomb, status: &str) -> Step<()> {
    ctx.step(&format!(
        "lab-bot reads the submission back: `{status}`, the historical receipt unchanged"
    ));
    let key = &t.submission.request_key;
    let reply = t.bot.submission(&t.grant, key).await?;
    ctx.expect_tool_ok("readback through the adapter succeeds", &reply)?;
    ctx.expect_eq("native status", reply.native_status(), Some(200))?;
    let through_adapter = reply.submitted()?.receipt;
    expect_tombstone(ctx, "adapter", &through_adapter, t, status)?;
    ctx.observe("the tombstone through the adapter", &through_adapter.raw);

    let answer = t.native.submission(&t.grant, key).await?;
    ctx.expect_status("native readback", answer.status, 200)?;
    let native = answer.submitted()?;
    expect_tombstone(ctx, "native", &native.receipt, t, status)?;
    ctx.expect_eq(
        "the grant stays active",
        native.grant.state.as_str(),
        state::ACTIVE,
    )?;

    ctx.step(&format!(
        "alice's grant page lists the receipt as `{status}`"
    ));
    let page = t.alice.grant_page(&t.grant).await?;
    ctx.expect_status("grant page status", page.status, 200)?;
    ctx.expect(
        &format!("the grant page shows the request key and `{status}`"),
        page.shows(key) && page.shows(status),
        &page.text(),
    )
}

/// Replays the identical submission through the adapter and natively: 200
/// with the tombstone.
async fn replay_returns_tombstone(ctx: &Ctx, t: &Tomb, status: &str) -> Step<()> {
    ctx.step("an identical replay returns the tombstone with 200 and creates nothing");
    let reply = t.bot.submit(&t.grant, &t.proposal, &t.submission).await?;
    ctx.expect_tool_ok("the replay through the adapter succeeds", &reply)?;
    ctx.expect_eq(
        "native status of the replay",
        reply.native_status(),
        Some(200),
    )?;
    expect_tombstone(
        ctx,
        "adapter replay",
        &reply.submitted()?.receipt,
        t,
        status,
    )?;
    let answer = t
        .native
        .submit(&t.grant, &t.proposal, &t.submission)
        .await?;
    ctx.expect_status("native replay", answer.status, 200)?;
    expect_tombstone(
        ctx,
        "native replay",
        &answer.submitted()?.receipt,
        t,
        status,
    )?;
    ctx.observe(
        "the replay's status",
        &(reply.native_status(), answer.status),
    );
    Ok(())
}

/// A tombstone: the given `status`, the historical Issue of the 201 answer,
/// still awaiting review, the same grant and key.
fn expect_tombstone(ctx: &Ctx, via: &str, r: &Receipt, t: &Tomb, status: &str) -> Step<()> {
    ctx.expect_eq(&format!("{via}: status"), r.status.as_str(), status)?;
    ctx.expect_eq(
        &format!("{via}: the historical Issue"),
        &r.issue,
        &t.receipt.issue,
    )?;
    ctx.expect_eq(
        &format!("{via}: review state"),
        r.review_state.as_str(),
        "awaiting_review",
    )?;
    ctx.expect_eq(
        &format!("{via}: grant and key"),
        (r.grant_id, r.request_key.as_str()),
        (t.grant.id, t.submission.request_key.as_str()),
    )
}
