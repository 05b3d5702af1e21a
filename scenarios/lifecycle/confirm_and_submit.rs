//! Family 3: the full lifecycle through the adapter, and confirmation with
//! the exact triple only, once only. The Issue bodies at their limits (the
//! maximal body, NUL) are in `issue_bodies.rs`.

use grantgate_engine::prelude::*;

use crate::support::flows::{self, LAB, LAB_BOT};
use super::issue_text::{BODY, SUMMARY, TASK, TITLE, expect_issue_page};

/// A grant prepared and approved in the browser, confirmed and submitted
/// through the adapter, creates exactly one Issue that reads back identically
/// on every surface.
#[scenario(Lifecycle, parity, clauses = ["S3.route.get", "S3.route.confirm", "S3.route.submit", "S3.route.readback", "S3.submit.issue", "S3.submission.members", "S3.receipt.review-state", "S1.issue.marker", "S2.grant.members", "S2.digest", "S2.text.whole", "S4.issue-page", "S4.page.text", "S6.tools.grant", "S6.results.shape", "S5.setup.issue-read"])]
async fn full_lifecycle(ctx: &mut Ctx) -> Outcome {
    // Confirmed with the exact proposal triple. Read back: the Issue's full
    // body, poster and grant marker, through the adapter, the native API and
    // the HTML page.
    let alice = ctx.human("alice")?;

    ctx.step("alice logs in through the login form with its CSRF token");
    let home = alice.login().await?;
    ctx.expect_eq(
        "login answers 303 to /",
        redirect_of(&home),
        Some((303, "/".to_owned())),
    )?;
    ctx.expect_status("home page status", home.status, 200)?;

    ctx.step("an ordinary Issue is opened first in another repository");
    // So the grant's Issue has a global id other than its index.
    ctx.setup().create_repo("alice", "elsewhere", true).await?;
    let ordinary = json!({"title": "Elsewhere", "body": "ordinary"});
    let answer = (ctx.setup())
        .call("POST", &core_api::issues("alice/elsewhere"), Some(ordinary))
        .await?;
    ctx.expect_status("the ordinary Issue", answer.status, 201)?;

    ctx.step("alice prepares a grant for lab-bot through the form");
    // What the Core receives: a real browser sends line breaks as CRLF.
    let (task, summary) = (alice.as_submitted(TASK), alice.as_submitted(SUMMARY));
    let (grant, page) = alice.prepare_grant(LAB, LAB_BOT, &task, &summary).await?;
    ctx.expect_eq(
        "preparing answers 303 to the grant page",
        redirect_of(&page),
        Some((303, core_api::grant_page(&grant))),
    )?;
    ctx.expect_status("grant page status", page.status, 200)?;

    let bot = ctx.bot(LAB_BOT).await?;
    ctx.step("lab-bot reads the grant through its adapter");
    let read = bot.get_grant(&grant).await?;
    ctx.expect_tool_ok("get_agent_work_grant succeeds", &read)?;
    let g = read.grant()?;
    ctx.expect_eq(
        "state and revision",
        g.status(),
        (state::AWAITING_AGENT.into(), 1),
    )?;
    ctx.expect_eq("task kept whole", &g.task, &task)?;
    ctx.expect_eq("summary kept whole", &g.summary, &summary)?;
    ctx.expect_eq("agent", g.agent.login.as_str(), LAB_BOT)?;
    ctx.expect_eq("prepared by", g.prepared_by.login.as_str(), "alice")?;
    ctx.expect_eq("not approved yet", &g.approved_by, &None)?;
    ctx.observe("the grant as the agent reads it", &g.raw);
    let proposal = g.proposal.clone();
    ctx.expect_eq(
        "proposal schema and version",
        (proposal.schema.as_str(), proposal.version),
        ("agent_work_grant.v1", 1),
    )?;
    ctx.expect_eq(
        "digest is SHA-256 of the JCS proposal",
        proposal.digest.clone(),
        expected_digest(&g)?,
    )?;

    ctx.step("lab-bot confirms with the exact proposal triple");
    let confirmed = bot.confirm(&grant, &proposal).await?;
    let result = ctx.expect_tool_ok("confirm succeeds", &confirmed)?;
    ctx.expect_eq("native status", confirmed.native_status(), Some(200))?;
    ctx.expect_eq(
        "state and revision after confirm",
        confirmed.grant()?.status(),
        (state::AWAITING_HUMAN.into(), 2),
    )?;
    ctx.observe("the confirm result", &result);

    ctx.step("alice approves through the approve form on the grant page");
    let approved = alice.approve(&grant).await?;
    ctx.expect_status("page after approving", approved.status, 200)?;
    let redirects: Vec<(u16, String)> = approved
        .redirects
        .iter()
        .map(|(s, u)| (*s, u.path().to_owned()))
        .collect();
    ctx.observe("the approve redirects", &redirects);

    ctx.step("lab-bot sees the grant active, approved by alice");
    let active = bot.get_grant(&grant).await?;
    let result = ctx.expect_tool_ok("get_agent_work_grant succeeds", &active)?;
    let g = active.grant()?;
    ctx.expect_eq("state and revision", g.status(), (state::ACTIVE.into(), 3))?;
    ctx.expect_eq(
        "approved by",
        g.approved_by.as_ref().map(|u| u.login.as_str()),
        Some("alice"),
    )?;
    ctx.observe("the active grant", &result);

    ctx.step("lab-bot submits an Issue through the grant");
    let submission = NewIssue::new(TITLE, BODY);
    let submitted = bot.submit(&grant, &proposal, &submission).await?;
    let result = ctx.expect_tool_ok("submit succeeds", &submitted)?;
    ctx.expect_eq("native status", submitted.native_status(), Some(201))?;
    let receipt = submitted.submitted()?.receipt;
    ctx.expect_eq("grant id", receipt.grant_id, grant.id)?;
    ctx.expect_eq(
        "request key",
        receipt.request_key.as_str(),
        submission.request_key.as_str(),
    )?;
    ctx.expect_eq("status", receipt.status.as_str(), "submitted")?;
    ctx.expect_eq(
        "review state",
        receipt.review_state.as_str(),
        "awaiting_review",
    )?;
    ctx.expect_eq("submitted by", receipt.submitted_by.login.as_str(), LAB_BOT)?;
    ctx.observe("the submit result", &result);
    let issue = receipt.issue.clone();

    ctx.step("lab-bot reads the submission back through the adapter");
    let back = bot.submission(&grant, &submission.request_key).await?;
    let result = ctx.expect_tool_ok("get_agent_work_submission succeeds", &back)?;
    ctx.expect_eq("native status", back.native_status(), Some(200))?;
    flows::expect_same_receipt(
        ctx,
        "the same receipt",
        &back.submitted()?.receipt,
        &receipt,
    )?;
    ctx.observe("the submission read back", &result);

    ctx.step("the native API shows the Issue whole, posted by lab-bot, bound to the grant");
    let answer = ctx.setup().issue(LAB, issue.index).await?;
    ctx.expect_status("issue read", answer.status, 200)?;
    let native = answer.issue()?;
    ctx.expect_eq(
        "the receipt's Issue is this Issue: id, index, repository, page",
        (
            native.id,
            native.index,
            native.repository_id,
            &native.html_url,
        ),
        (issue.id, issue.index, issue.repository_id, &issue.html_url),
    )?;
    ctx.expect_eq(
        "its page: the public URL and the path of Issue `index`",
        native.html_url.clone(),
        ctx.setup().issue_page(LAB, native.index),
    )?;
    ctx.expect_eq("title", native.title.as_str(), TITLE)?;
    ctx.expect_eq("body byte for byte", native.body.as_str(), BODY)?;
    ctx.expect_eq("poster", native.user.login.as_str(), LAB_BOT)?;
    ctx.expect_eq(
        "grant binding",
        native.agent_work_grant.clone(),
        Some(GrantMarker {
            grant_id: grant.id,
            request_key: submission.request_key.clone(),
        }),
    )?;
    ctx.expect_eq(
        "exactly one Issue in alice/lab",
        flows::issue_count(ctx, LAB).await?,
        1,
    )?;
    ctx.observe("the Issue through the native API", &native.raw);

    ctx.step("alice reads the Issue page: poster, whole body, grant marker");
    let shown = expect_issue_page(ctx, &alice, &grant, issue.index, BODY).await?;
    ctx.observe("the Issue page", &shown);

    ctx.step("alice's grant page lists the receipt: its request key and status");
    let page = alice.grant_page(&grant).await?;
    ctx.expect_status("grant page status", page.status, 200)?;
    ctx.expect(
        "the grant page shows the request key and `submitted`",
        page.shows(&submission.request_key) && page.shows("submitted"),
        &page.text(),
    )?;
    Ok(())
}

/// The first redirect of a navigation as `(status, path)`, resolved against
/// the request URL (relative and absolute `Location` read the same).
fn redirect_of(page: &Page) -> Option<(u16, String)> {
    page.first_redirect()
        .map(|(status, url)| (status, url.path().to_owned()))
}

/// alice logs in and prepares a grant for lab-bot, which reads it; returns
/// the bot, the grant and its proposal, the digest recomputed by the harness.
async fn prepared(ctx: &mut Ctx) -> Step<(Bot, GrantRef, Proposal)> {
    let alice = ctx.human("alice")?;
    ctx.step("alice logs in and prepares a grant for lab-bot; lab-bot reads it");
    alice.login().await?;
    let (grant, _) = alice.prepare_grant(LAB, LAB_BOT, TASK, SUMMARY).await?;
    let bot = ctx.bot(LAB_BOT).await?;
    let read = bot.get_grant(&grant).await?;
    ctx.expect_tool_ok("get_agent_work_grant succeeds", &read)?;
    let g = read.grant()?;
    ctx.expect_eq(
        "the digest is SHA-256 of the JCS proposal",
        g.proposal.digest.clone(),
        expected_digest(&g)?,
    )?;
    Ok((bot, grant, g.proposal))
}

/// Checks the grant's `(state, revision)` as lab-bot reads it natively.
async fn expect_state(ctx: &Ctx, what: &str, grant: &GrantRef, state: &str, rev: i64) -> Step<()> {
    ctx.expect_eq(
        &format!("{what}: state and state_revision"),
        flows::native_status(ctx, LAB_BOT, grant).await?,
        (state.to_owned(), rev),
    )
}

/// A confirmation whose proposal triple differs from the grant's is refused
/// and changes nothing, while the exact triple confirms.
#[scenario(Lifecycle, parity, clauses = ["S3.confirm.triple", "S3.confirm.body", "S2.digest"])]
async fn confirm_changed_triple_conflict(ctx: &mut Ctx) -> Outcome {
    // The triple is the proposal schema, version and digest; the harness
    // recomputes the grant's digest. Natively each differing triple is 409;
    // the adapter refuses the first two itself and the digest with conflict.
    let (bot, grant, proposal) = prepared(ctx).await?;
    let native = ctx.native(LAB_BOT)?;
    expect_state(ctx, "prepared", &grant, state::AWAITING_AGENT, 1).await?;
    let watch = flows::Watch::new(LAB_BOT, LAB).grant(&grant);
    let before = watch.take(ctx).await?;

    for (element, changed) in flows::changed_triples(&proposal) {
        ctx.step(&format!("lab-bot confirms with another {element}"));
        let answer = native.confirm(&grant, &changed).await?;
        flows::expect_native_error(
            ctx,
            &format!("another {element}: refused natively"),
            &answer,
            409,
        )?;
        watch
            .expect_unchanged(ctx, &format!("another {element}, natively"), &before)
            .await?;
        let reply = bot.confirm(&grant, &changed).await?;
        if element == "digest" {
            flows::expect_tool_refusal(ctx, "another digest: refused", &reply, "conflict", 409)?;
        } else {
            // The adapter knows the only schema and version; it asks nobody.
            ctx.expect_tool_error(
                &format!("another {element}: refused by the adapter itself"),
                &reply,
                "invalid_input",
            )?;
        }
        watch
            .expect_unchanged(ctx, &format!("another {element}, adapter"), &before)
            .await?;
        ctx.observe(element, &(answer.status, reply.error_code()));
    }

    ctx.step("lab-bot confirms with the exact triple");
    let confirmed = bot.confirm(&grant, &proposal).await?;
    ctx.expect_tool_ok("confirm succeeds", &confirmed)?;
    ctx.expect_eq(
        "confirmed",
        (confirmed.native_status(), confirmed.grant()?.state),
        (Some(200), state::AWAITING_HUMAN.to_owned()),
    )?;
    expect_state(ctx, "after confirming", &grant, state::AWAITING_HUMAN, 2).await?;
    Ok(())
}

/// A second confirmation, identical to the first, answers 409 through the
/// adapter and natively and changes nothing, before and after approval.
#[scenario(Lifecycle, parity, clauses = ["S3.confirm.state"])]
async fn confirm_twice_conflict(ctx: &mut Ctx) -> Outcome {
    let (bot, grant, proposal) = prepared(ctx).await?;
    let alice = ctx.human("alice")?;
    let native = ctx.native(LAB_BOT)?;

    ctx.step("lab-bot confirms with the exact triple");
    let confirmed = bot.confirm(&grant, &proposal).await?;
    ctx.expect_tool_ok("the first confirmation succeeds", &confirmed)?;
    expect_state(ctx, "after confirming", &grant, state::AWAITING_HUMAN, 2).await?;

    for (when, now, rev) in [
        ("awaiting approval", state::AWAITING_HUMAN, 2),
        ("after approval", state::ACTIVE, 3),
    ] {
        if now == state::ACTIVE {
            ctx.step("alice approves the grant");
            let page = alice.approve(&grant).await?;
            ctx.expect_status("approving", page.status, 200)?;
            expect_state(ctx, "after approving", &grant, now, rev).await?;
        }
        let watch = flows::Watch::new(LAB_BOT, LAB).grant(&grant);
        let before = watch.take(ctx).await?;
        ctx.step(&format!("lab-bot confirms again, {when}"));
        let again = bot.confirm(&grant, &proposal).await?;
        flows::expect_tool_refusal(ctx, &format!("{when}: refused"), &again, "conflict", 409)?;
        let answer = native.confirm(&grant, &proposal).await?;
        flows::expect_native_error(ctx, &format!("{when}: refused natively"), &answer, 409)?;
        watch.expect_unchanged(ctx, when, &before).await?;
        expect_state(ctx, when, &grant, now, rev).await?;
        ctx.observe(when, &(again.error_code(), answer.status));
    }
    Ok(())
}
