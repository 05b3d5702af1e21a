//! Family 18: delegated consent (spec §9) — the Core's OAuth rules, proved
//! natively (a browser and a token client, no adapter): the authorize
//! endpoint refuses what is not registered exactly and anything but S256,
//! a code is single use and bound to its client, redirect URI and
//! challenge, it expires, and the consent form needs its own session's
//! `_csrf`.

use grantgate_engine::prelude::*;

use crate::support::consent::{CONSENTER, unminted_state};

/// A redirect URI nothing listens on: the harness never follows it, it
/// reads the Core's `Location` instead.
const REDIRECT: &str = "http://127.0.0.1:9/cb";
/// A second registered redirect URI of the same application.
const REDIRECT_2: &str = "http://127.0.0.1:9/cb2";

/// An authorize request, parameter by parameter (`None` leaves it out).
struct Authorize<'a> {
    client_id: Option<&'a str>,
    redirect_uri: Option<&'a str>,
    challenge: Option<&'a str>,
    method: Option<&'a str>,
    state: &'a str,
    scope: &'a str,
}

impl Authorize<'_> {
    fn url(&self, core: &str) -> Step<Url> {
        let mut url: Url = format!("{core}{}", oauth::AUTHORIZE)
            .parse()
            .map_err(|e| Abort::errored(format!("authorize URL: {e}")))?;
        {
            let mut q = url.query_pairs_mut();
            q.append_pair("response_type", "code");
            let optional = [
                ("client_id", self.client_id),
                ("redirect_uri", self.redirect_uri),
                ("state", Some(self.state)),
                ("code_challenge", self.challenge),
                ("code_challenge_method", self.method),
                ("scope", Some(self.scope)),
            ];
            for (name, value) in optional {
                if let Some(v) = value {
                    q.append_pair(name, v);
                }
            }
        }
        Ok(url)
    }
}

/// The scopes a consent asks for by default.
const FULL_SCOPE: &str = "read:repository write:issue";

/// A consent obtained natively: alice (signed in when asked) consents to
/// `client_id` for `redirect_uri` with a fresh verifier; returns the code
/// and the verifier.
async fn code_for(
    ctx: &Ctx,
    alice: &Human,
    client_id: &str,
    redirect_uri: &str,
) -> Step<(String, String)> {
    code_with_scope(ctx, alice, client_id, redirect_uri, FULL_SCOPE).await
}

/// [`code_for`] asking for `scope`.
async fn code_with_scope(
    ctx: &Ctx,
    alice: &Human,
    client_id: &str,
    redirect_uri: &str,
    scope: &str,
) -> Step<(String, String)> {
    let verifier = oauth::verifier();
    code_with(ctx, alice, (client_id, redirect_uri), scope, verifier).await
}

/// [`code_for`] with the PKCE `verifier` given.
async fn code_with(
    ctx: &Ctx,
    alice: &Human,
    (client_id, redirect_uri): (&str, &str),
    scope: &str,
    verifier: String,
) -> Step<(String, String)> {
    ctx.register_secret(&verifier);
    let challenge = oauth::s256(&verifier);
    let state = unminted_state(ctx);
    let url = Authorize {
        client_id: Some(client_id),
        redirect_uri: Some(redirect_uri),
        challenge: Some(&challenge),
        method: Some("S256"),
        state: &state,
        scope,
    }
    .url(ctx.core_url())?;
    let form = alice.consent_form(&url, true).await?;
    let redirect = alice.decide_consent(&form).await?;
    ctx.expect_eq(
        "the Core redirects to the registered URI",
        redirect.target(),
        redirect_uri.to_owned(),
    )?;
    ctx.expect(
        "with a code and the request's state",
        redirect.code().is_some() && redirect.state().as_deref() == Some(state.as_str()),
        "compared in the harness",
    )?;
    Ok((redirect.code().unwrap_or_default(), verifier))
}

/// The token request's form.
fn exchange<'a>(
    code: &'a str,
    redirect_uri: &'a str,
    client_id: &'a str,
    verifier: Option<&'a str>,
) -> Vec<(&'a str, &'a str)> {
    let mut fields = vec![
        ("grant_type", "authorization_code"),
        ("code", code),
        ("redirect_uri", redirect_uri),
        ("client_id", client_id),
    ];
    if let Some(v) = verifier {
        fields.push(("code_verifier", v));
    }
    fields
}

/// Expects the token endpoint's refusal: 400 `{"error": "invalid_grant"}`.
fn expect_invalid_grant(ctx: &Ctx, what: &str, answer: &Answer) -> Step<()> {
    let error = answer
        .json()
        .ok()
        .and_then(|j| j.get("error").and_then(|e| e.as_str()).map(str::to_owned));
    ctx.expect_eq(
        &format!("{what}: 400 invalid_grant"),
        (answer.status, error),
        (400, Some("invalid_grant".to_owned())),
    )?;
    ctx.observe(what, &answer.status);
    Ok(())
}

/// Expects a 200 token answer with `access_token`, `token_type` bearer,
/// `expires_in` and a `scope` within `read:repository write:issue`.
fn expect_token(ctx: &Ctx, what: &str, answer: &Answer) -> Step<()> {
    ctx.expect_status(&format!("{what}: 200"), answer.status, 200)?;
    let json = answer.json()?;
    let scopes: Vec<&str> = json["scope"]
        .as_str()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    ctx.expect_eq(
        &format!("{what}: a bearer token with expires_in"),
        (
            json["access_token"].as_str().is_some_and(|t| !t.is_empty()),
            json["token_type"].as_str().map(str::to_ascii_lowercase),
            json["expires_in"].is_number(),
        ),
        (true, Some("bearer".to_owned()), true),
    )?;
    // RFC 6749 §5.1, read as RFC 9111 §5.2 reads the field: a list of
    // directives, any letter case, others beside it.
    let no_store = (answer.header_values("cache-control").iter())
        .flat_map(|v| v.split(','))
        .any(|d| {
            d.split('=')
                .next()
                .unwrap_or_default()
                .trim()
                .eq_ignore_ascii_case("no-store")
        });
    ctx.expect(
        &format!("{what}: Cache-Control: no-store"),
        no_store,
        &answer.header_values("cache-control").join(", "),
    )?;
    ctx.expect(
        &format!("{what}: scope within read:repository write:issue"),
        scopes.iter().all(|s| oauth::MAX_SCOPES.contains(s)),
        &format!("{scopes:?}"),
    )
}

/// The authorize endpoint answers what is not registered, or not S256, with a
/// 400 page and no redirect; the same request done right shows the consent
/// form.
#[scenario(Consent, parity, clauses = ["S9.authorize.refusals", "S9.authorize.method"])]
async fn consent_authorize_refuses_what_is_not_registered(ctx: &mut Ctx) -> Outcome {
    // Refused: an unregistered `redirect_uri`, one that extends a registered
    // one (as a path or a prefix), an unknown client, a missing challenge and
    // a `plain` challenge.
    ctx.step("an application is registered with one redirect URI; alice signs in");
    let client = ctx.consent().oauth_app(&[REDIRECT.to_owned()]).await?;
    let alice = ctx.human(CONSENTER)?;
    alice.login().await?;
    let verifier = oauth::verifier();
    ctx.register_secret(&verifier);
    let challenge = oauth::s256(&verifier);
    let state = unminted_state(ctx);
    let good = Authorize {
        client_id: Some(&client),
        redirect_uri: Some(REDIRECT),
        challenge: Some(&challenge),
        method: Some("S256"),
        state: &state,
        scope: FULL_SCOPE,
    };
    ctx.step("the request done right shows the consent form");
    let page = alice.authorize(&good.url(ctx.core_url())?).await?;
    ctx.expect(
        "a consent form posting to /login/oauth/grant",
        page.status == 200 && page.has_form_to(oauth::GRANT),
        &format!("status {}", page.status),
    )?;
    let cases = [
        (
            "an unregistered redirect_uri",
            Authorize {
                redirect_uri: Some("http://127.0.0.1:9/elsewhere"),
                ..good
            },
        ),
        (
            "the registered redirect_uri extended by a path",
            Authorize {
                redirect_uri: Some("http://127.0.0.1:9/cb/extra"),
                ..good
            },
        ),
        (
            "the registered redirect_uri extended as a prefix",
            Authorize {
                redirect_uri: Some("http://127.0.0.1:9/cbx"),
                ..good
            },
        ),
        (
            "an unknown client",
            Authorize {
                client_id: Some("grantgate-no-such-client"),
                ..good
            },
        ),
        (
            "no code_challenge",
            Authorize {
                challenge: None,
                method: None,
                ..good
            },
        ),
        (
            "a plain challenge",
            Authorize {
                challenge: Some(&verifier),
                method: Some("plain"),
                ..good
            },
        ),
    ];
    for (what, request) in cases {
        ctx.step(&format!("authorize with {what}"));
        let page = alice.authorize(&request.url(ctx.core_url())?).await?;
        ctx.expect_eq(
            &format!("{what}: a 400 page, no redirect, no consent form"),
            (
                page.status,
                page.redirects.len(),
                page.has_form_to(oauth::GRANT),
            ),
            (400, 0, false),
        )?;
        ctx.observe(what, &page.status);
    }
    Ok(())
}

/// The token endpoint exchanges a code once, for its own client, redirect URI
/// and verifier, for a bearer token within the requested scopes.
#[scenario(Consent, parity, clauses = ["S9.token.exchange", "S9.token.no-store", "S9.token.code-binding", "S9.token.scope", "S0.standards.pkce"])]
async fn consent_token_endpoint_binds_the_code(ctx: &mut Ctx) -> Outcome {
    // The right exchange is 200 with a bearer token of at most
    // `read:repository write:issue` and `Cache-Control: no-store`, with a
    // verifier of 43 or of 128 characters too. A wrong verifier, a reused
    // code, another client's code and another registered redirect URI are
    // each 400 `invalid_grant`, a missing verifier 400 (`invalid_grant` or,
    // as RFC 6749 §5.2 names it, `invalid_request`). A token asked for
    // `read:repository` carries only that and cannot create an Issue (403).
    ctx.step("two applications are registered; alice signs in");
    let client = ctx
        .consent()
        .oauth_app(&[REDIRECT.to_owned(), REDIRECT_2.to_owned()])
        .await?;
    let other = ctx.consent().oauth_app(&[REDIRECT.to_owned()]).await?;
    let alice = ctx.human(CONSENTER)?;
    alice.login().await?;

    ctx.step("a wrong verifier");
    let (code, _) = code_for(ctx, &alice, &client, REDIRECT).await?;
    let wrong = oauth::verifier();
    ctx.register_secret(&wrong);
    let answer = ctx
        .consent()
        .token_request(&exchange(&code, REDIRECT, &client, Some(&wrong)))
        .await?;
    expect_invalid_grant(ctx, "a wrong verifier", &answer)?;

    ctx.step("no verifier");
    let (code, _) = code_for(ctx, &alice, &client, REDIRECT).await?;
    let answer = ctx
        .consent()
        .token_request(&exchange(&code, REDIRECT, &client, None))
        .await?;
    // RFC 6749 §5.2 names a missing parameter `invalid_request`; either
    // refusal is honest, a token is not.
    let error = answer
        .json()
        .ok()
        .and_then(|j| j.get("error").and_then(|e| e.as_str()).map(str::to_owned));
    ctx.expect(
        "no verifier: 400 invalid_grant or invalid_request",
        answer.status == 400
            && matches!(error.as_deref(), Some("invalid_grant" | "invalid_request")),
        &format!("{} {}", answer.status, json_text(&error)),
    )?;
    ctx.observe("no verifier", &answer.status);

    ctx.step("verifiers at RFC 7636's bounds: 43 and 128 characters, `~` and `.` among them");
    for length in [43, 128] {
        let random = oauth::verifier() + &oauth::verifier() + &oauth::verifier();
        let verifier = format!("~.{}", &random[..length - 2]);
        let (code, verifier) =
            code_with(ctx, &alice, (&client, REDIRECT), FULL_SCOPE, verifier).await?;
        let answer = ctx
            .consent()
            .token_request(&exchange(&code, REDIRECT, &client, Some(&verifier)))
            .await?;
        expect_token(ctx, &format!("a verifier of {length} characters"), &answer)?;
    }

    ctx.step("the right exchange, then the same code again");
    let (code, verifier) = code_for(ctx, &alice, &client, REDIRECT).await?;
    let answer = ctx
        .consent()
        .token_request(&exchange(&code, REDIRECT, &client, Some(&verifier)))
        .await?;
    expect_token(ctx, "the right exchange", &answer)?;
    let answer = ctx
        .consent()
        .token_request(&exchange(&code, REDIRECT, &client, Some(&verifier)))
        .await?;
    expect_invalid_grant(ctx, "a reused code", &answer)?;

    ctx.step("the code of one application exchanged as another's");
    let (code, verifier) = code_for(ctx, &alice, &client, REDIRECT).await?;
    let answer = ctx
        .consent()
        .token_request(&exchange(&code, REDIRECT, &other, Some(&verifier)))
        .await?;
    expect_invalid_grant(ctx, "another client's code", &answer)?;

    ctx.step("a code issued for one redirect URI exchanged with the other");
    let (code, verifier) = code_for(ctx, &alice, &client, REDIRECT).await?;
    let answer = ctx
        .consent()
        .token_request(&exchange(&code, REDIRECT_2, &client, Some(&verifier)))
        .await?;
    expect_invalid_grant(ctx, "another redirect URI", &answer)?;

    ctx.step("a code asked for read:repository only");
    let (code, verifier) =
        code_with_scope(ctx, &alice, &client, REDIRECT, "read:repository").await?;
    let answer = ctx
        .consent()
        .token_request(&exchange(&code, REDIRECT, &client, Some(&verifier)))
        .await?;
    expect_token(ctx, "read:repository only", &answer)?;
    let token = ctx.consent().consent_token_in(&answer)?;
    ctx.expect_eq(
        "the token carries the requested scope only",
        token.scopes(),
        vec!["read:repository".to_owned()],
    )?;
    let native = ctx.consent().native_with_consent(CONSENTER, &token)?;
    let before = crate::support::flows::issue_count(ctx, crate::support::flows::LAB).await?;
    let answer = native
        .call(
            "POST",
            &core_api::issues(crate::support::flows::LAB),
            Some(&json!({"title": "beyond its scope", "body": "b"})),
        )
        .await?;
    ctx.expect_status("creating an Issue with it is 403", answer.status, 403)?;
    ctx.expect_eq(
        "no Issue was written",
        crate::support::flows::issue_count(ctx, crate::support::flows::LAB).await?,
        before,
    )?;
    Ok(())
}

/// The login detour never redirects a browser off the Core's origin, whatever
/// `redirect_to` another host's URL it was opened with.
#[scenario(Consent, parity, clauses = ["S9.authorize.session"])]
async fn consent_login_brings_back_only_to_the_core(ctx: &mut Ctx) -> Outcome {
    // `redirect_to` is Forgejo's parameter; the URLs are absolute,
    // scheme-relative or backslashed. A Core that ignores the parameter,
    // refuses it or lands on its own page is as honest.
    let core = Url::parse(ctx.core_url())
        .map_err(|e| Abort::errored(format!("the Core URL: {e}")))?
        .origin();
    for (i, target) in [
        "https://evil.example/",
        "//evil.example/",
        "/\\evil.example/",
    ]
    .into_iter()
    .enumerate()
    {
        ctx.step(&format!(
            "alice signs in from /user/login?redirect_to={target}"
        ));
        let alice = ctx.second_browser(CONSENTER)?;
        let mut path: Url = format!("{}{}", ctx.core_url(), core_api::LOGIN)
            .parse()
            .map_err(|e| Abort::errored(format!("login URL: {e}")))?;
        path.query_pairs_mut().append_pair("redirect_to", target);
        let form = alice.login_form_at(path.as_str()).await?;
        let answer = alice.send(&form).await?;
        // Only where a redirect leads is the rule; no redirect at all
        // leaves the browser on the Core.
        let landed = answer
            .header("location")
            .filter(|_| (300..400).contains(&answer.status))
            .map(|l| form.action.join(&l).map(|u| u.origin()).ok());
        let shown = landed
            .as_ref()
            .map(|o| o.as_ref().map(|o| o.ascii_serialization()));
        ctx.expect(
            &format!("case {}: no redirect off the Core's origin", i + 1),
            landed.as_ref().is_none_or(|o| o.as_ref() == Some(&core)),
            &format!("{} to {}", answer.status, json_text(&shown)),
        )?;
        ctx.observe(&format!("case {}", i + 1), &landed.is_some());
    }
    Ok(())
}

/// A code expires after `CORE_OAUTH_CODE_TTL_SECS`: exchanged at once it
/// gives a token, exchanged after its lifetime it is 400 `invalid_grant`.
#[scenario(Consent, parity, core_env = [("CORE_OAUTH_CODE_TTL_SECS", "2")], clauses = ["S9.token.code-binding"])]
async fn expired_consent_code_is_invalid_grant(ctx: &mut Ctx) -> Outcome {
    // Here 2 s, so that a Core counting whole seconds still gives a code at
    // least one; the late exchange comes 3.2 s after the code was issued, a
    // second to spare for a Core that compares whole seconds with `>`.
    ctx.step("an application is registered; alice signs in");
    let client = ctx.consent().oauth_app(&[REDIRECT.to_owned()]).await?;
    let alice = ctx.human(CONSENTER)?;
    alice.login().await?;
    ctx.step("a code exchanged at once");
    let (code, verifier) = code_for(ctx, &alice, &client, REDIRECT).await?;
    let answer = ctx
        .consent()
        .token_request(&exchange(&code, REDIRECT, &client, Some(&verifier)))
        .await?;
    expect_token(ctx, "within its lifetime", &answer)?;
    ctx.step("a code exchanged after its lifetime");
    let (code, verifier) = code_for(ctx, &alice, &client, REDIRECT).await?;
    ctx.wait_out(std::time::Duration::from_millis(3_200)).await;
    let answer = ctx
        .consent()
        .token_request(&exchange(&code, REDIRECT, &client, Some(&verifier)))
        .await?;
    expect_invalid_grant(ctx, "an expired code", &answer)
}

/// The consent form posted with another session's `_csrf`, or none, is a 400
/// and redirects nowhere with a code; the intact form then redirects with
/// one.
#[scenario(Consent, parity, clauses = ["S4.csrf.every-form", "S4.csrf.refused", "S9.consent.decision"])]
async fn consent_form_needs_its_own_csrf(ctx: &mut Ctx) -> Outcome {
    // Another session: mallory's live `_csrf` on alice's form.
    ctx.step("an application is registered; alice and mallory sign in");
    let client = ctx.consent().oauth_app(&[REDIRECT.to_owned()]).await?;
    let alice = ctx.human(CONSENTER)?;
    alice.login().await?;
    let mallory = ctx.human("mallory")?;
    mallory.login().await?;
    let verifier = oauth::verifier();
    ctx.register_secret(&verifier);
    let challenge = oauth::s256(&verifier);
    let state = unminted_state(ctx);
    let url = Authorize {
        client_id: Some(&client),
        redirect_uri: Some(REDIRECT),
        challenge: Some(&challenge),
        method: Some("S256"),
        state: &state,
        scope: FULL_SCOPE,
    }
    .url(ctx.core_url())?;
    let form = alice.consent_form(&url, true).await?;
    let foreign = mallory
        .consent_form(&url, true)
        .await?
        .field(fields::CSRF)
        .map(str::to_owned)
        .ok_or_else(|| Abort::failed("mallory's consent form has no _csrf"))?;
    let cases = [
        ("mallory's _csrf", {
            let mut f = form.clone();
            f.set(fields::CSRF, &foreign);
            f
        }),
        ("no _csrf", {
            let mut f = form.clone();
            f.remove(fields::CSRF);
            f
        }),
    ];
    for (what, mut tampered) in cases {
        ctx.step(&format!("alice's consent form posted with {what}"));
        tampered.set(oauth::GRANTED, "true");
        let answer = alice.send(&tampered).await?;
        let location = answer.header("location").unwrap_or_default();
        ctx.expect_eq(
            &format!("{what}: 400, no redirect carrying a code"),
            (answer.status, location.contains("code=")),
            (400, false),
        )?;
        ctx.observe(what, &answer.status);
    }
    ctx.step("the intact form");
    let redirect = alice.decide_consent(&form).await?;
    ctx.expect(
        "it redirects with a code",
        redirect.code().is_some(),
        "code",
    )?;
    Ok(())
}
