//! Family 19, continued: the grammars of delegated consent (spec §9) at the
//! Core's authorization endpoint and consent form, generated as valid and
//! invalid classes of each parameter (issue #27 §2). Each trial batches its
//! whole table on one stack, sends its requests at once, and collects every
//! wrong answer before failing.
//!
//! Where spec §9 names the answer (an unregistered `redirect_uri`, an
//! unknown client, a missing challenge, a method other than `S256`) only a
//! 400 page with no redirect to the client passes. Where it is silent,
//! RFC 6749 and RFC 7636 decide, and every answer they allow is accepted
//! (each case says why). The token endpoint and the scopes a token carries
//! are in `token.rs`.

use grantgate_engine::prelude::*;

use crate::support::consent::{CONSENTER, unminted_state};
use crate::support::tables::Table;
use super::oauth_clients::{R1, R2, RB, Request, two_clients};

/// A URI with a query of its own, which a redirect to it keeps (RFC 6749
/// §3.1.2: "MUST be retained when adding additional query parameters").
const RQ: &str = "http://grantgate.example/oauth/cb?app=grantgate";
/// What the spec (or, where it is silent, the RFCs) allows for one case.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Allowed {
    /// The consent page: 200 with a form posting to `/login/oauth/grant`.
    Form,
    /// A 400 page, no consent form, no redirect off the Core (spec §9).
    Refused,
    /// [`Allowed::Refused`], or a redirect to the registered URI with an
    /// `error` and no `code` (RFC 6749 §4.1.2.1: once the client and its
    /// redirect URI are valid, other errors go back to the client).
    RefusedOrError,
    /// Any of the above: the spec and the RFCs leave the request open.
    Open,
}

/// How a page answered: the consent form, a 400 page, an error redirect to
/// the registered URI, or something else (described).
fn classify(page: &Page, core: &str, registered: &str) -> (bool, bool, bool, String) {
    let off_core = page
        .redirects
        .last()
        .filter(|(_, to)| !to.as_str().starts_with(core))
        .map(|(_, to)| to.clone());
    let form = off_core.is_none() && page.status == 200 && page.has_form_to(oauth::GRANT);
    let refused = off_core.is_none() && page.status == 400 && !page.has_form_to(oauth::GRANT);
    let error_redirect = off_core.as_ref().is_some_and(|to| {
        let mut target = to.clone();
        target.set_query(None);
        let has = |name: &str| to.query_pairs().any(|(n, _)| n == name);
        target.as_str() == registered && has("error") && !has("code")
    });
    let got = match &off_core {
        Some(to) => {
            let names: Vec<String> = to.query_pairs().map(|(n, _)| n.into_owned()).collect();
            let mut target = to.clone();
            target.set_query(None);
            format!("redirect to {target} with {names:?}")
        }
        None if form => "consent form".into(),
        None => format!("{} page", page.status),
    };
    (form, refused, error_redirect, got)
}

/// Every case of the authorize table for application `a` (with `b`'s id):
/// `(case, request, what is allowed)`.
fn authorize_cases(
    a: &str,
    b: &str,
    good: &Request,
    verifier: &str,
) -> Vec<(String, Request, Allowed)> {
    use Allowed::*;
    let mut cases: Vec<(String, Request, Allowed)> = Vec::new();
    let mut case = |what: &str, r: Request, allowed: Allowed| {
        cases.push((what.to_owned(), r, allowed));
    };
    case("the right request", good.clone(), Form);
    // response_type (RFC 6749 §3.1.1: missing or not understood is an
    // error; with a valid client and URI it may go back to the client).
    for v in ["token", "Code", "code token", ""] {
        let r = good.with("response_type", Some(v));
        case(&format!("response_type {v:?}"), r, RefusedOrError);
    }
    case(
        "no response_type",
        good.with("response_type", None),
        RefusedOrError,
    );
    // client_id: an unknown client has no redirect URI to trust
    // (RFC 6749 §4.1.2.1: MUST NOT redirect).
    case(
        "an unknown client_id",
        good.with("client_id", Some("grantgate-no-such-client")),
        Refused,
    );
    case("no client_id", good.with("client_id", None), Refused);
    // NUL is in no client's id; it reaches no database either (spec §2: the
    // same answer on every backend).
    let nul_id = format!("{a}\u{0}");
    case(
        "a client_id with NUL",
        good.with("client_id", Some(&nul_id)),
        Refused,
    );
    case(
        "an empty client_id",
        good.with("client_id", Some("")),
        Refused,
    );
    case(
        "another client's id with this URI",
        good.with("client_id", Some(b)),
        Refused,
    );
    // Client ids are the Core's own strings; whether their case matters
    // the spec does not say: the same client or an unknown one.
    let changed = if a.to_uppercase() != a {
        Some(a.to_uppercase())
    } else if a.to_lowercase() != a {
        Some(a.to_lowercase())
    } else {
        None
    };
    if let Some(c) = changed {
        let r = good.with("client_id", Some(&c));
        case("the client_id in another case", r, Open);
    }
    // redirect_uri: "registered exactly" (spec §9; RFC 6749 §3.1.2.3,
    // simple string comparison). Two are registered, so it is required.
    case(
        "the second registered URI",
        good.with("redirect_uri", Some(R2)),
        Form,
    );
    for (what, uri) in [
        ("a trailing slash added", format!("{R1}/")),
        ("the path in another case", R1.replace("/cb", "/CB")),
        (
            "the host in another case",
            R1.replace("grantgate", "GrantGate"),
        ),
        ("the scheme https", R1.replace("http:", "https:")),
        (
            "the default port written",
            R1.replace(".example/", ".example:80/"),
        ),
        ("an extra query", format!("{R1}?x=1")),
        ("a fragment", format!("{R1}#f")),
        ("a percent-encoded letter", R1.replace("/cb", "/c%62")),
        ("a prefix of it", R1.trim_end_matches("cb").to_owned()),
        ("it extended", format!("{R1}x")),
        ("it extended by a path", format!("{R1}/more")),
        ("another client's URI", RB.to_owned()),
        ("an empty redirect_uri", String::new()),
    ] {
        let r = good.with("redirect_uri", Some(&uri));
        case(&format!("redirect_uri: {what}"), r, Refused);
    }
    case(
        "no redirect_uri (two registered)",
        good.with("redirect_uri", None),
        Refused,
    );
    // code_challenge: missing (or empty) is refused (spec §9). Its form,
    // 43–128 unreserved characters (RFC 7636 §4.2), no RFC tells a server
    // to check, and no verifier can meet a malformed S256 challenge.
    case(
        "no code_challenge",
        good.with("code_challenge", None),
        Refused,
    );
    case(
        "an empty code_challenge",
        good.with("code_challenge", Some("")),
        Refused,
    );
    let challenge = oauth::s256(verifier);
    let long = format!("{challenge}{}", "a".repeat(85));
    for (what, value) in [
        ("42 characters", challenge[..42].to_owned()),
        ("44 characters", format!("{challenge}a")),
        ("128 characters", long.clone()),
        ("129 characters", format!("{long}a")),
        ("padded with =", format!("{challenge}=")),
        ("a + in it", format!("{}+", &challenge[..42])),
        ("a / in it", format!("{}/", &challenge[..42])),
    ] {
        let r = good.with("code_challenge", Some(&value));
        case(&format!("code_challenge of {what}"), r, Open);
    }
    // code_challenge_method: only S256 (spec §9); missing reads as plain.
    case(
        "no code_challenge_method",
        good.with("code_challenge_method", None),
        Refused,
    );
    for m in ["", "plain", "s256", "S512", "sha256", " S256"] {
        let r = good.with("code_challenge_method", Some(m));
        case(&format!("code_challenge_method {m:?}"), r, Refused);
    }
    // scope: each subset of the two offered is a valid request; none, or
    // names beyond them, RFC 6749 §3.3 lets a server default, narrow or
    // refuse (`invalid_scope`, back to the client).
    for s in [
        "read:repository",
        "write:issue",
        "write:issue read:repository",
    ] {
        case(&format!("scope {s:?}"), good.with("scope", Some(s)), Form);
    }
    for s in [
        "",
        "read:admin",
        "read:repository read:admin",
        "write:repository",
        "read:repository write:issue write:admin",
    ] {
        case(&format!("scope {s:?}"), good.with("scope", Some(s)), Open);
    }
    case("no scope", good.with("scope", None), Open);
    cases
}

/// The authorize endpoint shows the consent form only for a request that is
/// registered exactly and asks S256, and never redirects a wrong one to an
/// unregistered URI.
#[scenario(Grammars, parity, clauses = ["S9.authorize.refusals", "S9.authorize.method", "S9.consent.page"])]
async fn authorize_grammar(ctx: &mut Ctx) -> Outcome {
    // Spec §9, alice signed in: the right request, its second registered URI
    // and each subset of the offered scopes show the consent form. A 400 page
    // with no redirect to the client: every redirect URI not registered
    // exactly (trailing slash, case of path or host, scheme, default port,
    // query, fragment, encoding, prefix, extension, another client's, empty,
    // missing), every unknown or missing client, a missing or empty challenge
    // and every method but `S256` (missing, empty, `plain`, `s256`, others).
    // A wrong or missing `response_type` is that or an error redirect to the
    // registered URI (RFC 6749 §4.1.2.1). Malformed challenges, a client id
    // in another case and scopes beyond the two offered are open, never a
    // code.
    ctx.step("two applications are registered; alice signs in");
    let (a, b) = two_clients(ctx).await?;
    let alice = ctx.human(CONSENTER)?;
    alice.login().await?;
    let verifier = oauth::verifier();
    ctx.register_secret(&verifier);
    let state = unminted_state(ctx);
    let good = Request::new(&a, R1, &oauth::s256(&verifier), &state);
    let cases = authorize_cases(&a, &b, &good, &verifier);

    ctx.step(&format!("alice opens {} authorize requests", cases.len()));
    let core = ctx.core_url().to_owned();
    let urls = cases
        .iter()
        .map(|(_, r, _)| r.url(&core))
        .collect::<Step<Vec<Url>>>()?;
    let alice = &alice;
    let pages: Vec<Page> = join_all(urls.iter().map(|u| alice.open_on_core(u)))
        .await
        .into_iter()
        .collect::<Step<_>>()?;
    let mut table = Table::new("authorize parameters", "GET /login/oauth/authorize");
    for ((what, request, allowed), page) in cases.iter().zip(&pages) {
        // An error may only go back to the URI the request named, when
        // that one is registered.
        let named = request
            .0
            .iter()
            .find(|(n, _)| *n == "redirect_uri")
            .and_then(|(_, v)| v.clone())
            .unwrap_or_default();
        let registered = if named == R1 || named == R2 {
            named
        } else {
            String::new()
        };
        let (form, refused, error, got) = classify(page, &core, &registered);
        let ok = match allowed {
            Allowed::Form => form,
            Allowed::Refused => refused,
            Allowed::RefusedOrError => refused || error,
            Allowed::Open => form || refused || error,
        };
        table.check(what, ok, got);
    }
    let cases = table.finish(ctx)?;
    ctx.observe("cases", &cases);
    Ok(())
}

/// One tampering of the consent form between page and POST.
struct Tamper {
    what: &'static str,
    set: Vec<(&'static str, Option<String>)>,
    /// The verifier that must not redeem a code this form obtains, if any:
    /// one a tampered challenge would accept.
    must_not_redeem: Option<String>,
}

/// A consent decision whose posted request was altered brings no code, or a
/// code only to a URI registered for the page's client that the tampering
/// cannot redeem.
#[scenario(Grammars, parity, clauses = ["S9.consent.decision", "S9.consent.redirect", "S9.authorize.refusals", "S9.token.code-binding"])]
async fn consent_decision_grammar(ctx: &mut Ctx) -> Outcome {
    // Spec §9: a `redirect_uri` not registered exactly gets no redirect; the
    // challenge must be S256. alice posts `granted=true` with the redirect
    // URI changed (unregistered, extended, another client's), the client
    // changed (another's, unknown) or the challenge changed (removed,
    // `plain`, method removed): a 400 page, or a redirect with a code to a
    // URI registered for the page's client only, never redeemed by the
    // verifier a tampered challenge would accept, nor by the tampered client.
    // `granted` other than `true` never brings a code. The intact form brings
    // one to R1; for an application whose redirect URI has a query, to that
    // URI with its query kept and `code` and `state` added.
    ctx.step("two applications are registered; alice signs in");
    let (a, b) = two_clients(ctx).await?;
    let alice = ctx.human(CONSENTER)?;
    alice.login().await?;
    let verifier = oauth::verifier();
    ctx.register_secret(&verifier);
    let state = unminted_state(ctx);
    let url = Request::new(&a, R1, &oauth::s256(&verifier), &state).url(ctx.core_url())?;
    let plain = oauth::verifier();
    ctx.register_secret(&plain);
    let some = |s: &str| Some(s.to_owned());
    let tampers = vec![
        Tamper {
            what: "intact",
            set: vec![],
            must_not_redeem: None,
        },
        Tamper {
            what: "redirect_uri unregistered",
            set: vec![("redirect_uri", some("http://evil.example/cb"))],
            must_not_redeem: None,
        },
        Tamper {
            what: "redirect_uri extended",
            set: vec![("redirect_uri", some(&format!("{R1}/more")))],
            must_not_redeem: None,
        },
        Tamper {
            what: "redirect_uri another client's",
            set: vec![("redirect_uri", some(RB))],
            must_not_redeem: None,
        },
        Tamper {
            what: "redirect_uri removed",
            set: vec![("redirect_uri", None)],
            must_not_redeem: None,
        },
        Tamper {
            what: "client_id another client's",
            set: vec![("client_id", some(&b))],
            must_not_redeem: None,
        },
        Tamper {
            what: "client_id unknown",
            set: vec![("client_id", some("grantgate-no-such-client"))],
            must_not_redeem: None,
        },
        Tamper {
            what: "client_id with NUL",
            set: vec![("client_id", some(&format!("{a}\u{0}")))],
            must_not_redeem: None,
        },
        Tamper {
            what: "code_challenge removed",
            set: vec![("code_challenge", None)],
            must_not_redeem: Some(oauth::verifier()),
        },
        Tamper {
            what: "method plain with a plain challenge",
            set: vec![
                ("code_challenge_method", some("plain")),
                ("code_challenge", some(&plain)),
            ],
            must_not_redeem: Some(plain.clone()),
        },
        Tamper {
            what: "method removed with a plain challenge",
            set: vec![
                ("code_challenge_method", None),
                ("code_challenge", some(&plain)),
            ],
            must_not_redeem: Some(plain.clone()),
        },
        Tamper {
            what: "granted yes",
            set: vec![(oauth::GRANTED, some("yes"))],
            must_not_redeem: None,
        },
        Tamper {
            what: "granted removed",
            set: vec![(oauth::GRANTED, None)],
            must_not_redeem: None,
        },
    ];

    ctx.step(&format!("alice loads {} consent forms", tampers.len()));
    let alice = &alice;
    let forms: Vec<Form> = join_all(tampers.iter().map(|_| alice.consent_form(&url, true)))
        .await
        .into_iter()
        .collect::<Step<_>>()?;
    ctx.step("alice posts each, altered");
    let altered: Vec<Form> = tampers
        .iter()
        .zip(forms)
        .map(|(t, mut form)| {
            for (name, value) in &t.set {
                match value {
                    Some(v) => form.set(name, v),
                    None => form.remove(name),
                };
            }
            form
        })
        .collect();
    let answers: Vec<Answer> = join_all(altered.iter().map(|f| alice.send(f)))
        .await
        .into_iter()
        .collect::<Step<_>>()?;
    let mut table = Table::new("altered consent forms", "POST /login/oauth/grant");
    for ((t, form), answer) in tampers.iter().zip(&altered).zip(&answers) {
        let to = answer
            .header("location")
            .filter(|_| (300..400).contains(&answer.status))
            .and_then(|l| form.action.join(&l).ok());
        let code = to.as_ref().and_then(|u| {
            u.query_pairs()
                .find(|(n, _)| n == "code")
                .map(|(_, v)| v.into_owned())
        });
        if let Some(c) = &code {
            ctx.register_secret(c);
        }
        let target = to.as_ref().map(|u| {
            let mut t = u.clone();
            t.set_query(None);
            t.to_string()
        });
        let got = match (&target, &code) {
            (Some(t), Some(_)) => format!("{} to {t} with a code", answer.status),
            (Some(t), None) => format!("{} to {t} without a code", answer.status),
            _ => answer.status.to_string(),
        };
        let ok = match (t.what, &code) {
            ("intact", c) => c.is_some() && target.as_deref() == Some(R1),
            (w, Some(_)) if w.starts_with("granted") => false,
            // A code goes only to a URI registered for the page's client.
            (_, Some(_)) => matches!(target.as_deref(), Some(R1 | R2)),
            // No code: a 400 page, or an error back to a registered URI.
            (_, None) => answer.status == 400 || matches!(target.as_deref(), Some(R1 | R2)),
        };
        table.check(t.what, ok, got);
        // A code a tampered form obtained redeems neither for the verifier
        // its tampered challenge names nor for the tampered client.
        let tampered_client = t
            .set
            .iter()
            .find(|(n, _)| *n == "client_id")
            .and_then(|(_, v)| v.clone());
        if let (Some(code), Some(target)) = (code, target)
            && (t.must_not_redeem.is_some() || tampered_client.is_some())
        {
            let v = t
                .must_not_redeem
                .clone()
                .unwrap_or_else(|| verifier.clone());
            ctx.register_secret(&v);
            let client = tampered_client.unwrap_or_else(|| a.clone());
            let answer = ctx
                .consent()
                .token_request(&[
                    ("grant_type", "authorization_code"),
                    ("code", &code),
                    ("redirect_uri", &target),
                    ("client_id", &client),
                    ("code_verifier", &v),
                ])
                .await?;
            let token = answer
                .json()
                .ok()
                .is_some_and(|j| j.get("access_token").is_some());
            table.check(
                &format!("{}: its code redeemed", t.what),
                answer.status == 400 && !token,
                answer.status.to_string(),
            );
        }
    }

    ctx.step("alice consents for an application whose redirect URI has a query");
    let c = ctx.consent().oauth_app(&[RQ.to_owned()]).await?;
    let verifier = oauth::verifier();
    ctx.register_secret(&verifier);
    let state = unminted_state(ctx);
    let url = Request::new(&c, RQ, &oauth::s256(&verifier), &state).url(ctx.core_url())?;
    let form = alice.consent_form(&url, true).await?;
    let answer = alice.send(&form).await?;
    let to = answer
        .header("location")
        .filter(|_| (300..400).contains(&answer.status))
        .and_then(|l| form.action.join(&l).ok());
    let pairs: Vec<(String, String)> = to
        .as_ref()
        .map(|u| u.query_pairs().into_owned().collect())
        .unwrap_or_default();
    let value = |name: &str| pairs.iter().find(|(n, _)| n == name).map(|(_, v)| v);
    if let Some(code) = value("code") {
        ctx.register_secret(code);
    }
    let base = |u: &Url| (u.origin(), u.path().to_owned());
    let registered: Url = RQ
        .parse()
        .map_err(|e| Abort::errored(format!("{RQ}: {e}")))?;
    table.check(
        "intact, a redirect URI with a query",
        to.as_ref().map(base) == Some(base(&registered))
            && value("app").is_some_and(|v| v == "grantgate")
            && value("code").is_some()
            && value("state") == Some(&state),
        format!(
            "{} to {}",
            answer.status,
            to.clone().map_or("nowhere".into(), |mut u| {
                u.set_query(None);
                let names: Vec<_> = pairs.iter().map(|(n, _)| n.as_str()).collect();
                format!("{u} with {}", names.join(", "))
            })
        ),
    );
    let cases = table.finish(ctx)?;
    ctx.observe("cases", &cases);
    Ok(())
}
