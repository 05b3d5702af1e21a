//! Delegated consent (spec §9) as several families ask for it: the person
//! who consents, a state nobody minted, a consent request to a client's
//! `redirect_uri` and how its answer hands a code back.

use grantgate_engine::prelude::*;

/// The person who consents in these scenarios: alice, the repository's
/// admin, so that "consent is not approval" is tested on the strongest case.
pub const CONSENTER: &str = "alice";

/// A state nobody minted, for a native request or a forged callback: a
/// random base64url string of 43 characters (256 bits, registered as a
/// secret like every state), then characters a redirect must encode (RFC
/// 6749's `state` is any VSCHAR): a space and `+ & = % # /`.
pub fn unminted_state(ctx: &Ctx) -> String {
    let s = oauth::verifier();
    ctx.register_secret(&s);
    format!("{s} +&=%#/")
}

/// Where a consent request sends the browser back: nothing listens there,
/// the harness reads the Core's `Location` instead of following it.
pub(crate) const REDIRECT: &str = "http://127.0.0.1:9/cb";

/// A consent request (spec §9) of `client` for [`REDIRECT`], with a fresh
/// S256 challenge and state.
pub(crate) fn consent_url(ctx: &Ctx, client: &str) -> Step<Url> {
    let verifier = oauth::verifier();
    ctx.register_secret(&verifier);
    let state = unminted_state(ctx);
    let mut url: Url = format!("{}{}", ctx.core_url(), oauth::AUTHORIZE)
        .parse()
        .map_err(|e| Abort::errored(format!("authorize URL: {e}")))?;
    url.query_pairs_mut()
        .append_pair("response_type", "code")
        .append_pair("client_id", client)
        .append_pair("redirect_uri", REDIRECT)
        .append_pair("state", &state)
        .append_pair("code_challenge", &oauth::s256(&verifier))
        .append_pair("code_challenge_method", "S256")
        .append_pair("scope", "read:repository write:issue");
    Ok(url)
}

/// The `code`s a consent decision's `Location` carries, each registered as
/// a secret before any report is written.
fn codes(ctx: &Ctx, answer: &Answer) -> Vec<String> {
    let Some(to) = answer.header("location").and_then(|l| Url::parse(&l).ok()) else {
        return Vec::new();
    };
    let codes: Vec<String> = (to.query_pairs())
        .filter(|(n, _)| n == "code")
        .map(|(_, v)| v.into_owned())
        .collect();
    for code in &codes {
        ctx.register_secret(code);
    }
    codes
}

/// Whether a consent decision's answer hands a code to the client: a
/// redirect to its `redirect_uri` carrying `code`.
pub(crate) fn delivers_code(ctx: &Ctx, answer: &Answer) -> bool {
    let codes = codes(ctx, answer);
    answer
        .header("location")
        .is_some_and(|l| l.starts_with(REDIRECT) && !codes.is_empty())
}

/// Whether a consent was answered as §9 says: a 302 or 303 to the
/// request's `redirect_uri` with one code and the request's state.
pub(crate) fn hands_back(ctx: &Ctx, answer: &Answer, request: &Url) -> bool {
    let codes = codes(ctx, answer);
    let param = |u: &Url, name: &str| -> Vec<String> {
        (u.query_pairs())
            .filter(|(n, _)| n == name)
            .map(|(_, v)| v.into_owned())
            .collect()
    };
    let Some(to) = answer.header("location").and_then(|l| Url::parse(&l).ok()) else {
        return false;
    };
    let mut target = to.clone();
    target.set_query(None);
    matches!(answer.status, 302 | 303)
        && target.as_str() == REDIRECT
        && codes.len() == 1
        && !codes[0].is_empty()
        && param(&to, "state") == param(request, "state")
}
