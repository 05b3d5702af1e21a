//! Family 18: delegated consent (spec §9) — the happy paths. A consent-mode
//! adapter holds no credential: a call parks, the adapter hands out an
//! authorize URL on the Core (by URL-mode elicitation, or in an
//! `auth_required` error), a person consents in the Core's browser, the
//! adapter's callback makes exactly one token POST, and the call resumes
//! with a token that acts for that person. A call whose request carries a
//! bearer of its own is served with it and never asks for consent.
//!
//! The family's shared steps are in `parked_calls.rs`.

use grantgate_engine::prelude::*;

use crate::support::consent::CONSENTER;
use crate::support::flows::{LAB, LAB_BOT};
use super::parked_calls::{READ_TOOL, consent_bot, expect_consent_url, expect_token_post, park, pasted_token_reply, read_args};

/// A parked call resumes after consent through a well-formed URL and one PKCE
/// token exchange, with the same result as a pasted token.
#[scenario(Consent, parity, clauses = ["S9.adapter.park", "S9.adapter.state", "S9.adapter.redirect-uri", "S9.adapter.delivery", "S9.callback.exchange", "S9.authorize.session", "S9.consent.page", "S9.consent.redirect", "S9.register"])]
async fn parked_call_resumes_after_consent(ctx: &mut Ctx) -> Outcome {
    // Spec §9. The elicited URL is on the Core origin with the exact callback
    // as `redirect_uri`, a 43-character S256 challenge and a state of at
    // least 128 bits; nothing reaches the native API before consent. After
    // consent the Core redirects to the callback with the same state, and the
    // adapter makes exactly one token POST whose verifier hashes to the
    // challenge, before any native request (its answer carrying a 4 KiB
    // member of its own). The parked call ends with the same result as the
    // same person's pasted token; a second call in the session needs no new
    // consent and no new token POST.
    let reference = pasted_token_reply(ctx, CONSENTER).await?;
    ctx.step("a consent-mode adapter (URL elicitation) starts, through the proxy");
    let bot = consent_bot(ctx, Elicitation::Url).await?;
    let (pending, url) = park(ctx, &bot, "session A").await?;
    ctx.expect_eq(
        "no token POST before consent",
        ctx.token_posts().await?.len(),
        0,
    )?;

    ctx.step("alice opens the URL, signs in when asked, and consents");
    // The token answer carries a 4 KiB member the contract does not name, as
    // a Core may send (an OpenID Provider's `id_token` is about that size).
    let extra = Fault::ExtraMember("note".into(), 4096);
    ctx.proxy().await?.inject("POST", oauth::TOKEN, extra);
    let alice = ctx.human(CONSENTER)?;
    let (redirect, callback) = alice.consent(url.url(), true).await?;
    let callback_uri = url.param("redirect_uri").unwrap_or_default();
    ctx.expect(
        "the Core redirects (302 or 303) to the registered callback",
        matches!(redirect.status, 302 | 303) && redirect.target() == callback_uri,
        &format!("{} to {}", redirect.status, redirect.target()),
    )?;
    ctx.expect(
        "the redirect carries a code and the URL's state",
        redirect.code().is_some() && redirect.state() == url.state(),
        "code and state (secrets, compared in the harness)",
    )?;
    ctx.expect_status("the adapter's callback accepts it", callback.status, 200)?;

    ctx.step("the parked call resumes");
    let reply = pending.finish().await?;
    ctx.expect_tool_ok("the parked call succeeds", &reply)?;
    ctx.expect_eq(
        "its repository equals the pasted token's (the contract's members)",
        (reply.native_status(), reply.repository()?),
        (reference.native_status(), reference.repository()?),
    )?;
    let posts = ctx.token_posts().await?;
    ctx.expect_eq("exactly one token POST", posts.len(), 1)?;
    expect_token_post(ctx, &posts[0], &url, &redirect)?;
    ctx.expect_eq(
        "the Core answered the token POST 200",
        posts[0].answer_status(),
        Some(200),
    )?;
    let order = ctx.proxy_requests().await?;
    let token_at = order
        .iter()
        .position(|(m, p)| m == "POST" && p == oauth::TOKEN);
    let first_api = order.iter().position(|(_, p)| p.starts_with("/api/"));
    ctx.expect(
        "the token POST comes before the first native request",
        matches!((token_at, first_api), (Some(t), Some(a)) if t < a),
        &format!(
            "token POST at {}, first native request at {}",
            json_text(&token_at),
            json_text(&first_api)
        ),
    )?;

    ctx.step("a second call in the same session uses the stored token");
    let again = bot.call(READ_TOOL, read_args()).await?;
    ctx.expect_tool_ok("the second call succeeds at once", &again)?;
    ctx.expect_eq(
        "no new elicitation, no new token POST",
        (
            bot.unread_elicitations().await,
            ctx.token_posts().await?.len(),
        ),
        (0, 1),
    )?;
    ctx.observe("the consented result", &reply.structured);
    Ok(())
}

/// Without URL elicitation a call ends with `auth_required` and the authorize
/// URL, and after consent the retry succeeds; each session gets its own URL
/// and token.
#[scenario(Consent, parity, clauses = ["S9.adapter.delivery", "S9.adapter.state"])]
async fn auth_required_then_retry_after_consent(ctx: &mut Ctx) -> Outcome {
    // Without URL elicitation: a client declaring form mode only, or none.
    // The URL passes the same checks as the elicited one; no elicitation is
    // sent and no native request made. The retry makes one token POST whose
    // verifier hashes to the challenge. Another session of the same adapter
    // gets another state and another challenge, and the first session's token
    // does not serve it.
    ctx.step("a consent-mode adapter whose client declares form-mode elicitation only");
    let form_bot = consent_bot(ctx, Elicitation::Form).await?;
    let reply = form_bot.call(READ_TOOL, read_args()).await?;
    let what = "the call ends with auth_required (form mode is no URL mode)";
    ctx.expect_tool_error(what, &reply, "auth_required")?;
    let url = form_bot.url_in(&reply)?;
    expect_consent_url(ctx, &form_bot, &url)?;
    ctx.expect_eq(
        "no elicitation of either mode was sent to it",
        form_bot.unread_elicitations().await,
        0,
    )?;
    form_bot.stop().await;

    ctx.step("a consent-mode adapter (no elicitation) starts, through the proxy");
    let bot = consent_bot(ctx, Elicitation::None).await?;
    let reply = bot.call(READ_TOOL, read_args()).await?;
    ctx.expect_tool_error("the call ends with auth_required", &reply, "auth_required")?;
    let url = bot.url_in(&reply)?;
    expect_consent_url(ctx, &bot, &url)?;
    ctx.expect_eq("no native request", ctx.api_requests().await?, 0)?;

    ctx.step("alice consents at the URL");
    let alice = ctx.human(CONSENTER)?;
    let (redirect, callback) = alice.consent(url.url(), true).await?;
    ctx.expect_status("the adapter's callback accepts it", callback.status, 200)?;
    let posts = ctx.token_posts().await?;
    ctx.expect_eq("exactly one token POST", posts.len(), 1)?;
    expect_token_post(ctx, &posts[0], &url, &redirect)?;

    ctx.step("the client calls again");
    let retried = bot.call(READ_TOOL, read_args()).await?;
    ctx.expect_tool_ok("the retried call succeeds", &retried)?;
    ctx.expect_eq(
        "the retried call reads alice/lab",
        retried.repository()?.full_name,
        LAB.to_owned(),
    )?;

    ctx.step("another session of the same adapter calls");
    let other = bot.another_session().await?;
    let before = ctx.api_requests().await?;
    let second = other.call(READ_TOOL, read_args()).await?;
    ctx.expect_tool_error(
        "the other session is not served by the first one's token",
        &second,
        "auth_required",
    )?;
    ctx.expect_eq(
        "and makes no native request",
        ctx.api_requests().await?,
        before,
    )?;
    let url2 = other.url_in(&second)?;
    expect_consent_url(ctx, &other, &url2)?;
    ctx.expect(
        "its state and challenge are fresh (each state has its own verifier)",
        url2.state() != url.state() && url2.challenge() != url.challenge(),
        "state and challenge compared in the harness",
    )?;
    ctx.observe("auth_required, then", &retried.structured);
    Ok(())
}

/// A request bearer takes precedence over consent: the call is served with it
/// at once, with no elicitation and no token POST.
#[scenario(Consent, parity, clauses = ["S9.adapter.precedence"])]
async fn request_bearer_wins_over_consent(ctx: &mut Ctx) -> Outcome {
    // Spec §9: a consent-mode adapter whose MCP client declares URL
    // elicitation and sends lab-bot's own token as its bearer; lab-bot reads
    // the grant alice prepared for it, which only its agent may, and nothing
    // is minted.
    let alice = ctx.human(CONSENTER)?;
    ctx.step("alice prepares a grant for lab-bot");
    alice.login().await?;
    let (grant, _) = alice
        .prepare_grant(LAB, LAB_BOT, "Bearer over consent", "summary")
        .await?;

    ctx.step(
        "a consent-mode adapter (URL elicitation); its client sends lab-bot's token as bearer",
    );
    // A one-second consent timeout: an adapter that parks the call anyway
    // ends it within a second instead of holding the check.
    let bot = ctx
        .bot_builder(LAB_BOT)
        .consent(Elicitation::Url)
        .consent_timeout_secs(1)
        .bearer()
        .via_proxy()
        .start()
        .await?;
    let read = bot.get_grant(&grant).await?;
    ctx.expect_tool_ok("the call is served with the bearer at once", &read)?;
    ctx.expect_eq("native status", read.native_status(), Some(200))?;
    let read = read.grant()?;
    ctx.expect_eq(
        "lab-bot's grant as the Core answers it to lab-bot",
        (read.id, read.agent.login.as_str(), read.state.as_str()),
        (grant.id, LAB_BOT, state::AWAITING_AGENT),
    )?;

    ctx.step("nothing was minted and nothing exchanged");
    ctx.expect_eq(
        "no elicitation, no token POST",
        (
            bot.unread_elicitations().await,
            ctx.token_posts().await?.len(),
        ),
        (0, 0),
    )?;
    ctx.observe("the grant read with the bearer", &read.raw);
    Ok(())
}
