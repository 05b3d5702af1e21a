//! Family 1, continued: what the browser surface refuses — a foreign or
//! expired `_csrf` (as a form field and as `X-Csrf-Token`, 400), a
//! stale `state_revision` (409), and a bot's credential however it is sent.
//! Every refusal leaves the APIs' view unchanged (the grant's state and
//! revision, the repository's Issues, the agent's grant count); each
//! scenario ends with the honest form succeeding.

use std::time::Duration;

use grantgate_engine::prelude::*;

use crate::support::flows::{LAB, LAB_BOT};
use crate::support::forms::{
    asks_sign_in, awaiting_human, csrf_of, expect_accepted, expect_refused, offers, prepare_form,
};
use crate::support::witnesses::{Unchanged, expect_grant};

/// A `_csrf` issued to another session is refused with 400, as a form field
/// and as `X-Csrf-Token`, and changes nothing.
#[scenario(Browser, parity, clauses = ["S4.csrf.refused", "S4.csrf.header"])]
async fn csrf_foreign_refused(ctx: &mut Ctx) -> Outcome {
    // Another session: the same human's second browser, or an anonymous one.
    let alice = ctx.human("alice")?;
    let elsewhere = ctx.second_browser("alice")?;
    let stranger = ctx.second_browser("alice")?;

    ctx.step("alice signs in twice, in two browsers; a third browser only opens the login page");
    alice.login().await?;
    elsewhere.login().await?;
    let login = stranger
        .open(core_api::LOGIN)
        .await?
        .form_with_field(fields::USER_NAME)?;
    let anonymous = csrf_of(&login)?;

    let grant = awaiting_human(ctx, &alice, "task").await?;
    let unchanged = Unchanged::take(ctx, &grant).await?;

    ctx.step("alice's browser posts the new-grant form with the other sessions' _csrf");
    let other = csrf_of(&prepare_form(&elsewhere, "x").await?)?;
    for (whose, token) in [
        ("alice's other session", &other),
        ("an anonymous session", &anonymous),
    ] {
        let mut form = prepare_form(&alice, "refused task").await?;
        form.set(fields::CSRF, token);
        let refused = alice.submit(&form).await?;
        expect_refused(
            ctx,
            &format!("preparing with {whose}'s _csrf"),
            &refused,
            400,
        )?;
        unchanged
            .expect(ctx, &format!("after preparing with {whose}'s _csrf"))
            .await?;
        let mut form = prepare_form(&alice, "refused task").await?;
        form.remove(fields::CSRF);
        let refused = alice
            .submit_with_headers(&form, &[(fields::CSRF_HEADER, token)])
            .await?;
        let what = format!("preparing with {whose}'s token as X-Csrf-Token");
        expect_refused(ctx, &what, &refused, 400)?;
        unchanged.expect(ctx, &format!("after {what}")).await?;
        ctx.observe(&format!("prepare, {whose}"), &refused.status);
    }

    for decision in [Decision::Approve, Decision::Withdraw] {
        let action = decision.segment();
        ctx.step(&format!(
            "alice's browser posts the {action} form with the other sessions' _csrf"
        ));
        let other = csrf_of(&elsewhere.decision_form(&grant, decision).await?)?;
        for (whose, token) in [
            ("alice's other session", &other),
            ("an anonymous session", &anonymous),
        ] {
            let mut form = alice.decision_form(&grant, decision).await?;
            form.set(fields::CSRF, token);
            let refused = alice.submit(&form).await?;
            let what = format!("{action} with {whose}'s _csrf");
            expect_refused(ctx, &what, &refused, 400)?;
            unchanged.expect(ctx, &format!("after {what}")).await?;
            let mut form = alice.decision_form(&grant, decision).await?;
            form.remove(fields::CSRF);
            let refused = alice
                .submit_with_headers(&form, &[(fields::CSRF_HEADER, token)])
                .await?;
            let what = format!("{action} with {whose}'s token as X-Csrf-Token");
            expect_refused(ctx, &what, &refused, 400)?;
            unchanged.expect(ctx, &format!("after {what}")).await?;
            ctx.observe(&format!("{action}, {whose}"), &refused.status);
        }
    }

    ctx.step("alice's own approve form, its token sent as X-Csrf-Token, still works");
    let mut form = alice.decision_form(&grant, Decision::Approve).await?;
    let own = csrf_of(&form)?;
    form.remove(fields::CSRF);
    let approved = alice
        .submit_with_headers(&form, &[(fields::CSRF_HEADER, &own)])
        .await?;
    expect_accepted(ctx, "approving", &approved)?;
    expect_grant(ctx, "after approving", &grant, state::ACTIVE, 3).await?;
    Ok(())
}

/// A `_csrf` older than the Core's token lifetime is refused with 400, as a
/// form field and as `X-Csrf-Token`, while a fresh form of the same session
/// works.
#[scenario(Browser, parity, core_env = [("CORE_CSRF_TTL_SECS", "3")], clauses = ["S4.csrf.refused", "S4.csrf.header"])]
async fn csrf_expired_refused(ctx: &mut Ctx) -> Outcome {
    // Nothing changes on a refusal. Relies on refcore's `CORE_CSRF_TTL_SECS`
    // launch extension, set to 3 s.
    let alice = ctx.human("alice")?;
    ctx.step("alice logs in");
    alice.login().await?;
    let grant = awaiting_human(ctx, &alice, "task").await?;
    let unchanged = Unchanged::take(ctx, &grant).await?;

    ctx.step("alice loads the new-grant, approve and withdraw forms, then waits past the lifetime");
    let prepare = prepare_form(&alice, "late task").await?;
    let approve = alice.decision_form(&grant, Decision::Approve).await?;
    let withdraw = alice.decision_form(&grant, Decision::Withdraw).await?;
    // The contract has no way to age a token on demand: refcore counts a
    // token as expired once its whole-second age exceeds the lifetime, so the
    // aged forms wait 4.2 s and every other form is posted well within 3 s.
    // A Core that does not declare the extension gets *not applicable*.
    ctx.wait_out(Duration::from_millis(4200)).await;

    ctx.step("alice posts the aged forms");
    let refused = alice.submit(&prepare).await?;
    expect_refused(ctx, "preparing with an expired _csrf", &refused, 400)?;
    unchanged
        .expect(ctx, "after preparing with an expired _csrf")
        .await?;
    ctx.observe("prepare, expired", &refused.status);
    for (action, form) in [("approve", &approve), ("withdraw", &withdraw)] {
        let refused = alice.submit(form).await?;
        let what = format!("{action} with an expired _csrf");
        expect_refused(ctx, &what, &refused, 400)?;
        unchanged.expect(ctx, &format!("after {what}")).await?;
        let token = csrf_of(form)?;
        let mut header_form = form.clone();
        header_form.remove(fields::CSRF);
        let refused = alice
            .submit_with_headers(&header_form, &[(fields::CSRF_HEADER, &token)])
            .await?;
        let what = format!("{action} with an expired X-Csrf-Token");
        expect_refused(ctx, &what, &refused, 400)?;
        unchanged.expect(ctx, &format!("after {what}")).await?;
        ctx.observe(&format!("{action}, expired"), &refused.status);
    }

    ctx.step("a fresh approve form of the same session still works");
    let approved = alice.approve(&grant).await?;
    expect_accepted(ctx, "approving", &approved)?;
    expect_grant(ctx, "after approving", &grant, state::ACTIVE, 3).await?;
    Ok(())
}

/// An approve or withdraw form with a stale `state_revision` is refused with
/// 409 and changes nothing, even when the grant's state allows the action.
#[scenario(Browser, parity, clauses = ["S4.stale", "S2.revision"])]
async fn stale_revision_refused(ctx: &mut Ctx) -> Outcome {
    // The page's wording is the Core's own.
    let alice = ctx.human("alice")?;
    let elsewhere = ctx.second_browser("alice")?;
    ctx.step("alice logs in in two browsers and prepares a grant for lab-bot");
    alice.login().await?;
    elsewhere.login().await?;
    let (grant, _) = alice.prepare_grant(LAB, LAB_BOT, "task", "summary").await?;

    ctx.step("alice loads the withdraw form at revision 1; lab-bot then confirms");
    let stale_withdraw = alice.decision_form(&grant, Decision::Withdraw).await?;
    ctx.expect_eq(
        "the form carries revision 1",
        stale_withdraw.field(fields::STATE_REVISION),
        Some("1"),
    )?;
    let bot = ctx.bot(LAB_BOT).await?;
    let proposal = bot.read_proposal(&grant).await?;
    let confirmed = bot.confirm(&grant, &proposal).await?;
    ctx.expect_tool_ok("lab-bot confirms", &confirmed)?;
    expect_grant(ctx, "after confirming", &grant, state::AWAITING_HUMAN, 2).await?;

    ctx.step("alice posts the stale withdraw form (withdraw is still allowed)");
    let unchanged = Unchanged::take(ctx, &grant).await?;
    let refused = alice.submit(&stale_withdraw).await?;
    expect_refused(ctx, "stale withdraw", &refused, 409)?;
    unchanged.expect(ctx, "after the stale withdraw").await?;
    ctx.observe("stale withdraw at awaiting_human", &refused.status);

    ctx.step("alice posts the approve form with its revision set back to 1");
    let mut form = alice.decision_form(&grant, Decision::Approve).await?;
    ctx.expect_eq(
        "the form carries revision 2",
        form.field(fields::STATE_REVISION),
        Some("2"),
    )?;
    form.set(fields::STATE_REVISION, "1");
    let refused = alice.submit(&form).await?;
    expect_refused(ctx, "stale approve", &refused, 409)?;
    unchanged.expect(ctx, "after the stale approve").await?;
    ctx.observe("stale approve", &refused.status);

    ctx.step("the second browser loads withdraw at revision 2; alice approves in the first");
    let stale_withdraw = elsewhere.decision_form(&grant, Decision::Withdraw).await?;
    let approved = alice.approve(&grant).await?;
    expect_accepted(ctx, "approving", &approved)?;
    expect_grant(ctx, "after approving", &grant, state::ACTIVE, 3).await?;

    ctx.step("the second browser posts its stale withdraw form (withdraw is still allowed)");
    let unchanged = Unchanged::take(ctx, &grant).await?;
    let refused = elsewhere.submit(&stale_withdraw).await?;
    expect_refused(ctx, "stale withdraw", &refused, 409)?;
    unchanged.expect(ctx, "after the stale withdraw").await?;
    ctx.observe("stale withdraw at active", &refused.status);

    ctx.step("a fresh withdraw form still works");
    let withdrawn = elsewhere.withdraw(&grant).await?;
    expect_accepted(ctx, "withdrawing", &withdrawn)?;
    expect_grant(ctx, "after withdrawing", &grant, state::REVOKED, 4).await?;
    Ok(())
}

/// A bot, even an admin of the repository, cannot sign in through the login
/// form, and its credentials never open a grant page or approve or withdraw.
#[scenario(Browser, parity, clauses = ["S1.bots-no-browser", "S4.no-bot-credential"])]
async fn bot_token_cannot_drive_browser(ctx: &mut Ctx) -> Outcome {
    // Its token or password is sent in an `Authorization` header.
    let alice = ctx.human("alice")?;
    ctx.step("alice logs in and makes lab-bot an admin of alice/lab, so only the surface stops it");
    alice.login().await?;
    ctx.setup().add_collaborator(LAB, LAB_BOT, "admin").await?;
    let grant = awaiting_human(ctx, &alice, "task").await?;
    let unchanged = Unchanged::take(ctx, &grant).await?;

    ctx.step("lab-bot tries the login form with its own login and password");
    let bot_browser = ctx.bot_browser(LAB_BOT)?;
    let landed = bot_browser.login().await?;
    ctx.expect(
        "the login is not accepted (no 303 to /)",
        !landed
            .first_redirect()
            .is_some_and(|(status, to)| status == 303 && to.path() == "/"),
        &landed.arrival(),
    )?;
    let page = bot_browser.grant_page(&grant).await?;
    expect_not_shown(
        ctx,
        &alice,
        "lab-bot's browser after the login attempt",
        &page,
        &grant,
    )?;
    ctx.observe("bot login", &landed.status);

    let headers = ctx.tokens().bot_authorization_headers(LAB_BOT)?;
    let kinds = [
        "token",
        "Bearer",
        "Basic login:token",
        "Basic login:password",
    ];
    // A browser of its own with an anonymous session, so its `_csrf` is
    // valid: only the missing sign-in can refuse it.
    let anonymous = ctx.bot_browser(LAB_BOT)?;
    for (kind, value) in kinds.iter().zip(&headers) {
        ctx.step(&format!(
            "lab-bot sends its credential ({kind}) to the grant page and its forms"
        ));
        let auth = [("Authorization", value.as_str())];
        let open = Form::new("GET", alice.url(&core_api::grant_page(&grant))?, Vec::new());
        let page = anonymous.submit_with_headers(&open, &auth).await?;
        expect_not_shown(
            ctx,
            &alice,
            &format!("the grant page with {kind}"),
            &page,
            &grant,
        )?;

        let login = anonymous
            .open(core_api::LOGIN)
            .await?
            .form_with_field(fields::USER_NAME)?;
        let csrf = csrf_of(&login)?;
        for decision in [Decision::Approve, Decision::Withdraw] {
            let action = decision.segment();
            let mut form = alice.decision_form(&grant, decision).await?;
            form.set(fields::CSRF, &csrf);
            let answer = anonymous.submit_with_headers(&form, &auth).await?;
            expect_not_shown(
                ctx,
                &alice,
                &format!("{action} with {kind}"),
                &answer,
                &grant,
            )?;
            unchanged
                .expect(ctx, &format!("after {action} with {kind}"))
                .await?;
            ctx.observe(&format!("{action} with {kind}"), &answer.status);
        }
    }

    ctx.step("alice, signed in, still approves through the form");
    let approved = alice.approve(&grant).await?;
    expect_accepted(ctx, "approving", &approved)?;
    expect_grant(ctx, "after approving", &grant, state::ACTIVE, 3).await?;
    Ok(())
}

/// Checks that `page` is not the grant's page shown to a signed-in admin:
/// not a 200 at the grant's path, and no approve or withdraw form.
fn expect_not_shown(
    ctx: &Ctx,
    human: &Human,
    what: &str,
    page: &Page,
    grant: &GrantRef,
) -> Step<()> {
    let forms = offers(human, page, grant, Decision::Approve)?
        || offers(human, page, grant, Decision::Withdraw)?;
    let shown =
        page.status == 200 && page.url.path() == core_api::grant_page(grant) && !asks_sign_in(page);
    ctx.expect(
        &format!("{what}: not treated as signed in"),
        !shown && !forms,
        &format!(
            "{}, grant forms {}",
            page.arrival(),
            if forms { "present" } else { "absent" }
        ),
    )
}
