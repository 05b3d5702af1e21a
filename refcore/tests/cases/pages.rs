//! Browser pages: stale revisions, who may see which page, and the Issue
//! page.

use std::sync::Arc;

use crate::check;
use crate::support::TestResult;
use crate::support::browser::{Browser, has, input_value, text_of};
use crate::support::world::{Env, World, key, submission, unique};

/// A stale `state_revision` gets a 409 page saying the grant changed, and
/// changes nothing.
pub async fn stale_revision(env: Arc<Env>) -> TestResult {
    let w = World::new(&env).await?;
    let id = w.prepare("t", "s").await?;
    let path = format!("{}/{id}", w.pages());
    let (page, csrf) = w.browser.csrf_from(&path).await?;
    let old_rev = input_value(&page.text, "state_revision").ok_or("no revision")?;
    w.confirm(id).await?; // revision 1 → 2 behind the page's back
    let resp = w
        .browser
        .post_form(
            &format!("{path}/withdraw"),
            &[("_csrf", &csrf), ("state_revision", &old_rev)],
        )
        .await?;
    check!(resp.status == 409, "stale withdraw: {}", resp.status);
    check!(
        resp.text.contains("grant changed"),
        "409 page does not say the grant changed: {}",
        resp.text
    );
    check!(
        w.grant(id).await?["state"] == "awaiting_human",
        "stale withdraw applied"
    );
    let resp = w
        .browser
        .post_form(
            &format!("{path}/approve"),
            &[("_csrf", &csrf), ("state_revision", "99")],
        )
        .await?;
    check!(
        resp.status == 409,
        "future revision approve: {}",
        resp.status
    );
    let resp = w
        .browser
        .post_form(
            &format!("{path}/approve"),
            &[("_csrf", &csrf), ("state_revision", "two")],
        )
        .await?;
    check!(resp.status == 400, "non-numeric revision: {}", resp.status);
    // Approving in the wrong state with the current revision is also 409.
    let id2 = w.prepare("t2", "s2").await?;
    let (p2, c2) = w.browser.csrf_from(&format!("{}/{id2}", w.pages())).await?;
    check!(
        !has(&p2.text, "form.grant-approve"),
        "approve form before confirmation"
    );
    let resp = w
        .browser
        .post_form(
            &format!("{}/{id2}/approve", w.pages()),
            &[("_csrf", &c2), ("state_revision", "1")],
        )
        .await?;
    check!(
        resp.status == 409,
        "approve awaiting_agent: {}",
        resp.status
    );
    check!(
        w.grant(id2).await?["state_revision"] == 1,
        "refused approval changed the revision"
    );
    Ok(())
}

/// Not signed in → 303 to login; signed in without admin → 404; a bot's
/// token never reaches the pages.
pub async fn page_access(env: Arc<Env>) -> TestResult {
    let w = World::new(&env).await?;
    let id = w.prepare("t", "s").await?;
    let anon = Browser::new(&w.base);
    let bot_token = match &w.bot_auth {
        crate::support::client::Auth::Token(t) => t.clone(),
        _ => return Err("bot has no token".into()),
    };
    let pages = [
        w.pages(),
        format!("{}/new", w.pages()),
        format!("{}/{id}", w.pages()),
    ];
    for page in &pages {
        let resp = anon.get(page).await?;
        check!(
            resp.status == 303 && resp.header("location").as_deref() == Some("/user/login"),
            "anonymous {page}: {}",
            resp.status
        );
        let resp = anon
            .get_with(page, &[("Authorization", &format!("token {bot_token}"))])
            .await?;
        check!(resp.status == 303, "bot token on {page}: {}", resp.status);
    }
    // A human with write (not admin) permission sees 404 everywhere.
    let writer = format!("walter-{}", unique());
    w.user(&writer, "individual", "walter-pw-1").await?;
    w.collaborator(&writer, "write").await?;
    let wb = Browser::new(&w.base);
    wb.login(&writer, "walter-pw-1")
        .await?
        .expect(303, "writer login")?;
    for page in &pages {
        let resp = wb.get(page).await?;
        check!(resp.status == 404, "writer {page}: {}", resp.status);
    }
    let csrf = input_value(&wb.get("/").await?.text, "_csrf").ok_or("no _csrf")?;
    let resp = wb
        .post_form(
            &format!("{}/{id}/withdraw", w.pages()),
            &[("_csrf", &csrf), ("state_revision", "1")],
        )
        .await?;
    check!(resp.status == 404, "writer withdraw: {}", resp.status);
    check!(
        w.grant(id).await?["state"] == "awaiting_agent",
        "writer changed the grant"
    );
    // An admin collaborator may manage grants.
    let admin = format!("ada-{}", unique());
    w.user(&admin, "individual", "ada-pw-1").await?;
    w.collaborator(&admin, "admin").await?;
    let ab = Browser::new(&w.base);
    ab.login(&admin, "ada-pw-1")
        .await?
        .expect(303, "admin login")?;
    let list = ab
        .get(&w.pages())
        .await?
        .expect(200, "admin collaborator list")?;
    check!(
        has(&list.text, &format!("a[href$=\"/agent-work-grants/{id}\"]")),
        "list lacks a link to the grant"
    );
    Ok(())
}

/// The Issue page shows the poster and "via agent work grant #N", keeps
/// CR/LF and markup whole, and is invisible without permission.
pub async fn issue_page(env: Arc<Env>) -> TestResult {
    let w = World::new(&env).await?;
    let (id, digest) = w.active_grant().await?;
    let body = "\nleading newline\r\n<script>alert(1)</script> &amp; \r lone CR\u{7f}";
    let made = w
        .api
        .post(
            &format!("{}/issues", w.grant_path(id)),
            &w.bot_auth,
            &submission(&digest, &key(), "<i>title</i>", body),
        )
        .await?
        .expect(201, "submit")?
        .json();
    let index = made["submission"]["issue"]["index"]
        .as_i64()
        .ok_or("index")?;
    let path = format!("/{}/{}/issues/{index}", w.owner, w.repo);
    let page = w.browser.get(&path).await?.expect(200, "issue page")?;
    check!(
        text_of(&page.text, "pre.issue-body").as_deref() == Some(body),
        "body differs: {:?}",
        text_of(&page.text, "pre.issue-body")
    );
    check!(!page.text.contains("<script>"), "markup not escaped");
    check!(
        text_of(&page.text, ".issue-title").as_deref() == Some("<i>title</i>"),
        "title"
    );
    check!(
        text_of(&page.text, ".issue-grant").as_deref()
            == Some(format!("via agent work grant #{id}").as_str()),
        "grant marker"
    );
    let anon = Browser::new(&w.base);
    anon.get(&path)
        .await?
        .expect(404, "anonymous on a private repository")?;
    anon.get(&format!("/{}/{}/issues/{}", w.owner, w.repo, index + 50))
        .await?
        .expect(404, "missing issue")?;
    Ok(())
}
