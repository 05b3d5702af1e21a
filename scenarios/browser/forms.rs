//! Family 1: the browser surface — login and the real forms, and a missing
//! `_csrf` refused; the other refusals (foreign and expired `_csrf`, stale
//! `state_revision`, a bot's credential) follow in `refusals.rs`; the
//! helpers both use are in `support/forms.rs` and `support/witnesses.rs`.
//!
//! Every refusal is checked twice: the answer (400 for a bad `_csrf`, 409 for
//! a stale `state_revision`) and the ground truth afterwards, read through
//! the APIs only — the grant's state and revision as its agent reads them
//! natively, the repository's Issues, and the number of the agent's grants,
//! so that a refused preparation is seen to create nothing. Each refusal
//! scenario ends with the honest form succeeding, which proves the refusal
//! came from the tampered field and not from a broken session. Pages are read
//! by form action and field name and by the text a person reads, never by
//! markup.

use grantgate_engine::prelude::*;

use crate::support::flows::{self, LAB, LAB_BOT};
use crate::support::forms::{
    awaiting_human, expect_accepted, expect_lands_on_grant, expect_refused, offers, prepare_form,
};
use crate::support::witnesses::{Unchanged, expect_grant};

/// Checks which decision forms a grant's page offers.
fn expect_offers(
    ctx: &Ctx,
    human: &Human,
    page: &Page,
    grant: &GrantRef,
    approve: bool,
    withdraw: bool,
) -> Step<()> {
    ctx.expect_eq(
        "the grant page's forms (approve, withdraw)",
        (
            offers(human, page, grant, Decision::Approve)?,
            offers(human, page, grant, Decision::Withdraw)?,
        ),
        (approve, withdraw),
    )
}

/// A human signs in and prepares, approves and withdraws grants through the
/// real forms, each changing the grant exactly as its agent then reads it.
#[scenario(Browser, parity, clauses = ["S4.login", "S4.prepare", "S4.approve", "S4.withdraw", "S4.page.grant", "S4.page.list", "S4.csrf.every-form", "S4.redirect.303", "S2.states", "S2.revision", "S2.immutable"])]
async fn browser_forms_prepare_approve_withdraw(ctx: &mut Ctx) -> Outcome {
    // The login form, then the forms of the grant pages; the agent reads the
    // grant natively.
    let alice = ctx.human("alice")?;

    ctx.step("alice logs in through the login form");
    let home = alice.login().await?;
    ctx.expect_eq(
        "login answers 303 to /",
        home.first_redirect()
            .map(|(status, to)| (status, to.path().to_owned())),
        Some((303, "/".to_owned())),
    )?;
    // Where `/` leads a signed-in person is the Core's own (spec §4).
    ctx.expect_status("the page the login lands on", home.status, 200)?;

    ctx.step("alice prepares two grants for lab-bot through the new-grant form");
    let (first, page) = alice
        .prepare_grant(LAB, LAB_BOT, "first task", "summary")
        .await?;
    expect_lands_on_grant(ctx, "preparing", &page, &first)?;
    let (second, _) = alice
        .prepare_grant(LAB, LAB_BOT, "second task", "summary")
        .await?;
    ctx.expect(
        "the two grants are distinct",
        first.id != second.id,
        &format!("{} and {}", first.id, second.id),
    )?;
    expect_grant(
        ctx,
        "first grant once prepared",
        &first,
        state::AWAITING_AGENT,
        1,
    )
    .await?;
    // An unconfirmed grant can be withdrawn but not yet approved.
    expect_offers(ctx, &alice, &page, &first, false, true)?;

    ctx.step("lab-bot confirms the first grant; alice approves it through the approve form");
    let bot = ctx.bot(LAB_BOT).await?;
    let proposal = bot.read_proposal(&first).await?;
    let confirmed = bot.confirm(&first, &proposal).await?;
    ctx.expect_tool_ok("lab-bot confirms", &confirmed)?;
    let approved = alice.approve(&first).await?;
    expect_accepted(ctx, "approving", &approved)?;
    expect_grant(ctx, "approved grant", &first, state::ACTIVE, 3).await?;
    let page = alice.grant_page(&first).await?;
    expect_offers(ctx, &alice, &page, &first, false, true)?;
    ctx.observe(
        "approved",
        &flows::native_status(ctx, LAB_BOT, &first).await?,
    );

    ctx.step("alice withdraws the active grant through the withdraw form");
    let withdrawn = alice.withdraw(&first).await?;
    expect_accepted(ctx, "withdrawing", &withdrawn)?;
    expect_grant(ctx, "withdrawn grant", &first, state::REVOKED, 4).await?;
    let page = alice.grant_page(&first).await?;
    expect_offers(ctx, &alice, &page, &first, false, false)?;
    ctx.observe(
        "withdrawn from active",
        &flows::native_status(ctx, LAB_BOT, &first).await?,
    );

    ctx.step("alice withdraws the unconfirmed second grant through the withdraw form");
    let withdrawn = alice.withdraw(&second).await?;
    expect_accepted(ctx, "withdrawing", &withdrawn)?;
    expect_grant(ctx, "withdrawn grant", &second, state::REVOKED, 2).await?;
    ctx.observe(
        "withdrawn from awaiting_agent",
        &flows::native_status(ctx, LAB_BOT, &second).await?,
    );
    Ok(())
}

/// A login, preparation, approval or withdrawal posted without its `_csrf`,
/// or with an empty one, is refused with 400 and changes nothing.
#[scenario(Browser, parity, clauses = ["S4.csrf.every-form", "S4.csrf.refused"])]
async fn csrf_missing_refused(ctx: &mut Ctx) -> Outcome {
    // Nothing: no session, no grant, the same state and state_revision.
    let alice = ctx.human("alice")?;

    ctx.step("alice posts the login form without its _csrf");
    let mut form = alice.login_form().await?;
    form.remove(fields::CSRF);
    let refused = alice.submit(&form).await?;
    expect_refused(ctx, "login without _csrf", &refused, 400)?;
    let probe = alice.open(&core_api::new_grant_page(LAB)).await?;
    ctx.expect(
        "alice is not signed in: the new-grant form does not open",
        probe.form_with_field(fields::TASK).is_err(),
        &format!("status {} at {}", probe.status, probe.url.path()),
    )?;
    ctx.observe("login without _csrf", &refused.status);

    ctx.step("alice logs in properly and prepares a grant for lab-bot, which confirms it");
    alice.login().await?;
    let grant = awaiting_human(ctx, &alice, "task").await?;
    let unchanged = Unchanged::take(ctx, &grant).await?;

    ctx.step("alice posts the new-grant form without its _csrf, then with an empty one");
    let mut form = prepare_form(&alice, "refused task").await?;
    form.remove(fields::CSRF);
    let refused = alice.submit(&form).await?;
    expect_refused(ctx, "preparing without _csrf", &refused, 400)?;
    unchanged
        .expect(ctx, "after preparing without _csrf")
        .await?;
    let mut form = prepare_form(&alice, "refused task").await?;
    form.set(fields::CSRF, "");
    let refused = alice.submit(&form).await?;
    expect_refused(ctx, "preparing with an empty _csrf", &refused, 400)?;
    unchanged
        .expect(ctx, "after preparing with an empty _csrf")
        .await?;
    ctx.observe("prepare without _csrf", &refused.status);

    for decision in [Decision::Approve, Decision::Withdraw] {
        let action = decision.segment();
        ctx.step(&format!("alice posts the {action} form without its _csrf"));
        let mut form = alice.decision_form(&grant, decision).await?;
        form.remove(fields::CSRF);
        let refused = alice.submit(&form).await?;
        expect_refused(ctx, &format!("{action} without _csrf"), &refused, 400)?;
        unchanged
            .expect(ctx, &format!("after {action} without _csrf"))
            .await?;
        let mut form = alice.decision_form(&grant, decision).await?;
        form.set(fields::CSRF, "");
        let refused = alice.submit(&form).await?;
        expect_refused(ctx, &format!("{action} with an empty _csrf"), &refused, 400)?;
        unchanged
            .expect(ctx, &format!("after {action} with an empty _csrf"))
            .await?;
        ctx.observe(&format!("{action} without _csrf"), &refused.status);
    }

    ctx.step("the untouched approve form still works");
    let approved = alice.approve(&grant).await?;
    expect_accepted(ctx, "approving", &approved)?;
    expect_grant(ctx, "after approving", &grant, state::ACTIVE, 3).await?;
    Ok(())
}
