//! Family 5: tombstones — deleted and moved Issues keep their receipts and spend their keys.

use serde_json::Value;

use crate::actors::{Bot, GrantRef, NativeClient, Proposal, Submission};
use crate::ctx::Ctx;
use crate::runner::catalogue::Scenario;
use crate::runner::outcome::{Outcome, Step};
use crate::scenarios::flows;

/// This family's scenarios, in catalogue order.
pub fn scenarios() -> Vec<Scenario> {
    vec![
        Scenario {
            id: "deleted_issue_leaves_a_tombstone",
            family: "5 tombstones",
            claim: "Once the Issue of a submission is deleted, readback through the adapter and the \
                    native API says `issue_deleted` with the historical Issue id, index and URL \
                    unchanged, an identical replay returns that tombstone with 200 and creates \
                    nothing, and a changed replay with the spent key is 409.",
            fixture: "lab",
            core_env: &[],
            parity: true,
            run: |ctx| Box::pin(deleted_issue_leaves_a_tombstone(ctx)),
        },
        Scenario {
            id: "moved_issue_changes_its_binding",
            family: "5 tombstones",
            claim: "Once the Issue of a submission is moved to another repository, readback through \
                    the adapter and the native API says `issue_binding_changed` with the historical \
                    receipt unchanged, an identical replay returns it with 200 and creates \
                    nothing, and a changed replay with the spent key is 409.",
            fixture: "lab",
            core_env: &[],
            parity: true,
            run: |ctx| Box::pin(moved_issue_changes_its_binding(ctx)),
        },
    ]
}

const TITLE: &str = "Flaky test: net::retry_backoff";
const BODY: &str = "Fails 2 in 10 runs.\nSeen on both runners.";

/// Delete the Issue behind a receipt: the receipt turns into a tombstone
/// that keeps its key spent.
pub async fn deleted_issue_leaves_a_tombstone(ctx: &mut Ctx) -> Outcome {
    let alice = ctx.human("alice")?;
    alice.login().await?;
    let bot = ctx.bot("lab-bot").await?;
    let native = ctx.native("lab-bot")?;
    let (grant, proposal) =
        flows::active_grant(ctx, &alice, &bot, "alice/lab", "Report flaky tests").await?;
    let submission = Submission::new(TITLE, BODY);
    let receipt = submit_one(ctx, &bot, &grant, &proposal, &submission).await?;
    let index = receipt["index"].as_i64().unwrap_or_default();

    ctx.step("the site admin deletes the Issue");
    let deleted = ctx.setup().delete_issue("alice/lab", index).await?;
    ctx.expect(
        "the setup surface deletes the Issue",
        (200..300).contains(&deleted.status),
        &format!("status {}", deleted.status),
    )?;
    let gone = ctx.setup().issue("alice/lab", index).await?;
    ctx.expect_status("the Issue is gone", gone.status, 404)?;
    ctx.expect_eq(
        "alice/lab holds no Issue",
        flows::issue_count(ctx, "alice/lab").await?,
        0,
    )?;

    read_back_tombstone(
        ctx,
        &bot,
        &native,
        &grant,
        &submission,
        &receipt,
        "issue_deleted",
    )
    .await?;
    replay_returns_tombstone(
        ctx,
        &bot,
        &native,
        &grant,
        &proposal,
        &submission,
        &receipt,
        "issue_deleted",
    )
    .await?;
    ctx.expect_eq(
        "the replays created no Issue in alice/lab",
        flows::issue_count(ctx, "alice/lab").await?,
        0,
    )?;

    ctx.step("a changed replay with the spent key is refused and writes nothing");
    let before = flows::ledger(ctx, &alice, "alice/lab", &[&grant]).await?;
    let changed = Submission {
        title: format!("{TITLE} (again)"),
        ..submission.clone()
    };
    let answer = native.submit(&grant, &proposal, &changed).await?;
    flows::expect_native_error(ctx, "changed replay, natively", &answer, 409)?;
    let reply = bot.submit(&grant, &proposal, &changed).await?;
    flows::expect_tool_refusal(ctx, "changed replay, adapter", &reply, "conflict", 409)?;
    let after = flows::ledger(ctx, &alice, "alice/lab", &[&grant]).await?;
    ctx.expect_eq("nothing written", &after, &before)?;
    ctx.observe("the ledger after the changed replay", &after);
    let again = native.submission(&grant, &submission.request_key).await?;
    ctx.expect_status("readback after the changed replay", again.status, 200)?;
    ctx.expect_eq(
        "the tombstone is still the stored receipt",
        &again.json()?["submission"]["issue"],
        &receipt,
    )?;
    Ok(())
}

/// Move the Issue behind a receipt to another repository: the receipt
/// says its binding changed and keeps the historical Issue.
pub async fn moved_issue_changes_its_binding(ctx: &mut Ctx) -> Outcome {
    let alice = ctx.human("alice")?;
    alice.login().await?;
    let bot = ctx.bot("lab-bot").await?;
    let native = ctx.native("lab-bot")?;
    let (grant, proposal) =
        flows::active_grant(ctx, &alice, &bot, "alice/lab", "Report flaky tests").await?;
    let submission = Submission::new(TITLE, BODY);
    let receipt = submit_one(ctx, &bot, &grant, &proposal, &submission).await?;
    let index = receipt["index"].as_i64().unwrap_or_default();
    let issue_id = receipt["id"].as_i64().unwrap_or_default();

    ctx.step("the site admin moves the Issue to alice/archive");
    ctx.setup().create_repo("alice", "archive", true).await?;
    let moved = ctx.setup().move_issue(issue_id, "alice/archive").await?;
    ctx.expect_status("the setup surface moves the Issue", moved.status, 200)?;
    let old_place = ctx.setup().issue("alice/lab", index).await?;
    ctx.expect_status("the Issue is no longer in alice/lab", old_place.status, 404)?;
    ctx.expect_eq(
        "alice/lab holds no Issue",
        flows::issue_count(ctx, "alice/lab").await?,
        0,
    )?;
    ctx.expect_eq(
        "alice/archive holds the moved Issue",
        flows::issue_count(ctx, "alice/archive").await?,
        1,
    )?;

    read_back_tombstone(
        ctx,
        &bot,
        &native,
        &grant,
        &submission,
        &receipt,
        "issue_binding_changed",
    )
    .await?;
    replay_returns_tombstone(
        ctx,
        &bot,
        &native,
        &grant,
        &proposal,
        &submission,
        &receipt,
        "issue_binding_changed",
    )
    .await?;
    let counts = (
        flows::issue_count(ctx, "alice/lab").await?,
        flows::issue_count(ctx, "alice/archive").await?,
    );
    ctx.expect_eq(
        "the replays created no Issue (alice/lab, alice/archive)",
        counts,
        (0, 1),
    )?;

    ctx.step("a changed replay with the spent key is refused");
    let changed = Submission {
        body: format!("{BODY}\nMoved?"),
        ..submission.clone()
    };
    let answer = native.submit(&grant, &proposal, &changed).await?;
    flows::expect_native_error(ctx, "changed replay, natively", &answer, 409)?;
    let counts = (
        flows::issue_count(ctx, "alice/lab").await?,
        flows::issue_count(ctx, "alice/archive").await?,
    );
    ctx.expect_eq("nothing written (alice/lab, alice/archive)", counts, (0, 1))?;
    Ok(())
}

/// lab-bot submits one Issue through the adapter; returns the receipt's
/// `issue` object as the 201 answer gave it.
async fn submit_one(
    ctx: &Ctx,
    bot: &Bot,
    grant: &GrantRef,
    proposal: &Proposal,
    submission: &Submission,
) -> Step<Value> {
    ctx.step("lab-bot submits an Issue through the grant");
    let created = bot.submit(grant, proposal, submission).await?;
    let created = ctx.expect_tool_ok("submit succeeds", &created)?;
    ctx.expect_eq(
        "native status",
        created["native_status"].as_i64(),
        Some(201),
    )?;
    ctx.expect_eq(
        "status",
        created["submission"]["status"].as_str(),
        Some("submitted"),
    )?;
    let issue = created["submission"]["issue"].clone();
    ctx.expect(
        "the receipt names the Issue's id, index, repository and URL",
        issue["id"].is_i64()
            && issue["index"].is_i64()
            && issue["repository_id"].is_i64()
            && issue["html_url"].is_string(),
        &issue.to_string(),
    )?;
    ctx.expect_eq(
        "alice/lab holds one Issue",
        flows::issue_count(ctx, "alice/lab").await?,
        1,
    )?;
    ctx.observe("the receipt", &created["submission"]);
    Ok(issue)
}

/// Reads the submission back through the adapter and natively: 200, the
/// tombstone `status`, the historical Issue, still awaiting review.
async fn read_back_tombstone(
    ctx: &Ctx,
    bot: &Bot,
    native: &NativeClient,
    grant: &GrantRef,
    submission: &Submission,
    receipt: &Value,
    status: &str,
) -> Step<()> {
    ctx.step(&format!(
        "lab-bot reads the submission back: `{status}`, the historical receipt unchanged"
    ));
    let reply = bot.submission(grant, &submission.request_key).await?;
    let reply = ctx.expect_tool_ok("readback through the adapter succeeds", &reply)?;
    ctx.expect_eq("native status", reply["native_status"].as_i64(), Some(200))?;
    expect_tombstone(
        ctx,
        "adapter",
        &reply["submission"],
        grant,
        submission,
        receipt,
        status,
    )?;
    ctx.observe("the tombstone through the adapter", &reply["submission"]);

    let answer = native.submission(grant, &submission.request_key).await?;
    ctx.expect_status("native readback", answer.status, 200)?;
    let body = answer.json()?;
    expect_tombstone(
        ctx,
        "native",
        &body["submission"],
        grant,
        submission,
        receipt,
        status,
    )?;
    ctx.expect_eq(
        "the grant stays active",
        body["grant"]["state"].as_str(),
        Some("active"),
    )?;
    Ok(())
}

/// Replays the identical submission through the adapter and natively: 200
/// with the tombstone.
#[allow(clippy::too_many_arguments)]
async fn replay_returns_tombstone(
    ctx: &Ctx,
    bot: &Bot,
    native: &NativeClient,
    grant: &GrantRef,
    proposal: &Proposal,
    submission: &Submission,
    receipt: &Value,
    status: &str,
) -> Step<()> {
    ctx.step("an identical replay returns the tombstone with 200 and creates nothing");
    let reply = bot.submit(grant, proposal, submission).await?;
    let reply = ctx.expect_tool_ok("the replay through the adapter succeeds", &reply)?;
    ctx.expect_eq(
        "native status of the replay",
        reply["native_status"].as_i64(),
        Some(200),
    )?;
    expect_tombstone(
        ctx,
        "adapter replay",
        &reply["submission"],
        grant,
        submission,
        receipt,
        status,
    )?;
    let answer = native.submit(grant, proposal, submission).await?;
    ctx.expect_status("native replay", answer.status, 200)?;
    expect_tombstone(
        ctx,
        "native replay",
        &answer.json()?["submission"],
        grant,
        submission,
        receipt,
        status,
    )?;
    ctx.observe(
        "the replay's status",
        &(reply["native_status"].clone(), answer.status),
    );
    Ok(())
}

fn expect_tombstone(
    ctx: &Ctx,
    via: &str,
    s: &Value,
    grant: &GrantRef,
    submission: &Submission,
    receipt: &Value,
    status: &str,
) -> Step<()> {
    ctx.expect_eq(
        &format!("{via}: status"),
        s["status"].as_str(),
        Some(status),
    )?;
    ctx.expect_eq(
        &format!("{via}: the historical Issue"),
        &s["issue"],
        receipt,
    )?;
    ctx.expect_eq(
        &format!("{via}: review state"),
        s["review_state"].as_str(),
        Some("awaiting_review"),
    )?;
    ctx.expect_eq(
        &format!("{via}: grant and key"),
        (s["grant_id"].as_i64(), s["request_key"].as_str()),
        (Some(grant.id), Some(submission.request_key.as_str())),
    )
}
