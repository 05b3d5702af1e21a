//! Family 19, continued: the token endpoint of delegated consent (spec §9)
//! and the scopes a token carries, generated as valid and invalid classes
//! of each member (issue #27 §2). Every case spends a code of its own, all
//! obtained and exchanged at once.
//!
//! Spec §9 names `invalid_grant` for a code that is not single use, bound
//! to its client, redirect URI and challenge, or alive. For a malformed
//! request RFC 6749 §5.2 names other codes (`invalid_request`,
//! `unsupported_grant_type`, `invalid_client` for an unknown client): those
//! cases accept the RFC's code or `invalid_grant` (spec: "anything else").
//! No refused case may carry a token.

use grantgate_engine::prelude::*;

use super::oauth_clients::{R1, R2, RB, Request, two_clients};
use crate::support::consent::{CONSENTER, unminted_state};
use crate::support::flows::LAB;
use crate::support::tables::Table;

/// A code and its verifier.
type Code = (String, String);

/// `n` codes alice (signed in) consents to at once, for `client` and
/// `redirect_uri`, asking for `scope` (`None` leaves it out).
async fn codes(
    ctx: &Ctx,
    alice: &Human,
    client: &str,
    redirect_uri: &str,
    scopes: &[Option<&str>],
) -> Step<Vec<Code>> {
    let mut urls = Vec::new();
    let mut verifiers = Vec::new();
    for scope in scopes {
        let verifier = oauth::verifier();
        ctx.register_secret(&verifier);
        let state = unminted_state(ctx);
        let request = Request::new(client, redirect_uri, &oauth::s256(&verifier), &state)
            .with("scope", *scope);
        urls.push(request.url(ctx.core_url())?);
        verifiers.push(verifier);
    }
    let redirects = join_all(urls.iter().map(|url| async move {
        let form = alice.consent_form(url, true).await?;
        alice.decide_consent(&form).await
    }))
    .await;
    let mut out = Vec::new();
    for (redirect, verifier) in redirects.into_iter().zip(verifiers) {
        let redirect = redirect?;
        let code = redirect
            .code()
            .filter(|_| redirect.target() == redirect_uri)
            .ok_or_else(|| {
                Abort::failed("a consent did not redirect to its registered URI with a code")
            })?;
        out.push((code, verifier));
    }
    Ok(out)
}

/// A token request's form, member by member.
type Fields = Vec<(&'static str, String)>;

/// The right token request for `code`.
fn right<'a>(code: &'a Code, client: &'a str) -> Vec<(&'static str, String)> {
    vec![
        ("grant_type", "authorization_code".into()),
        ("code", code.0.clone()),
        ("redirect_uri", R1.into()),
        ("client_id", client.into()),
        ("code_verifier", code.1.clone()),
    ]
}

/// `fields` with `name` set to `value` (`None` removes it).
fn with(
    mut fields: Vec<(&'static str, String)>,
    name: &str,
    value: Option<&str>,
) -> Vec<(&'static str, String)> {
    match value {
        Some(v) => fields
            .iter_mut()
            .filter(|(n, _)| *n == name)
            .for_each(|(_, x)| *x = v.to_owned()),
        None => fields.retain(|(n, _)| *n != name),
    }
    fields
}

/// The error codes each class may answer with.
const BINDING: &[&str] = &["invalid_grant"];
const MALFORMED: &[&str] = &["invalid_grant", "invalid_request"];
const GRANT_TYPE: &[&str] = &["invalid_grant", "invalid_request", "unsupported_grant_type"];
const CLIENT: &[&str] = &["invalid_grant", "invalid_request", "invalid_client"];

/// `text` with its character at `at` (ASCII) replaced by another of the
/// same alphabet.
fn one_changed(text: &str, at: usize) -> String {
    let c = text.as_bytes()[at];
    let other = if c == b'A' { 'B' } else { 'A' };
    format!("{}{other}{}", &text[..at], &text[at + 1..])
}

/// Records a token answer that must be a 400 refusal with one of `codes`
/// and no token.
fn refusal(table: &mut Table, case: &str, answer: &Answer, codes: &[&str]) {
    let json = answer.json().ok();
    let error = json
        .as_ref()
        .and_then(|j| j.get("error").and_then(|e| e.as_str()).map(str::to_owned));
    let token = json
        .as_ref()
        .is_some_and(|j| j.get("access_token").is_some());
    let ok = answer.status == 400 && !token && error.as_deref().is_some_and(|e| codes.contains(&e));
    table.check(
        case,
        ok,
        format!("{} {}", answer.status, error.unwrap_or_default()),
    );
}

/// The token endpoint answers the right exchange once with 200, and every
/// altered request with a 400 naming the spec's error code and no token.
#[scenario(Grammars, parity, clauses = ["S9.token.exchange", "S9.token.code-binding"])]
async fn token_grammar(ctx: &mut Ctx) -> Outcome {
    // Spec §9: the same request again is `invalid_grant`. Altered: every
    // other `grant_type` (five spellings, empty, missing), code (unknown, one
    // character changed, another client's, empty, missing, given twice),
    // redirect URI (the other registered one, another client's, unregistered,
    // a trailing slash, missing), client (another registered one, unknown,
    // missing) and verifier (another, one character changed at either end,
    // the challenge itself, uppercase, one short, one long, empty, missing);
    // the code is the one spec §9 or RFC 6749 §5.2 names.
    ctx.step("two applications are registered; alice signs in");
    let (a, b) = two_clients(ctx).await?;
    let alice = ctx.human(CONSENTER)?;
    alice.login().await?;
    let a = a.as_str();
    let mut cases: Vec<(String, Fields, &[&str])> = Vec::new();
    let n = 28;
    ctx.step(&format!(
        "alice consents {n} times to one application, once to the other"
    ));
    let mut pool = codes(ctx, &alice, a, R1, &vec![None; n]).await?.into_iter();
    let mut next = || pool.next().unwrap_or_default();
    let theirs = codes(ctx, &alice, &b, RB, &[None]).await?;
    let mut case = |what: &str, fields, codes| cases.push((what.to_owned(), fields, codes));
    for g in [
        "password",
        "client_credentials",
        "refresh_token",
        "AUTHORIZATION_CODE",
        "authorization_code ",
        "",
    ] {
        let f = with(right(&next(), a), "grant_type", Some(g));
        case(&format!("grant_type {g:?}"), f, GRANT_TYPE);
    }
    case(
        "no grant_type",
        with(right(&next(), a), "grant_type", None),
        GRANT_TYPE,
    );
    let code = next();
    let unknown = oauth::verifier();
    ctx.register_secret(&unknown);
    case(
        "an unknown code",
        with(right(&code, a), "code", Some(&unknown)),
        BINDING,
    );
    let changed = one_changed(&code.0, code.0.len() - 1);
    case(
        "the code, one character changed",
        with(right(&code, a), "code", Some(&changed)),
        BINDING,
    );
    let mut f = right(&theirs[0], a);
    f.retain(|(n, _)| *n != "redirect_uri");
    f.push(("redirect_uri", R1.into()));
    case("another client's code", f, BINDING);
    case(
        "an empty code",
        with(right(&code, a), "code", Some("")),
        MALFORMED,
    );
    case("no code", with(right(&code, a), "code", None), MALFORMED);
    // RFC 6749 §5.2 names a repeated parameter `invalid_request`.
    let mut twice = right(&next(), a);
    let again = twice[1].clone();
    twice.push(again);
    case("the code given twice", twice, MALFORMED);
    for (what, uri) in [
        ("the other registered URI", R2.to_owned()),
        ("another client's URI", RB.to_owned()),
        ("an unregistered URI", "http://evil.example/cb".to_owned()),
        ("a trailing slash added", format!("{R1}/")),
    ] {
        let f = with(right(&next(), a), "redirect_uri", Some(&uri));
        case(&format!("redirect_uri: {what}"), f, BINDING);
    }
    case(
        "no redirect_uri",
        with(right(&next(), a), "redirect_uri", None),
        MALFORMED,
    );
    case(
        "another client's id",
        with(right(&next(), a), "client_id", Some(&b)),
        BINDING,
    );
    let f = with(
        right(&next(), a),
        "client_id",
        Some("grantgate-no-such-client"),
    );
    case("an unknown client_id", f, CLIENT);
    // NUL is in no client's id, on every backend (spec §2).
    let f = with(right(&next(), a), "client_id", Some(&format!("{a}\u{0}")));
    case("a client_id with NUL", f, CLIENT);
    case(
        "no client_id",
        with(right(&next(), a), "client_id", None),
        CLIENT,
    );
    let other = oauth::verifier();
    ctx.register_secret(&other);
    // A wrong verifier breaks the code's binding; one outside RFC 7636
    // §4.1's 43–128 characters is malformed (`invalid_request`) or simply
    // wrong.
    type Make<'a> = &'a dyn Fn(&str) -> String;
    let verifiers: [(&str, Make, &[&str]); 8] = [
        ("another verifier", &|_| other.clone(), BINDING),
        (
            "the verifier, first character changed",
            &|v| one_changed(v, 0),
            BINDING,
        ),
        (
            "the verifier, last character changed",
            &|v| one_changed(v, v.len() - 1),
            BINDING,
        ),
        ("the challenge itself", &|v| oauth::s256(v), BINDING),
        ("the verifier in uppercase", &|v| v.to_uppercase(), BINDING),
        (
            "the verifier one short",
            &|v| v[..v.len() - 1].to_owned(),
            MALFORMED,
        ),
        ("the verifier one long", &|v| format!("{v}A"), MALFORMED),
        ("an empty verifier", &|_| String::new(), MALFORMED),
    ];
    for (what, make, allowed) in verifiers {
        let code = next();
        let v = make(&code.1);
        ctx.register_secret(&v);
        case(
            what,
            with(right(&code, a), "code_verifier", Some(&v)),
            allowed,
        );
    }
    case(
        "no verifier",
        with(right(&next(), a), "code_verifier", None),
        MALFORMED,
    );
    let good = next();

    ctx.step(&format!("{} refused token requests at once", cases.len()));
    let shared: &Ctx = ctx;
    let answers = join_all(cases.iter().map(|(_, fields, _)| {
        let fields: Vec<(&str, &str)> = fields.iter().map(|(n, v)| (*n, v.as_str())).collect();
        async move { shared.consent().token_request(&fields).await }
    }))
    .await
    .into_iter()
    .collect::<Step<Vec<Answer>>>()?;
    let mut table = Table::new("token requests", "POST /login/oauth/access_token");
    for ((what, _, codes), answer) in cases.iter().zip(&answers) {
        refusal(&mut table, what, answer, codes);
    }
    ctx.step("the right exchange, then the same again");
    let fields = right(&good, a);
    let fields: Vec<(&str, &str)> = fields.iter().map(|(n, v)| (*n, v.as_str())).collect();
    let first = ctx.consent().token_request(&fields).await?;
    let token = first
        .json()
        .ok()
        .is_some_and(|j| j["access_token"].is_string());
    table.check(
        "the right exchange",
        first.status == 200 && token,
        first.status.to_string(),
    );
    let again = ctx.consent().token_request(&fields).await?;
    refusal(&mut table, "the same code again", &again, BINDING);
    let cases = table.finish(ctx)?;
    ctx.observe("cases", &cases);
    Ok(())
}

/// The scope offered tokens may carry at most.
const READ: &str = "read:repository";
const WRITE: &str = "write:issue";

/// A token carries at most the requested scopes of `read:repository
/// write:issue`, for every scope request, and is refused each route needing a
/// scope it must not carry.
#[scenario(Grammars, parity, clauses = ["S9.token.scope", "S9.token.exchange"])]
async fn scope_grammar(ctx: &mut Ctx) -> Outcome {
    // Spec §9. Requests: each subset of the two, in either order, and with
    // `write:repository`, `read:admin` or `write:admin` added, empty or none;
    // alice consents (where the Core shows the form: scopes beyond the two
    // RFC 6749 §3.3 lets it refuse) and the code is exchanged. Each token's
    // `scope` member names only requested offered scopes (none or empty asks
    // for the default: either offered scope). Refused (403, or 404 where the
    // Core hides the repository from a token without `read:repository`): the
    // grant list (`read:repository`), creating an Issue (`write:issue`),
    // setting a collaborator (`write:repository`).
    ctx.step("two applications are registered; alice signs in");
    let (a, _) = two_clients(ctx).await?;
    let alice = ctx.human(CONSENTER)?;
    alice.login().await?;
    let requests: [(Option<&str>, &[&str]); 11] = [
        (Some(READ), &[READ]),
        (Some(WRITE), &[WRITE]),
        (Some("read:repository write:issue"), &[READ, WRITE]),
        (Some("write:issue read:repository"), &[READ, WRITE]),
        (Some("read:repository write:repository"), &[READ]),
        (Some("write:issue write:admin"), &[WRITE]),
        (Some("read:repository read:admin"), &[READ]),
        (Some("write:repository"), &[]),
        (Some("read:admin"), &[]),
        (Some(""), &[READ, WRITE]),
        (None, &[READ, WRITE]),
    ];
    let state = unminted_state(ctx);
    let core = ctx.core_url().to_owned();
    ctx.step(&format!("alice opens {} consent requests", requests.len()));
    let mut verifiers = Vec::new();
    let mut urls = Vec::new();
    for (scope, _) in &requests {
        let v = oauth::verifier();
        ctx.register_secret(&v);
        let r = Request::new(&a, R1, &oauth::s256(&v), &state).with("scope", *scope);
        urls.push(r.url(&core)?);
        verifiers.push(v);
    }
    let alice = &alice;
    let pages: Vec<Page> = join_all(urls.iter().map(|u| alice.open_on_core(u)))
        .await
        .into_iter()
        .collect::<Step<_>>()?;
    let mut table = Table::new("requested scopes", "token and its use");
    let mut tokens = Vec::new();
    for (((scope, allowed), page), v) in requests.iter().zip(&pages).zip(&verifiers) {
        let case = scope.map_or("no scope".to_owned(), |s| format!("scope {s:?}"));
        let offered_only = scope
            .is_some_and(|s| !s.is_empty() && s.split(' ').all(|n| oauth::MAX_SCOPES.contains(&n)));
        if !(page.status == 200 && page.has_form_to(oauth::GRANT)) {
            // Refusing is allowed only for scopes beyond the two offered.
            table.check(
                &format!("{case}: consent form"),
                !offered_only,
                page.status.to_string(),
            );
            continue;
        }
        let form = page.form_sending(oauth::GRANT, oauth::GRANTED, "true")?;
        let redirect = alice.decide_consent(&form).await?;
        let code = redirect.code().unwrap_or_default();
        let answer = ctx
            .consent()
            .token_request(&[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", R1),
                ("client_id", &a),
                ("code_verifier", v),
            ])
            .await?;
        if answer.status != 200 {
            table.check(
                &format!("{case}: exchange"),
                false,
                answer.status.to_string(),
            );
            continue;
        }
        let token = ctx.consent().consent_token_in(&answer)?;
        let named = token.scopes();
        let within = named.iter().all(|s| allowed.contains(&s.as_str()));
        table.check(&format!("{case}: scope member"), within, named.join(" "));
        tokens.push((case, *allowed, token));
    }

    ctx.step(&format!("each of {} tokens is used", tokens.len()));
    let probes = |token: &ConsentToken| -> Step<_> {
        let native = ctx.consent().native_with_consent(CONSENTER, token)?;
        Ok(async move {
            let list = native.list_grants("").await?;
            let issue = json!({"title": "scope probe", "body": "b"});
            let issue = native
                .call("POST", &core_api::issues(LAB), Some(&issue))
                .await?;
            // wendy is a write collaborator already: setting it again
            // changes nothing even where the Core wrongly allows it.
            let collaborator = json!({"permission": "write"});
            let path = core_api::collaborator(LAB, "wendy");
            let collaborator = native.call("PUT", &path, Some(&collaborator)).await?;
            Ok::<_, Abort>([
                (READ, list),
                (WRITE, issue),
                ("write:repository", collaborator),
            ])
        })
    };
    let uses = tokens
        .iter()
        .map(|(_, _, t)| probes(t))
        .collect::<Step<Vec<_>>>()?;
    let used = join_all(uses).await.into_iter().collect::<Step<Vec<_>>>()?;
    for ((case, allowed, _), answers) in tokens.iter().zip(&used) {
        for (scope, answer) in answers {
            if allowed.contains(scope) {
                // Within the request: "at most" lets the Core give less.
                ctx.observe(&format!("{case}: {scope}"), &answer.status);
                continue;
            }
            let refused = matches!(answer.status, 403 | 404);
            table.check(
                &format!("{case}: {scope} refused"),
                refused,
                answer.status.to_string(),
            );
        }
    }
    let cases = table.finish(ctx)?;
    ctx.observe("cases", &cases);
    Ok(())
}
