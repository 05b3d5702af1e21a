//! Family 18: delegated consent (spec §9) — the happy paths. A consent-mode
//! adapter holds no credential: a call parks, the adapter hands out an
//! authorize URL on the Core (by URL-mode elicitation, or in an
//! `auth_required` error), a person consents in the Core's browser, the
//! adapter's callback makes exactly one token POST, and the call resumes
//! with a token that acts for that person. A call whose request carries a
//! bearer of its own is served with it and never asks for consent.
//!
//! The shared steps of the family live here too: starting a consent bot,
//! checking the URL it hands out, and reading the token POSTs the fault
//! proxy saw.

use grantgate_engine::prelude::*;

use crate::support::consent::CONSENTER;
use crate::support::flows::{LAB, LAB_BOT};

/// The tool the consent scenarios park: a read whose answer is the same for
/// every token of the same person.
pub const READ_TOOL: &str = "get_repository";

/// The arguments of [`READ_TOOL`].
pub fn read_args() -> Value {
    let (owner, repo) = LAB.split_once('/').unwrap_or((LAB, ""));
    json!({"owner": owner, "repo": repo})
}

/// A consent-mode bot through the fault proxy, its client declaring
/// `elicitation`.
pub async fn consent_bot(ctx: &mut Ctx, elicitation: Elicitation) -> Step<Bot> {
    ctx.bot_builder("consent-client")
        .consent(elicitation)
        .via_proxy()
        .start()
        .await
}

/// How many random bits a state of this alphabet and length carries at
/// most: lowercase hex 4 per character, base64url 6, anything else 0 (a
/// state must travel in a URL unescaped).
pub fn state_bits(state: &str) -> usize {
    if !state.is_empty() && state.bytes().all(|b| b.is_ascii_hexdigit()) {
        4 * state.len()
    } else if oauth::is_base64url(state) {
        6 * state.len()
    } else {
        0
    }
}

/// Checks an authorize URL an adapter handed out (spec §9): on the Core
/// origin the adapter was given, the authorize path, `response_type=code`,
/// a client id, exactly the callback under its public URL as
/// `redirect_uri`, a 43-character S256 challenge, a state of at least 128
/// bits, and no scope beyond `read:repository write:issue`.
pub fn expect_consent_url(ctx: &Ctx, bot: &Bot, url: &ConsentUrl) -> Step<()> {
    let core = Url::parse(bot.core_url())
        .map_err(|e| Abort::errored(format!("the adapter's Core URL: {e}")))?;
    ctx.expect_eq(
        "the consent URL is on the Core origin the adapter forwards to",
        url.origin(),
        core.origin().ascii_serialization(),
    )?;
    ctx.expect_eq(
        "the consent URL is the authorize endpoint",
        url.path(),
        oauth::AUTHORIZE,
    )?;
    ctx.expect_eq(
        "response_type",
        url.param("response_type"),
        Some("code".to_owned()),
    )?;
    ctx.expect(
        "the consent URL names a client_id",
        url.param("client_id").is_some_and(|c| !c.is_empty()),
        "client_id",
    )?;
    let callback = format!(
        "{}{}",
        bot.public_url().unwrap_or_default(),
        oauth::CALLBACK
    );
    ctx.expect_eq(
        "redirect_uri is exactly the adapter's callback under its public URL",
        url.param("redirect_uri"),
        Some(callback),
    )?;
    ctx.expect_eq(
        "code_challenge_method",
        url.param("code_challenge_method"),
        Some("S256".to_owned()),
    )?;
    let challenge = url.challenge().unwrap_or_default();
    ctx.expect_eq(
        "code_challenge is 43 base64url characters (an S256 digest)",
        (challenge.len(), oauth::is_base64url(&challenge)),
        (43, true),
    )?;
    let state = url.state().unwrap_or_default();
    ctx.expect(
        "the state carries at least 128 random bits (22 base64url or 32 hex characters)",
        state_bits(&state) >= 128,
        &format!(
            "{} characters, {} bits at most",
            state.len(),
            state_bits(&state)
        ),
    )?;
    let scopes: Vec<String> = url
        .param("scope")
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    ctx.expect(
        "the requested scopes are within read:repository write:issue",
        scopes
            .iter()
            .all(|s| oauth::MAX_SCOPES.contains(&s.as_str())),
        &format!("{scopes:?}"),
    )
}

/// Checks the one token POST of a consent: `authorization_code`, the code
/// the Core redirected with, the URL's client and redirect URI, and a
/// verifier whose S256 digest is the URL's challenge.
pub fn expect_token_post(
    ctx: &Ctx,
    post: &TokenPost,
    url: &ConsentUrl,
    redirect: &ConsentRedirect,
) -> Step<()> {
    ctx.expect_eq(
        "the token POST: grant_type",
        post.field("grant_type"),
        Some("authorization_code".to_owned()),
    )?;
    ctx.expect(
        "the token POST carries the code the Core redirected with",
        post.field("code").is_some() && post.field("code") == redirect.code(),
        "code (a secret, compared in the harness)",
    )?;
    ctx.expect_eq(
        "the token POST: client_id and redirect_uri are the URL's",
        (post.field("client_id"), post.field("redirect_uri")),
        (url.param("client_id"), url.param("redirect_uri")),
    )?;
    let hashed = post.verifier().map(|v| oauth::s256(&v));
    ctx.expect(
        "the token POST's code_verifier hashes (S256) to the URL's code_challenge",
        hashed.is_some() && hashed == url.challenge(),
        "verifier (a secret, hashed in the harness)",
    )
}

/// Starts a call on `bot` that must park: waits for its URL-mode
/// elicitation, checks the URL, and that the call is still open and made no
/// native request.
pub async fn park(ctx: &mut Ctx, bot: &Bot, what: &str) -> Step<(PendingCall, ConsentUrl)> {
    ctx.step(&format!("{what}: a call parks and the adapter sends a URL"));
    let before = ctx.api_requests().await?;
    let pending = bot.start_call(READ_TOOL, read_args());
    let url = bot.consent_url().await?;
    expect_consent_url(ctx, bot, &url)?;
    ctx.expect(
        "the elicitation carries an elicitationId",
        !url.elicitation_id.is_empty(),
        "elicitationId",
    )?;
    ctx.expect("the call is parked", !pending.is_finished(), "finished")?;
    ctx.expect_eq(
        "no native request while parked",
        ctx.api_requests().await?,
        before,
    )?;
    Ok((pending, url))
}

/// The reply a person's pasted token gets for [`READ_TOOL`]: the reference
/// a consented call must equal.
pub async fn pasted_token_reply(ctx: &mut Ctx, login: &str) -> Step<ToolReply> {
    ctx.step(&format!(
        "{login} pastes a token of their own (read:repository write:issue) into an adapter"
    ));
    let token = ctx.mint_human_token(login, &oauth::MAX_SCOPES).await?;
    let pasted = ctx.bot_builder(login).token(&token).start().await?;
    let reply = pasted.call(READ_TOOL, read_args()).await?;
    ctx.expect_tool_ok("the pasted token reads the repository", &reply)?;
    Ok(reply)
}

/// A parked call resumes after consent (spec §9): the elicited URL is on
/// the Core origin with the exact callback as `redirect_uri`, a 43-character
/// S256 challenge and a state of at least 128 bits; nothing reaches the
/// native API before consent; after consent the Core redirects to the
/// callback with the same state, the adapter makes exactly one token POST
/// whose verifier hashes to the challenge, before any native request (its
/// answer carrying a 4 KiB member of its own); the parked call ends with the same result as the same person's pasted token;
/// a second call in the session needs no new consent and no new token POST.
#[scenario(Consent, parity, clauses = ["S9.adapter.park", "S9.adapter.state", "S9.adapter.redirect-uri", "S9.adapter.delivery", "S9.callback.exchange", "S9.authorize.session", "S9.consent.page", "S9.consent.redirect", "S9.register"])]
async fn parked_call_resumes_after_consent(ctx: &mut Ctx) -> Outcome {
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

/// Without URL elicitation — a client declaring form mode only, or none —
/// the call ends with `auth_required` whose message holds the authorize URL
/// (same checks as the elicited one) and no elicitation is sent, with no
/// native request; after consent the next call succeeds with one token
/// POST whose verifier hashes to the challenge. Another session of the same
/// adapter gets its own URL — another state and another challenge — and
/// the first session's token does not serve it.
#[scenario(Consent, parity, clauses = ["S9.adapter.delivery", "S9.adapter.state"])]
async fn auth_required_then_retry_after_consent(ctx: &mut Ctx) -> Outcome {
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

/// A request bearer takes precedence (spec §9): a consent-mode adapter
/// whose MCP client declares URL elicitation and sends lab-bot's own token
/// as its bearer serves the call with that bearer at once — lab-bot reads
/// the grant alice prepared for it, which only its agent may — with no
/// elicitation (nothing minted) and no token POST.
#[scenario(Consent, parity, clauses = ["S9.adapter.precedence"])]
async fn request_bearer_wins_over_consent(ctx: &mut Ctx) -> Outcome {
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
