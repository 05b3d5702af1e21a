//! Browser sessions and CSRF: login, rotation, logout, and every kind of
//! refused `_csrf` (missing, foreign, garbled, tampered, expired).

use std::sync::Arc;
use std::time::Duration;

use crate::check;
use crate::support::TestResult;
use crate::support::browser::{Browser, input_value, text_of};
use crate::support::core;
use crate::support::world::{Env, World, unique};

/// Login needs the form's `_csrf`, rotates the session id, sets a cookie
/// that is `HttpOnly; SameSite=Lax`; bots cannot sign in; logout ends it.
pub async fn login_and_session(env: Arc<Env>) -> TestResult {
    let w = World::new(&env).await?;
    let b = Browser::new(&w.base);
    let page = b.get("/user/login").await?.expect(200, "login page")?;
    let cookie = page
        .header("set-cookie")
        .ok_or("no session cookie on the login page")?;
    check!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Lax") && cookie.contains("Path=/"),
        "cookie attributes: {cookie}"
    );
    let anon_id = cookie.split(';').next().unwrap_or_default().to_string();
    let csrf = input_value(&page.text, "_csrf").ok_or("no _csrf")?;
    // Without the token: refused.
    let resp = b
        .post_form(
            "/user/login",
            &[("user_name", &w.owner), ("password", &w.owner_password)],
        )
        .await?;
    check!(resp.status == 400, "login without _csrf: {}", resp.status);
    // Wrong password: refused, no session.
    let resp = b
        .post_form(
            "/user/login",
            &[
                ("_csrf", &csrf),
                ("user_name", &w.owner),
                ("password", "wrong"),
            ],
        )
        .await?;
    check!(resp.status == 401, "wrong password: {}", resp.status);
    // A bot cannot sign in, even with its right password.
    let resp = b
        .post_form(
            "/user/login",
            &[
                ("_csrf", &csrf),
                ("user_name", &w.bot),
                ("password", "bot-password-1"),
            ],
        )
        .await?;
    check!(resp.status == 401, "bot login: {}", resp.status);
    let resp = b
        .post_form(
            "/user/login",
            &[
                ("_csrf", &csrf),
                ("user_name", &w.owner),
                ("password", &w.owner_password),
            ],
        )
        .await?;
    check!(
        resp.status == 303 && resp.header("location").as_deref() == Some("/"),
        "login: {} {:?}",
        resp.status,
        resp.header("location")
    );
    let new_cookie = resp.header("set-cookie").ok_or("login set no cookie")?;
    check!(
        new_cookie.split(';').next() != Some(anon_id.as_str()),
        "login did not rotate the session id"
    );
    let home = b.get("/").await?.expect(200, "home")?;
    check!(
        text_of(&home.text, ".home-user").as_deref() == Some(w.owner.as_str()),
        "home does not show the user"
    );
    // The pre-login token is bound to the old session: now foreign.
    let grants = w.pages();
    b.get(&grants).await?.expect(200, "grant list")?;
    let logout_csrf = input_value(&home.text, "_csrf").ok_or("no logout _csrf")?;
    let resp = b.post_form("/user/logout", &[("_csrf", &csrf)]).await?;
    check!(
        resp.status == 400,
        "logout with the pre-login token: {}",
        resp.status
    );
    b.post_form("/user/logout", &[("_csrf", &logout_csrf)])
        .await?
        .expect(303, "logout")?;
    let after = b.get(&grants).await?;
    check!(
        after.status == 303 && after.header("location").as_deref() == Some("/user/login"),
        "after logout: {}",
        after.status
    );
    Ok(())
}

/// Missing, foreign and garbled `_csrf` on approve and withdraw: 400, the
/// grant unchanged. The `X-Csrf-Token` header is accepted instead.
pub async fn csrf_refusals(env: Arc<Env>) -> TestResult {
    let w = World::new(&env).await?;
    let id = w.prepare("t", "s").await?;
    w.confirm(id).await?;
    let path = format!("{}/{id}", w.pages());
    // A second human with a session of their own provides a foreign token.
    let other = format!("mallory-{}", unique());
    w.user(&other, "individual", "mallory-pw-1").await?;
    let mb = Browser::new(&w.base);
    mb.login(&other, "mallory-pw-1")
        .await?
        .expect(303, "other login")?;
    let foreign = input_value(&mb.get("/").await?.text, "_csrf").ok_or("no foreign token")?;
    let (page, own) = w.browser.csrf_from(&path).await?;
    let rev = input_value(&page.text, "state_revision").ok_or("no revision")?;
    // Flip the last hex digit of the MAC to a different one.
    let last = if own.ends_with('0') { "1" } else { "0" };
    let tampered = format!("{}{last}", &own[..own.len() - 1]);
    check!(tampered != own, "tampering left the token unchanged");
    for action in ["approve", "withdraw"] {
        for (what, fields) in [
            ("missing", vec![("state_revision", rev.as_str())]),
            (
                "foreign",
                vec![
                    ("_csrf", foreign.as_str()),
                    ("state_revision", rev.as_str()),
                ],
            ),
            (
                "garbled",
                vec![("_csrf", "garbage"), ("state_revision", rev.as_str())],
            ),
            (
                "tampered",
                vec![
                    ("_csrf", tampered.as_str()),
                    ("state_revision", rev.as_str()),
                ],
            ),
        ] {
            let resp = w
                .browser
                .post_form(&format!("{path}/{action}"), &fields)
                .await?;
            check!(
                resp.status == 400,
                "{action} with {what} _csrf: {}",
                resp.status
            );
        }
    }
    // Prepare refuses a missing token too.
    let resp = w
        .browser
        .post_form(
            &w.pages(),
            &[("agent", w.bot.as_str()), ("task", "t"), ("summary", "s")],
        )
        .await?;
    check!(resp.status == 400, "prepare without _csrf: {}", resp.status);
    let grant = w.grant(id).await?;
    check!(
        grant["state"] == "awaiting_human" && grant["state_revision"] == 2,
        "refused posts changed the grant: {grant}"
    );
    let all = w
        .api
        .get("/api/v1/agent-work-grants?state=all", &w.bot_auth)
        .await?
        .json();
    check!(
        all.as_array().map(|a| a.len()) == Some(1),
        "refused prepare made a grant"
    );
    // The header form of the token works.
    let resp = w
        .browser
        .post_form_with(
            &format!("{path}/approve"),
            &[("state_revision", rev.as_str())],
            &[("X-Csrf-Token", own.as_str())],
        )
        .await?;
    check!(
        resp.status == 303,
        "approve with X-Csrf-Token: {}",
        resp.status
    );
    check!(
        w.grant(id).await?["state"] == "active",
        "header approval did not apply"
    );
    Ok(())
}

/// An expired `_csrf` is refused: a dedicated stack with a 2-second TTL
/// (a fresh token stays valid for at least 2 s even on a loaded machine).
pub async fn csrf_expiry(env: Arc<Env>) -> TestResult {
    let place = core::fresh_database(env.backend, env.pg.as_deref()).await?;
    let short = core::start(env.backend, &place.url, &[("CORE_CSRF_TTL_SECS", "2")])?;
    let b = Browser::new(&short.url);
    let page = b.get("/user/login").await?.expect(200, "login page")?;
    let csrf = input_value(&page.text, "_csrf").ok_or("no _csrf")?;
    tokio::time::sleep(Duration::from_millis(3300)).await;
    let resp = b
        .post_form(
            "/user/login",
            &[
                ("_csrf", &csrf),
                ("user_name", core::ADMIN),
                ("password", core::ADMIN_PASSWORD),
            ],
        )
        .await?;
    check!(
        resp.status == 400,
        "login with an expired token: {}",
        resp.status
    );
    let fresh = input_value(&b.get("/user/login").await?.text, "_csrf").ok_or("no fresh _csrf")?;
    let resp = b
        .post_form(
            "/user/login",
            &[
                ("_csrf", &fresh),
                ("user_name", core::ADMIN),
                ("password", core::ADMIN_PASSWORD),
            ],
        )
        .await?;
    check!(
        resp.status == 303,
        "login with a fresh token: {}",
        resp.status
    );
    // A signed-in form token expires the same way.
    let home = b.get("/").await?.expect(200, "home")?;
    let token = input_value(&home.text, "_csrf").ok_or("no home _csrf")?;
    tokio::time::sleep(Duration::from_millis(3300)).await;
    let resp = b.post_form("/user/logout", &[("_csrf", &token)]).await?;
    check!(
        resp.status == 400,
        "logout with an expired token: {}",
        resp.status
    );
    check!(
        b.get("/").await?.text.contains("home-user"),
        "expired logout ended the session"
    );
    Ok(())
}
