//! Family 7: boundaries — a wrong bot and a missing scope are refused and
//! change nothing. (Ordinary activity and independent grants are in
//! `separation.rs`, the same family.)
//!
//! "Nothing changed" is a [`Watch`] ledger: the repository's Issues through
//! the setup surface, and each grant and key as lab-bot reads them natively.

use std::collections::BTreeSet;

use grantgate_engine::prelude::*;

use crate::support::flows::{self, LAB, LAB_BOT, Watch};

/// Another bot with write access gets 404 on every route of lab-bot's grants,
/// as for a grant that does not exist, never lists them, and changes nothing.
#[scenario(Boundaries, parity, clauses = ["S3.agent-only", "S3.statuses"])]
async fn wrong_bot_gets_not_found(ctx: &mut Ctx) -> Outcome {
    // Through its adapter the 404 is `not_found`.
    // other-bot, a write collaborator on alice/lab, probes lab-bot's grants.
    let world = Probed::set_up(ctx).await?;
    let Probed {
        active,
        proposal,
        earlier,
        pending,
        pending_proposal,
        fresh,
        ..
    } = &world;
    let nowhere = GrantRef {
        id: pending.id + 1000,
        ..pending.clone()
    };
    let before = world.watch.take(ctx).await?;

    ctx.step("other-bot calls every grant route natively: 404, like a grant that does not exist");
    let other = ctx.native("other-bot")?;
    let key = &earlier.request_key;
    let pairs: [(&str, Answer, Answer); 4] = [
        (
            "get",
            other.get_grant(active).await?,
            other.get_grant(&nowhere).await?,
        ),
        (
            "confirm",
            other.confirm(pending, pending_proposal).await?,
            other.confirm(&nowhere, pending_proposal).await?,
        ),
        (
            "submit",
            other.submit(active, proposal, fresh).await?,
            other.submit(&nowhere, proposal, fresh).await?,
        ),
        (
            "readback",
            other.submission(active, key).await?,
            other.submission(&nowhere, key).await?,
        ),
    ];
    let mut statuses = Vec::new();
    for (route, theirs, missing) in &pairs {
        flows::expect_native_error(ctx, &format!("other-bot {route}"), theirs, 404)?;
        flows::expect_native_error(ctx, &format!("nonexistent grant {route}"), missing, 404)?;
        // No leak: the wording is the Core's own, but the status and the
        // members must not tell a hidden grant from a missing one.
        ctx.expect_eq(
            &format!("{route}: the refusal leaks nothing (status and members as for no grant)"),
            (theirs.status, member_names(theirs)?),
            (missing.status, member_names(missing)?),
        )?;
        statuses.push(json!({"route": route, "status": theirs.status}));
    }
    ctx.observe("other-bot's native statuses", &statuses);

    ctx.step("other-bot's list never holds lab-bot's grants");
    let answer = other.list_grants("state=all").await?;
    ctx.expect_status("other-bot's native list", answer.status, 200)?;
    let ids: Vec<i64> = answer.grants()?.iter().map(|g| g.id).collect();
    ctx.expect(
        "neither grant is listed",
        !ids.contains(&active.id) && !ids.contains(&pending.id),
        &format!("{ids:?}"),
    )?;

    ctx.step("other-bot's adapter gets `not_found` on every grant tool");
    let other_bot = ctx.bot("other-bot").await?;
    let replies = [
        ("get", other_bot.get_grant(active).await?),
        (
            "confirm",
            other_bot.confirm(pending, pending_proposal).await?,
        ),
        ("submit", other_bot.submit(active, proposal, fresh).await?),
        ("readback", other_bot.submission(active, key).await?),
    ];
    for (tool, reply) in &replies {
        flows::expect_tool_refusal(ctx, &format!("other-bot {tool}"), reply, "not_found", 404)?;
    }
    let listed = other_bot.list_grants(None, Some("all")).await?;
    let ids = listed.list()?.ids();
    ctx.expect(
        "neither grant is listed through the adapter",
        !ids.contains(&active.id) && !ids.contains(&pending.id),
        &format!("{ids:?}"),
    )?;

    ctx.step("nothing changed: same Issues, states, revisions and receipts");
    world
        .watch
        .expect_unchanged(ctx, "after other-bot's calls", &before)
        .await?;
    let mine = world.bot.get_grant(pending).await?.grant()?;
    ctx.expect_eq(
        "the pending grant still awaits lab-bot",
        mine.status(),
        (state::AWAITING_AGENT.to_owned(), 1),
    )?;
    observe_ledger(ctx, &before);
    Ok(())
}

/// The grant's own bot gets 403 where its token lacks the scope: every grant
/// route without `read:repository`, confirm and submit without `write:issue`.
#[scenario(Boundaries, parity, clauses = ["S3.route.list", "S3.route.get", "S3.route.confirm", "S3.route.submit", "S3.route.readback", "S3.recheck", "S1.token.write-implies-read"])]
async fn missing_scope_is_forbidden(ctx: &mut Ctx) -> Outcome {
    // Natively, and `forbidden` through the adapter; reading still works
    // without `write:issue`, and nothing changes.
    // lab-bot with tokens that each lack one scope a route requires.
    let world = Probed::set_up(ctx).await?;
    let Probed {
        active,
        proposal,
        earlier,
        pending,
        pending_proposal,
        fresh,
        ..
    } = &world;
    let key = &earlier.request_key;
    let before = world.watch.take(ctx).await?;
    let mut seen = Vec::new();

    ctx.step("without `read:repository` (only `write:issue`), every grant route is 403");
    let no_read = ctx.native_with_scopes(LAB_BOT, &["write:issue"]).await?;
    let answers = [
        ("list", no_read.list_grants("").await?),
        ("get", no_read.get_grant(active).await?),
        ("confirm", no_read.confirm(pending, pending_proposal).await?),
        ("submit", no_read.submit(active, proposal, fresh).await?),
        ("readback", no_read.submission(active, key).await?),
    ];
    for (route, answer) in &answers {
        let what = format!("{route} without read:repository");
        flows::expect_native_error(ctx, &what, answer, 403)?;
        seen.push(json!({"scopes": "write:issue", "route": route, "status": answer.status}));
    }

    ctx.step("without `write:issue` (only `read:repository`), confirm and submit are 403");
    let no_write = ctx
        .native_with_scopes(LAB_BOT, &["read:repository"])
        .await?;
    let answer = no_write.confirm(pending, pending_proposal).await?;
    flows::expect_native_error(ctx, "confirm without write:issue", &answer, 403)?;
    seen.push(json!({"scopes": "read:repository", "route": "confirm", "status": answer.status}));
    let answer = no_write.submit(active, proposal, fresh).await?;
    flows::expect_native_error(ctx, "submit without write:issue", &answer, 403)?;
    seen.push(json!({"scopes": "read:repository", "route": "submit", "status": answer.status}));

    ctx.step("with `read:repository` alone, reading still works");
    let answer = no_write.list_grants("").await?;
    ctx.expect_status("list", answer.status, 200)?;
    let ids: Vec<i64> = answer.grants()?.iter().map(|g| g.id).collect();
    ctx.expect(
        "both grants listed",
        ids.contains(&active.id) && ids.contains(&pending.id),
        &format!("{ids:?}"),
    )?;
    let answer = no_write.get_grant(active).await?;
    ctx.expect_status("get", answer.status, 200)?;
    ctx.expect_eq("the grant read", answer.grant()?.id, active.id)?;
    let answer = no_write.submission(active, key).await?;
    ctx.expect_status("readback", answer.status, 200)?;
    ctx.expect_eq(
        "the receipt read",
        answer.submitted()?.receipt.request_key,
        key.clone(),
    )?;

    ctx.step(
        "through an adapter holding only `read:repository`: `forbidden` on confirm and submit",
    );
    let narrow = ctx
        .bot_builder(LAB_BOT)
        .scopes(&["read:repository"])
        .start()
        .await?;
    let reply = narrow.confirm(pending, pending_proposal).await?;
    flows::expect_tool_refusal(ctx, "confirm through the adapter", &reply, "forbidden", 403)?;
    let reply = narrow.submit(active, proposal, fresh).await?;
    flows::expect_tool_refusal(ctx, "submit through the adapter", &reply, "forbidden", 403)?;
    let reply = narrow.get_grant(active).await?;
    ctx.expect_eq("get through the adapter", reply.grant()?.id, active.id)?;
    ctx.observe("statuses per token and route", &seen);

    ctx.step("nothing changed: same Issues, states, revisions and receipts");
    world
        .watch
        .expect_unchanged(ctx, "after the narrow tokens' calls", &before)
        .await?;
    observe_ledger(ctx, &before);
    Ok(())
}

/// Where both scenarios probe from: an active grant of lab-bot with one
/// submission, a second grant still awaiting lab-bot, a submission nobody
/// may make, and the ledger watching all of it.
struct Probed {
    bot: Bot,
    active: GrantRef,
    proposal: Proposal,
    earlier: NewIssue,
    pending: GrantRef,
    pending_proposal: Proposal,
    fresh: NewIssue,
    watch: Watch,
}

impl Probed {
    async fn set_up(ctx: &mut Ctx) -> Step<Probed> {
        let alice = ctx.human("alice")?;
        alice.login().await?;
        let bot = ctx.bot(LAB_BOT).await?;
        let (active, proposal) =
            flows::active_grant(ctx, &alice, &bot, LAB, "Label old Issues").await?;
        ctx.step("lab-bot submits an Issue; alice prepares a second grant for lab-bot");
        let earlier = NewIssue::new("Label: needs-triage", "Applies to 12 Issues.");
        let created = bot.submit(&active, &proposal, &earlier).await?;
        ctx.expect_eq("lab-bot submits", created.native_status(), Some(201))?;
        let (pending, _) = alice
            .prepare_grant(LAB, LAB_BOT, "Close duplicates", "summary")
            .await?;
        let pending_proposal = bot.read_proposal(&pending).await?;
        let fresh = NewIssue::new("Not yours", "Must not be created.");
        // The refused key is watched too: its readback must stay 404.
        let watch = Watch::new(LAB_BOT, LAB)
            .grant(&active)
            .grant(&pending)
            .key(&active, &earlier.request_key)
            .key(&active, &fresh.request_key);
        Ok(Probed {
            bot,
            active,
            proposal,
            earlier,
            pending,
            pending_proposal,
            fresh,
            watch,
        })
    }
}

/// The member names of a JSON object answer: what a refusal may show of
/// itself without telling a hidden grant from a missing one.
fn member_names(answer: &Answer) -> Step<BTreeSet<String>> {
    let body = answer.json()?;
    let object = body.as_object().ok_or_else(|| {
        Abort::failed(format!(
            "{} answered {} with a body that is not a JSON object: {}",
            answer.url, answer.status, answer.body
        ))
    })?;
    Ok(object.keys().cloned().collect())
}

/// Records the ledger for parity, without its random request keys.
fn observe_ledger(ctx: &Ctx, ledger: &flows::Ledger) {
    let receipts: Vec<_> = ledger.receipts.iter().map(|(_, s, r)| (s, r)).collect();
    ctx.observe("the ledger", &(&ledger.issues, &ledger.grants, receipts));
}
