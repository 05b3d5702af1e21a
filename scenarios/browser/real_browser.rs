//! Family 1 in a real browser (`grantgate run --browser chromium`; *not
//! applicable* in an HTTP-level run): what only a browser enforces or shows.
//! The session cookie is hidden from page scripts (`HttpOnly` as Chromium
//! applies it), a page of another site that posts the grant's forms changes
//! nothing (`SameSite=Lax` as Chromium applies it), and a person reads the
//! grant's state as rendered text and acts by clicking the forms' buttons.
//!
//! The other families run in the same browser with `--browser chromium`:
//! their forms are clicked, and their CSRF refusals are an attacker editing
//! the page (a hidden input removed or replaced).

use grantgate_engine::prelude::*;

use crate::support::flows::{LAB, LAB_BOT};
use crate::support::forms::opened;
use crate::support::forms::{awaiting_human, expect_accepted};
use crate::support::witnesses::{Unchanged, expect_grant};

/// In a real browser, the Core's pages' scripts can read no cookie that keeps
/// alice signed in: Chromium enforces the session cookie's `HttpOnly`.
#[scenario(Browser, parity, extensions = ["real-browser"], clauses = ["S4.session.cookie"])]
async fn real_browser_session_cookie_hidden_from_scripts(ctx: &mut Ctx) -> Outcome {
    // Scripts read `document.cookie`. A session cookie is one without which
    // alice's browser no longer opens her grant list.
    let alice = ctx.human("alice")?;
    let list = core_api::grants_page(LAB);

    ctx.step("alice logs in; her browser's session cookies are found");
    alice.login().await?;
    let page = alice.open(&list).await?;
    ctx.expect(
        "alice's browser opens the grant list",
        opened(&page, &list),
        &page.arrival(),
    )?;
    let mut session = Vec::new();
    for name in alice.cookie_names().await? {
        let saved = alice.drop_cookie(&name).await?;
        let without = alice.open(&list).await?;
        if !opened(&without, &list) {
            session.push(name);
        }
        alice.restore_cookies(saved).await?;
    }
    ctx.expect(
        "some cookie keeps alice signed in",
        !session.is_empty(),
        &format!("{} session cookie(s)", session.len()),
    )?;
    ctx.observe("session cookies", &session.len());

    ctx.step("the Core's pages' scripts do not see a session cookie");
    for path in [list.clone(), core_api::new_grant_page(LAB), "/".to_owned()] {
        alice.open(&path).await?;
        let seen = alice.script_cookie_names().await?;
        let leaked: Vec<&String> = session.iter().filter(|n| seen.contains(n)).collect();
        ctx.expect(
            &format!("document.cookie on {path} holds no session cookie"),
            leaked.is_empty(),
            &format!("session cookies visible to scripts: {leaked:?}"),
        )?;
    }
    Ok(())
}

/// A cross-site page posting the grant's approve and withdraw forms in
/// alice's signed-in browser changes nothing, while the same forms from the
/// Core's own page work.
#[scenario(Browser, parity, extensions = ["real-browser"], clauses = ["S4.session.cookie", "S4.approve", "S4.withdraw"])]
async fn real_browser_cross_site_post_changes_nothing(ctx: &mut Ctx) -> Outcome {
    // The other site is the harness's, on `localhost` when the Core is on
    // `127.0.0.1`; its forms carry alice's own valid `_csrf` and
    // `state_revision`, and it posts them as soon as alice's browser opens
    // it. Chromium withholds the `SameSite=Lax` session cookie from a
    // cross-site POST.
    let alice = ctx.human("alice")?;
    alice.login().await?;
    let grant = awaiting_human(ctx, &alice, "task").await?;
    let unchanged = Unchanged::take(ctx, &grant).await?;
    let saved = alice.save_cookies().await?;

    let mut forms = Vec::new();
    for decision in [Decision::Approve, Decision::Withdraw] {
        let action = decision.segment();
        ctx.step(&format!(
            "another site posts alice's {action} form when her browser opens it"
        ));
        let form = alice.decision_form(&grant, decision).await?;
        let page = alice.cross_site_post(&form).await?;
        ctx.expect(
            &format!("the cross-site {action} reached the Core's action"),
            page.url.path() == form.action.path() || !page.redirects.is_empty(),
            &page.arrival(),
        )?;
        unchanged
            .expect(ctx, &format!("after the cross-site {action}"))
            .await?;
        forms.push(form);
    }
    ctx.observe(
        "after the cross-site posts",
        &crate::support::flows::native_status(ctx, LAB_BOT, &grant).await?,
    );

    ctx.step("the same approve form, sent from the Core's own page, works");
    // Whatever the Core answered the cookie-less post (a fresh anonymous
    // cookie, say), alice's session is the one she had.
    alice.restore_cookies(saved).await?;
    let approved = alice.submit(&forms[0]).await?;
    expect_accepted(ctx, "approving from the Core's page", &approved)?;
    expect_grant(ctx, "after approving", &grant, state::ACTIVE, 3).await?;
    Ok(())
}

/// A person reads the grant's state as rendered text and acts only by
/// clicking, and each click changes the grant as its agent reads it.
#[scenario(Browser, parity, extensions = ["real-browser"], clauses = ["S4.page.grant", "S4.approve", "S4.withdraw", "S2.states"])]
async fn real_browser_reads_text_and_clicks(ctx: &mut Ctx) -> Outcome {
    // Rendered text is `innerText`: the state word shows after each step
    // (awaiting_agent, awaiting_human, active, revoked); the clicks are the
    // approve and withdraw buttons.
    let alice = ctx.human("alice")?;
    alice.login().await?;

    ctx.step("alice prepares a grant; its page shows awaiting_agent");
    let (grant, page) = alice.prepare_grant(LAB, LAB_BOT, "task", "summary").await?;
    expect_shows(ctx, &page, state::AWAITING_AGENT)?;

    ctx.step("lab-bot confirms; the page shows awaiting_human");
    let bot = ctx.bot(LAB_BOT).await?;
    let proposal = bot.read_proposal(&grant).await?;
    ctx.expect_tool_ok("lab-bot confirms", &bot.confirm(&grant, &proposal).await?)?;
    expect_shows(ctx, &alice.grant_page(&grant).await?, state::AWAITING_HUMAN)?;

    ctx.step("alice clicks Approve; the page shows active");
    let approved = alice.approve(&grant).await?;
    expect_accepted(ctx, "approving", &approved)?;
    expect_grant(ctx, "after approving", &grant, state::ACTIVE, 3).await?;
    expect_shows(ctx, &alice.grant_page(&grant).await?, state::ACTIVE)?;

    ctx.step("alice clicks Withdraw; the page shows revoked");
    let withdrawn = alice.withdraw(&grant).await?;
    expect_accepted(ctx, "withdrawing", &withdrawn)?;
    expect_grant(ctx, "after withdrawing", &grant, state::REVOKED, 4).await?;
    expect_shows(ctx, &alice.grant_page(&grant).await?, state::REVOKED)?;
    ctx.observe(
        "after withdrawing",
        &crate::support::flows::native_status(ctx, LAB_BOT, &grant).await?,
    );
    Ok(())
}

/// Checks that a person reads `word` on the grant page.
fn expect_shows(ctx: &Ctx, page: &Page, word: &str) -> Step<()> {
    ctx.expect(
        &format!("the grant page reads `{word}`"),
        page.shows(word),
        &format!(
            "{} characters of text at {}",
            page.text().len(),
            page.url.path()
        ),
    )
}
