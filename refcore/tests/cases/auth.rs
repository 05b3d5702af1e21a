//! Credentials and scopes: the three Authorization forms, `write:X ⇒
//! read:X`, and the guarded setup surface.

use std::sync::Arc;

use reqwest::Method;
use serde_json::json;

use crate::check;
use crate::support::TestResult;
use crate::support::client::Auth;
use crate::support::core;
use crate::support::world::{Env, World, unique};

/// `token`, `Bearer`, Basic with token and Basic with password all work;
/// anything wrong is 401.
pub async fn credential_forms(env: Arc<Env>) -> TestResult {
    let w = World::new(&env).await?;
    let token = w.token(&w.bot, &["read:repository"]).await?;
    let list = "/api/v1/agent-work-grants";
    for (what, auth) in [
        ("token", Auth::Token(token.clone())),
        ("Bearer", Auth::Bearer(token.clone())),
        ("Basic token", Auth::Basic(w.bot.clone(), token.clone())),
        (
            "Basic password",
            Auth::Basic(w.bot.clone(), "bot-password-1".into()),
        ),
        ("lowercase scheme", Auth::Raw(format!("bearer {token}"))),
    ] {
        w.api.get(list, &auth).await?.expect(200, what)?;
    }
    for (what, auth) in [
        ("unknown token", Auth::Token("0".repeat(40))),
        (
            "Basic wrong password",
            Auth::Basic(w.bot.clone(), "nope".into()),
        ),
        (
            "Basic token of another user",
            Auth::Basic(w.owner.clone(), token.clone()),
        ),
        (
            "Basic unknown user",
            Auth::Basic(format!("ghost-{}", unique()), "x".into()),
        ),
        ("garbled Basic", Auth::Raw("Basic !!!".into())),
        ("unknown scheme", Auth::Raw(format!("Digest {token}"))),
        ("scheme only", Auth::Raw("token".into())),
    ] {
        w.api.get(list, &auth).await?.expect(401, what)?;
    }
    // A deleted token stops working.
    let minted = w
        .api
        .post(
            &format!("/api/v1/users/{}/tokens", w.bot),
            &w.admin,
            &json!({"name": format!("gone-{}", unique()), "scopes": ["read:repository"]}),
        )
        .await?
        .expect(201, "mint")?
        .json();
    let secret = minted["sha1"].as_str().ok_or("sha1")?.to_string();
    check!(
        secret.len() == 40 && secret.bytes().all(|b| b.is_ascii_hexdigit()),
        "token shape {secret}"
    );
    w.api
        .call(
            Method::DELETE,
            &format!("/api/v1/users/{}/tokens/{}", w.bot, minted["id"]),
            &w.admin,
            None,
        )
        .await?
        .expect(204, "delete token")?;
    w.api
        .get(list, &Auth::Token(secret))
        .await?
        .expect(401, "deleted token")?;
    Ok(())
}

/// Each route checks its scopes now; `write:X` implies `read:X`.
pub async fn scopes_are_enforced(env: Arc<Env>) -> TestResult {
    let w = World::new(&env).await?;
    let id = w.prepare("t", "s").await?;
    let digest = w.digest(id).await?;
    let confirm = format!("{}/confirm", w.grant_path(id));
    let triple = crate::support::world::triple(&digest);
    let issue_only = Auth::Token(w.token(&w.bot, &["write:issue"]).await?);
    let read_only = Auth::Token(w.token(&w.bot, &["read:repository", "read:issue"]).await?);
    let write_repo = Auth::Token(
        w.token(&w.bot, &["write:repository", "write:issue"])
            .await?,
    );
    let user_only = Auth::Token(w.token(&w.bot, &["read:user"]).await?);
    w.api
        .get(&w.grant_path(id), &issue_only)
        .await?
        .expect(403, "get without read:repository")?;
    w.api
        .get(&w.grant_path(id), &user_only)
        .await?
        .expect(403, "get with read:user")?;
    w.api
        .post(&confirm, &read_only, &triple)
        .await?
        .expect(403, "confirm without write:issue")?;
    check!(
        w.grant(id).await?["state_revision"] == 1,
        "a 403 confirm changed the grant"
    );
    w.api
        .get(&w.grant_path(id), &write_repo)
        .await?
        .expect(200, "write:repository implies read")?;
    w.api
        .post(&confirm, &write_repo, &triple)
        .await?
        .expect(200, "confirm with implied read")?;
    // Every grant route: no credential → 401, a credential without
    // read:repository → 403, before anything else is looked at.
    let (active, active_digest) = w.active_grant().await?;
    let k = crate::support::world::key();
    let submit_body = crate::support::world::submission(&active_digest, &k, "t", "b");
    w.api
        .post(
            &format!("{}/issues", w.grant_path(active)),
            &w.bot_auth,
            &submit_body,
        )
        .await?
        .expect(201, "submit")?;
    let routes: Vec<(Method, String, Option<serde_json::Value>)> = vec![
        (Method::GET, "/api/v1/agent-work-grants".into(), None),
        (Method::GET, w.grant_path(active), None),
        (
            Method::POST,
            format!("{}/confirm", w.grant_path(active)),
            Some(triple.clone()),
        ),
        (
            Method::POST,
            format!("{}/issues", w.grant_path(active)),
            Some(submit_body.clone()),
        ),
        (
            Method::GET,
            format!("{}/submissions/{k}", w.grant_path(active)),
            None,
        ),
    ];
    for (method, path, body) in &routes {
        w.api
            .call(method.clone(), path, &Auth::None, body.as_ref())
            .await?
            .expect(401, &format!("anonymous {method} {path}"))?;
        w.api
            .call(method.clone(), path, &issue_only, body.as_ref())
            .await?
            .expect(403, &format!("{method} {path} without read:repository"))?;
    }
    check!(w.issue_count().await? == 1, "refused calls wrote an Issue");
    // Ordinary issue routes follow the same rule.
    let issues = format!("/api/v1/repos/{}/{}/issues", w.owner, w.repo);
    w.api
        .post(&issues, &read_only, &json!({"title": "t"}))
        .await?
        .expect(403, "issue without write:issue")?;
    w.api
        .get(&issues, &issue_only)
        .await?
        .expect(200, "write:issue implies read:issue")?;
    w.api
        .get(&issues, &user_only)
        .await?
        .expect(403, "issues with read:user")?;
    Ok(())
}

/// Setup routes need a site admin; token minting needs the user's own
/// password or an admin; duplicates and bad values are 422.
pub async fn setup_surface_is_guarded(env: Arc<Env>) -> TestResult {
    let w = World::new(&env).await?;
    let owner_pw = Auth::Basic(w.owner.clone(), w.owner_password.clone());
    let login = format!("newbie-{}", unique());
    let body = json!({"login": login, "email": "n@example.test", "password": "pw-newbie-1", "type": "individual"});
    w.api
        .post("/api/v1/admin/users", &owner_pw, &body)
        .await?
        .expect(403, "non-admin creates a user")?;
    w.api
        .post("/api/v1/admin/users", &Auth::None, &body)
        .await?
        .expect(401, "anonymous creates a user")?;
    w.api
        .post("/api/v1/admin/users", &w.admin, &body)
        .await?
        .expect(201, "admin creates a user")?;
    w.api
        .post("/api/v1/admin/users", &w.admin, &body)
        .await?
        .expect(422, "duplicate user")?;
    let mut bad = body.clone();
    bad["type"] = json!("robot");
    bad["login"] = json!(format!("x{}", unique()));
    w.api
        .post("/api/v1/admin/users", &w.admin, &bad)
        .await?
        .expect(422, "bad type")?;
    // Tokens: own password yes, own token no, someone else's password no.
    let tokens = format!("/api/v1/users/{}/tokens", w.owner);
    let t = json!({"name": format!("own-{}", unique()), "scopes": ["read:repository"]});
    let own = w
        .api
        .post(&tokens, &owner_pw, &t)
        .await?
        .expect(201, "own password mints")?
        .json();
    w.api
        .post(&tokens, &owner_pw, &t)
        .await?
        .expect(422, "duplicate token name")?;
    let own_token = Auth::Token(own["sha1"].as_str().unwrap_or_default().into());
    let t2 = json!({"name": format!("own2-{}", unique()), "scopes": ["read:repository"]});
    w.api
        .post(&tokens, &own_token, &t2)
        .await?
        .expect(403, "token mints a token")?;
    let bot_pw = Auth::Basic(w.bot.clone(), "bot-password-1".into());
    w.api
        .post(&tokens, &bot_pw, &t2)
        .await?
        .expect(403, "another user's password")?;
    w.api
        .post(
            &tokens,
            &owner_pw,
            &json!({"name": "x", "scopes": ["write:everything"]}),
        )
        .await?
        .expect(422, "unknown scope")?;
    w.api
        .post(&tokens, &owner_pw, &json!({"name": "y", "scopes": []}))
        .await?
        .expect(422, "no scope")?;
    w.api
        .post(
            &format!("/api/v1/users/ghost-{}/tokens", unique()),
            &w.admin,
            &t2,
        )
        .await?
        .expect(404, "tokens of a missing user")?;
    // Repositories and collaborators.
    let repo = json!({"name": format!("r-{}", unique()), "private": false});
    w.api
        .post(
            &format!("/api/v1/admin/users/{}/repos", w.owner),
            &owner_pw,
            &repo,
        )
        .await?
        .expect(403, "non-admin creates a repo")?;
    w.api
        .post(
            &format!("/api/v1/admin/users/{}/repos", w.owner),
            &w.admin,
            &repo,
        )
        .await?
        .expect(201, "admin creates a repo")?;
    w.api
        .post(
            &format!("/api/v1/admin/users/{}/repos", w.owner),
            &w.admin,
            &repo,
        )
        .await?
        .expect(409, "duplicate repo")?;
    let collab = format!(
        "/api/v1/repos/{}/{}/collaborators/{}",
        w.owner, w.repo, w.owner
    );
    let bot_auth = w.bot_auth.clone();
    w.api
        .call(
            Method::PUT,
            &collab,
            &bot_auth,
            Some(&json!({"permission": "admin"})),
        )
        .await?
        .expect(403, "bot edits collaborators")?;
    w.api
        .call(
            Method::PUT,
            &collab,
            &w.admin,
            Some(&json!({"permission": "owner"})),
        )
        .await?
        .expect(422, "bad permission")?;
    // The admin token never came from anything but Basic auth of the admin.
    let admin_pw = Auth::Basic(core::ADMIN.into(), core::ADMIN_PASSWORD.into());
    w.api
        .get("/api/v1/version", &admin_pw)
        .await?
        .expect(200, "version with admin password")?;
    Ok(())
}
