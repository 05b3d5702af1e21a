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

    use reqwest::Method;
    use serde_json::{Value, json};

    use super::refused_start;
    use crate::check;
    use crate::support::TestResult;
    use crate::support::browser::input_value;
    use crate::support::core::Backend;
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
        let id = w.prepare("t", "s").await?;
        let path = format!("{}/{id}", w.pages());
        let (page, csrf) = w.browser.csrf_from(&path).await?;
        let old = input_value(&page.text, "state_revision").ok_or("no revision")?;
        w.confirm(id).await?;
        w.browser
            .post_form(
                &format!("{path}/withdraw"),
                &[("_csrf", &csrf), ("state_revision", &old)],
            )
            .await?
            .expect(303, "stale withdraw under the fault")?;
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
        w.api
            .call(
                Method::DELETE,
                &format!(
                    "/api/v1/repos/{}/{}/collaborators/{}",
                    w.owner, w.repo, w.bot
                ),
                &w.admin,
                None,
            )
            .await?
            .expect(204, "remove collaborator")?;
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
}
