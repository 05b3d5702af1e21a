//! Family 1, the browser's CSRF matrix (issue #27 §3): every state-changing
//! form — login, logout, prepare, approve, withdraw and §9's consent
//! decision — with each class of `_csrf`: its own (accepted), none, empty,
//! another live session's, an expired one, and the `X-Csrf-Token` header
//! carrying its own (accepted), another session's or an expired one. A
//! refusal is 400 with no redirect and changes nothing, read through the
//! APIs and the session: no grant prepared, the grants' state and revision
//! as their agent reads them, no session after a refused login, the session
//! alive after a refused logout, no code after a refused consent decision.

use std::time::Duration;

use grantgate_engine::prelude::*;

use crate::support::consent::{REDIRECT, consent_url, delivers_code, hands_back};
use crate::support::flows::confirm;
use crate::support::flows::{self, LAB, LAB_BOT};
use crate::support::forms::{accepted, csrf_of};
use crate::support::forms::{hand_form, seen, signed_in};
use crate::support::tables::Table;
use crate::support::witnesses::Unchanged;

/// How a form carries its token.
#[derive(Clone, Copy, PartialEq)]
enum Csrf {
    /// The `_csrf` the form holds.
    Own,
    /// No `_csrf` field.
    Missing,
    /// An empty `_csrf` field.
    Empty,
    /// Another live session's token in the field.
    Foreign,
    /// No field; the form's own token as `X-Csrf-Token`.
    HeaderOwn,
    /// No field; another session's token as `X-Csrf-Token`.
    HeaderForeign,
}

impl Csrf {
    /// The classes a Core must refuse.
    const REFUSED: [Csrf; 4] = [
        Csrf::Missing,
        Csrf::Empty,
        Csrf::Foreign,
        Csrf::HeaderForeign,
    ];

    fn name(self) -> &'static str {
        match self {
            Csrf::Own => "own _csrf",
            Csrf::Missing => "no _csrf",
            Csrf::Empty => "empty _csrf",
            Csrf::Foreign => "foreign _csrf",
            Csrf::HeaderOwn => "own X-Csrf-Token",
            Csrf::HeaderForeign => "foreign X-Csrf-Token",
        }
    }

    /// `form` as this class sends it, and the `X-Csrf-Token` it carries.
    fn apply(self, form: &Form, foreign: &str) -> Step<(Form, Option<String>)> {
        let own = csrf_of(form)?;
        let mut f = form.clone();
        let header = match self {
            Csrf::Own => None,
            Csrf::Missing | Csrf::HeaderOwn | Csrf::HeaderForeign => {
                f.remove(fields::CSRF);
                match self {
                    Csrf::HeaderOwn => Some(own),
                    Csrf::HeaderForeign => Some(foreign.to_owned()),
                    _ => None,
                }
            }
            Csrf::Empty => {
                f.set(fields::CSRF, "");
                None
            }
            Csrf::Foreign => {
                f.set(fields::CSRF, foreign);
                None
            }
        };
        Ok((f, header))
    }
}

/// Sends `form` from `human` as `class` sends it, following redirects.
async fn post(human: &Human, form: &Form, class: Csrf, foreign: &str) -> Step<Page> {
    let (form, header) = class.apply(form, foreign)?;
    let headers: Vec<(&str, &str)> = header
        .as_deref()
        .map(|v| vec![(fields::CSRF_HEADER, v)])
        .unwrap_or_default();
    human.submit_with_headers(&form, &headers).await
}

/// Sends a consent form from `human` as `class` sends it, its redirect not
/// followed (it leads to the client).
async fn decide(human: &Human, form: &Form, class: Csrf, foreign: &str) -> Step<Answer> {
    let (form, header) = class.apply(form, foreign)?;
    let headers: Vec<(&str, &str)> = header
        .as_deref()
        .map(|v| vec![(fields::CSRF_HEADER, v)])
        .unwrap_or_default();
    human.send_with_headers(&form, &headers).await
}

/// A refusal: 400, no redirect.
fn refused(page: &Page) -> bool {
    page.status == 400 && page.redirects.is_empty()
}

/// Whether a login landed as spec §4 says: 303 to `/`.
fn to_home(page: &Page) -> bool {
    page.first_redirect()
        .is_some_and(|(s, to)| s == 303 && to.path() == "/")
}

/// A login as `class` in a browser of its own, `foreign` another anonymous
/// session's token: the answer, and whether the browser is signed in.
async fn login_case(ctx: &Ctx, class: Csrf, foreign: &str) -> Step<(Page, bool)> {
    let browser = ctx.second_browser("alice")?;
    let form = browser.login_form().await?;
    let page = post(&browser, &form, class, foreign).await?;
    Ok((page, signed_in(&browser, LAB).await?))
}

/// Every state-changing form accepts its session's own `_csrf`, as the field
/// or as `X-Csrf-Token`, and refuses any other with 400, changing nothing.
#[scenario(Browser, parity, clauses = ["S4.csrf.every-form", "S4.csrf.header", "S4.csrf.refused", "S4.login", "S4.logout", "S4.prepare", "S4.approve", "S4.withdraw", "S4.redirect.303", "S9.consent.decision"])]
async fn browser_csrf_matrix(ctx: &mut Ctx) -> Outcome {
    // Accepted: login and prepare 303, approve, withdraw and logout a
    // redirect or 200, the consent decision a redirect with a code. Refused:
    // none, an empty one, and another live session's, as the field or the
    // header.
    let mut table = Table::new("CSRF classes", "every state-changing form");
    ctx.step("the login form, once per class, each in a browser of its own");
    let classes = [
        Csrf::Own,
        Csrf::Missing,
        Csrf::Empty,
        Csrf::Foreign,
        Csrf::HeaderOwn,
        Csrf::HeaderForeign,
    ];
    // The other session lives on in the Core after its browser goes; one
    // case after another, each browser goes back wiped for the next.
    let foreign = csrf_of(&ctx.second_browser("alice")?.login_form().await?)?;
    for class in classes {
        let (page, signed) = login_case(ctx, class, &foreign).await?;
        let ok = match class {
            Csrf::Own | Csrf::HeaderOwn => to_home(&page) && signed,
            _ => refused(&page) && !signed,
        };
        table.check(
            &format!("login × {}", class.name()),
            ok,
            format!("{}, signed in {signed}", seen(&page)),
        );
    }

    ctx.step("alice signs in twice; two grants await her; a consent request");
    let alice = ctx.human("alice")?;
    let elsewhere = ctx.second_browser("alice")?;
    alice.login().await?;
    elsewhere.login().await?;
    let new_page = core_api::new_grant_page(LAB);
    let foreign = elsewhere.session_csrf(&[&new_page]).await?;
    let mut grants = Vec::new();
    for task in ["first", "second"] {
        let (grant, _) = alice.prepare_grant(LAB, LAB_BOT, task, "summary").await?;
        confirm(ctx, &grant).await?;
        grants.push(grant);
    }
    let client = ctx.consent().oauth_app(&[REDIRECT.to_owned()]).await?;
    let url = consent_url(ctx, &client)?;
    let witness = Unchanged::watching(ctx, &[&grants[0], &grants[1]]).await?;

    ctx.step(
        "prepare, approve, withdraw and the consent decision with every refused class, at once",
    );
    let prepare = alice.prepare_form(LAB, LAB_BOT, "refused", "s").await?;
    let approve = alice.decision_form(&grants[0], Decision::Approve).await?;
    let withdraw = alice.decision_form(&grants[0], Decision::Withdraw).await?;
    let forms = [
        ("prepare", &prepare),
        ("approve", &approve),
        ("withdraw", &withdraw),
    ];
    let cases: Vec<(&str, &Form, Csrf)> = forms
        .iter()
        .flat_map(|(name, form)| Csrf::REFUSED.map(|c| (*name, *form, c)))
        .collect();
    let pages = join_all(cases.iter().map(|(_, f, c)| post(&alice, f, *c, &foreign))).await;
    for ((name, _, class), page) in cases.iter().zip(pages) {
        let page = page?;
        table.check(
            &format!("{name} × {}", class.name()),
            refused(&page),
            seen(&page),
        );
    }
    let consent = alice.consent_form(&url, true).await?;
    let answers = join_all(Csrf::REFUSED.map(|c| decide(&alice, &consent, c, &foreign))).await;
    for (class, answer) in Csrf::REFUSED.iter().zip(answers) {
        let answer = answer?;
        table.check(
            &format!("consent decision × {}", class.name()),
            !delivers_code(ctx, &answer)
                && answer.status == 400
                && answer.header("location").is_none(),
            answer.status.to_string(),
        );
    }
    // The answers first, so a wrong one is named before what it changed.
    table.finish(ctx)?;
    witness.expect(ctx, "after the refused forms").await?;
    let mut table = Table::new("own CSRF tokens", "every state-changing form");

    ctx.step("the same forms with alice's own token, as the field and as X-Csrf-Token");
    for class in [Csrf::Own, Csrf::HeaderOwn] {
        let total = flows::grant_total(ctx, LAB_BOT).await?;
        let form = alice.prepare_form(LAB, LAB_BOT, class.name(), "s").await?;
        let page = post(&alice, &form, class, &foreign).await?;
        let to_grant = core_api::grant_id_of_page(&page.url).is_some()
            && page.first_redirect().is_some_and(|(s, _)| s == 303);
        let made = flows::grant_total(ctx, LAB_BOT).await? == total + 1;
        table.check(
            &format!("prepare × {}", class.name()),
            to_grant && made && page.status == 200,
            seen(&page),
        );
        let answer = decide(
            &alice,
            &alice.consent_form(&url, true).await?,
            class,
            &foreign,
        )
        .await?;
        table.check(
            &format!("consent decision × {}", class.name()),
            hands_back(ctx, &answer, &url),
            answer.status.to_string(),
        );
    }
    // Each grant is approved with one class and withdrawn with the other.
    for (grant, first, then) in [
        (&grants[0], Csrf::Own, Csrf::HeaderOwn),
        (&grants[1], Csrf::HeaderOwn, Csrf::Own),
    ] {
        for (decision, class, after) in [
            (Decision::Approve, first, (state::ACTIVE, 3)),
            (Decision::Withdraw, then, (state::REVOKED, 4)),
        ] {
            let form = alice.decision_form(grant, decision).await?;
            let page = post(&alice, &form, class, &foreign).await?;
            let now = flows::native_status(ctx, LAB_BOT, grant).await?;
            table.check(
                &format!("{} × {}", decision.segment(), class.name()),
                accepted(&page) && now == (after.0.to_owned(), after.1),
                format!("{}, then {} {}", seen(&page), now.0, now.1),
            );
        }
    }

    ctx.step("logout with every refused class: alice stays signed in");
    let own = alice.session_csrf(&[&new_page]).await?;
    let logout = hand_form(&alice, core_api::LOGOUT, &own, &[])?;
    for class in Csrf::REFUSED {
        let page = post(&alice, &logout, class, &foreign).await?;
        let still = signed_in(&alice, LAB).await?;
        table.check(
            &format!("logout × {}", class.name()),
            refused(&page) && still,
            format!("{}, signed in {still}", seen(&page)),
        );
    }
    ctx.step("two more sessions of alice sign out, with the logout form and with X-Csrf-Token");
    for class in [Csrf::Own, Csrf::HeaderOwn] {
        let session = ctx.second_browser("alice")?;
        session.login().await?;
        let page = if class == Csrf::Own {
            session.logout(&[&new_page]).await?
        } else {
            let own = session.session_csrf(&[&new_page]).await?;
            let form = hand_form(&session, core_api::LOGOUT, &own, &[])?;
            post(&session, &form, class, &foreign).await?
        };
        let ended = !signed_in(&session, LAB).await?;
        let others = signed_in(&alice, LAB).await?;
        table.check(
            &format!("logout × {}", class.name()),
            accepted(&page) && ended && others,
            format!(
                "{}, ended {ended}, alice's other session on {others}",
                seen(&page)
            ),
        );
    }
    table.finish(ctx)?;
    Ok(())
}

/// An expired `_csrf`, as the field or as `X-Csrf-Token`, is refused with 400
/// on every state-changing form, while fresh forms of the same sessions work.
#[scenario(Browser, parity, core_env = [("CORE_CSRF_TTL_SECS", "4")], clauses = ["S4.csrf.every-form", "S4.csrf.header", "S4.csrf.refused", "S9.consent.decision"])]
async fn browser_csrf_expired_matrix(ctx: &mut Ctx) -> Outcome {
    // Nothing changes on a refusal. Relies on the `CORE_CSRF_TTL_SECS` launch
    // extension, set to 4 s, the time a loaded machine's Chromium may take
    // from a form's page to its click; a Core that does not declare it gets
    // *not applicable*.
    let mut table = Table::new("expired CSRF", "every state-changing form");
    let alice = ctx.human("alice")?;
    ctx.step("alice signs in; a grant awaits her; a consent request");
    alice.login().await?;
    let (grant, _) = alice.prepare_grant(LAB, LAB_BOT, "task", "summary").await?;
    confirm(ctx, &grant).await?;
    let client = ctx.consent().oauth_app(&[REDIRECT.to_owned()]).await?;
    let url = consent_url(ctx, &client)?;
    let witness = Unchanged::watching(ctx, &[&grant]).await?;
    let new_page = core_api::new_grant_page(LAB);
    // One signed-out browser per login, and one more session of alice's
    // per logout: a wrongly accepted one then leaves the others to judge.
    let classes = [Csrf::Own, Csrf::HeaderOwn];
    let mut late = Vec::new();
    let mut leaving = Vec::new();
    for _ in classes {
        late.push(ctx.second_browser("alice")?);
        let session = ctx.second_browser("alice")?;
        session.login().await?;
        leaving.push(session);
    }

    ctx.step("every form is loaded, then left past the token lifetime");
    let mut logins = Vec::new();
    let mut logouts = Vec::new();
    for (browser, session) in late.iter().zip(&leaving) {
        logins.push(browser.login_form().await?);
        let csrf = session.session_csrf(&[&new_page]).await?;
        logouts.push(hand_form(session, core_api::LOGOUT, &csrf, &[])?);
    }
    let prepare = alice.prepare_form(LAB, LAB_BOT, "late", "s").await?;
    let approve = alice.decision_form(&grant, Decision::Approve).await?;
    let withdraw = alice.decision_form(&grant, Decision::Withdraw).await?;
    let consent = alice.consent_form(&url, true).await?;
    // Whole-second ages: a token is past a 4 s lifetime however it is
    // counted once 5 s have passed; every fresh form below is posted at
    // once.
    ctx.wait_out(Duration::from_millis(5200)).await;

    ctx.step("the aged forms, their token as the field and as X-Csrf-Token");
    let expired = |class: Csrf| match class {
        Csrf::Own => "expired _csrf",
        _ => "expired X-Csrf-Token",
    };
    for (i, class) in classes.into_iter().enumerate() {
        let page = post(&late[i], &logins[i], class, "").await?;
        let signed = signed_in(&late[i], LAB).await?;
        table.check(
            &format!("login × {}", expired(class)),
            refused(&page) && !signed,
            format!("{}, signed in {signed}", seen(&page)),
        );
        for (name, form) in [
            ("prepare", &prepare),
            ("approve", &approve),
            ("withdraw", &withdraw),
        ] {
            let page = post(&alice, form, class, "").await?;
            table.check(
                &format!("{name} × {}", expired(class)),
                refused(&page),
                seen(&page),
            );
        }
        let answer = decide(&alice, &consent, class, "").await?;
        table.check(
            &format!("consent decision × {}", expired(class)),
            !delivers_code(ctx, &answer)
                && answer.status == 400
                && answer.header("location").is_none(),
            answer.status.to_string(),
        );
        let page = post(&leaving[i], &logouts[i], class, "").await?;
        let still = signed_in(&leaving[i], LAB).await?;
        table.check(
            &format!("logout × {}", expired(class)),
            refused(&page) && still,
            format!("{}, signed in {still}", seen(&page)),
        );
    }
    table.finish(ctx)?;
    witness.expect(ctx, "after the aged forms").await?;
    let mut table = Table::new("fresh CSRF tokens", "every state-changing form");

    ctx.step("fresh forms of the same sessions work");
    let page = late[0].login().await?;
    table.check("login × fresh _csrf", to_home(&page), seen(&page));
    let page = alice.approve(&grant).await?;
    let now = flows::native_status(ctx, LAB_BOT, &grant).await?;
    table.check(
        "approve × fresh _csrf",
        accepted(&page) && now == (state::ACTIVE.to_owned(), 3),
        format!("{}, then {} {}", seen(&page), now.0, now.1),
    );
    let answer = alice.send(&alice.consent_form(&url, true).await?).await?;
    table.check(
        "consent decision × fresh _csrf",
        hands_back(ctx, &answer, &url),
        answer.status.to_string(),
    );
    let page = leaving[0].logout(&[&new_page]).await?;
    let ended = !signed_in(&leaving[0], LAB).await?;
    table.check(
        "logout × fresh _csrf",
        accepted(&page) && ended,
        format!("{}, ended {ended}", seen(&page)),
    );
    table.finish(ctx)?;
    Ok(())
}
