//! Family 1: the browser surface — login, the real forms, CSRF and
//! stale-revision refusals, and a bot's credentials kept out of it.
//!
//! Every refusal is checked twice: the answer (400 for a bad `_csrf`, 409 for
//! a stale `state_revision`) and the ground truth afterwards — the grant's
//! state and revision as its agent reads them natively, and the number of
//! grants, so that a refused preparation is seen to create nothing. Each
//! refusal scenario ends with the honest form succeeding, which proves the
//! refusal came from the tampered field and not from a broken session.

use std::time::Duration;

use crate::actors::{Form, GrantRef, Human, Page};
use crate::ctx::Ctx;
use crate::runner::catalogue::Scenario;
use crate::runner::outcome::{Abort, Outcome, Step};

/// This family's scenarios, in catalogue order.
pub fn scenarios() -> Vec<Scenario> {
    vec![
        Scenario {
            id: "browser_forms_prepare_approve_withdraw",
            family: "1 browser",
            claim: "A human logs in through the login form and prepares, approves and withdraws \
                    grants through the real forms of the grant pages, each form changing the \
                    grant exactly as its agent then reads it natively.",
            fixture: "lab",
            core_env: &[],
            parity: true,
            run: |ctx| Box::pin(browser_forms_prepare_approve_withdraw(ctx)),
        },
        Scenario {
            id: "csrf_missing_refused",
            family: "1 browser",
            claim: "A login, preparation, approval or withdrawal posted without its `_csrf` (or \
                    with an empty one) is refused with 400 and changes nothing: no session, no \
                    grant, the same state and state_revision.",
            fixture: "lab",
            core_env: &[],
            parity: true,
            run: |ctx| Box::pin(csrf_missing_refused(ctx)),
        },
        Scenario {
            id: "csrf_foreign_refused",
            family: "1 browser",
            claim: "A `_csrf` issued to another session — the same human's second browser or an \
                    anonymous one — is refused with 400 as a form field and as `X-Csrf-Token`, \
                    and changes nothing.",
            fixture: "lab",
            core_env: &[],
            parity: true,
            run: |ctx| Box::pin(csrf_foreign_refused(ctx)),
        },
        Scenario {
            id: "csrf_expired_refused",
            family: "1 browser",
            claim: "A `_csrf` older than the Core's token lifetime is refused with 400 as a form \
                    field and as `X-Csrf-Token`, and changes nothing, while a fresh form of the \
                    same session still works (relies on refcore's `CORE_CSRF_TTL_SECS` launch \
                    extension, set to 3 s).",
            fixture: "lab",
            core_env: &[("CORE_CSRF_TTL_SECS", "3")],
            parity: true,
            run: |ctx| Box::pin(csrf_expired_refused(ctx)),
        },
        Scenario {
            id: "stale_revision_refused",
            family: "1 browser",
            claim: "An approve or withdraw form whose `state_revision` is stale is refused with a \
                    409 page saying the grant changed, and changes nothing, even when the action \
                    is still allowed in the grant's current state.",
            fixture: "lab",
            core_env: &[],
            parity: true,
            run: |ctx| Box::pin(stale_revision_refused(ctx)),
        },
        Scenario {
            id: "bot_token_cannot_drive_browser",
            family: "1 browser",
            claim: "A bot — even one with admin rights on the repository — cannot sign in through \
                    the login form, and its token or password in an `Authorization` header never \
                    opens a grant page or approves or withdraws a grant.",
            fixture: "lab",
            core_env: &[],
            parity: true,
            run: |ctx| Box::pin(bot_token_cannot_drive_browser(ctx)),
        },
    ]
}

const REPO: &str = "alice/lab";
const AGENT: &str = "lab-bot";

/// The grant's `(state, state_revision)` as its agent reads it natively right
/// now: the ground truth for "nothing changed" after a refusal.
pub async fn native_state(ctx: &Ctx, agent: &str, grant: &GrantRef) -> Step<(String, i64)> {
    let answer = ctx.native(agent)?.get_grant(grant).await?;
    ctx.expect_status("the agent reads the grant natively", answer.status, 200)?;
    let g = answer.json()?;
    match (g["state"].as_str(), g["state_revision"].as_i64()) {
        (Some(state), Some(revision)) => Ok((state.to_owned(), revision)),
        _ => Err(Abort::failed(format!(
            "grant {} has no state or state_revision: {g}",
            grant.id
        ))),
    }
}

/// How many grants `agent` has in any state (`state=all`), from the native
/// list's `X-Total-Count`: what a refused preparation must leave unchanged.
pub async fn grant_total(ctx: &Ctx, agent: &str) -> Step<i64> {
    let answer = ctx.native(agent)?.list_grants("state=all").await?;
    ctx.expect_status("the agent lists its grants natively", answer.status, 200)?;
    answer
        .header("x-total-count")
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| Abort::failed("the grant list has no numeric X-Total-Count"))
}

/// Checks that the grant is still `(state, revision)`.
async fn expect_unchanged(
    ctx: &Ctx,
    what: &str,
    grant: &GrantRef,
    state: &str,
    revision: i64,
) -> Step<()> {
    let now = native_state(ctx, AGENT, grant).await?;
    ctx.expect_eq(
        &format!("{what}: the grant's state and revision are unchanged"),
        (now.0.as_str(), now.1),
        (state, revision),
    )
}

/// Checks a refused POST: the final answer is `status` with no redirect.
fn expect_refused(ctx: &Ctx, what: &str, page: &Page, status: u16) -> Step<()> {
    ctx.expect_eq(
        &format!("{what}: refused with {status}, no redirect"),
        (page.status, page.redirects.len()),
        (status, 0),
    )
}

/// Checks a form that worked: the browser lands on the grant's page.
fn expect_lands_on_grant(ctx: &Ctx, what: &str, page: &Page, grant: &GrantRef) -> Step<()> {
    ctx.expect_eq(
        &format!("{what}: lands on the grant's page"),
        (page.status, page.url.path()),
        (200, grant.page_path().as_str()),
    )
}

/// The "new grant" form of alice/lab, filled for lab-bot.
async fn prepare_form(human: &Human, task: &str) -> Step<Form> {
    let page = human.open("/alice/lab/agent-work-grants/new").await?;
    let mut form = page.form("form:has([name=\"task\"])")?;
    form.set("agent", AGENT)
        .set("task", task)
        .set("summary", "summary");
    Ok(form)
}

/// alice prepares a grant and lab-bot confirms it: `awaiting_human`, rev 2.
async fn awaiting_human(ctx: &mut Ctx, alice: &Human, task: &str) -> Step<GrantRef> {
    ctx.step("alice prepares a grant for lab-bot, which confirms it");
    let (grant, _) = alice.prepare_grant(REPO, AGENT, task, "summary").await?;
    let bot = ctx.bot(AGENT).await?;
    let proposal = bot.read_proposal(&grant).await?;
    let confirmed = bot.confirm(&grant, &proposal).await?;
    ctx.expect_tool_ok("lab-bot confirms", &confirmed)?;
    expect_unchanged(ctx, "after confirming", &grant, "awaiting_human", 2).await?;
    Ok(grant)
}

/// Login, prepare, approve and withdraw through the real forms.
pub async fn browser_forms_prepare_approve_withdraw(ctx: &mut Ctx) -> Outcome {
    let alice = ctx.human("alice")?;

    ctx.step("alice logs in through the login form");
    let home = alice.login().await?;
    ctx.expect_eq(
        "login answers 303 to /",
        home.redirects.first().map(|(s, l)| (*s, l.as_str())),
        Some((303, "/")),
    )?;
    ctx.expect_eq(
        "the home page opens",
        (home.status, home.url.path()),
        (200, "/"),
    )?;

    ctx.step("alice prepares two grants for lab-bot through the new-grant form");
    let (first, page) = alice
        .prepare_grant(REPO, AGENT, "first task", "summary")
        .await?;
    ctx.expect_eq(
        "preparing answers 303",
        page.redirects.first().map(|(s, _)| *s),
        Some(303),
    )?;
    expect_lands_on_grant(ctx, "preparing", &page, &first)?;
    let (second, _) = alice
        .prepare_grant(REPO, AGENT, "second task", "summary")
        .await?;
    ctx.expect(
        "the two grants are distinct",
        first.id != second.id,
        &format!("{} and {}", first.id, second.id),
    )?;
    expect_unchanged(
        ctx,
        "first grant once prepared",
        &first,
        "awaiting_agent",
        1,
    )
    .await?;
    ctx.expect(
        "an unconfirmed grant's page offers withdraw but not approve",
        page.has(&format!("form[action$=\"/{}/withdraw\"]", first.id))?
            && !page.has(&format!("form[action$=\"/{}/approve\"]", first.id))?,
        "forms on the page of an awaiting_agent grant",
    )?;

    ctx.step("lab-bot confirms the first grant; alice approves it through the approve form");
    let bot = ctx.bot(AGENT).await?;
    let proposal = bot.read_proposal(&first).await?;
    let confirmed = bot.confirm(&first, &proposal).await?;
    ctx.expect_tool_ok("lab-bot confirms", &confirmed)?;
    let approved = alice.approve(&first).await?;
    expect_lands_on_grant(ctx, "approving", &approved, &first)?;
    let state = native_state(ctx, AGENT, &first).await?;
    ctx.expect_eq("approved grant", (state.0.as_str(), state.1), ("active", 3))?;
    ctx.expect(
        "an active grant's page offers withdraw and no longer approve",
        approved.has(&format!("form[action$=\"/{}/withdraw\"]", first.id))?
            && !approved.has(&format!("form[action$=\"/{}/approve\"]", first.id))?,
        "forms on the page of an active grant",
    )?;
    ctx.observe("approved", &state);

    ctx.step("alice withdraws the active grant through the withdraw form");
    let withdrawn = alice.withdraw(&first).await?;
    expect_lands_on_grant(ctx, "withdrawing", &withdrawn, &first)?;
    let state = native_state(ctx, AGENT, &first).await?;
    ctx.expect_eq(
        "withdrawn grant",
        (state.0.as_str(), state.1),
        ("revoked", 4),
    )?;
    ctx.expect(
        "a revoked grant's page offers neither form",
        !withdrawn.has(&format!("form[action$=\"/{}/withdraw\"]", first.id))?
            && !withdrawn.has(&format!("form[action$=\"/{}/approve\"]", first.id))?,
        "forms on the page of a revoked grant",
    )?;
    ctx.observe("withdrawn from active", &state);

    ctx.step("alice withdraws the unconfirmed second grant through the withdraw form");
    let withdrawn = alice.withdraw(&second).await?;
    expect_lands_on_grant(ctx, "withdrawing", &withdrawn, &second)?;
    let state = native_state(ctx, AGENT, &second).await?;
    ctx.expect_eq(
        "withdrawn grant",
        (state.0.as_str(), state.1),
        ("revoked", 2),
    )?;
    ctx.observe("withdrawn from awaiting_agent", &state);
    Ok(())
}

/// Forms posted without their `_csrf` are refused and change nothing.
pub async fn csrf_missing_refused(ctx: &mut Ctx) -> Outcome {
    let alice = ctx.human("alice")?;

    ctx.step("alice posts the login form without its _csrf");
    let mut form = alice.login_form().await?;
    form.remove("_csrf");
    let refused = alice.submit(&form).await?;
    expect_refused(ctx, "login without _csrf", &refused, 400)?;
    let probe = alice.open("/alice/lab/agent-work-grants/new").await?;
    ctx.expect(
        "alice is not signed in: the new-grant form does not open",
        !probe.has("form:has([name=\"task\"])")?,
        &format!("status {} at {}", probe.status, probe.url.path()),
    )?;
    ctx.observe("login without _csrf", &refused.status);

    ctx.step("alice logs in properly and posts the new-grant form without its _csrf");
    alice.login().await?;
    let before = grant_total(ctx, AGENT).await?;
    let mut form = prepare_form(&alice, "refused task").await?;
    form.remove("_csrf");
    let refused = alice.submit(&form).await?;
    expect_refused(ctx, "preparing without _csrf", &refused, 400)?;
    ctx.expect_eq(
        "no grant was prepared",
        grant_total(ctx, AGENT).await?,
        before,
    )?;
    let mut form = prepare_form(&alice, "refused task").await?;
    form.set("_csrf", "");
    let refused = alice.submit(&form).await?;
    expect_refused(ctx, "preparing with an empty _csrf", &refused, 400)?;
    ctx.expect_eq(
        "no grant was prepared",
        grant_total(ctx, AGENT).await?,
        before,
    )?;
    ctx.observe("prepare without _csrf", &refused.status);

    let grant = awaiting_human(ctx, &alice, "task").await?;

    for action in ["approve", "withdraw"] {
        ctx.step(&format!("alice posts the {action} form without its _csrf"));
        let mut form = alice.grant_form(&grant, action).await?;
        form.remove("_csrf");
        let refused = alice.submit(&form).await?;
        expect_refused(ctx, &format!("{action} without _csrf"), &refused, 400)?;
        expect_unchanged(ctx, action, &grant, "awaiting_human", 2).await?;
        let mut form = alice.grant_form(&grant, action).await?;
        form.set("_csrf", "");
        let refused = alice.submit(&form).await?;
        expect_refused(ctx, &format!("{action} with an empty _csrf"), &refused, 400)?;
        expect_unchanged(ctx, action, &grant, "awaiting_human", 2).await?;
        ctx.observe(&format!("{action} without _csrf"), &refused.status);
    }

    ctx.step("the untouched approve form still works");
    let approved = alice.approve(&grant).await?;
    expect_lands_on_grant(ctx, "approving", &approved, &grant)?;
    expect_unchanged(ctx, "after approving", &grant, "active", 3).await?;
    Ok(())
}

/// `_csrf` tokens of other sessions are refused, as field and as header.
pub async fn csrf_foreign_refused(ctx: &mut Ctx) -> Outcome {
    let alice = ctx.human("alice")?;
    let elsewhere = ctx.second_browser("alice")?;
    let stranger = ctx.second_browser("alice")?;

    ctx.step("alice signs in twice, in two browsers; a third browser only opens the login page");
    alice.login().await?;
    elsewhere.login().await?;
    let anonymous = stranger
        .open("/user/login")
        .await?
        .form("form:has(input[name=\"user_name\"])")?;
    let anonymous = csrf_of(&anonymous)?;

    let grant = awaiting_human(ctx, &alice, "task").await?;
    let before = grant_total(ctx, AGENT).await?;

    ctx.step("alice's browser posts the new-grant form with the other sessions' _csrf");
    let other = csrf_of(&prepare_form(&elsewhere, "x").await?)?;
    for (whose, token) in [
        ("alice's other session", &other),
        ("an anonymous session", &anonymous),
    ] {
        let mut form = prepare_form(&alice, "refused task").await?;
        form.set("_csrf", token);
        let refused = alice.submit(&form).await?;
        expect_refused(
            ctx,
            &format!("preparing with {whose}'s _csrf"),
            &refused,
            400,
        )?;
        let mut form = prepare_form(&alice, "refused task").await?;
        form.remove("_csrf");
        let refused = alice
            .submit_with_headers(&form, &[("X-Csrf-Token", token)])
            .await?;
        expect_refused(
            ctx,
            &format!("preparing with {whose}'s token as X-Csrf-Token"),
            &refused,
            400,
        )?;
        ctx.expect_eq(
            "no grant was prepared",
            grant_total(ctx, AGENT).await?,
            before,
        )?;
        ctx.observe(&format!("prepare, {whose}"), &refused.status);
    }

    for action in ["approve", "withdraw"] {
        ctx.step(&format!(
            "alice's browser posts the {action} form with the other sessions' _csrf"
        ));
        let other = csrf_of(&elsewhere.grant_form(&grant, action).await?)?;
        for (whose, token) in [
            ("alice's other session", &other),
            ("an anonymous session", &anonymous),
        ] {
            let mut form = alice.grant_form(&grant, action).await?;
            form.set("_csrf", token);
            let refused = alice.submit(&form).await?;
            expect_refused(
                ctx,
                &format!("{action} with {whose}'s _csrf"),
                &refused,
                400,
            )?;
            expect_unchanged(ctx, action, &grant, "awaiting_human", 2).await?;
            let mut form = alice.grant_form(&grant, action).await?;
            form.remove("_csrf");
            let refused = alice
                .submit_with_headers(&form, &[("X-Csrf-Token", token)])
                .await?;
            expect_refused(
                ctx,
                &format!("{action} with {whose}'s token as X-Csrf-Token"),
                &refused,
                400,
            )?;
            expect_unchanged(ctx, action, &grant, "awaiting_human", 2).await?;
            ctx.observe(&format!("{action}, {whose}"), &refused.status);
        }
    }

    ctx.step("alice's own approve form, its token sent as X-Csrf-Token, still works");
    let mut form = alice.grant_form(&grant, "approve").await?;
    let own = csrf_of(&form)?;
    form.remove("_csrf");
    let approved = alice
        .submit_with_headers(&form, &[("X-Csrf-Token", &own)])
        .await?;
    expect_lands_on_grant(ctx, "approving", &approved, &grant)?;
    expect_unchanged(ctx, "after approving", &grant, "active", 3).await?;
    Ok(())
}

/// The `_csrf` a form carries; a form without one breaks spec §4.
fn csrf_of(form: &Form) -> Step<String> {
    form.field("_csrf")
        .filter(|v| !v.is_empty())
        .map(str::to_owned)
        .ok_or_else(|| Abort::failed(format!("the form posting to {} has no _csrf", form.action)))
}

/// Tokens older than the Core's lifetime are refused; fresh ones work.
///
/// The contract has no way to age a token on demand: this relies on
/// refcore's `CORE_CSRF_TTL_SECS` launch extension, here 3 s. refcore counts
/// a token as expired once its whole-second age exceeds the lifetime, so the
/// aged forms wait 4.2 s and every other form is posted well within 3 s. A
/// foreign Core must offer an equivalent setting (or honour this one) for
/// this trial to prove anything; without one its tokens outlive the wait and
/// the trial fails.
pub async fn csrf_expired_refused(ctx: &mut Ctx) -> Outcome {
    let alice = ctx.human("alice")?;
    ctx.step("alice logs in");
    alice.login().await?;
    let grant = awaiting_human(ctx, &alice, "task").await?;
    let before = grant_total(ctx, AGENT).await?;

    ctx.step("alice loads the new-grant, approve and withdraw forms, then waits past the lifetime");
    let prepare = prepare_form(&alice, "late task").await?;
    let approve = alice.grant_form(&grant, "approve").await?;
    let withdraw = alice.grant_form(&grant, "withdraw").await?;
    tokio::time::sleep(Duration::from_millis(4200)).await;

    ctx.step("alice posts the aged forms");
    let refused = alice.submit(&prepare).await?;
    expect_refused(ctx, "preparing with an expired _csrf", &refused, 400)?;
    ctx.expect_eq(
        "no grant was prepared",
        grant_total(ctx, AGENT).await?,
        before,
    )?;
    ctx.observe("prepare, expired", &refused.status);
    for (action, form) in [("approve", &approve), ("withdraw", &withdraw)] {
        let refused = alice.submit(form).await?;
        expect_refused(
            ctx,
            &format!("{action} with an expired _csrf"),
            &refused,
            400,
        )?;
        expect_unchanged(ctx, action, &grant, "awaiting_human", 2).await?;
        let token = csrf_of(form)?;
        let mut header_form = form.clone();
        header_form.remove("_csrf");
        let refused = alice
            .submit_with_headers(&header_form, &[("X-Csrf-Token", &token)])
            .await?;
        expect_refused(
            ctx,
            &format!("{action} with an expired X-Csrf-Token"),
            &refused,
            400,
        )?;
        expect_unchanged(ctx, action, &grant, "awaiting_human", 2).await?;
        ctx.observe(&format!("{action}, expired"), &refused.status);
    }

    ctx.step("a fresh approve form of the same session still works");
    let approved = alice.approve(&grant).await?;
    expect_lands_on_grant(ctx, "approving", &approved, &grant)?;
    expect_unchanged(ctx, "after approving", &grant, "active", 3).await?;
    Ok(())
}

/// Forms carrying an outdated `state_revision` are refused with 409.
pub async fn stale_revision_refused(ctx: &mut Ctx) -> Outcome {
    let alice = ctx.human("alice")?;
    let elsewhere = ctx.second_browser("alice")?;
    ctx.step("alice logs in in two browsers and prepares a grant for lab-bot");
    alice.login().await?;
    elsewhere.login().await?;
    let (grant, _) = alice.prepare_grant(REPO, AGENT, "task", "summary").await?;

    ctx.step("alice loads the withdraw form at revision 1; lab-bot then confirms");
    let stale_withdraw = alice.grant_form(&grant, "withdraw").await?;
    ctx.expect_eq(
        "the form carries revision 1",
        stale_withdraw.field("state_revision"),
        Some("1"),
    )?;
    let bot = ctx.bot(AGENT).await?;
    let proposal = bot.read_proposal(&grant).await?;
    let confirmed = bot.confirm(&grant, &proposal).await?;
    ctx.expect_tool_ok("lab-bot confirms", &confirmed)?;

    ctx.step("alice posts the stale withdraw form (withdraw is still allowed)");
    let refused = alice.submit(&stale_withdraw).await?;
    expect_stale(ctx, "stale withdraw", &refused)?;
    expect_unchanged(ctx, "stale withdraw", &grant, "awaiting_human", 2).await?;
    ctx.observe("stale withdraw at awaiting_human", &refused.status);

    ctx.step("alice posts the approve form with its revision set back to 1");
    let mut form = alice.grant_form(&grant, "approve").await?;
    ctx.expect_eq(
        "the form carries revision 2",
        form.field("state_revision"),
        Some("2"),
    )?;
    form.set("state_revision", "1");
    let refused = alice.submit(&form).await?;
    expect_stale(ctx, "stale approve", &refused)?;
    expect_unchanged(ctx, "stale approve", &grant, "awaiting_human", 2).await?;
    ctx.observe("stale approve", &refused.status);

    ctx.step("the second browser loads withdraw at revision 2; alice approves in the first");
    let stale_withdraw = elsewhere.grant_form(&grant, "withdraw").await?;
    let approved = alice.approve(&grant).await?;
    expect_lands_on_grant(ctx, "approving", &approved, &grant)?;
    expect_unchanged(ctx, "after approving", &grant, "active", 3).await?;

    ctx.step("the second browser posts its stale withdraw form (withdraw is still allowed)");
    let refused = elsewhere.submit(&stale_withdraw).await?;
    expect_stale(ctx, "stale withdraw", &refused)?;
    expect_unchanged(ctx, "stale withdraw", &grant, "active", 3).await?;
    ctx.observe("stale withdraw at active", &refused.status);

    ctx.step("a fresh withdraw form still works");
    let withdrawn = elsewhere.withdraw(&grant).await?;
    expect_lands_on_grant(ctx, "withdrawing", &withdrawn, &grant)?;
    expect_unchanged(ctx, "after withdrawing", &grant, "revoked", 4).await?;
    Ok(())
}

/// A stale form's answer: 409 with a page saying the grant changed.
fn expect_stale(ctx: &Ctx, what: &str, page: &Page) -> Step<()> {
    expect_refused(ctx, what, page, 409)?;
    ctx.expect(
        &format!("{what}: the page says the grant changed"),
        page.html.to_lowercase().contains("changed"),
        &crate::journal::truncate(&page.html),
    )
}

/// A bot's credentials never reach the browser surface.
pub async fn bot_token_cannot_drive_browser(ctx: &mut Ctx) -> Outcome {
    let alice = ctx.human("alice")?;
    ctx.step("alice logs in and makes lab-bot an admin of alice/lab, so only the surface stops it");
    alice.login().await?;
    ctx.setup().add_collaborator(REPO, AGENT, "admin").await?;
    let grant = awaiting_human(ctx, &alice, "task").await?;

    ctx.step("lab-bot tries the login form with its own login and password");
    let bot_browser = ctx.bot_browser(AGENT)?;
    let landed = bot_browser.login().await?;
    ctx.expect(
        "the login is not accepted (no 303 to /)",
        !landed
            .redirects
            .first()
            .is_some_and(|(s, l)| *s == 303 && l == "/"),
        &format!(
            "status {} at {} after {:?}",
            landed.status,
            landed.url.path(),
            landed.redirects
        ),
    )?;
    let page = bot_browser.grant_page(&grant).await?;
    expect_not_shown(
        ctx,
        "lab-bot's browser after the login attempt",
        &page,
        &grant,
    )?;
    ctx.observe("bot login", &landed.status);

    let headers = ctx.bot_authorization_headers(AGENT)?;
    let kinds = [
        "token",
        "Bearer",
        "Basic login:token",
        "Basic login:password",
    ];
    // A browser of its own with an anonymous session, so its `_csrf` is
    // valid: only the missing sign-in can refuse it.
    let anonymous = ctx.bot_browser(AGENT)?;
    for (kind, value) in kinds.iter().zip(&headers) {
        ctx.step(&format!(
            "lab-bot sends its credential ({kind}) to the grant page and its forms"
        ));
        let auth = [("Authorization", value.as_str())];
        let open = Form {
            method: "GET".into(),
            action: alice.url(&grant.page_path())?,
            fields: Vec::new(),
        };
        let page = anonymous.submit_with_headers(&open, &auth).await?;
        expect_not_shown(ctx, &format!("the grant page with {kind}"), &page, &grant)?;

        let login = anonymous
            .open("/user/login")
            .await?
            .form("form:has(input[name=\"user_name\"])")?;
        let csrf = csrf_of(&login)?;
        for action in ["approve", "withdraw"] {
            let mut form = alice.grant_form(&grant, action).await?;
            form.set("_csrf", &csrf);
            let answer = anonymous.submit_with_headers(&form, &auth).await?;
            expect_not_shown(ctx, &format!("{action} with {kind}"), &answer, &grant)?;
            expect_unchanged(
                ctx,
                &format!("{action} with {kind}"),
                &grant,
                "awaiting_human",
                2,
            )
            .await?;
            ctx.observe(&format!("{action} with {kind}"), &answer.status);
        }
    }

    ctx.step("alice, signed in, still approves through the form");
    let approved = alice.approve(&grant).await?;
    expect_lands_on_grant(ctx, "approving", &approved, &grant)?;
    expect_unchanged(ctx, "after approving", &grant, "active", 3).await?;
    Ok(())
}

/// Checks that `page` is not the grant's page shown to a signed-in admin:
/// not a 200 at the grant's path, and no approve or withdraw form.
fn expect_not_shown(ctx: &Ctx, what: &str, page: &Page, grant: &GrantRef) -> Step<()> {
    let forms = page.has(&format!("form[action$=\"/{}/approve\"]", grant.id))?
        || page.has(&format!("form[action$=\"/{}/withdraw\"]", grant.id))?;
    let shown = page.status == 200 && page.url.path() == grant.page_path();
    ctx.expect(
        &format!("{what}: not treated as signed in"),
        !shown && !forms,
        &format!(
            "status {} at {} after {:?}, grant forms {}",
            page.status,
            page.url.path(),
            page.redirects,
            if forms { "present" } else { "absent" }
        ),
    )
}
