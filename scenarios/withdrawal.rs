//! Family 6: withdrawal — a withdrawn grant blocks confirm and submit while its receipts still read back.

use serde_json::{Value, json};

use crate::actors::{Bot, GrantRef, Human, NativeClient, Proposal, Submission};
use crate::ctx::Ctx;
use crate::runner::catalogue::Scenario;
use crate::runner::outcome::Outcome;
use crate::scenarios::flows;

/// This family's scenarios, in catalogue order.
pub fn scenarios() -> Vec<Scenario> {
    vec![
        Scenario {
            id: "withdrawn_while_awaiting_agent",
            family: "6 withdrawal",
            claim: "A grant withdrawn through the browser form before its bot confirmed is revoked \
                    for good: confirm and submit get 409 natively and `conflict` through the \
                    adapter, nothing is written, the page offers no form, and the list shows it \
                    only under `revoked` and `all`.",
            fixture: "lab",
            core_env: &[],
            parity: true,
            run: |ctx| Box::pin(withdrawn_while_awaiting_agent(ctx)),
        },
        Scenario {
            id: "withdrawn_while_awaiting_human",
            family: "6 withdrawal",
            claim: "A grant withdrawn through the browser form after its bot confirmed, before \
                    approval, is revoked for good: confirm and submit get 409, nothing is written, \
                    the page offers no form, and the list shows it only under `revoked` and `all`.",
            fixture: "lab",
            core_env: &[],
            parity: true,
            run: |ctx| Box::pin(withdrawn_while_awaiting_human(ctx)),
        },
        Scenario {
            id: "withdrawn_while_active",
            family: "6 withdrawal",
            claim: "An active grant withdrawn through the browser form refuses confirm, new \
                    submissions and replays with 409 and writes nothing, while the earlier \
                    submission still reads back with 200 and the same receipt, and the list shows \
                    the grant only under `revoked` and `all`.",
            fixture: "lab",
            core_env: &[],
            parity: true,
            run: |ctx| Box::pin(withdrawn_while_active(ctx)),
        },
    ]
}

/// Withdrawal before the bot confirmed.
pub async fn withdrawn_while_awaiting_agent(ctx: &mut Ctx) -> Outcome {
    let alice = ctx.human("alice")?;
    alice.login().await?;
    let bot = ctx.bot("lab-bot").await?;
    let native = ctx.native("lab-bot")?;
    ctx.step("alice prepares a grant for lab-bot");
    let (grant, _) = alice
        .prepare_grant("alice/lab", "lab-bot", "Sort the backlog", "summary")
        .await?;
    let proposal = bot.read_proposal(&grant).await?;
    withdraw_and_check(ctx, &alice, &bot, &native, &grant, &proposal, 2, None).await
}

/// Withdrawal after the bot confirmed, before the human approved.
pub async fn withdrawn_while_awaiting_human(ctx: &mut Ctx) -> Outcome {
    let alice = ctx.human("alice")?;
    alice.login().await?;
    let bot = ctx.bot("lab-bot").await?;
    let native = ctx.native("lab-bot")?;
    ctx.step("alice prepares a grant for lab-bot, which confirms it");
    let (grant, _) = alice
        .prepare_grant("alice/lab", "lab-bot", "Sort the backlog", "summary")
        .await?;
    let proposal = bot.read_proposal(&grant).await?;
    let confirmed = bot.confirm(&grant, &proposal).await?;
    let confirmed = ctx.expect_tool_ok("lab-bot confirms", &confirmed)?;
    ctx.expect_eq(
        "state after confirm",
        confirmed["grant"]["state"].as_str(),
        Some("awaiting_human"),
    )?;
    withdraw_and_check(ctx, &alice, &bot, &native, &grant, &proposal, 3, None).await
}

/// Withdrawal of an active grant that already has a submission.
pub async fn withdrawn_while_active(ctx: &mut Ctx) -> Outcome {
    let alice = ctx.human("alice")?;
    alice.login().await?;
    let bot = ctx.bot("lab-bot").await?;
    let native = ctx.native("lab-bot")?;
    let (grant, proposal) =
        flows::active_grant(ctx, &alice, &bot, "alice/lab", "Sort the backlog").await?;
    ctx.step("lab-bot submits an Issue while the grant is active");
    let earlier = Submission::new("Backlog: close stale items", "Items older than a year.");
    let created = bot.submit(&grant, &proposal, &earlier).await?;
    let created = ctx.expect_tool_ok("submit succeeds", &created)?;
    ctx.expect_eq(
        "native status",
        created["native_status"].as_i64(),
        Some(201),
    )?;
    let receipt = created["submission"].clone();
    withdraw_and_check(
        ctx,
        &alice,
        &bot,
        &native,
        &grant,
        &proposal,
        4,
        Some((&earlier, &receipt)),
    )
    .await
}

/// alice withdraws through the form; then every claim of the family about
/// a revoked grant. `revision` is the state revision withdrawal leads to;
/// `earlier` is a submission made before, with its receipt.
#[allow(clippy::too_many_arguments)]
async fn withdraw_and_check(
    ctx: &Ctx,
    alice: &Human,
    bot: &Bot,
    native: &NativeClient,
    grant: &GrantRef,
    proposal: &Proposal,
    revision: i64,
    earlier: Option<(&Submission, &Value)>,
) -> Outcome {
    ctx.step("alice withdraws the grant through the withdraw form");
    let page = alice.withdraw(grant).await?;
    ctx.expect_status("the page after withdrawing", page.status, 200)?;

    ctx.step("the grant page shows it revoked, with neither approve nor withdraw form");
    let view = flows::grant_page_view(ctx, alice, grant).await?;
    ctx.expect_eq(
        "state and revision on the page",
        (view.state.as_deref(), view.revision.clone()),
        (Some("revoked"), Some(revision.to_string())),
    )?;
    ctx.expect_eq(
        "forms on the page (approve, withdraw)",
        (view.approve_form, view.withdraw_form),
        (false, false),
    )?;
    ctx.observe("the revoked grant's page", &view);

    ctx.step("lab-bot reads the grant revoked, natively and through the adapter");
    let read = bot.get_grant(grant).await?;
    let read = ctx.expect_tool_ok("get_agent_work_grant succeeds", &read)?;
    let g = &read["grant"];
    ctx.expect_eq(
        "state and revision through the adapter",
        (g["state"].as_str(), g["state_revision"].as_i64()),
        (Some("revoked"), Some(revision)),
    )?;
    ctx.expect(
        "revoked_at is set",
        g["revoked_at"].is_string(),
        &g["revoked_at"].to_string(),
    )?;
    let answer = native.get_grant(grant).await?;
    ctx.expect_status("native get", answer.status, 200)?;
    ctx.expect_eq(
        "native state",
        answer.json()?["state"].as_str(),
        Some("revoked"),
    )?;
    ctx.observe("the revoked grant", g);

    let before = flows::ledger(ctx, alice, &grant_repo(grant), &[grant]).await?;

    ctx.step("confirm is refused with 409, natively and through the adapter");
    let answer = native.confirm(grant, proposal).await?;
    flows::expect_native_error(ctx, "native confirm", &answer, 409)?;
    let reply = bot.confirm(grant, proposal).await?;
    flows::expect_tool_refusal(ctx, "confirm through the adapter", &reply, "conflict", 409)?;

    ctx.step("a new submission is refused with 409, natively and through the adapter");
    let fresh = Submission::new("After withdrawal", "Must not be created.");
    let answer = native.submit(grant, proposal, &fresh).await?;
    flows::expect_native_error(ctx, "native submit", &answer, 409)?;
    let reply = bot.submit(grant, proposal, &fresh).await?;
    flows::expect_tool_refusal(ctx, "submit through the adapter", &reply, "conflict", 409)?;

    if let Some((earlier, _)) = earlier {
        ctx.step("an identical replay of the earlier submission is refused with 409 too");
        let answer = native.submit(grant, proposal, earlier).await?;
        flows::expect_native_error(ctx, "native replay", &answer, 409)?;
        let reply = bot.submit(grant, proposal, earlier).await?;
        flows::expect_tool_refusal(ctx, "replay through the adapter", &reply, "conflict", 409)?;
    }

    ctx.step("nothing was written: same Issues, same state and revision, same receipts");
    let after = flows::ledger(ctx, alice, &grant_repo(grant), &[grant]).await?;
    ctx.expect_eq("the ledger is unchanged", &after, &before)?;
    let answer = native.get_grant(grant).await?;
    let g = answer.json()?;
    ctx.expect_eq(
        "native state and revision",
        (g["state"].as_str(), g["state_revision"].as_i64()),
        (Some("revoked"), Some(revision)),
    )?;
    ctx.observe("the ledger after the refusals", &after);

    if let Some((earlier, receipt)) = earlier {
        ctx.step("the earlier submission still reads back with its receipt");
        let answer = native.submission(grant, &earlier.request_key).await?;
        ctx.expect_status("native readback", answer.status, 200)?;
        let body = answer.json()?;
        ctx.expect_eq("the same receipt", &body["submission"], receipt)?;
        ctx.expect_eq(
            "the readback names the revoked grant",
            body["grant"]["state"].as_str(),
            Some("revoked"),
        )?;
        let reply = bot.submission(grant, &earlier.request_key).await?;
        let reply = ctx.expect_tool_ok("readback through the adapter succeeds", &reply)?;
        ctx.expect_eq("native status", reply["native_status"].as_i64(), Some(200))?;
        ctx.expect_eq(
            "the same receipt through the adapter",
            &reply["submission"],
            receipt,
        )?;
        ctx.observe("the readback after withdrawal", &reply["submission"]);
    }

    ctx.step("the list shows the grant only under `revoked` and `all`");
    let mut seen = Vec::new();
    for state in [
        None,
        Some("awaiting_agent"),
        Some("awaiting_human"),
        Some("active"),
        Some("revoked"),
        Some("all"),
    ] {
        let expected = matches!(state, Some("revoked" | "all"));
        let label = state.unwrap_or("(default)");
        let query = state.map(|s| format!("state={s}")).unwrap_or_default();
        let answer = native.list_grants(&query).await?;
        ctx.expect_status(&format!("native list {label}"), answer.status, 200)?;
        let listed = flows::listed_ids(&answer)?.contains(&grant.id);
        ctx.expect_eq(&format!("native list {label} holds it"), listed, expected)?;
        let reply = bot.list_grants(None, state).await?;
        ctx.expect_tool_ok(&format!("adapter list {label}"), &reply)?;
        let listed_too = flows::tool_listed_ids(&reply).contains(&grant.id);
        ctx.expect_eq(
            &format!("adapter list {label} holds it"),
            listed_too,
            expected,
        )?;
        seen.push(json!({"state": label, "native": listed, "adapter": listed_too}));
    }
    ctx.observe("list membership per state", &seen);
    Ok(())
}

fn grant_repo(grant: &GrantRef) -> String {
    format!("{}/{}", grant.owner, grant.repo)
}
