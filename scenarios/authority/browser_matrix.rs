//! Family 12, the browser's authority matrix (issue #27 §3): every page and
//! form of spec §4 and §9's consent decision, asked by every class of
//! caller — no session, a stranger, a reader, a writer, the owner, the site
//! admin and a bot's credential — each with a valid `_csrf` of its own
//! session, so only who asks decides; then approve and withdraw in every
//! grant state with the current and a stale `state_revision`. The CSRF
//! classes of every form are in `browser/csrf_matrix.rs`.
//!
//! Each trial collects its answers in one table (a wrong answer is listed,
//! not fatal) and reads what changed through the APIs only: the grants'
//! state and revision as their agent reads them, the repository's Issues,
//! the agent's grant count, a session still or no longer signed in, a
//! consent redirect carrying a code or not.

use grantgate_engine::prelude::*;

use crate::support::consent::{REDIRECT, consent_url, delivers_code, hands_back};
use crate::support::flows::confirm;
use crate::support::flows::{self, LAB, LAB_BOT};
use crate::support::forms::{accepted, asks_sign_in};
use crate::support::forms::{hand_form, seen, signed_in};
use crate::support::tables::Table;
use crate::support::witnesses::Unchanged;

/// The fields of a preparation for lab-bot.
fn prepare_fields(task: &str) -> Vec<(&'static str, String)> {
    vec![
        (fields::AGENT, LAB_BOT.to_owned()),
        (fields::TASK, task.to_owned()),
        (fields::SUMMARY, "summary".to_owned()),
    ]
}

/// The rows of the matrix: the pages and forms of spec §4 that name a
/// repository or a grant.
#[derive(Clone, Copy, PartialEq)]
enum Row {
    List,
    New,
    GrantPage,
    Prepare,
    Approve,
    Withdraw,
}

impl Row {
    const ALL: [Row; 6] = [
        Row::List,
        Row::New,
        Row::GrantPage,
        Row::Prepare,
        Row::Approve,
        Row::Withdraw,
    ];

    fn name(self) -> &'static str {
        match self {
            Row::List => "GET list page",
            Row::New => "GET new page",
            Row::GrantPage => "GET grant page",
            Row::Prepare => "POST prepare",
            Row::Approve => "POST approve",
            Row::Withdraw => "POST withdraw",
        }
    }

    /// Whether the row names a grant (its existence is then not leaked).
    fn grant_scoped(self) -> bool {
        matches!(self, Row::GrantPage | Row::Approve | Row::Withdraw)
    }
}

/// How spec §4 refuses a caller who is not a repository admin.
#[derive(Clone, Copy, PartialEq)]
enum Refusal {
    /// No signed-in human (no session, or only a bot's credential): the
    /// Core asks to sign in (a redirect or the form in place, its own
    /// choice) or answers 4xx; never the page.
    SignedOut,
    /// Signed in, the private repository invisible: 404 (§1).
    Invisible,
    /// Signed in, the repository visible but not administered: a grant is
    /// not visible to them, so 404 for a grant's page and forms (§3 "never
    /// leak existence"); for the list, new page and prepare §4 names no
    /// status, so 403 (permission to act) or 404.
    NotAdmin,
}

impl Refusal {
    fn allows(self, row: Row, page: &Page, admin_forms: bool) -> bool {
        match self {
            Refusal::SignedOut => {
                (asks_sign_in(page) || (400..500).contains(&page.status)) && !admin_forms
            }
            Refusal::Invisible => page.redirects.is_empty() && page.status == 404,
            Refusal::NotAdmin => {
                page.redirects.is_empty()
                    && (page.status == 404 || (!row.grant_scoped() && page.status == 403))
            }
        }
    }
}

/// A caller the rows must refuse: its browser, a `_csrf` of its own
/// session, and a bot's `Authorization` when it sends one.
struct Refused {
    label: String,
    browser: Human,
    csrf: String,
    auth: Option<String>,
    refusal: Refusal,
}

/// What the rows act on: the grant the refused callers aim at (awaiting
/// the human) and its revision.
struct Target<'a> {
    grant: &'a GrantRef,
    revision: i64,
}

/// Sends `row` as `caller` and judges the answer: `(case, allowed, seen)`.
async fn refused_case(caller: &Refused, row: Row, t: &Target<'_>) -> Step<(String, bool, String)> {
    let b = &caller.browser;
    let auth: Vec<(&str, &str)> = caller
        .auth
        .as_deref()
        .map(|v| vec![("Authorization", v)])
        .unwrap_or_default();
    let decision = |d: Decision| {
        hand_form(
            b,
            &core_api::decision(t.grant, d),
            &caller.csrf,
            &[(fields::STATE_REVISION, t.revision.to_string())],
        )
    };
    let get = |path: String| -> Step<Form> { Ok(Form::new("GET", b.url(&path)?, Vec::new())) };
    let form = match row {
        Row::List => get(core_api::grants_page(LAB))?,
        Row::New => get(core_api::new_grant_page(LAB))?,
        Row::GrantPage => get(core_api::grant_page(t.grant))?,
        Row::Prepare => hand_form(
            b,
            &core_api::grants_page(LAB),
            &caller.csrf,
            &prepare_fields(&format!("task by {}", caller.label)),
        )?,
        Row::Approve => decision(Decision::Approve)?,
        Row::Withdraw => decision(Decision::Withdraw)?,
    };
    let page = b.submit_with_headers(&form, &auth).await?;
    let admin_forms = page.form_with_field(fields::TASK).is_ok()
        || page.has_form_to(&core_api::decision(t.grant, Decision::Approve))
        || page.has_form_to(&core_api::decision(t.grant, Decision::Withdraw));
    Ok((
        format!("{} × {}", row.name(), caller.label),
        caller.refusal.allows(row, &page, admin_forms),
        seen(&page),
    ))
}

/// Grants for lab-bot in `states`, made at once: each prepared by alice
/// through the form, confirmed by lab-bot natively, then approved or
/// withdrawn through the grant page's form as its state needs.
async fn grants_in(ctx: &Ctx, alice: &Human, states: &[&str]) -> Step<Vec<GrantRef>> {
    let made = join_all(states.iter().enumerate().map(|(i, s)| async move {
        let task = format!("{s} {i}");
        let (grant, _) = alice.prepare_grant(LAB, LAB_BOT, &task, "summary").await?;
        if *s == state::AWAITING_HUMAN || *s == state::ACTIVE {
            confirm(ctx, &grant).await?;
        }
        let decided = if *s == state::ACTIVE {
            Some(alice.approve(&grant).await?)
        } else if *s == state::REVOKED {
            Some(alice.withdraw(&grant).await?)
        } else {
            None
        };
        match decided {
            Some(page) if !accepted(&page) => Err(Abort::failed(format!(
                "bringing a grant to {s}: the form answered {}",
                seen(&page)
            ))),
            _ => Ok(grant),
        }
    }))
    .await;
    made.into_iter().collect()
}

/// Every page and form of spec §4 and §9's consent decision answers each
/// caller as its role allows, and a refusal changes nothing.
#[scenario(Authority, parity, clauses = ["S4.admin-only", "S4.login", "S4.logout", "S4.page.list", "S4.page.grant", "S4.prepare", "S4.approve", "S4.withdraw", "S4.no-bot-credential", "S1.bots-no-browser", "S1.private-invisible", "S9.consent.decision"])]
async fn browser_caller_matrix(ctx: &mut Ctx) -> Outcome {
    // Each caller has a valid `_csrf` of its own session. No session and a
    // bot's credential (token, Bearer, Basic login:token and login:password;
    // lab-bot made an admin of alice/lab, so only the surface stops it) are
    // asked to sign in; a stranger gets 404, a reader and a writer 404 (403
    // allowed where no grant is named); the owner's every form works; the
    // site admin either acts as an admin or is refused, each form as a whole.
    // Every human signs in (303 to `/`), consents (a redirect with a code)
    // and signs out (the session ends); the bot does none of it.
    let mut table = Table::new("refused callers", "the browser's pages and forms");
    ctx.step("lab-bot is made an admin of alice/lab; the others get repositories of their own");
    ctx.setup().add_collaborator(LAB, LAB_BOT, "admin").await?;
    let admin = ctx.site_admin()?;
    let humans: Vec<(&str, Human)> = vec![
        ("owner", ctx.human("alice")?),
        ("stranger", ctx.human("mallory")?),
        ("reader", ctx.human("rita")?),
        ("writer", ctx.human("wendy")?),
        ("site admin", admin.clone()),
    ];
    // Each signed-in human's `_csrf` comes from a form of its own session
    // (spec §4: any form of any page): the new-grant page of a repository
    // it owns (alice's is alice/lab).
    let own = |h: &Human| {
        if h.login == "alice" {
            LAB.to_owned()
        } else {
            format!("{}/own", h.login)
        }
    };
    let made = join_all(
        (humans.iter().skip(1)).map(|(_, h)| ctx.setup().create_repo(&h.login, "own", true)),
    )
    .await;
    for repo in made {
        repo?;
    }

    ctx.step("every human signs in through the login form; lab-bot tries to");
    let logins = join_all(humans.iter().map(|(_, h)| h.login())).await;
    for ((class, _), landed) in humans.iter().zip(logins) {
        let landed = landed?;
        let to_home = landed
            .first_redirect()
            .is_some_and(|(s, to)| s == 303 && to.path() == "/");
        table.check(&format!("POST login × {class}"), to_home, seen(&landed));
    }
    let bot = ctx.bot_browser(LAB_BOT)?;
    let landed = bot.login().await?;
    let to_home = landed
        .first_redirect()
        .is_some_and(|(s, to)| s == 303 && to.path() == "/");
    let bot_in = signed_in(&bot, LAB).await?;
    table.check("POST login × bot", !to_home && !bot_in, seen(&landed));
    let pages: Vec<String> = humans
        .iter()
        .map(|(_, h)| core_api::new_grant_page(&own(h)))
        .collect();
    let csrf = join_all(
        (humans.iter().zip(&pages)).map(|((_, h), p)| async move { h.session_csrf(&[p]).await }),
    )
    .await
    .into_iter()
    .collect::<Step<Vec<String>>>()?;

    ctx.step("alice prepares four grants for lab-bot, which confirms them");
    let alice = humans[0].1.clone();
    let grants = grants_in(ctx, &alice, &[state::AWAITING_HUMAN; 4]).await?;
    let client = ctx.consent().oauth_app(&[REDIRECT.to_owned()]).await?;
    let url = consent_url(ctx, &client)?;
    let consent = alice.consent_form(&url, true).await?;

    ctx.step("no session and lab-bot's credential: the login page, then every page and form");
    let anonymous = ctx.second_browser("alice")?;
    let mut refused = Vec::new();
    let bot_csrf = anon_csrf(&mut table, &bot, "bot").await?;
    let anon_csrf = anon_csrf(&mut table, &anonymous, "no session").await?;
    refused.push(Refused {
        label: "no session".into(),
        browser: anonymous.clone(),
        csrf: anon_csrf,
        auth: None,
        refusal: Refusal::SignedOut,
    });
    let kinds = [
        "token",
        "Bearer",
        "Basic login:token",
        "Basic login:password",
    ];
    for (kind, value) in kinds.iter().zip(ctx.tokens().bot_authorization_headers(LAB_BOT)?) {
        refused.push(Refused {
            label: format!("bot ({kind})"),
            browser: bot.clone(),
            csrf: bot_csrf.clone(),
            auth: Some(value),
            refusal: Refusal::SignedOut,
        });
    }
    for (i, refusal) in [
        (1, Refusal::Invisible),
        (2, Refusal::NotAdmin),
        (3, Refusal::NotAdmin),
    ] {
        refused.push(Refused {
            label: humans[i].0.to_owned(),
            browser: humans[i].1.clone(),
            csrf: csrf[i].clone(),
            auth: None,
            refusal,
        });
    }
    let target = Target {
        grant: &grants[0],
        revision: 2,
    };
    let witness = Unchanged::watching(ctx, &grants.iter().collect::<Vec<_>>()).await?;
    ctx.step("no session, the bot, the stranger, the reader and the writer at once");
    let cases: Vec<(&Refused, Row)> = refused
        .iter()
        .flat_map(|c| Row::ALL.into_iter().map(move |r| (c, r)))
        .collect();
    let answers = join_all(cases.iter().map(|(c, r)| refused_case(c, *r, &target))).await;
    for answer in answers {
        let (case, ok, got) = answer?;
        table.check(&case, ok, got);
    }
    for caller in refused.iter().filter(|c| c.refusal == Refusal::SignedOut) {
        let mut form = consent.clone();
        form.set(fields::CSRF, &caller.csrf);
        let auth: Vec<(&str, &str)> = caller
            .auth
            .as_deref()
            .map(|v| vec![("Authorization", v)])
            .unwrap_or_default();
        let answer = caller.browser.send_with_headers(&form, &auth).await?;
        table.check(
            &format!("POST consent decision × {}", caller.label),
            !delivers_code(ctx, &answer),
            answer.status.to_string(),
        );
    }
    // The answers first, so a wrong one is named before what it changed.
    table.finish(ctx)?;
    witness.expect(ctx, "after the refused callers").await?;
    let mut table = Table::new("signed-in callers", "the browser's pages and forms");

    ctx.step("every signed-in human consents for itself: a redirect with a code");
    let consents = join_all(humans.iter().map(|(_, h)| async {
        let answer = h.send(&h.consent_form(&url, true).await?).await?;
        Ok::<_, Abort>((answer, h.open(core_api::LOGIN).await?))
    }))
    .await;
    for ((class, _), consent) in humans.iter().zip(consents) {
        let (answer, page) = consent?;
        table.check(
            &format!("POST consent decision × {class}"),
            hands_back(ctx, &answer, &url),
            answer.status.to_string(),
        );
        table.check(
            &format!("GET login page × {class}"),
            page.status == 200,
            seen(&page),
        );
    }

    ctx.step("alice, the owner, uses every page and form");
    owner_rows(ctx, &mut table, &alice, &grants[0], &grants[1]).await?;

    ctx.step("the site admin: an admin of every repository, or refused as a whole");
    site_admin_rows(ctx, &mut table, &admin, &csrf[4], &grants[2], &grants[3]).await?;

    ctx.step("every human signs out: the session ends");
    let logouts = join_all(humans.iter().map(|(_, h)| async {
        let before = signed_in(h, &own(h)).await?;
        let out = h.logout(&[&core_api::new_grant_page(&own(h))]).await?;
        Ok::<_, Abort>((before, out, signed_in(h, &own(h)).await?))
    }))
    .await;
    for ((class, _), logout) in humans.iter().zip(logouts) {
        let (before, out, after) = logout?;
        table.check(
            &format!("POST logout × {class}"),
            before && accepted(&out) && !after,
            format!("{}, signed in before {before}, after {after}", seen(&out)),
        );
    }
    table.finish(ctx)?;
    Ok(())
}

/// Opens the login page in a browser without a session: it shows the login
/// form, whose `_csrf` is returned (only the missing sign-in may refuse
/// that browser's forms).
async fn anon_csrf(table: &mut Table, browser: &Human, label: &str) -> Step<String> {
    let page = browser.open(core_api::LOGIN).await?;
    let csrf = page
        .form_with_field(fields::USER_NAME)
        .ok()
        .and_then(|f| f.field(fields::CSRF).map(str::to_owned))
        .filter(|c| !c.is_empty());
    table.check(
        &format!("GET login page × {label}"),
        csrf.is_some(),
        seen(&page),
    );
    csrf.ok_or_else(|| Abort::failed("the login page holds no login form with a _csrf"))
}

/// Whether `page` is the page at `path` shown to a signed-in admin.
fn shown(page: &Page, path: &str) -> bool {
    page.status == 200 && page.url.path() == path && !asks_sign_in(page)
}

/// The owner's rows, through the real forms of the pages: each page opens,
/// preparing lands on the new grant, approving `approve` and withdrawing
/// `withdraw` (both awaiting the human) change them as their agent reads.
async fn owner_rows(
    ctx: &Ctx,
    table: &mut Table,
    alice: &Human,
    approve: &GrantRef,
    withdraw: &GrantRef,
) -> Step<()> {
    let list = core_api::grants_page(LAB);
    let page = alice.open(&list).await?;
    table.check("GET list page × owner", shown(&page, &list), seen(&page));
    let new = core_api::new_grant_page(LAB);
    let page = alice.open(&new).await?;
    let ok = shown(&page, &new) && page.form_with_field(fields::TASK).is_ok();
    table.check("GET new page × owner", ok, seen(&page));
    let path = core_api::grant_page(approve);
    let page = alice.open(&path).await?;
    let forms = [Decision::Approve, Decision::Withdraw]
        .iter()
        .all(|d| page.has_form_to(&core_api::decision(approve, *d)));
    let ok = shown(&page, &path) && page.shows(state::AWAITING_HUMAN) && forms;
    table.check("GET grant page × owner", ok, seen(&page));

    let total = flows::grant_total(ctx, LAB_BOT).await?;
    let (made, landed) = alice
        .prepare_grant(LAB, LAB_BOT, "task by the owner", "summary")
        .await?;
    let to_grant = landed
        .first_redirect()
        .is_some_and(|(s, to)| s == 303 && to.path() == core_api::grant_page(&made));
    let now = flows::native_status(ctx, LAB_BOT, &made).await?;
    let ok = to_grant
        && now == (state::AWAITING_AGENT.to_owned(), 1)
        && flows::grant_total(ctx, LAB_BOT).await? == total + 1;
    table.check("POST prepare × owner", ok, seen(&landed));

    for (decision, grant) in [(Decision::Approve, approve), (Decision::Withdraw, withdraw)] {
        let before = flows::native_grant(ctx, LAB_BOT, grant).await?;
        let page = alice.decide(grant, decision).await?;
        table.check(
            &format!("POST {} × owner", decision.segment()),
            accepted(&page),
            seen(&page),
        );
        let after = flows::native_grant(ctx, LAB_BOT, grant).await?;
        let what = format!("{} by the owner", decision.segment());
        flows::expect_decided(ctx, &what, (&before, &after), decision, &alice.login)?;
    }
    Ok(())
}

/// The site admin's rows. Spec §4 says "repo admin"; whether a site admin
/// is one is not said, so each row may go either way, but as a whole:
/// shown as to the owner, or refused (403 or 404, no redirect) — and a form
/// changes exactly what it should when it was accepted, nothing when it was
/// refused. The forms are written from spec §4's field names with the site
/// admin's own `_csrf`, as its pages may be refused.
async fn site_admin_rows(
    ctx: &Ctx,
    table: &mut Table,
    admin: &Human,
    csrf: &str,
    approve: &GrantRef,
    withdraw: &GrantRef,
) -> Step<()> {
    let refused = |p: &Page| p.redirects.is_empty() && matches!(p.status, 403 | 404);
    let mut ways = Vec::new();
    for (row, path) in [
        (Row::List, core_api::grants_page(LAB)),
        (Row::New, core_api::new_grant_page(LAB)),
        (Row::GrantPage, core_api::grant_page(approve)),
    ] {
        let page = admin.open(&path).await?;
        let admin_view = shown(&page, &path)
            && (row != Row::New || page.form_with_field(fields::TASK).is_ok())
            && (row != Row::GrantPage || page.shows(state::AWAITING_HUMAN));
        ways.push((row.name(), admin_view));
        table.check(
            &format!("{} × site admin", row.name()),
            admin_view || refused(&page),
            seen(&page),
        );
    }

    let total = flows::grant_total(ctx, LAB_BOT).await?;
    let form = hand_form(
        admin,
        &core_api::grants_page(LAB),
        csrf,
        &prepare_fields("task by the site admin"),
    )?;
    let landed = admin.submit(&form).await?;
    let after = flows::grant_total(ctx, LAB_BOT).await?;
    let made = core_api::grant_id_of_page(&landed.url).is_some()
        && landed.first_redirect().is_some_and(|(s, _)| s == 303)
        && landed.status == 200;
    let ok = (made && after == total + 1) || (refused(&landed) && after == total);
    ways.push(("POST prepare", made));
    table.check("POST prepare × site admin", ok, seen(&landed));

    for (decision, grant, to) in [
        (Decision::Approve, approve, state::ACTIVE),
        (Decision::Withdraw, withdraw, state::REVOKED),
    ] {
        let form = hand_form(
            admin,
            &core_api::decision(grant, decision),
            csrf,
            &[(fields::STATE_REVISION, "2".to_owned())],
        )?;
        let before = flows::native_grant(ctx, LAB_BOT, grant).await?;
        let page = admin.submit(&form).await?;
        let after = flows::native_grant(ctx, LAB_BOT, grant).await?;
        let now = after.status();
        let done = accepted(&page) && now == (to.to_owned(), 3);
        let kept = refused(&page) && now == (state::AWAITING_HUMAN.to_owned(), 2);
        ways.push((decision.segment(), done));
        table.check(
            &format!("POST {} × site admin", decision.segment()),
            done || kept,
            format!("{}, then {} {}", seen(&page), now.0, now.1),
        );
        if done {
            let what = format!("{} by the site admin", decision.segment());
            flows::expect_decided(ctx, &what, (&before, &after), decision, &admin.login)?;
        }
    }
    ctx.observe("the site admin acts as a repository admin", &ways);
    Ok(())
}

/// Approve and withdraw succeed only from the states they allow and with the
/// grant's current `state_revision`; every other pair is 409 and changes
/// nothing.
#[scenario(Authority, parity, clauses = ["S4.approve", "S4.withdraw", "S4.stale", "S4.not-approval", "S2.states", "S2.revision"])]
async fn browser_decision_state_matrix(ctx: &mut Ctx) -> Outcome {
    // Approve goes only from `awaiting_human` to `active`, withdraw from
    // every state but `revoked` to `revoked`. Refused: a stale revision even
    // where the action is allowed, the current one where the state forbids it
    // (§3 gives 409 to a state conflict; §4 to a stale revision).
    let mut table = Table::new("refused decisions", "every grant state and revision");
    let alice = ctx.human("alice")?;
    ctx.step("alice logs in and prepares grants in every state");
    alice.login().await?;
    // One grant per state for the refusals, and one more for each success.
    let grants = grants_in(
        ctx,
        &alice,
        &[
            state::AWAITING_AGENT,
            state::AWAITING_HUMAN,
            state::ACTIVE,
            state::REVOKED,
            state::AWAITING_HUMAN,
            state::AWAITING_AGENT,
            state::AWAITING_HUMAN,
            state::ACTIVE,
        ],
    )
    .await?;
    let [
        awaiting_agent,
        awaiting_human,
        active,
        revoked,
        for_approve,
        withdraw_aa,
        withdraw_ah,
        withdraw_active,
    ] = &grants[..]
    else {
        return Err(Abort::errored("eight grants were asked for"));
    };
    let states = [
        (state::AWAITING_AGENT, awaiting_agent, 1),
        (state::AWAITING_HUMAN, awaiting_human, 2),
        (state::ACTIVE, active, 3),
        (state::REVOKED, revoked, 2),
    ];
    for (name, grant, revision) in states {
        flows::native_status(ctx, LAB_BOT, grant)
            .await
            .and_then(|now| {
                ctx.expect_eq(
                    &format!("the {name} grant"),
                    now,
                    (name.to_owned(), revision),
                )
            })?;
    }
    let csrf = alice
        .session_csrf(&[&core_api::new_grant_page(LAB)])
        .await?;

    ctx.step("every refused pair of decision, state and revision, at once");
    let mut cases = Vec::new();
    for decision in [Decision::Approve, Decision::Withdraw] {
        for (name, grant, revision) in states {
            let allowed = match decision {
                Decision::Approve => name == state::AWAITING_HUMAN,
                Decision::Withdraw => name != state::REVOKED,
            };
            // No revision before the first: an `awaiting_agent` grant has
            // no stale one.
            let stale = (revision > 1).then_some(("stale", revision - 1));
            for (which, rev) in [("current", revision)].into_iter().chain(stale) {
                if allowed && which == "current" {
                    continue;
                }
                let form = hand_form(
                    &alice,
                    &core_api::decision(grant, decision),
                    &csrf,
                    &[(fields::STATE_REVISION, rev.to_string())],
                )?;
                cases.push((
                    format!("{} × {name} × {which} revision", decision.segment()),
                    form,
                ));
            }
        }
    }
    let witness = Unchanged::watching(ctx, &states.map(|(_, g, _)| g)).await?;
    let answers = join_all(cases.iter().map(|(_, form)| alice.submit(form))).await;
    for ((case, _), page) in cases.iter().zip(answers) {
        let page = page?;
        table.check(
            case,
            page.status == 409 && page.redirects.is_empty(),
            seen(&page),
        );
    }
    table.finish(ctx)?;
    witness.expect(ctx, "after the refused decisions").await?;
    let mut table = Table::new("allowed decisions", "every grant state");

    ctx.step("the allowed pairs, each on a grant of its own, through the page's forms");
    for (decision, name, grant, after) in [
        (
            Decision::Approve,
            state::AWAITING_HUMAN,
            for_approve,
            (state::ACTIVE, 3),
        ),
        (
            Decision::Withdraw,
            state::AWAITING_AGENT,
            withdraw_aa,
            (state::REVOKED, 2),
        ),
        (
            Decision::Withdraw,
            state::AWAITING_HUMAN,
            withdraw_ah,
            (state::REVOKED, 3),
        ),
        (
            Decision::Withdraw,
            state::ACTIVE,
            withdraw_active,
            (state::REVOKED, 4),
        ),
    ] {
        let page = alice.decide(grant, decision).await?;
        let now = flows::native_status(ctx, LAB_BOT, grant).await?;
        table.check(
            &format!("{} × {name} × current revision", decision.segment()),
            accepted(&page) && now == (after.0.to_owned(), after.1),
            format!("{}, then {} {}", seen(&page), now.0, now.1),
        );
    }
    table.finish(ctx)?;
    Ok(())
}
