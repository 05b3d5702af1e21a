//! Family 13: sessions and credentials. The session cookie a login answer
//! sets is `HttpOnly` and `SameSite=Lax`; after logout the old cookie opens
//! no grant page and the forms posted with it change nothing; a missing or
//! wrong token is 401 on every native grant route. The value limits of the
//! same family (title and body) follow in `submission_limits.rs`.
//!
//! The session cookie's name is the Core's own: it is found as the cookie
//! the login answer sets that signs a fresh browser in on its own. Cookie
//! values are credentials: they travel only in `Cookie` headers, which
//! transcripts drop, and are never put into an assertion.

use grantgate_engine::prelude::*;

use crate::support::flows::{self, LAB, LAB_BOT, Watch};
use crate::support::forms::opened;
use crate::support::forms::{awaiting_human, expect_accepted, offers};
use crate::support::witnesses::{Unchanged, expect_grant};

/// One `Set-Cookie` header, read as RFC 6265 §5.2 does: `name=value`, then
/// attributes whose names are case-insensitive. No `Debug`: the value is a
/// credential.
struct SetCookie {
    name: String,
    value: String,
    http_only: bool,
    same_site: Option<String>,
    /// `Max-Age` zero or less, or an empty value: the cookie is cleared.
    clears: bool,
}

impl SetCookie {
    fn parse(header: &str) -> Option<SetCookie> {
        let mut parts = header.split(';');
        let (name, value) = parts.next()?.split_once('=')?;
        let mut cookie = SetCookie {
            name: name.trim().to_owned(),
            value: value.trim().to_owned(),
            http_only: false,
            same_site: None,
            clears: value.trim().is_empty(),
        };
        for attribute in parts {
            let (key, val) = attribute.split_once('=').unwrap_or((attribute, ""));
            match key.trim().to_ascii_lowercase().as_str() {
                "httponly" => cookie.http_only = true,
                "samesite" => cookie.same_site = Some(val.trim().to_owned()),
                "max-age" => {
                    cookie.clears |= val.trim().parse::<i64>().is_ok_and(|age| age <= 0);
                }
                _ => {}
            }
        }
        Some(cookie)
    }

    /// `name=value`, as a `Cookie` header carries it.
    fn pair(&self) -> String {
        format!("{}={}", self.name, self.value)
    }
}

/// A GET of `path` as a hand-built form (to send it with a `Cookie` header).
fn get(human: &Human, path: &str) -> Step<Form> {
    Ok(Form::new("GET", human.url(path)?, Vec::new()))
}

/// alice logs in and the session cookies of her login answer are found:
/// every cookie it sets (not a clearing one) that, sent alone by a fresh
/// browser, opens alice/lab's grant list; when none does alone, every
/// cookie it sets. Returns them and the login answer's status.
async fn login_session_cookies(ctx: &mut Ctx) -> Step<(Vec<SetCookie>, u16)> {
    let alice = ctx.human("alice")?;
    let answer = alice.login_answer().await?;
    let set: Vec<SetCookie> = answer
        .header_values("set-cookie")
        .iter()
        .filter_map(|h| SetCookie::parse(h))
        .filter(|c| !c.clears)
        .collect();
    ctx.expect(
        "the login answer sets a cookie",
        !set.is_empty(),
        &format!("{} cookies set (clearing ones left out)", set.len()),
    )?;
    let list = core_api::grants_page(LAB);
    let mut alone = Vec::new();
    for (i, cookie) in set.iter().enumerate() {
        let fresh = ctx.second_browser("alice")?;
        let page = fresh
            .submit_with_headers(&get(&fresh, &list)?, &[("Cookie", &cookie.pair())])
            .await?;
        if opened(&page, &list) {
            alone.push(i);
        }
    }
    let status = answer.status;
    if alone.is_empty() {
        return Ok((set, status));
    }
    let session = set
        .into_iter()
        .enumerate()
        .filter(|(i, _)| alone.contains(i))
        .map(|(_, c)| c)
        .collect();
    Ok((session, status))
}

/// The `Cookie` header a browser holding `cookies` sends.
fn cookie_header(cookies: &[SetCookie]) -> String {
    cookies
        .iter()
        .map(SetCookie::pair)
        .collect::<Vec<_>>()
        .join("; ")
}

/// The session cookie the login answer sets — the one that signs a browser
/// in, whatever its name — carries `HttpOnly` and `SameSite=Lax`.
#[scenario(Sessions, parity, clauses = ["S4.session.cookie"])]
async fn session_cookie_httponly_lax(ctx: &mut Ctx) -> Outcome {
    ctx.step("alice logs in; the cookies her login answer sets are read");
    let (cookies, status) = login_session_cookies(ctx).await?;
    ctx.expect_eq("the login answers 303", status, 303)?;
    let alice = ctx.human("alice")?;
    let list = core_api::grants_page(LAB);
    let page = alice.open(&list).await?;
    ctx.expect(
        "alice's browser opens the grant list",
        opened(&page, &list),
        &format!("status {} at {}", page.status, page.url.path()),
    )?;

    ctx.step("each session cookie is HttpOnly and SameSite=Lax");
    for cookie in &cookies {
        let flags = (
            cookie.http_only,
            cookie.same_site.as_deref().map(str::to_ascii_lowercase),
        );
        ctx.expect_eq(
            &format!("the session cookie `{}`: (HttpOnly, SameSite)", cookie.name),
            flags.clone(),
            (true, Some("lax".to_owned())),
        )?;
        ctx.observe("session cookie (HttpOnly, SameSite)", &flags);
    }
    Ok(())
}

/// After `POST /user/logout` the old session cookie opens no grant page, and
/// the forms posted with it change nothing.
#[scenario(Sessions, parity, clauses = ["S4.logout"])]
async fn logout_ends_the_session(ctx: &mut Ctx) -> Outcome {
    // The session is over on the server. Pages: list, new, grant; forms:
    // approve, withdraw and prepare.
    ctx.step("alice logs in; her session cookie is kept");
    let (cookies, _) = login_session_cookies(ctx).await?;
    let old = cookie_header(&cookies);
    let alice = ctx.human("alice")?;
    let grant = awaiting_human(ctx, &alice, "task").await?;

    ctx.step("alice loads the approve, withdraw and new-grant forms, then logs out");
    let approve = alice.decision_form(&grant, Decision::Approve).await?;
    let withdraw = alice.decision_form(&grant, Decision::Withdraw).await?;
    let prepare = alice
        .prepare_form(LAB, LAB_BOT, "task after logout", "summary")
        .await?;
    let unchanged = Unchanged::take(ctx, &grant).await?;
    // The Core's own logout form if its home page has one, else the grant
    // page's `_csrf` posted to /user/logout.
    let out = alice.logout(&["/", &core_api::grant_page(&grant)]).await?;
    expect_accepted(ctx, "logging out", &out)?;
    let page = alice.grant_page(&grant).await?;
    ctx.expect(
        "alice's browser no longer opens the grant page",
        !opened(&page, &core_api::grant_page(&grant)),
        &format!("status {} at {}", page.status, page.url.path()),
    )?;

    ctx.step("another browser sends the old session cookie to the grant pages");
    let replayer = ctx.second_browser("alice")?;
    let with_old = [("Cookie", old.as_str())];
    for path in [
        core_api::grants_page(LAB),
        core_api::new_grant_page(LAB),
        core_api::grant_page(&grant),
    ] {
        let page = replayer
            .submit_with_headers(&get(&replayer, &path)?, &with_old)
            .await?;
        let forms = offers(&replayer, &page, &grant, Decision::Approve)?
            || offers(&replayer, &page, &grant, Decision::Withdraw)?
            || page.form_with_field(fields::TASK).is_ok();
        ctx.expect(
            &format!("the old cookie does not open {path}"),
            !opened(&page, &path) && !forms,
            &format!(
                "{}, grant forms {}",
                page.arrival(),
                if forms { "present" } else { "absent" }
            ),
        )?;
        ctx.observe(&format!("old cookie opens {path}"), &opened(&page, &path));
    }

    ctx.step("the old cookie posts the forms loaded before the logout");
    for (action, form) in [
        ("approve", &approve),
        ("withdraw", &withdraw),
        ("prepare", &prepare),
    ] {
        let answer = replayer.submit_with_headers(form, &with_old).await?;
        ctx.expect(
            &format!("{action} with the old cookie does not land on the grant page"),
            !opened(&answer, &core_api::grant_page(&grant)),
            &format!("status {} at {}", answer.status, answer.url.path()),
        )?;
        unchanged
            .expect(ctx, &format!("after {action} with the old cookie"))
            .await?;
    }

    ctx.step("alice logs in again and approves through the form");
    alice.login().await?;
    let approved = alice.approve(&grant).await?;
    expect_accepted(ctx, "approving", &approved)?;
    expect_grant(ctx, "after approving", &grant, state::ACTIVE, 3).await?;
    Ok(())
}

/// Every native grant route answers 401 with an error body to a missing or
/// wrong credential, nothing changes, and the bot's own token then works.
#[scenario(Sessions, parity, clauses = ["S3.statuses", "S3.error-body", "S1.token.forms", "S3.no-redirect"])]
async fn missing_or_wrong_token_is_401(ctx: &mut Ctx) -> Outcome {
    // Routes: list, get, confirm, submit, readback. Wrong: a made-up token or
    // Bearer, the bot's token with one character changed, Basic with a wrong
    // password or an unknown login.
    let alice = ctx.human("alice")?;
    ctx.step("alice logs in");
    alice.login().await?;
    let bot = ctx.bot(LAB_BOT).await?;
    let (active, proposal) = flows::active_grant(ctx, &alice, &bot, LAB, "task").await?;

    ctx.step("lab-bot submits one Issue; alice prepares a second grant for it");
    let native = ctx.native(LAB_BOT)?;
    let first = NewIssue::new("first", "body");
    let answer = native.submit(&active, &proposal, &first).await?;
    ctx.expect_status("the first submission", answer.status, 201)?;
    let (pending, _) = alice
        .prepare_grant(LAB, LAB_BOT, "second", "summary")
        .await?;
    let pending_proposal = bot.read_proposal(&pending).await?;
    let refused = NewIssue::new("refused", "body");
    let watch = Watch::new(LAB_BOT, LAB)
        .grant(&active)
        .grant(&pending)
        .key(&active, &first.request_key)
        .key(&active, &refused.request_key);
    let before = watch.take(ctx).await?;

    let mut credentials: Vec<(&str, Option<String>)> = vec![("no credential", None)];
    for (what, value) in ctx.tokens().wrong_authorization_headers(LAB_BOT)? {
        credentials.push((what, Some(value)));
    }
    for (what, value) in &credentials {
        ctx.step(&format!("every grant route with {what}"));
        let client = native.with_authorization(what, value.as_deref());
        let answers = [
            ("list", client.list_grants("").await?),
            ("get", client.get_grant(&active).await?),
            (
                "confirm",
                client.confirm(&pending, &pending_proposal).await?,
            ),
            ("submit", client.submit(&active, &proposal, &refused).await?),
            (
                "readback",
                client.submission(&active, &first.request_key).await?,
            ),
        ];
        for (route, answer) in &answers {
            flows::expect_native_error(ctx, &format!("{route} with {what}"), answer, 401)?;
        }
        ctx.observe(
            &format!("statuses with {what}"),
            &answers.iter().map(|(_, a)| a.status).collect::<Vec<_>>(),
        );
        watch
            .expect_unchanged(ctx, &format!("after the calls with {what}"), &before)
            .await?;
    }

    ctx.step("lab-bot's own token confirms the second grant");
    let answer = native.confirm(&pending, &pending_proposal).await?;
    ctx.expect_status("confirm with the bot's own token", answer.status, 200)?;
    Ok(())
}
