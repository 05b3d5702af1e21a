//! Family 18: delegated consent (spec §9) — the adapter's callback. Its
//! authenticity is the state binding alone: a missing, empty, unknown,
//! altered, replayed or expired state, or one whose MCP session ended, gets
//! a 400 page and nothing is exchanged; a code delivered with another
//! session's state fails that session only; a refusal or a failed exchange
//! ends the call and never resumes it.

use grantgate_engine::prelude::*;

use super::parked_calls::{READ_TOOL, consent_bot, expect_token_post, park, read_args};
use crate::support::consent::{CONSENTER, unminted_state};

/// `state` with its last character changed, registered as a secret: all
/// but one character of it is a live state.
fn altered(ctx: &Ctx, state: &str) -> String {
    let mut s = state.to_owned();
    let last = if s.ends_with('A') { "B" } else { "A" };
    s.replace_range(s.len().saturating_sub(1).., last);
    ctx.register_secret(&s);
    s
}

/// Opens a callback URL in a browser with no session, expects 400 and no
/// token POST so far beyond `posts`.
async fn expect_refused(
    ctx: &Ctx,
    browser: &Human,
    what: &str,
    url: &Url,
    posts: usize,
) -> Step<()> {
    let page = browser.open_url(url).await?;
    ctx.expect_status(
        &format!("{what}: the callback answers 400"),
        page.status,
        400,
    )?;
    ctx.expect_eq(
        &format!("{what}: nothing is exchanged"),
        ctx.token_posts().await?.len(),
        posts,
    )
}

/// A consent callback with a state that is not its live session's gets a 400
/// page and no token POST; the valid callback resumes the call, once.
#[scenario(Consent, parity, clauses = ["S9.callback.refusals", "S9.callback.exchange"])]
async fn consent_callbacks_refused_exchange_nothing(ctx: &mut Ctx) -> Outcome {
    // Refused, the parked call staying parked: missing, empty, random and
    // altered states, and the state of a session that has ended (with a real
    // code for it). The valid callback resumes with one token POST; replaying
    // it gets 400 and no second POST.
    ctx.step("a consent-mode adapter (URL elicitation) starts, through the proxy");
    let bot = consent_bot(ctx, Elicitation::Url).await?;
    let (pending, url) = park(ctx, &bot, "session A").await?;
    let callback = consent_callback(&bot)?;
    // Whoever opens a callback needs no session: a fresh browser.
    let stranger = ctx.second_browser("mallory")?;

    ctx.step("alice consents but her browser does not follow the redirect yet");
    let alice = ctx.human(CONSENTER)?;
    let form = alice.consent_form(url.url(), true).await?;
    let redirect = alice.decide_consent(&form).await?;
    let code = redirect
        .code()
        .ok_or_else(|| Abort::failed("the Core's consent redirect carries no code"))?;
    let state = url.state().unwrap_or_default();

    ctx.step("callbacks without a valid state are refused");
    let mut cases: Vec<(&str, Url)> = vec![
        ("no code, no state", callback.clone()),
        ("empty code and state", {
            let mut u = callback.clone();
            u.set_query(Some("code=&state="));
            u
        }),
        ("the code without a state", redirect.with(Some(&code), None)),
        (
            "the code with an empty state",
            redirect.with(Some(&code), Some("")),
        ),
        (
            "the code with a random state",
            redirect.with(Some(&code), Some(&unminted_state(ctx))),
        ),
        (
            "the code with the state's last character changed",
            redirect.with(Some(&code), Some(&altered(ctx, &state))),
        ),
    ];
    for (what, u) in cases.drain(..) {
        expect_refused(ctx, &stranger, what, &u, 0).await?;
        ctx.expect(
            &format!("{what}: the call stays parked"),
            !pending.is_finished(),
            "finished",
        )?;
    }

    ctx.step("session B parks, alice consents for it, then B ends before its callback");
    let b = bot.another_session().await?;
    let b_pending = b.start_call(READ_TOOL, read_args());
    let b_url = b.consent_url().await?;
    let b_form = alice.consent_form(b_url.url(), true).await?;
    let b_redirect = alice.decide_consent(&b_form).await?;
    b.end_session().await?;
    drop(b_pending);
    expect_refused(
        ctx,
        &stranger,
        "an ended session's state",
        b_redirect.url(),
        0,
    )
    .await?;
    ctx.expect("session A stays parked", !pending.is_finished(), "finished")?;

    ctx.step("the valid callback resumes session A");
    let page = alice.open_url(redirect.url()).await?;
    ctx.expect_status("the callback accepts it", page.status, 200)?;
    let reply = pending.finish().await?;
    ctx.expect_tool_ok("the parked call succeeds", &reply)?;
    let posts = ctx.token_posts().await?;
    ctx.expect_eq("exactly one token POST", posts.len(), 1)?;
    expect_token_post(ctx, &posts[0], &url, &redirect)?;

    ctx.step("the same callback again");
    expect_refused(ctx, &stranger, "a replayed state", redirect.url(), 1).await?;
    ctx.observe("token POSTs", &ctx.token_posts().await?.len());
    Ok(())
}

/// A consent state expires after `--consent-timeout-secs`: the parked call
/// ends with `consent_timeout`, and a later callback gets 400 and no token
/// POST.
#[scenario(Consent, parity, clauses = ["S9.callback.refusals", "S9.adapter.outcomes"])]
async fn expired_consent_state_is_refused(ctx: &mut Ctx) -> Outcome {
    // Here 1 s; the late callback carries a real code for that state.
    // Likewise a state handed out in `auth_required` (which outlives no call)
    // and used after its deadline.
    ctx.step("a consent-mode adapter with a 1-second consent timeout starts");
    let bot = ctx
        .bot_builder("consent-client")
        .consent(Elicitation::Url)
        .consent_timeout_secs(1)
        .via_proxy()
        .start()
        .await?;
    let pending = bot.start_call(READ_TOOL, read_args());
    let url = bot.consent_url().await?;
    ctx.step("alice consents, her browser holding the redirect");
    let alice = ctx.human(CONSENTER)?;
    let form = alice.consent_form(url.url(), true).await?;
    let redirect = alice.decide_consent(&form).await?;
    ctx.step("the deadline passes");
    let reply = pending.finish().await?;
    ctx.expect_tool_error(
        "the call ends with consent_timeout",
        &reply,
        "consent_timeout",
    )?;
    ctx.step("the callback arrives after the deadline");
    let page = alice.open_url(redirect.url()).await?;
    ctx.expect_status("the expired state is refused", page.status, 400)?;
    ctx.expect_eq(
        "nothing is exchanged, nothing reaches the native API",
        (ctx.token_posts().await?.len(), ctx.api_requests().await?),
        (0, 0),
    )?;
    ctx.observe("expired", &(reply.error_code(), page.status));

    ctx.step("without elicitation: a state handed out in auth_required, used after its deadline");
    let told = ctx
        .bot_builder("consent-client-2")
        .consent(Elicitation::None)
        .consent_timeout_secs(1)
        .via_proxy()
        .start()
        .await?;
    let reply = told.call(READ_TOOL, read_args()).await?;
    let minted = std::time::Instant::now();
    ctx.expect_tool_error("the call ends with auth_required", &reply, "auth_required")?;
    let url = told.url_in(&reply)?;
    let form = alice.consent_form(url.url(), true).await?;
    let redirect = alice.decide_consent(&form).await?;
    // The state lives 1 s from its minting; the callback comes after that,
    // with a second to spare for a clock that counts whole seconds.
    let left = std::time::Duration::from_millis(2_200).saturating_sub(minted.elapsed());
    ctx.wait_out(left).await;
    let page = alice.open_url(redirect.url()).await?;
    ctx.expect_status("the expired state is refused", page.status, 400)?;
    ctx.expect_eq(
        "nothing is exchanged, nothing reaches the native API",
        (ctx.token_posts().await?.len(), ctx.api_requests().await?),
        (0, 0),
    )?;
    ctx.observe("expired after auth_required", &page.status);
    Ok(())
}

/// A code delivered with another session's state fails only that session,
/// after one token POST with its verifier, and the first session still
/// resumes alone.
#[scenario(Consent, parity, clauses = ["S9.callback.cross-session", "S9.adapter.outcomes"])]
async fn consent_code_with_another_sessions_state(ctx: &mut Ctx) -> Outcome {
    // Sessions A and B park on one adapter; A's code with B's state is
    // exchanged with B's verifier, which the Core refuses: B's call ends with
    // `consent_failed`, A stays parked, and a fresh consent for A's own state
    // resumes A — and only A: eight more sessions parked meanwhile stay
    // parked, and their states did not push A's out.
    ctx.step("a consent-mode adapter (URL elicitation) starts, through the proxy");
    let bot = consent_bot(ctx, Elicitation::Url).await?;
    let (a_pending, a_url) = park(ctx, &bot, "session A").await?;
    let b = bot.another_session().await?;
    let (b_pending, b_url) = park(ctx, &b, "session B").await?;
    ctx.expect(
        "the two sessions have different states and challenges",
        a_url.state() != b_url.state() && a_url.challenge() != b_url.challenge(),
        "compared in the harness",
    )?;

    ctx.step("alice consents for A; A's code is delivered with B's state");
    let alice = ctx.human(CONSENTER)?;
    let form = alice.consent_form(a_url.url(), true).await?;
    let a_redirect = alice.decide_consent(&form).await?;
    let a_code = a_redirect
        .code()
        .ok_or_else(|| Abort::failed("the Core's consent redirect carries no code"))?;
    let crossed = a_redirect.with(Some(&a_code), b_url.state().as_deref());
    let _ = alice.open_url(&crossed).await?;
    let b_reply = b_pending.finish().await?;
    ctx.expect_tool_error(
        "B's call ends with consent_failed",
        &b_reply,
        "consent_failed",
    )?;
    let posts = ctx.token_posts().await?;
    ctx.expect_eq("exactly one token POST", posts.len(), 1)?;
    let hashed = posts[0].verifier().map(|v| oauth::s256(&v));
    ctx.expect(
        "it was made with B's verifier (the state decides the session)",
        hashed.is_some() && hashed == b_url.challenge(),
        "verifier hashed in the harness",
    )?;
    ctx.expect_eq("the Core refused it", posts[0].answer_status(), Some(400))?;
    ctx.expect("A stays parked", !a_pending.is_finished(), "finished")?;
    ctx.expect_eq(
        "nothing reached the native API",
        ctx.api_requests().await?,
        0,
    )?;

    // A state is bound to its session and lives until used or expired
    // (§9): however many other sessions open states meanwhile (eight here,
    // so A's is one of nine), none of theirs pushes A's out.
    let mut others = Vec::new();
    for n in 1..=8 {
        let c = bot.another_session().await?;
        let (pending, _url) = park(ctx, &c, &format!("session C{n}")).await?;
        others.push(pending);
    }

    ctx.step("alice consents for A again; A's own callback resumes A");
    let form = alice.consent_form(a_url.url(), true).await?;
    let again = alice.decide_consent(&form).await?;
    let page = alice.open_url(again.url()).await?;
    ctx.expect_status("A's callback is accepted", page.status, 200)?;
    let a_reply = a_pending.finish().await?;
    ctx.expect_tool_ok("A's call succeeds", &a_reply)?;
    let posts = ctx.token_posts().await?;
    ctx.expect_eq("one more token POST", posts.len(), 2)?;
    expect_token_post(ctx, &posts[1], &a_url, &again)?;
    // A call woken by A's consent would end within milliseconds of A's.
    sleep(std::time::Duration::from_millis(300)).await;
    ctx.expect(
        "C1–C8 stay parked: A's token serves A's session only",
        others.iter().all(|c| !c.is_finished()),
        "finished",
    )?;
    ctx.observe("B, then A", &(b_reply.error_code(), a_reply.is_error));
    Ok(())
}

/// A refused consent ends the call with `consent_denied`, and any other error
/// with `consent_failed`, with nothing exchanged or requested.
#[scenario(Consent, parity, clauses = ["S9.consent.decision", "S9.consent.redirect", "S9.adapter.outcomes"])]
async fn denied_consent_ends_the_call(ctx: &mut Ctx) -> Outcome {
    // Refused: the Core redirects to the callback with `error=access_denied`
    // and the state. Other errors: `server_error`, `temporarily_unavailable`,
    // `invalid_scope`.
    ctx.step("a consent-mode adapter (URL elicitation) starts, through the proxy");
    let bot = consent_bot(ctx, Elicitation::Url).await?;
    let (pending, url) = park(ctx, &bot, "the session").await?;
    ctx.step("alice refuses");
    let alice = ctx.human(CONSENTER)?;
    let (redirect, _page) = alice.consent(url.url(), false).await?;
    ctx.expect_eq(
        "the Core redirects (302 or 303) with error=access_denied to the callback",
        (
            matches!(redirect.status, 302 | 303),
            redirect.target(),
            redirect.error(),
        ),
        (
            true,
            url.param("redirect_uri").unwrap_or_default(),
            Some("access_denied".to_owned()),
        ),
    )?;
    ctx.expect(
        "with the URL's state and no code",
        redirect.state() == url.state() && redirect.code().is_none(),
        "compared in the harness",
    )?;
    let reply = pending.finish().await?;
    ctx.expect_tool_error(
        "the call ends with consent_denied",
        &reply,
        "consent_denied",
    )?;
    ctx.expect_eq(
        "no token POST, no native request",
        (ctx.token_posts().await?.len(), ctx.api_requests().await?),
        (0, 0),
    )?;
    ctx.observe("denied", &reply.error_code());

    // RFC 6749 §4.1.2.1: only `access_denied` is the person's refusal; any
    // other error the authorization server reports is a failure.
    let callback = consent_callback(&bot)?;
    for error in ["server_error", "temporarily_unavailable", "invalid_scope"] {
        let session = bot.another_session().await?;
        let (pending, url) = park(
            ctx,
            &session,
            &format!("a session the Core answers {error}"),
        )
        .await?;
        let mut to = callback.clone();
        to.query_pairs_mut()
            .append_pair("error", error)
            .append_pair("state", &url.state().unwrap_or_default());
        let _ = ctx.second_browser("mallory")?.open_url(&to).await?;
        let reply = pending.finish().await?;
        let what = format!("{error}: the call ends with consent_failed");
        ctx.expect_tool_error(&what, &reply, "consent_failed")?;
        ctx.expect_eq(
            &format!("{error}: no token POST, no native request"),
            (ctx.token_posts().await?.len(), ctx.api_requests().await?),
            (0, 0),
        )?;
    }
    Ok(())
}

/// The adapter's consent callback URL.
fn consent_callback(bot: &Bot) -> Step<Url> {
    format!(
        "{}{}",
        bot.public_url().unwrap_or_default(),
        oauth::CALLBACK
    )
    .parse()
    .map_err(|e| Abort::errored(format!("callback URL: {e}")))
}

/// A failed token exchange ends the call with `consent_failed` after exactly
/// one token POST and never resumes it.
#[scenario(Consent, parity, clauses = ["S9.adapter.outcomes", "S9.callback.exchange", "S6.no-redirects"])]
async fn failed_consent_exchange_never_resumes(ctx: &mut Ctx) -> Outcome {
    // Failed: the token answer lost on the way (session A), garbled (session
    // B), a `307` back to the token endpoint itself (session C: no redirect
    // is followed, §6, and a `307` would repeat the POST), or a token of type
    // `mac` (session D: §9's answer is a bearer token, and RFC 6749 §7.1
    // forbids using a type the client does not know).
    ctx.step("a consent-mode adapter (URL elicitation) starts, through the proxy");
    let bot = consent_bot(ctx, Elicitation::Url).await?;
    let alice = ctx.human(CONSENTER)?;
    let b = bot.another_session().await?;
    let c = bot.another_session().await?;
    let d = bot.another_session().await?;
    let again = format!("{}{}", ctx.proxy().await?.url(), oauth::TOKEN);
    // RFC 6749 §7.1: a client must not use a token whose type it does not know.
    let mac =
        json!({"access_token": "grantgate-mac-token", "token_type": "mac", "expires_in": 3600});
    let cases: [(&str, &Bot, Fault); 4] = [
        ("the token answer is lost", &bot, Fault::DropResponse),
        ("the token answer is garbled", &b, Fault::MalformedJson),
        (
            "the token answer redirects to itself",
            &c,
            Fault::Respond(Canned::redirect(307, &again)),
        ),
        (
            "the token is of type mac",
            &d,
            Fault::ReplaceBody(mac.to_string().into()),
        ),
    ];
    for (i, (what, session, fault)) in cases.into_iter().enumerate() {
        let (pending, url) = park(ctx, session, what).await?;
        ctx.proxy().await?.inject("POST", oauth::TOKEN, fault);
        ctx.step(&format!("{what}: alice consents"));
        let _ = alice.consent(url.url(), true).await?;
        let reply = pending.finish().await?;
        ctx.expect_tool_error(
            &format!("{what}: the call ends with consent_failed"),
            &reply,
            "consent_failed",
        )?;
        ctx.expect_eq(
            &format!("{what}: exactly one more token POST, no native request"),
            (ctx.token_posts().await?.len(), ctx.api_requests().await?),
            (i + 1, 0),
        )?;
        ctx.observe(what, &reply.error_code());
    }
    Ok(())
}
