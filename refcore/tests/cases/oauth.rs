//! Delegated consent (spec §9): refcore as an OAuth 2.0 authorization server
//! with PKCE. The `probe_*` functions check one rule each and return a
//! [`Finding`]: held, or how it was broken; anything else that goes wrong is
//! their own error. The clean trials expect every rule to hold, and the
//! faults build shows each `oauth-*` fault breaking its own, for the reason
//! that fault gives (`cases::faults`).

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use crate::check;
use crate::support::TestResult;
use crate::support::browser::{Browser, input_value};
use crate::support::client::{Auth, Resp};
use crate::support::oauth::{
    App, Pkce, authorize_path, callback, code_for, consent, consent_fields, exchange,
    has_both_answers, is_error, location_param, register, request, token_for, token_request,
};
use crate::support::world::{Env, World};

/// What a probe found: `Ok(())` when its rule held, else `Err(why)`, how
/// the Core broke it. A probe's own `Err` (outside the finding) is a failure
/// to probe at all: an unexpected answer, a missing form.
pub type Finding = Result<(), String>;

/// The finding of a token answer that must be `invalid_grant`: a token
/// (200) is the rule broken, for `why`; any other answer is unexpected.
fn refused_grant(resp: &Resp, why: &str) -> Result<Finding, String> {
    if is_error(resp, "invalid_grant") {
        Ok(Ok(()))
    } else if resp.status == 200 {
        Ok(Err(why.to_string()))
    } else {
        Err(format!(
            "expected invalid_grant or a token, got {} {}",
            resp.status, resp.text
        ))
    }
}

/// The finding of an authorize answer that must be the refusal page: the
/// consent page (200) or a redirect is the rule broken, for `why`.
fn refused_request(resp: &Resp, why: &str) -> Result<Finding, String> {
    if is_refusal_page(resp) {
        Ok(Ok(()))
    } else if resp.status == 200 || resp.status == 303 {
        Ok(Err(format!("{why} (answered {})", resp.status)))
    } else {
        Err(format!(
            "expected the refusal page or the request served, got {}",
            resp.status
        ))
    }
}

/// Whether a response is refcore's 400 page for a refused request: HTML,
/// and above all no redirect anywhere.
fn is_refusal_page(resp: &Resp) -> bool {
    resp.status == 400
        && resp.header("location").is_none()
        && resp
            .header("content-type")
            .is_some_and(|c| c.starts_with("text/html"))
}

/// Registering: 201 with a UUID `client_id`; confidential clients, bad
/// redirect URIs, unknown members, no credential and a token without
/// `write:user` are refused.
pub async fn register_application(env: Arc<Env>) -> TestResult {
    let w = World::new(&env).await?;
    let uri = callback();
    let resp = w
        .api
        .post(
            "/api/v1/user/applications/oauth2",
            &w.admin,
            &json!({"name": "awg-mcp", "redirect_uris": [uri], "confidential_client": false}),
        )
        .await?
        .expect(201, "register")?;
    let body = resp.json();
    let client_id = body["client_id"].as_str().ok_or("no client_id")?;
    check!(
        uuid::Uuid::parse_str(client_id).is_ok(),
        "client_id is not a UUID: {client_id}"
    );
    check!(
        body["name"] == "awg-mcp" && body["redirect_uris"] == json!([uri]),
        "answer: {body}"
    );
    let again = register(&w, &[&uri]).await?;
    check!(again.client_id != client_id, "client_id reused");
    for (what, bad) in [
        (
            "confidential",
            json!({"name": "x", "redirect_uris": [uri], "confidential_client": true}),
        ),
        ("no URIs", json!({"name": "x", "redirect_uris": []})),
        (
            "relative URI",
            json!({"name": "x", "redirect_uris": ["/cb"]}),
        ),
        (
            "fragment",
            json!({"name": "x", "redirect_uris": ["http://127.0.0.1:9/cb#f"]}),
        ),
        ("blank name", json!({"name": " ", "redirect_uris": [uri]})),
        (
            "unknown member",
            json!({"name": "x", "redirect_uris": [uri], "client_secret": "s"}),
        ),
    ] {
        let resp = w
            .api
            .post("/api/v1/user/applications/oauth2", &w.admin, &bad)
            .await?;
        check!(resp.status == 422, "{what}: {}", resp.status);
    }
    let body = json!({"name": "x", "redirect_uris": [uri]});
    let resp = w
        .api
        .post("/api/v1/user/applications/oauth2", &Auth::None, &body)
        .await?;
    check!(resp.status == 401, "no credential: {}", resp.status);
    let resp = w
        .api
        .post("/api/v1/user/applications/oauth2", &w.bot_auth, &body)
        .await?;
    check!(resp.status == 403, "without write:user: {}", resp.status);
    Ok(())
}

/// Every malformed authorization request is a 400 page with no redirect,
/// signed in or not (the request is checked before the session).
pub async fn authorize_refusals(env: Arc<Env>) -> TestResult {
    let w = World::new(&env).await?;
    let app = register(&w, &[&callback()]).await?;
    let other = register(&w, &[&callback()]).await?;
    let pkce = Pkce::new();
    let good = |name: &str| -> Option<String> {
        match name {
            "response_type" => Some("code".into()),
            "client_id" => Some(app.client_id.clone()),
            "redirect_uri" => Some(app.redirect_uri.clone()),
            "state" => Some("st".into()),
            "code_challenge" => Some(pkce.challenge.clone()),
            "code_challenge_method" => Some("S256".into()),
            _ => None,
        }
    };
    let upper = app.redirect_uri.replacen("http://", "HTTP://", 1);
    let trailing = format!("{}/", app.redirect_uri);
    let cases: Vec<(&str, &str, Option<String>)> = vec![
        (
            "unknown client",
            "client_id",
            Some(uuid::Uuid::new_v4().to_string()),
        ),
        ("missing client", "client_id", None),
        (
            "another client's URI",
            "redirect_uri",
            Some(other.redirect_uri.clone()),
        ),
        (
            "URI extended",
            "redirect_uri",
            Some(format!("{}x", app.redirect_uri)),
        ),
        ("URI with a slash", "redirect_uri", Some(trailing)),
        ("URI in other case", "redirect_uri", Some(upper)),
        ("URI missing", "redirect_uri", None),
        ("no challenge", "code_challenge", None),
        ("short challenge", "code_challenge", Some("abc".into())),
        (
            "method plain",
            "code_challenge_method",
            Some("plain".into()),
        ),
        ("method missing", "code_challenge_method", None),
        ("method s256", "code_challenge_method", Some("s256".into())),
        ("response_type token", "response_type", Some("token".into())),
        ("response_type missing", "response_type", None),
        ("no offered scope", "scope", Some("read:admin".into())),
    ];
    let names = [
        "response_type",
        "client_id",
        "redirect_uri",
        "state",
        "code_challenge",
        "code_challenge_method",
        "scope",
    ];
    let anonymous = Browser::new(&w.base);
    for (what, field, value) in &cases {
        let values: Vec<(&str, Option<String>)> = names
            .iter()
            .map(|n| (*n, if n == field { value.clone() } else { good(n) }))
            .collect();
        let pairs: Vec<(&str, Option<&str>)> =
            values.iter().map(|(n, v)| (*n, v.as_deref())).collect();
        let path = authorize_path(&pairs);
        for (who, browser) in [("signed in", &w.browser), ("anonymous", &anonymous)] {
            let resp = browser.get(&path).await?;
            check!(
                is_refusal_page(&resp),
                "{what} ({who}): {} Location {:?}",
                resp.status,
                resp.header("location")
            );
        }
    }
    // The well-formed request itself is fine.
    w.browser
        .get(&request(&app, &pkce, "st", None))
        .await?
        .expect(200, "well-formed request")?;
    Ok(())
}

/// Not signed in: the login page, then back to the same authorize URL; the
/// consent page names the application and the scopes and holds the form.
pub async fn login_then_consent(env: Arc<Env>) -> TestResult {
    let w = World::new(&env).await?;
    let app = register(&w, &[&callback()]).await?;
    let pkce = Pkce::new();
    let path = request(&app, &pkce, "st-1", Some("read:repository write:issue"));
    let b = Browser::new(&w.base);
    let resp = b.get(&path).await?.expect(303, "anonymous authorize")?;
    let login = resp.header("location").ok_or("no Location")?;
    check!(login.starts_with("/user/login?"), "Location {login}");
    let (page, resp) = b
        .login_via(&login, &w.owner, &w.owner_password, None)
        .await?;
    check!(
        input_value(&page.text, "redirect_to").as_deref() == Some(path.as_str()),
        "the login form does not carry the authorize URL back"
    );
    let resp = resp.expect(303, "login")?;
    check!(
        resp.header("location").as_deref() == Some(path.as_str()),
        "login went to {:?}",
        resp.header("location")
    );
    let consent_page = b.get(&path).await?.expect(200, "consent page")?;
    let text = &consent_page.text;
    check!(text.contains(&app.name), "application not named");
    check!(
        text.contains("read:repository") && text.contains("write:issue"),
        "scopes not named"
    );
    check!(text.contains(&w.owner), "user not named");
    let (method, fields) = consent_fields(text).ok_or("no consent form")?;
    check!(method == "post", "consent form method {method}");
    for field in [
        "_csrf",
        "client_id",
        "redirect_uri",
        "state",
        "code_challenge",
        "code_challenge_method",
        "scope",
    ] {
        check!(
            fields.iter().any(|(n, _)| n == field),
            "consent form lacks {field}"
        );
    }
    check!(has_both_answers(text), "no granted=true/false buttons");
    let resp = consent(&b, &path, "true").await?.expect(303, "grant")?;
    let location = resp.header("location").ok_or("no Location")?;
    check!(
        location.starts_with(&format!("{}?", app.redirect_uri)),
        "grant went to {location}"
    );
    check!(
        location_param(&location, "state").as_deref() == Some("st-1"),
        "state not echoed"
    );
    let code = location_param(&location, "code").ok_or("no code")?;
    check!(
        code.len() >= 32,
        "code too short for 128 bits: {}",
        code.len()
    );
    Ok(())
}

/// The login form's `redirect_to` is followed only to a local path; any
/// other target sends the browser home, as a login without it does.
pub async fn probe_login_redirect_is_local(w: &World) -> Result<Finding, String> {
    for target in [
        "https://evil.test/",
        "//evil.test/x",
        "/\\evil.test",
        "http:/evil.test",
    ] {
        let login = format!(
            "/user/login?redirect_to={}",
            url::form_urlencoded::byte_serialize(target.as_bytes()).collect::<String>()
        );
        // The target is posted even when the form dropped it.
        let (page, resp) = Browser::new(&w.base)
            .login_via(&login, &w.owner, &w.owner_password, Some(target))
            .await?;
        if input_value(&page.text, "redirect_to").is_some() {
            return Ok(Err(format!(
                "the login form carries redirect_to {target:?}"
            )));
        }
        let resp = resp.expect(303, "login")?;
        let location = resp.header("location");
        if location.as_deref() != Some("/") {
            return Ok(Err(format!(
                "a login with redirect_to {target:?} went to {location:?}"
            )));
        }
    }
    Ok(Ok(()))
}

/// The open-redirect guard of the login form, and a plain login unchanged.
pub async fn login_redirect_guard(env: Arc<Env>) -> TestResult {
    let w = World::new(&env).await?;
    probe_login_redirect_is_local(&w).await??;
    let b = Browser::new(&w.base);
    let resp = b
        .login(&w.owner, &w.owner_password)
        .await?
        .expect(303, "login")?;
    check!(
        resp.header("location").as_deref() == Some("/"),
        "plain login went to {:?}",
        resp.header("location")
    );
    Ok(())
}

/// The longest request refcore serves (a 2,048-byte redirect URI and a
/// 2,048-byte UTF-8 `state`, each percent-encoded to three bytes a byte)
/// comes back after signing in; a query longer than any request refcore
/// reads is a 400 page, signed in or not.
pub async fn longest_request_comes_back(env: Arc<Env>) -> TestResult {
    let w = World::new(&env).await?;
    let base = callback();
    let uri = format!("{base}/{}", "!".repeat(2048 - base.len() - 1));
    let app = register(&w, &[&uri]).await?;
    let path = request(
        &app,
        &Pkce::new(),
        &"\u{e9}".repeat(1024),
        Some("read:repository write:issue"),
    );
    check!(path.len() > 12_000, "only {} bytes", path.len());
    let b = Browser::new(&w.base);
    let resp = b.get(&path).await?.expect(303, "anonymous authorize")?;
    let login = resp.header("location").ok_or("no Location")?;
    let (page, resp) = b
        .login_via(&login, &w.owner, &w.owner_password, None)
        .await?;
    // The path holds the state: compared, never printed.
    check!(
        input_value(&page.text, "redirect_to").as_deref() == Some(path.as_str()),
        "the login form does not carry the {}-byte authorize URL back",
        path.len()
    );
    let resp = resp.expect(303, "login")?;
    check!(
        resp.header("location").as_deref() == Some(path.as_str()),
        "login did not go back to the {}-byte authorize URL",
        path.len()
    );
    b.get(&path).await?.expect(200, "consent page")?;
    // refcore's bound is 16,045 bytes of query (docs/contract.md).
    let too_long = format!("{path}&pad={}", "a".repeat(4_000));
    check!(too_long.len() > 16_100, "only {} bytes", too_long.len());
    for (who, browser) in [("signed in", &b), ("anonymous", &Browser::new(&w.base))] {
        let resp = browser.get(&too_long).await?;
        check!(
            is_refusal_page(&resp),
            "an over-long request ({who}): {}",
            resp.status
        );
    }
    Ok(())
}

/// The whole flow: the token is an ordinary token of the consenting human:
/// create_issue posts as that user, unattributed; grant routes stay the
/// agent's (404); the answer is never cached.
pub async fn full_flow(env: Arc<Env>) -> TestResult {
    let w = World::new(&env).await?;
    let (grant_id, _) = w.active_grant().await?;
    let (_app, resp) = token_for(&w, None).await?;
    let resp = resp.expect(200, "exchange")?;
    check!(
        resp.header("cache-control").as_deref() == Some("no-store"),
        "Cache-Control {:?}",
        resp.header("cache-control")
    );
    let token = resp.json();
    check!(
        token["token_type"] == "bearer"
            && token["expires_in"].as_u64().is_some_and(|s| s > 0)
            && token["scope"] == "read:repository write:issue",
        "token answer {}",
        json!({"token_type": token["token_type"], "expires_in": token["expires_in"], "scope": token["scope"]})
    );
    let secret = token["access_token"].as_str().ok_or("no access_token")?;
    let human = Auth::Bearer(secret.to_string());
    let issues = format!("/api/v1/repos/{}/{}/issues", w.owner, w.repo);
    let created = w
        .api
        .post(
            &issues,
            &human,
            &json!({"title": "by consent", "body": "b"}),
        )
        .await?
        .expect(201, "create_issue with the consented token")?
        .json();
    check!(
        created["user"]["login"] == w.owner.as_str() && created["agent_work_grant"].is_null(),
        "issue poster {} grant {}",
        created["user"]["login"],
        created["agent_work_grant"]
    );
    let resp = w.api.get(&w.grant_path(grant_id), &human).await?;
    check!(
        resp.status == 404,
        "grant route with a human's token: {}",
        resp.status
    );
    let resp = w
        .api
        .get("/api/v1/agent-work-grants", &human)
        .await?
        .expect(200, "grant list")?;
    check!(
        resp.json() == json!([]),
        "a human's grant list: {}",
        resp.text
    );
    Ok(())
}

/// Deny: `error=access_denied` with the state, and no code.
pub async fn deny(env: Arc<Env>) -> TestResult {
    let w = World::new(&env).await?;
    let app = register(&w, &[&callback()]).await?;
    let path = request(&app, &Pkce::new(), "a b&c=é", None);
    let resp = consent(&w.browser, &path, "false")
        .await?
        .expect(303, "deny")?;
    let location = resp.header("location").ok_or("no Location")?;
    check!(
        location.starts_with(&format!("{}?", app.redirect_uri))
            && location_param(&location, "error").as_deref() == Some("access_denied")
            && location_param(&location, "state").as_deref() == Some("a b&c=é")
            && location_param(&location, "code").is_none(),
        "deny went to {location}"
    );
    Ok(())
}

/// A redirect URI with a query gets the answer appended with `&`, and a
/// request without `state` gets none back.
pub async fn redirect_uri_with_query(env: Arc<Env>) -> TestResult {
    let w = World::new(&env).await?;
    let uri = format!("{}?tenant=a%20b", callback());
    let app = register(&w, &[&uri]).await?;
    let pkce = Pkce::new();
    let path = authorize_path(&[
        ("response_type", Some("code")),
        ("client_id", Some(&app.client_id)),
        ("redirect_uri", Some(&uri)),
        ("code_challenge", Some(&pkce.challenge)),
        ("code_challenge_method", Some("S256")),
    ]);
    let resp = consent(&w.browser, &path, "true")
        .await?
        .expect(303, "grant")?;
    let location = resp.header("location").ok_or("no Location")?;
    check!(
        location.starts_with(&format!("{uri}&code=")),
        "Location {location}"
    );
    check!(
        location_param(&location, "state").is_none(),
        "a state appeared"
    );
    let code = location_param(&location, "code").ok_or("no code")?;
    exchange(&w, &app, &code, &pkce.verifier)
        .await?
        .expect(200, "exchange")?;
    Ok(())
}

/// A consent without a valid `_csrf` (missing, foreign, garbled) is 400 and
/// issues nothing.
pub async fn probe_consent_needs_csrf(w: &World) -> Result<Finding, String> {
    let app = register(w, &[&callback()]).await?;
    let path = request(&app, &Pkce::new(), "st", None);
    let page = w.browser.get(&path).await?.expect(200, "consent page")?;
    let (_, fields) = consent_fields(&page.text).ok_or("no consent form")?;
    let foreign = {
        let other = Browser::new(&w.base);
        let p = other.get("/user/login").await?;
        input_value(&p.text, "_csrf").ok_or("no foreign _csrf")?
    };
    for (what, csrf) in [
        ("no", None),
        ("a foreign", Some(foreign.as_str())),
        ("a garbled", Some("1.00")),
    ] {
        let mut form: Vec<(&str, &str)> = fields
            .iter()
            .filter(|(n, _)| n != "_csrf")
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        if let Some(c) = csrf {
            form.push(("_csrf", c));
        }
        form.push(("granted", "true"));
        let resp = w.browser.post_form("/login/oauth/grant", &form).await?;
        // The Location would carry a code: it is not printed.
        let redirected = resp.header("location").is_some();
        if resp.status == 303 && redirected {
            return Ok(Err(format!(
                "a consent with {what} _csrf was answered with a redirect"
            )));
        }
        if resp.status != 400 || redirected {
            return Err(format!(
                "a consent with {what} _csrf: expected 400 or a redirect, got {}",
                resp.status
            ));
        }
    }
    Ok(Ok(()))
}

/// The consent form's `_csrf` rule, and its request rechecked.
pub async fn consent_csrf_and_recheck(env: Arc<Env>) -> TestResult {
    let w = World::new(&env).await?;
    probe_consent_needs_csrf(&w).await??;
    // A consent form altered to another redirect URI is a 400 page.
    let app = register(&w, &[&callback()]).await?;
    let path = request(&app, &Pkce::new(), "st", None);
    let page = w.browser.get(&path).await?.expect(200, "consent page")?;
    let (_, fields) = consent_fields(&page.text).ok_or("no consent form")?;
    let evil = "http://127.0.0.1:9/evil".to_string();
    for (field, value) in [
        ("redirect_uri", evil.as_str()),
        ("code_challenge_method", "plain"),
        ("client_id", "nope"),
        ("granted", "maybe"),
    ] {
        let mut form: Vec<(&str, &str)> = fields
            .iter()
            .filter(|(n, _)| n != field)
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        form.push((field, value));
        if field != "granted" {
            form.push(("granted", "true"));
        }
        let resp = w.browser.post_form("/login/oauth/grant", &form).await?;
        check!(
            is_refusal_page(&resp),
            "altered {field}: {} {:?}",
            resp.status,
            resp.header("location")
        );
    }
    Ok(())
}

/// A wrong (well-formed) verifier is `invalid_grant`.
pub async fn probe_pkce_checked(w: &World) -> Result<Finding, String> {
    let app = register(w, &[&callback()]).await?;
    let pkce = Pkce::new();
    let code = code_for(&w.browser, &request(&app, &pkce, "st", None)).await?;
    let resp = exchange(w, &app, &code, &Pkce::new().verifier).await?;
    refused_grant(&resp, "a code was exchanged with another verifier")
}

/// A second exchange of a code is `invalid_grant`.
pub async fn probe_code_single_use(w: &World) -> Result<Finding, String> {
    let app = register(w, &[&callback()]).await?;
    let pkce = Pkce::new();
    let code = code_for(&w.browser, &request(&app, &pkce, "st", None)).await?;
    exchange(w, &app, &code, &pkce.verifier)
        .await?
        .expect(200, "first exchange")?;
    let resp = exchange(w, &app, &code, &pkce.verifier).await?;
    refused_grant(&resp, "a code was exchanged twice")
}

/// `app` with its redirect URI extended by a path segment.
fn extended(app: &App) -> App {
    App {
        redirect_uri: format!("{}/more", app.redirect_uri),
        ..app.clone()
    }
}

/// A redirect URI that extends the registered one is refused at authorize.
pub async fn probe_redirect_uri_exact_at_authorize(w: &World) -> Result<Finding, String> {
    let app = register(w, &[&callback()]).await?;
    let resp = w
        .browser
        .get(&request(&extended(&app), &Pkce::new(), "st", None))
        .await?;
    refused_request(
        &resp,
        "authorize served a redirect_uri extending the registered one",
    )
}

/// At the token endpoint a code is bound to its request's exact URI: a code
/// minted for the registered URI does not redeem with it extended (the
/// authorize page is not involved, so this sees the token side alone).
pub async fn probe_redirect_uri_exact_at_token(w: &World) -> Result<Finding, String> {
    let app = register(w, &[&callback()]).await?;
    let pkce = Pkce::new();
    let code = code_for(&w.browser, &request(&app, &pkce, "st", None)).await?;
    let resp = exchange(w, &extended(&app), &code, &pkce.verifier).await?;
    refused_grant(
        &resp,
        "a code was exchanged with a redirect_uri extending its own",
    )
}

/// `code_challenge_method=plain`, or none, is refused at authorize.
pub async fn probe_only_s256(w: &World) -> Result<Finding, String> {
    let app = register(w, &[&callback()]).await?;
    let pkce = Pkce::new();
    for method in [Some("plain"), None] {
        let path = authorize_path(&[
            ("response_type", Some("code")),
            ("client_id", Some(&app.client_id)),
            ("redirect_uri", Some(&app.redirect_uri)),
            ("state", Some("st")),
            ("code_challenge", Some(&pkce.verifier)),
            ("code_challenge_method", method),
        ]);
        let resp = w.browser.get(&path).await?;
        let why = format!("authorize served code_challenge_method {method:?}");
        if let Err(why) = refused_request(&resp, &why)? {
            return Ok(Err(why));
        }
    }
    Ok(Ok(()))
}

/// A code exchanged under another registered client's id is `invalid_grant`.
pub async fn probe_code_bound_to_client(w: &World) -> Result<Finding, String> {
    let app = register(w, &[&callback()]).await?;
    let thief = register(w, &[&app.redirect_uri]).await?;
    let pkce = Pkce::new();
    let code = code_for(&w.browser, &request(&app, &pkce, "st", None)).await?;
    let resp = exchange(w, &thief, &code, &pkce.verifier).await?;
    refused_grant(&resp, "a code was exchanged under another client's id")
}

/// A token asked for `read:repository` only reads: creating an Issue is 403.
pub async fn probe_scopes_narrowed(w: &World) -> Result<Finding, String> {
    let (_, resp) = token_for(w, Some("read:repository")).await?;
    let token = resp.expect(200, "exchange")?.json();
    let human = Auth::Token(
        token["access_token"]
            .as_str()
            .ok_or("no token")?
            .to_string(),
    );
    w.api
        .get(&format!("/api/v1/repos/{}/{}", w.owner, w.repo), &human)
        .await?
        .expect(200, "read with a read:repository token")?;
    let resp = w
        .api
        .post(
            &format!("/api/v1/repos/{}/{}/issues", w.owner, w.repo),
            &human,
            &json!({"title": "t"}),
        )
        .await?;
    let mut broken = Vec::new();
    if token["scope"] != "read:repository" {
        broken.push(format!(
            "a token asked for read:repository carries {}",
            token["scope"]
        ));
    }
    match resp.status {
        403 => {}
        201 => broken.push("a read:repository token created an Issue".to_string()),
        other => return Err(format!("create_issue: expected 403 or 201, got {other}")),
    }
    if broken.is_empty() {
        Ok(Ok(()))
    } else {
        Ok(Err(broken.join("; ")))
    }
}

/// The token endpoint's rules: PKCE, single use, exact redirect URI, own
/// client, and the shapes of its refusals.
pub async fn token_endpoint_rules(env: Arc<Env>) -> TestResult {
    let w = World::new(&env).await?;
    probe_pkce_checked(&w).await??;
    probe_code_single_use(&w).await??;
    probe_redirect_uri_exact_at_authorize(&w).await??;
    probe_redirect_uri_exact_at_token(&w).await??;
    probe_only_s256(&w).await??;
    probe_code_bound_to_client(&w).await??;
    let app = register(&w, &[&callback(), &callback()]).await?;
    let pkce = Pkce::new();
    // Bound to the exact URI of its request, even another registered one.
    let code = code_for(&w.browser, &request(&app, &pkce, "st", None)).await?;
    let second = App {
        redirect_uri: app.redirect_uris[1].clone(),
        ..app.clone()
    };
    check!(
        is_error(
            &exchange(&w, &second, &code, &pkce.verifier).await?,
            "invalid_grant"
        ),
        "another registered redirect_uri passed"
    );
    // A failed attempt spends the code.
    check!(
        is_error(
            &exchange(&w, &app, &code, &pkce.verifier).await?,
            "invalid_grant"
        ),
        "a code survived a failed exchange"
    );
    // Malformed verifiers, and the challenge itself as verifier.
    for verifier in [
        "short".to_string(),
        format!("{}+", "a".repeat(50)),
        pkce.challenge.clone(),
    ] {
        let code = code_for(&w.browser, &request(&app, &pkce, "st", None)).await?;
        check!(
            is_error(
                &exchange(&w, &app, &code, &verifier).await?,
                "invalid_grant"
            ),
            "a malformed verifier passed"
        );
    }
    check!(
        is_error(
            &exchange(&w, &app, "0123abcd", &pkce.verifier).await?,
            "invalid_grant"
        ),
        "an unknown code"
    );
    let code = code_for(&w.browser, &request(&app, &pkce, "st", None)).await?;
    let full = [
        ("grant_type", "authorization_code"),
        ("code", code.as_str()),
        ("redirect_uri", app.redirect_uri.as_str()),
        ("client_id", app.client_id.as_str()),
        ("code_verifier", pkce.verifier.as_str()),
    ];
    let resp = token_request(&w, &[("grant_type", "password"), ("username", "x")]).await?;
    check!(
        is_error(&resp, "unsupported_grant_type"),
        "password grant: {}",
        resp.text
    );
    for missing in 0..full.len() {
        let fields: Vec<(&str, &str)> = full
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != missing)
            .map(|(_, f)| *f)
            .collect();
        let resp = token_request(&w, &fields).await?;
        check!(
            is_error(&resp, "invalid_request"),
            "without {}: {}",
            full[missing].0,
            resp.text
        );
    }
    let mut repeated = full.to_vec();
    repeated.push(("client_id", app.client_id.as_str()));
    check!(
        is_error(&token_request(&w, &repeated).await?, "invalid_request"),
        "a repeated parameter"
    );
    let as_json = w
        .api
        .post(
            "/login/oauth/access_token",
            &Auth::None,
            &json!({"grant_type": "authorization_code", "code": code}),
        )
        .await?;
    check!(
        is_error(&as_json, "invalid_request"),
        "a JSON body: {}",
        as_json.text
    );
    // None of the refusals spent the code (they never reached it).
    let resp = token_request(&w, &full)
        .await?
        .expect(200, "the exchange")?;
    check!(
        resp.header("cache-control").as_deref() == Some("no-store"),
        "not no-store"
    );
    Ok(())
}

/// Scopes: the requested ones refcore offers; absent means both.
pub async fn scopes(env: Arc<Env>) -> TestResult {
    let w = World::new(&env).await?;
    probe_scopes_narrowed(&w).await??;
    for (asked, granted) in [
        (None, "read:repository write:issue"),
        (Some(""), "read:repository write:issue"),
        (Some("write:issue read:admin"), "write:issue"),
        (
            Some("write:issue read:repository"),
            "read:repository write:issue",
        ),
    ] {
        let (_, resp) = token_for(&w, asked).await?;
        let token = resp.expect(200, "exchange")?.json();
        check!(
            token["scope"] == granted,
            "asked {asked:?}: got {}",
            token["scope"]
        );
    }
    Ok(())
}

/// Eight exchanges of one code at once: exactly one 200.
pub async fn concurrent_exchange(env: Arc<Env>) -> TestResult {
    let w = World::new(&env).await?;
    let app = register(&w, &[&callback()]).await?;
    let pkce = Pkce::new();
    let code = code_for(&w.browser, &request(&app, &pkce, "st", None)).await?;
    let attempts = (0..8).map(|_| exchange(&w, &app, &code, &pkce.verifier));
    let answers = futures::future::join_all(attempts).await;
    let mut ok = 0;
    for answer in answers {
        let resp = answer?;
        if resp.status == 200 {
            ok += 1;
        } else {
            check!(
                is_error(&resp, "invalid_grant"),
                "a loser answered {}",
                resp.text
            );
        }
    }
    check!(ok == 1, "{ok} exchanges succeeded");
    Ok(())
}

/// The lifetime, in seconds, that [`short_lived`] gives codes or tokens.
pub const SHORT_TTL_SECS: u64 = 1;

/// What [`short_lived`] shortens.
#[derive(Debug, Clone, Copy)]
pub enum Shortened {
    /// Codes live [`SHORT_TTL_SECS`] (`CORE_OAUTH_CODE_TTL_SECS`).
    Codes,
    /// Tokens live [`SHORT_TTL_SECS`] (`CORE_OAUTH_TOKEN_TTL_SECS`).
    Tokens,
}

/// A stack whose codes or tokens live [`SHORT_TTL_SECS`]; everything else,
/// the consent form's `_csrf` included, keeps its default, so no step of
/// reaching the expiry races a clock. Codes and tokens are shortened on
/// separate stacks: a token is only had by exchanging a live code.
pub async fn short_lived(
    env: &Env,
    what: Shortened,
    extra: &[(&str, &str)],
) -> Result<(Env, World), String> {
    let ttl = SHORT_TTL_SECS.to_string();
    let name = match what {
        Shortened::Codes => "CORE_OAUTH_CODE_TTL_SECS",
        Shortened::Tokens => "CORE_OAUTH_TOKEN_TTL_SECS",
    };
    let mut vars = vec![(name, ttl.as_str())];
    vars.extend_from_slice(extra);
    let stack = Env::start_with(env.backend, env.pg.clone(), &vars).await?;
    let world = World::new(&stack).await?;
    Ok((stack, world))
}

/// Waits until anything issued before the call, with [`SHORT_TTL_SECS`] to
/// live, is dead. The Core counts whole seconds (`expires_at = ⌊issued⌋ +
/// ttl`, dead from `⌊now⌋ ≥ expires_at`), so any wait longer than the
/// lifetime after the answer that carried it is enough; load only adds to it.
pub async fn outlive_short_ttl() {
    tokio::time::sleep(Duration::from_millis(SHORT_TTL_SECS * 1000 + 250)).await;
}

/// An expired code is `invalid_grant` (on a [`Shortened::Codes`] stack).
pub async fn probe_code_expires(w: &World) -> Result<Finding, String> {
    let app = register(w, &[&callback()]).await?;
    let pkce = Pkce::new();
    let code = code_for(&w.browser, &request(&app, &pkce, "st", None)).await?;
    outlive_short_ttl().await;
    let resp = exchange(w, &app, &code, &pkce.verifier).await?;
    refused_grant(&resp, "a code was exchanged after it expired")
}

/// An issued token stops authenticating after `expires_in` (on a
/// [`Shortened::Tokens`] stack; `full_flow` shows a fresh token works).
async fn token_expires(w: &World) -> TestResult {
    let (_, resp) = token_for(w, None).await?;
    let token = resp.expect(200, "exchange")?.json();
    check!(
        token["expires_in"] == SHORT_TTL_SECS,
        "expires_in {}",
        token["expires_in"]
    );
    let human = Auth::Token(
        token["access_token"]
            .as_str()
            .ok_or("no token")?
            .to_string(),
    );
    outlive_short_ttl().await;
    let resp = w
        .api
        .get(&format!("/api/v1/repos/{}/{}", w.owner, w.repo), &human)
        .await?;
    check!(resp.status == 401, "an expired token: {}", resp.status);
    Ok(())
}

/// Expiry: codes (`CORE_OAUTH_CODE_TTL_SECS`) and tokens
/// (`CORE_OAUTH_TOKEN_TTL_SECS`), each on its own stack, waited out at once.
/// (The consent form's `_csrf` expires by the mechanism of every form,
/// `browser::csrf_expiry`.)
pub async fn expiry(env: Arc<Env>) -> TestResult {
    let codes = async {
        let (_stack, w) = short_lived(&env, Shortened::Codes, &[]).await?;
        probe_code_expires(&w).await??;
        TestResult::Ok(())
    };
    let tokens = async {
        let (_stack, w) = short_lived(&env, Shortened::Tokens, &[]).await?;
        token_expires(&w).await
    };
    futures::future::try_join(codes, tokens).await?;
    Ok(())
}
