//! The steps the consent family shares: the tool a parked call reads,
//! starting a consent bot, parking a call, checking the URL the adapter
//! hands out and the token POST the fault proxy saw, and a pasted token's
//! reply to compare a consented call with.

use grantgate_engine::prelude::*;

use crate::support::flows::LAB;

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
    let token = ctx.tokens().mint_human_token(login, &oauth::MAX_SCOPES).await?;
    let pasted = ctx.bot_builder(login).token(&token).start().await?;
    let reply = pasted.call(READ_TOOL, read_args()).await?;
    ctx.expect_tool_ok("the pasted token reads the repository", &reply)?;
    Ok(reply)
}
