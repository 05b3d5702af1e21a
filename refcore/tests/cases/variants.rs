//! The honest variants (`docs/faults.md`, "Honest variants"). A default build
//! refuses a set `CORE_VARIANT`; a faults build refuses unknown names and a
//! variant together with a fault, and each variant is shown to be active:
//! its output really differs from refcore's where the contract leaves room.

use crate::support::core;
use crate::support::world::Env;

/// Starts refcore with a valid configuration plus `extra`, expecting it to
/// refuse (no listening line); returns what it said.
async fn refused_start(env: &Env, extra: &[(&str, &str)]) -> Result<String, String> {
    let place = core::fresh_database(env.backend, env.pg.as_deref()).await?;
    match core::start(env.backend, &place.url, extra) {
        Ok(_started) => Err(format!("{extra:?}: started anyway")),
        Err(refusal) => Ok(refusal),
    }
}

#[cfg(not(feature = "faults"))]
pub use default_build::*;

#[cfg(not(feature = "faults"))]
mod default_build {
    use std::sync::Arc;

    use super::refused_start;
    use crate::check;
    use crate::support::TestResult;
    use crate::support::world::Env;

    /// A default build has no variants, so a set `CORE_VARIANT` is refused
    /// with a message saying why.
    pub async fn default_build_refuses_a_variant(env: Arc<Env>) -> TestResult {
        let stderr = refused_start(&env, &[("CORE_VARIANT", "markup")]).await?;
        check!(
            stderr.contains("CORE_VARIANT is set") && stderr.contains("`faults` feature"),
            "unclear refusal: {stderr}"
        );
        Ok(())
    }

    /// Likewise for a hostile mode (`docs/faults.md`, "Hostile Cores").
    pub async fn default_build_refuses_a_hostile_mode(env: Arc<Env>) -> TestResult {
        let stderr = refused_start(&env, &[("CORE_HOSTILE", "not-http")]).await?;
        check!(
            stderr.contains("CORE_HOSTILE is set") && stderr.contains("`faults` feature"),
            "unclear refusal: {stderr}"
        );
        Ok(())
    }
}

#[cfg(feature = "faults")]
pub use with_faults::*;

#[cfg(feature = "faults")]
mod with_faults {
    use std::sync::Arc;

    use serde_json::Value;

    use super::refused_start;
    use crate::check;
    use crate::support::TestResult;
    use crate::support::browser::{Browser, has, input_value};
    use crate::support::client::Auth;
    use crate::support::oauth;
    use crate::support::world::{Env, World, triple};

    /// A fresh Core on the same backend with `CORE_VARIANT=variant`, and a
    /// world on it (which already signs in and reads the login form).
    async fn varied(env: &Env, variant: &str) -> Result<(Env, World), String> {
        let core =
            Env::start_with(env.backend, env.pg.clone(), &[("CORE_VARIANT", variant)]).await?;
        let world = World::new(&core).await?;
        Ok((core, world))
    }

    /// An unknown hostile mode is refused listing the valid ones.
    pub async fn hostile_refusal(env: Arc<Env>) -> TestResult {
        let stderr = refused_start(&env, &[("CORE_HOSTILE", "friendly")]).await?;
        for name in ["deep-json-error", "not-http", "log-flood"] {
            check!(
                stderr.contains(name),
                "valid name {name} not listed: {stderr}"
            );
        }
        Ok(())
    }

    /// An unknown name is refused listing the valid ones, and a variant
    /// never runs together with a fault.
    pub async fn variant_refusals(env: Arc<Env>) -> TestResult {
        let stderr = refused_start(&env, &[("CORE_VARIANT", "markdown")]).await?;
        for name in ["markup", "extra-members", "cookie-name"] {
            check!(
                stderr.contains(name),
                "valid name {name} not listed: {stderr}"
            );
        }
        let stderr = refused_start(
            &env,
            &[
                ("CORE_VARIANT", "markup"),
                ("CORE_FAULT", "replay-answers-201"),
            ],
        )
        .await?;
        check!(stderr.contains("both set"), "unclear refusal: {stderr}");
        let stderr = refused_start(
            &env,
            &[("CORE_VARIANT", "extra-members,redirect-302,post-200")],
        )
        .await?;
        check!(
            stderr.contains("redirect-302 and post-200, which conflict"),
            "unclear refusal: {stderr}"
        );
        Ok(())
    }

    /// Several variants at once, each active: `extra-members`, `cookie-name`
    /// (the session cookie renamed, `extra-cookies`' own kept beside it) and
    /// `post-200` (the decision answered with the page, and made).
    pub async fn composed(env: Arc<Env>) -> TestResult {
        let (_core, w) = varied(&env, "extra-members,cookie-name,extra-cookies,post-200").await?;
        let resp = Browser::new(&w.base)
            .login(&w.owner, &w.owner_password)
            .await?
            .expect(303, "login")?;
        let set: Vec<&str> = (resp.headers.get_all("set-cookie").iter())
            .filter_map(|v| v.to_str().ok())
            .collect();
        check!(
            set.iter()
                .any(|c| c.starts_with("v_sid=") && c.contains("HttpOnly"))
                && set.iter().any(|c| c.starts_with("lang="))
                && !set.iter().any(|c| c.starts_with("refcore_session=")),
            "cookies: {set:?}"
        );
        let id = w.prepare("t", "s").await?;
        check!(w.grant(id).await?["x_variant"] == true, "no extra members");
        w.confirm(id).await?;
        w.decide(id, "approve").await?.expect(200, "approve")?;
        check!(w.grant(id).await?["state"] == "active", "not approved");
        Ok(())
    }

    /// `markup`: no refcore class on the grant page, the state word still
    /// there as text, the forms still found by action and fields.
    pub async fn markup(env: Arc<Env>) -> TestResult {
        let (_core, w) = varied(&env, "markup").await?;
        let id = w.prepare("the task", "the summary").await?;
        w.confirm(id).await?;
        let page = w
            .browser
            .get(&format!("{}/{id}", w.pages()))
            .await?
            .expect(200, "grant page")?;
        check!(!has(&page.text, ".grant-state"), "refcore's class kept");
        check!(
            page.text.contains(">awaiting_human<") && page.text.contains("the task"),
            "state word or task not shown: {}",
            page.text
        );
        check!(
            has(&page.text, "form[method=get] input[name=q]")
                && has(&page.text, "form[action$=\"/user/logout\"]"),
            "no nav forms"
        );
        let approve = format!("{}{}/{id}/approve", w.base, w.pages());
        check!(
            has(&page.text, &format!("form[action=\"{approve}\"]")),
            "approve form not absolute on the public origin"
        );
        check!(
            input_value(&page.text, "state_revision").as_deref() == Some("2"),
            "no state_revision"
        );
        w.decide(id, "approve").await?.expect(303, "approve")?;
        check!(w.grant(id).await?["state"] == "active", "not approved");
        Ok(())
    }

    /// The page variants of #25, each active on the grant page (or the
    /// consent page) and each leaving the decision working: `inline-markup`
    /// (the state word split by markup), `form-owner` (the approve form
    /// empty, its fields joined by `form=`), `form-controls` (one decision
    /// form, Withdraw by `formaction`), `base-relative` (a `<base>`, the
    /// action relative) and `consent-two-forms` (two consent forms).
    pub async fn page_variants(env: Arc<Env>) -> TestResult {
        let grant_page = |variant: &'static str| {
            let env = env.clone();
            async move {
                let (core, w) = varied(&env, variant).await?;
                let id = w.prepare("the task", "the summary").await?;
                w.confirm(id).await?;
                let page = w
                    .browser
                    .get(&format!("{}/{id}", w.pages()))
                    .await?
                    .expect(200, "grant page")?;
                Ok::<_, String>((core, w, id, page.text))
            }
        };
        let (_core, w, id, page) = grant_page("inline-markup").await?;
        check!(
            !page.contains(">awaiting_human<")
                && page.contains("<span class=\"w\">a</span>waitin<wbr>g&#95;human"),
            "state word not split by markup: {page}"
        );
        w.decide(id, "approve").await?.expect(303, "approve")?;

        let (_core, w, id, page) = grant_page("form-owner").await?;
        let approve = format!("{}/{id}/approve", w.pages());
        check!(
            has(&page, &format!("form[action=\"{approve}\"][id]:empty"))
                && has(&page, "input[form][name=state_revision]"),
            "approve form not empty or fields not joined by form=: {page}"
        );
        w.decide(id, "approve").await?.expect(303, "approve")?;

        let (_core, w, id, page) = grant_page("form-controls").await?;
        let withdraw = format!("{}/{id}/withdraw", w.pages());
        check!(
            !has(&page, &format!("form[action=\"{withdraw}\"]"))
                && has(&page, &format!("button[formaction=\"{withdraw}\"]"))
                && has(&page, "input[name=_csrf][disabled]"),
            "no single decision form with formaction and decoys: {page}"
        );
        w.decide(id, "withdraw").await?.expect(303, "withdraw")?;

        let (_core, w, id, page) = grant_page("base-relative").await?;
        let relative = format!("{}/{id}/approve", w.pages().trim_start_matches('/'));
        check!(
            has(&page, "head base[href=\"/\"]")
                && has(&page, &format!("form[action=\"{relative}\"]")),
            "no base or no relative action: {page}"
        );
        w.decide(id, "approve").await?.expect(303, "approve")?;

        let (_core, w) = varied(&env, "consent-two-forms").await?;
        let app = oauth::register(&w, &[&oauth::callback()]).await?;
        let pkce = oauth::Pkce::new();
        let path = oauth::request(&app, &pkce, "st", None);
        let page = w.browser.get(&path).await?.expect(200, "consent page")?;
        let sel = scraper::Selector::parse("form[action=\"/login/oauth/grant\"]").unwrap();
        let forms = scraper::Html::parse_document(&page.text)
            .select(&sel)
            .count();
        check!(
            forms == 2
                && has(&page.text, "input[type=hidden][name=granted][value=true]")
                && has(&page.text, "button[name=granted][value=false]"),
            "consent page not two forms: {}",
            page.text
        );
        Ok(())
    }

    /// `extra-members`: grants (nested objects too), lists and errors carry
    /// unknown members beside the contract's.
    pub async fn extra_members(env: Arc<Env>) -> TestResult {
        let (_core, w) = varied(&env, "extra-members").await?;
        let id = w.prepare("t", "s").await?;
        let grant = w.grant(id).await?;
        check!(
            grant["x_variant"] == true && grant["agent"]["x_variant"] == true,
            "no extra members: {grant}"
        );
        check!(
            grant["state"] == "awaiting_agent",
            "contract member changed"
        );
        let list = w
            .api
            .get("/api/v1/agent-work-grants", &w.bot_auth)
            .await?
            .expect(200, "list")?
            .json();
        check!(list[0]["x_variant"] == true, "list item: {list}");
        let err = w
            .api
            .get("/api/v1/agent-work-grants", &Auth::None)
            .await?
            .expect(401, "anonymous")?
            .json();
        check!(
            err["x_variant"] == true && err["message"].is_string(),
            "error: {err}"
        );
        Ok(())
    }

    /// `reworded-errors`: other words in JSON errors and on error pages; a
    /// stale decision's page still says the grant changed.
    pub async fn reworded_errors(env: Arc<Env>) -> TestResult {
        let (_core, w) = varied(&env, "reworded-errors").await?;
        let err = w
            .api
            .get("/api/v1/agent-work-grants", &Auth::None)
            .await?
            .expect(401, "anonymous")?
            .json();
        let message = err["message"].as_str().unwrap_or_default();
        check!(message.starts_with("Sorry: "), "not reworded: {err}");
        let stale = w.stale_withdraw().await?.1.expect(409, "stale withdraw")?;
        check!(
            stale.text.contains("grant was changed") && !stale.text.contains("since this page"),
            "stale page: {}",
            stale.text
        );
        Ok(())
    }

    /// `link-style`: `Link` in another order, `rel=next` unquoted, `Rel=` and
    /// empty list elements elsewhere.
    pub async fn link_style(env: Arc<Env>) -> TestResult {
        let (_core, w) = varied(&env, "link-style").await?;
        for _ in 0..2 {
            w.prepare("t", "s").await?;
        }
        let resp = w
            .api
            .get("/api/v1/agent-work-grants?limit=1", &w.bot_auth)
            .await?
            .expect(200, "list")?;
        let link = resp.header("link").ok_or("no Link")?;
        // Empty list elements around each link, `Rel=` for the quoted ones.
        check!(
            link.trim_start().starts_with(",<")
                && link.contains(";rel=next")
                && !link.contains("\"next\""),
            "Link: {link}"
        );
        check!(
            link.find("Rel=\"last\"") < link.find("rel=next"),
            "Link order: {link}"
        );
        check!(
            link.contains(&format!("<{}/api/v1/", w.base)),
            "not absolute: {link}"
        );
        Ok(())
    }

    /// `absolute-redirects`: a prepared grant's `Location` is absolute.
    pub async fn absolute_redirects(env: Arc<Env>) -> TestResult {
        let (_core, w) = varied(&env, "absolute-redirects").await?;
        let resp = w
            .post_prepare(
                &w.repo,
                &[("agent", &w.bot), ("task", "t"), ("summary", "s")],
            )
            .await?
            .expect(303, "prepare")?;
        let location = resp.header("location").ok_or("no Location")?;
        check!(
            location.starts_with(&format!("{}{}/", w.base, w.pages())),
            "Location {location}"
        );
        Ok(())
    }

    /// `pretty-json`: indented, members reordered, same values.
    pub async fn pretty_json(env: Arc<Env>) -> TestResult {
        let (_core, w) = varied(&env, "pretty-json").await?;
        let id = w.prepare("t", "s").await?;
        let resp = w
            .api
            .get(&w.grant_path(id), &w.bot_auth)
            .await?
            .expect(200, "grant")?;
        check!(resp.text.starts_with("{\n"), "not pretty: {}", resp.text);
        check!(
            resp.text.find("\"updated_at\"") < resp.text.find("\"agent\""),
            "members in refcore's order: {}",
            resp.text
        );
        let grant: Value = resp.json();
        check!(
            grant["id"] == id && grant["state_revision"] == 1,
            "values: {grant}"
        );
        w.confirm(id).await?;
        let digest = w.digest(id).await?;
        w.api
            .post(
                &format!("{}/confirm", w.grant_path(id)),
                &w.bot_auth,
                &triple(&digest),
            )
            .await?
            .expect(409, "second confirm")?;
        Ok(())
    }

    /// `cookie-name`: the session cookie has another name, same attributes,
    /// and the browser still signs in and decides.
    pub async fn cookie_name(env: Arc<Env>) -> TestResult {
        let (_core, w) = varied(&env, "cookie-name").await?;
        let page = w
            .api
            .get("/user/login", &Auth::None)
            .await?
            .expect(200, "login")?;
        let cookie = page.header("set-cookie").ok_or("no cookie")?;
        check!(
            !cookie.starts_with("refcore_session=")
                && cookie.contains("HttpOnly")
                && cookie.contains("SameSite=Lax"),
            "cookie: {cookie}"
        );
        let id = w.prepare("t", "s").await?;
        w.decide(id, "withdraw").await?.expect(303, "withdraw")?;
        check!(w.grant(id).await?["state"] == "revoked", "not withdrawn");
        Ok(())
    }

    /// `redirect-302` and `post-200`: approve, withdraw and logout answer
    /// 302 (withdraw to the list), or 200 with the resulting page and no
    /// `Location`; the decision is made either way, and a refusal stays 409.
    pub async fn decision_answers(env: Arc<Env>) -> TestResult {
        let (_core, w) = varied(&env, "redirect-302").await?;
        let id = w.prepare("t", "s").await?;
        w.confirm(id).await?;
        w.decide(id, "approve").await?.expect(302, "approve")?;
        check!(w.grant(id).await?["state"] == "active", "not approved");
        let resp = w.decide(id, "withdraw").await?.expect(302, "withdraw")?;
        check!(
            resp.header("location") == Some(w.pages()),
            "withdraw to {:?}",
            resp.header("location")
        );
        check!(w.grant(id).await?["state"] == "revoked", "not withdrawn");

        let (_core, w) = varied(&env, "post-200").await?;
        let id = w.prepare("t", "s").await?;
        let path = format!("{}/{id}", w.pages());
        let (page, csrf) = w.browser.csrf_from(&path).await?;
        let old = input_value(&page.text, "state_revision").ok_or("no revision")?;
        w.confirm(id).await?;
        let resp = w.decide(id, "approve").await?.expect(200, "approve")?;
        check!(
            resp.header("location").is_none() && resp.text.contains(">active<"),
            "not the grant page: {}",
            resp.text
        );
        check!(w.grant(id).await?["state"] == "active", "not approved");
        w.browser
            .post_form(
                &format!("{path}/withdraw"),
                &[("_csrf", &csrf), ("state_revision", &old)],
            )
            .await?
            .expect(409, "stale withdraw")?;
        let resp = w
            .browser
            .post_form("/user/logout", &[("_csrf", &csrf)])
            .await?
            .expect(200, "logout")?;
        check!(
            resp.header("set-cookie").is_some(),
            "logout kept the cookie"
        );
        let after = w.browser.get(&path).await?;
        check!(after.status != 200, "the grant page opens after logout");
        Ok(())
    }

    /// `logout-page`: no page holds a logout form; the home page links to a
    /// confirmation page whose form signs out.
    pub async fn logout_page(env: Arc<Env>) -> TestResult {
        let (_core, w) = varied(&env, "logout-page").await?;
        let home = w.browser.get("/").await?.expect(200, "home")?;
        check!(
            !has(&home.text, "form[action=\"/user/logout\"]")
                && has(&home.text, "a[href=\"/user/logout\"]"),
            "home: {}",
            home.text
        );
        let (page, csrf) = w.browser.csrf_from("/user/logout").await?;
        check!(
            has(&page.text, "form[method=post][action=\"/user/logout\"]"),
            "confirmation: {}",
            page.text
        );
        w.browser
            .post_form("/user/logout", &[("_csrf", &csrf)])
            .await?
            .expect(303, "logout")?;
        Browser::new(&w.base)
            .get("/user/logout")
            .await?
            .expect(303, "signed out")?;
        Ok(())
    }

    /// `home-dashboard`: `/` sends a signed-in person to `/dashboard`, which
    /// says who is signed in; signed out, `/` is the home page.
    pub async fn home_dashboard(env: Arc<Env>) -> TestResult {
        let (_core, w) = varied(&env, "home-dashboard").await?;
        let resp = w.browser.get("/").await?.expect(303, "home")?;
        check!(
            resp.header("location").as_deref() == Some("/dashboard"),
            "to {:?}",
            resp.header("location")
        );
        let page = w
            .browser
            .get("/dashboard")
            .await?
            .expect(200, "dashboard")?;
        check!(page.text.contains(&w.owner), "dashboard: {}", page.text);
        Browser::new(&w.base)
            .get("/")
            .await?
            .expect(200, "anonymous home")?;
        Ok(())
    }

    /// `login-200`: a failed login answers 200 with the form again.
    pub async fn login_200(env: Arc<Env>) -> TestResult {
        let (_core, w) = varied(&env, "login-200").await?;
        let resp = Browser::new(&w.base)
            .login(&w.owner, "not the password")
            .await?
            .expect(200, "failed login")?;
        check!(
            has(&resp.text, "input[name=user_name]") && resp.header("location").is_none(),
            "failed login: {}",
            resp.text
        );
        Ok(())
    }

    /// `stale-wording`: a stale decision's 409 page never says "changed".
    pub async fn stale_wording(env: Arc<Env>) -> TestResult {
        let (_core, w) = varied(&env, "stale-wording").await?;
        let stale = w.stale_withdraw().await?.1.expect(409, "stale withdraw")?;
        check!(
            stale.text.contains("modified by someone else") && !stale.text.contains("changed"),
            "stale page: {}",
            stale.text
        );
        Ok(())
    }

    /// `link-extra`: one `Link` field line per target, `self` among them,
    /// relations that share a target joined, and extra paging headers.
    pub async fn link_extra(env: Arc<Env>) -> TestResult {
        let (_core, w) = varied(&env, "link-extra").await?;
        for _ in 0..2 {
            w.prepare("t", "s").await?;
        }
        let resp = w
            .api
            .get("/api/v1/agent-work-grants?page=2&limit=1", &w.bot_auth)
            .await?
            .expect(200, "list")?;
        let lines: Vec<&str> = resp
            .headers
            .get_all("link")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .collect();
        check!(
            lines.len() == 3
                && lines[0].contains("rel=\"self\"")
                && lines.iter().any(|l| l.contains("rel=\"prev first\"")
                    && l.contains("sort=id&limit=1&page=1")
                    && l.contains("title=")),
            "Link: {lines:?}"
        );
        check!(
            resp.header("x-total-count").as_deref() == Some("2")
                && resp.header("x-page").as_deref() == Some("2"),
            "headers: {:?}",
            resp.headers
        );
        Ok(())
    }

    /// `extra-cookies`: pages set a `lang` cookie that is neither
    /// `HttpOnly` nor `SameSite`; the login answer also clears one.
    pub async fn extra_cookies(env: Arc<Env>) -> TestResult {
        let (_core, w) = varied(&env, "extra-cookies").await?;
        let b = Browser::new(&w.base);
        let resp = b
            .login(&w.owner, &w.owner_password)
            .await?
            .expect(303, "login")?;
        let set: Vec<&str> = resp
            .headers
            .get_all("set-cookie")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .collect();
        check!(
            set.len() == 3
                && set
                    .iter()
                    .any(|c| c.starts_with("lang=") && !c.contains("HttpOnly"))
                && set.iter().any(|c| c.starts_with("redirect_to=;")),
            "cookies: {set:?}"
        );
        Ok(())
    }

    /// `signin-in-place`: a signed-out browser gets the login form at the
    /// page's own address with 200, and signing in with it still works.
    pub async fn signin_in_place(env: Arc<Env>) -> TestResult {
        let (_core, w) = varied(&env, "signin-in-place").await?;
        let id = w.prepare("t", "s").await?;
        let path = format!("{}/{id}", w.pages());
        let b = Browser::new(&w.base);
        let page = b.get(&path).await?.expect(200, "signed-out grant page")?;
        check!(
            has(
                &page.text,
                "form[action=\"/user/login\"] input[name=user_name]"
            ) && !page.text.contains("awaiting_agent"),
            "in place: {}",
            page.text
        );
        b.login(&w.owner, &w.owner_password)
            .await?
            .expect(303, "login")?;
        b.get(&path).await?.expect(200, "grant page")?;
        Ok(())
    }

    /// The consent pages under the variants that touch pages: `markup`
    /// (the consent form found by action and fields, refcore's classes
    /// gone), `absolute-redirects` (the login detour and its way back are
    /// absolute) and `reworded-errors` (the refusal page reworded, the token
    /// endpoint's `error` member untouched).
    pub async fn oauth_pages(env: Arc<Env>) -> TestResult {
        let (_core, w) = varied(&env, "markup").await?;
        let app = oauth::register(&w, &[&oauth::callback()]).await?;
        let pkce = oauth::Pkce::new();
        let path = oauth::request(&app, &pkce, "st", None);
        let page = w.browser.get(&path).await?.expect(200, "consent page")?;
        check!(
            !has(&page.text, ".oauth-grant")
                && has(
                    &page.text,
                    &format!("form[action=\"{}/login/oauth/grant\"]", w.base)
                )
                && oauth::has_both_answers(&page.text),
            "consent page under markup: {}",
            page.text
        );
        let code = oauth::code_for(&w.browser, &path).await?;
        oauth::exchange(&w, &app, &code, &pkce.verifier)
            .await?
            .expect(200, "exchange under markup")?;

        let (_core, w) = varied(&env, "absolute-redirects").await?;
        let app = oauth::register(&w, &[&oauth::callback()]).await?;
        let path = oauth::request(&app, &pkce, "st", None);
        let b = Browser::new(&w.base);
        let resp = b.get(&path).await?.expect(303, "anonymous authorize")?;
        let login = resp.header("location").ok_or("no Location")?;
        check!(
            login.starts_with(&format!("{}/user/login?", w.base)),
            "login detour {login}"
        );
        let (page, resp) = b
            .login_via(
                login.trim_start_matches(w.base.as_str()),
                &w.owner,
                &w.owner_password,
                None,
            )
            .await?;
        check!(
            input_value(&page.text, "redirect_to").is_some(),
            "no redirect_to"
        );
        let resp = resp.expect(303, "login")?;
        check!(
            resp.header("location") == Some(format!("{}{path}", w.base)),
            "way back {:?}",
            resp.header("location")
        );

        let (_core, w) = varied(&env, "reworded-errors").await?;
        let app = oauth::register(&w, &[&oauth::callback()]).await?;
        let bad = oauth::App {
            redirect_uri: format!("{}x", app.redirect_uri),
            ..app.clone()
        };
        let page = w
            .browser
            .get(&oauth::request(&bad, &pkce, "st", None))
            .await?
            .expect(400, "refused request")?;
        check!(page.text.contains("Sorry"), "not reworded: {}", page.text);
        let resp = oauth::exchange(&w, &app, "0000", &pkce.verifier).await?;
        check!(
            oauth::is_error(&resp, "invalid_grant"),
            "token error under reworded-errors: {}",
            resp.text
        );
        Ok(())
    }
}
