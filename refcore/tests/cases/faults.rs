//! The built-in faults (`docs/faults.md`). A default build refuses a set
//! `CORE_FAULT`; a faults build refuses unknown names and, for a few
//! representative faults, really breaks the one rule it names. That a faults
//! build with no fault set behaves like the default one is shown by running
//! this whole suite against it (`--features faults`).

use crate::support::core;
use crate::support::world::Env;

/// Starts refcore with a valid configuration plus `CORE_FAULT=value`,
/// expecting it to refuse (no listening line); returns what it said.
async fn refused_start(env: &Env, value: &str) -> Result<String, String> {
    let place = core::fresh_database(env.backend, env.pg.as_deref()).await?;
    match core::start(env.backend, &place.url, &[("CORE_FAULT", value)]) {
        Ok(_started) => Err(format!("CORE_FAULT={value}: started anyway")),
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

    /// A default build cannot break anything on purpose, so a set
    /// `CORE_FAULT` is refused with a message saying why.
    pub async fn default_build_refuses_a_fault(env: Arc<Env>) -> TestResult {
        let stderr = refused_start(&env, "replay-answers-201").await?;
        check!(
            stderr.contains("CORE_FAULT is set") && stderr.contains("`faults` feature"),
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

    use serde_json::{Value, json};

    use super::refused_start;
    use crate::cases::oauth;
    use crate::check;
    use crate::support::TestResult;
    use crate::support::core::Backend;
    use crate::support::oauth as oauth_support;
    use crate::support::world::{Env, World, key, submission};

    /// A fresh Core on the same backend with `CORE_FAULT=fault`, and a world on it.
    async fn faulty(env: &Env, fault: &str) -> Result<(Env, World), String> {
        let core = Env::start_with(env.backend, env.pg.clone(), &[("CORE_FAULT", fault)]).await?;
        let world = World::new(&core).await?;
        Ok((core, world))
    }

    /// An unknown name is refused, listing every valid one.
    pub async fn unknown_fault_is_refused(env: Arc<Env>) -> TestResult {
        let stderr = refused_start(&env, "replay-answers-202").await?;
        for name in [
            "replay-answers-201",
            "csrf-unchecked",
            "nul-accepted-on-sqlite",
        ] {
            check!(
                stderr.contains(name),
                "valid name {name} not listed: {stderr}"
            );
        }
        Ok(())
    }

    /// `replay-answers-201`: an identical replay answers 201 (and, like the
    /// real rule, still creates nothing).
    pub async fn replay_answers_201(env: Arc<Env>) -> TestResult {
        let (_core, w) = faulty(&env, "replay-answers-201").await?;
        let (id, digest) = w.active_grant().await?;
        let path = format!("{}/issues", w.grant_path(id));
        let body = submission(&digest, &key(), "t", "b");
        w.api
            .post(&path, &w.bot_auth, &body)
            .await?
            .expect(201, "first")?;
        w.api
            .post(&path, &w.bot_auth, &body)
            .await?
            .expect(201, "replay under the fault")?;
        check!(w.issue_count().await? == 1, "the replay created an Issue");
        Ok(())
    }

    /// `nul-accepted-on-sqlite`: NUL in a title is stored on SQLite and still
    /// refused with 422 on PostgreSQL — a parity breach.
    pub async fn nul_accepted_on_sqlite_only(env: Arc<Env>) -> TestResult {
        let (_core, w) = faulty(&env, "nul-accepted-on-sqlite").await?;
        let (id, digest) = w.active_grant().await?;
        let path = format!("{}/issues", w.grant_path(id));
        let resp = w
            .api
            .post(
                &path,
                &w.bot_auth,
                &submission(&digest, &key(), "a\0b", "c\0d"),
            )
            .await?;
        match env.backend {
            Backend::Sqlite => {
                let created = resp.expect(201, "NUL on SQLite under the fault")?.json();
                let index = created["submission"]["issue"]["index"]
                    .as_i64()
                    .ok_or("no index")?;
                let issue = w
                    .api
                    .get(
                        &format!("/api/v1/repos/{}/{}/issues/{index}", w.owner, w.repo),
                        &w.admin,
                    )
                    .await?
                    .expect(200, "issue")?
                    .json();
                check!(
                    issue["title"] == "a\0b" && issue["body"] == "c\0d",
                    "stored {issue}"
                );
            }
            Backend::Postgres => {
                resp.expect(422, "NUL on PostgreSQL")?;
            }
        }
        Ok(())
    }

    /// `stale-revision-accepted`: a withdraw form loaded before the bot
    /// confirmed still applies.
    pub async fn stale_revision_accepted(env: Arc<Env>) -> TestResult {
        let (_core, w) = faulty(&env, "stale-revision-accepted").await?;
        let (id, answer) = w.stale_withdraw().await?;
        answer.expect(303, "stale withdraw under the fault")?;
        check!(
            w.grant(id).await?["state"] == "revoked",
            "stale withdraw not applied"
        );
        Ok(())
    }

    /// `list-shows-invisible-grants`: after the bot loses the private
    /// repository, its grant stays in the list (but a GET is still 404).
    pub async fn list_shows_invisible_grants(env: Arc<Env>) -> TestResult {
        let (_core, w) = faulty(&env, "list-shows-invisible-grants").await?;
        let id = w.prepare("t", "s").await?;
        w.remove_collaborator_in(&w.repo, &w.bot).await?;
        w.api
            .get(&w.grant_path(id), &w.bot_auth)
            .await?
            .expect(404, "get")?;
        let list: Value = w
            .api
            .get("/api/v1/agent-work-grants", &w.bot_auth)
            .await?
            .expect(200, "list")?
            .json();
        check!(
            list.as_array()
                .is_some_and(|l| l.iter().any(|g| g["id"] == json!(id))),
            "invisible grant not listed under the fault: {list}"
        );
        Ok(())
    }

    /// A fresh Core with `fault` whose codes live [`oauth::SHORT_TTL_SECS`].
    async fn faulty_short_lived(env: &Env, fault: &str) -> Result<(Env, World), String> {
        oauth::short_lived(env, oauth::Shortened::Codes, &[("CORE_FAULT", fault)]).await
    }

    /// Fails unless the probe found its rule broken for the reason this
    /// fault gives (every one of `because`), so an unrelated failure (or a
    /// probe that stopped early) cannot pass for the fault.
    fn broken(finding: oauth::Finding, fault: &str, because: &[&str]) -> TestResult {
        match finding {
            Ok(()) => Err(format!(
                "{fault}: the rule held, the fault is not observable"
            )),
            Err(why) => {
                check!(
                    because.iter().all(|b| why.contains(b)),
                    "{fault}: the rule broke otherwise than expected ({because:?}): {why}"
                );
                Ok(())
            }
        }
    }

    /// `oauth-skips-pkce`: a wrong verifier is exchanged.
    pub async fn oauth_skips_pkce(env: Arc<Env>) -> TestResult {
        let (_core, w) = faulty(&env, "oauth-skips-pkce").await?;
        broken(
            oauth::probe_pkce_checked(&w).await?,
            "oauth-skips-pkce",
            &["another verifier"],
        )
    }

    /// `oauth-code-reusable`: a code is exchanged twice.
    pub async fn oauth_code_reusable(env: Arc<Env>) -> TestResult {
        let (_core, w) = faulty(&env, "oauth-code-reusable").await?;
        broken(
            oauth::probe_code_single_use(&w).await?,
            "oauth-code-reusable",
            &["exchanged twice"],
        )
    }

    /// `oauth-redirect-prefix-match`: an extended redirect URI passes at
    /// authorize, and, seen on its own, at the token endpoint.
    pub async fn oauth_redirect_prefix_match(env: Arc<Env>) -> TestResult {
        let fault = "oauth-redirect-prefix-match";
        let (_core, w) = faulty(&env, fault).await?;
        broken(
            oauth::probe_redirect_uri_exact_at_authorize(&w).await?,
            fault,
            &["authorize served a redirect_uri extending"],
        )?;
        broken(
            oauth::probe_redirect_uri_exact_at_token(&w).await?,
            fault,
            &["exchanged with a redirect_uri extending"],
        )
    }

    /// `oauth-plain-accepted`: `plain` (and no method) pass, and a code of a
    /// plain challenge is exchanged with the challenge itself.
    pub async fn oauth_plain_accepted(env: Arc<Env>) -> TestResult {
        let (_core, w) = faulty(&env, "oauth-plain-accepted").await?;
        broken(
            oauth::probe_only_s256(&w).await?,
            "oauth-plain-accepted",
            &["code_challenge_method Some(\"plain\")"],
        )?;
        let app = oauth_support::register(&w, &[&oauth_support::callback()]).await?;
        let secret = oauth_support::Pkce::new().verifier;
        let path = oauth_support::authorize_path(&[
            ("response_type", Some("code")),
            ("client_id", Some(&app.client_id)),
            ("redirect_uri", Some(&app.redirect_uri)),
            ("code_challenge", Some(&secret)),
            ("code_challenge_method", Some("plain")),
        ]);
        let code = oauth_support::code_for(&w.browser, &path).await?;
        oauth_support::exchange(&w, &app, &code, &secret)
            .await?
            .expect(200, "plain exchange under the fault")?;
        Ok(())
    }

    /// `oauth-code-never-expires`: an expired code is exchanged.
    pub async fn oauth_code_never_expires(env: Arc<Env>) -> TestResult {
        let (_core, w) = faulty_short_lived(&env, "oauth-code-never-expires").await?;
        broken(
            oauth::probe_code_expires(&w).await?,
            "oauth-code-never-expires",
            &["after it expired"],
        )
    }

    /// `oauth-code-any-client`: another client exchanges the code.
    pub async fn oauth_code_any_client(env: Arc<Env>) -> TestResult {
        let (_core, w) = faulty(&env, "oauth-code-any-client").await?;
        broken(
            oauth::probe_code_bound_to_client(&w).await?,
            "oauth-code-any-client",
            &["another client's id"],
        )
    }

    /// `oauth-consent-skips-csrf`: a consent without `_csrf` issues a code.
    pub async fn oauth_consent_skips_csrf(env: Arc<Env>) -> TestResult {
        let (_core, w) = faulty(&env, "oauth-consent-skips-csrf").await?;
        broken(
            oauth::probe_consent_needs_csrf(&w).await?,
            "oauth-consent-skips-csrf",
            &["with no _csrf", "redirect"],
        )
    }

    /// `oauth-token-all-scopes`: a `read:repository` token writes Issues.
    pub async fn oauth_token_all_scopes(env: Arc<Env>) -> TestResult {
        let (_core, w) = faulty(&env, "oauth-token-all-scopes").await?;
        broken(
            oauth::probe_scopes_narrowed(&w).await?,
            "oauth-token-all-scopes",
            &[
                "carries \"read:repository write:issue\"",
                "created an Issue",
            ],
        )
    }

    /// `oauth-login-open-redirect`: the login form follows an absolute URL.
    pub async fn oauth_login_open_redirect(env: Arc<Env>) -> TestResult {
        let (_core, w) = faulty(&env, "oauth-login-open-redirect").await?;
        broken(
            oauth::probe_login_redirect_is_local(&w).await?,
            "oauth-login-open-redirect",
            &["carries redirect_to \"https://evil.test/\""],
        )
    }
}
