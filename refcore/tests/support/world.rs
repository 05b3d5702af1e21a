//! Per-test fixtures on a shared stack: every test gets its own users,
//! repository and browser, named with a unique suffix, so many tests share
//! one refcore per backend without seeing each other.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use grantgate_engine::postgres::PgCluster;
use serde_json::{Value, json};

use super::browser::{Browser, input_value};
use super::client::{Api, Auth, Resp};
use super::core::{self, Backend, Core};

/// A shared stack for one backend.
pub struct Env {
    /// The backend.
    pub backend: Backend,
    /// The running refcore.
    pub core: Core,
    /// The run's cluster (PostgreSQL only), for tests that need a fresh stack.
    pub pg: Option<Arc<PgCluster>>,
    /// A site-admin token with every scope.
    pub admin_token: String,
    /// Keeps the SQLite directory alive as long as the process.
    _place: core::DbPlace,
}

impl Env {
    /// Starts a refcore for `backend` on a fresh database and mints the
    /// admin token with Basic auth, as the harness does.
    pub async fn start(backend: Backend, pg: Option<Arc<PgCluster>>) -> Result<Env, String> {
        Self::start_with(backend, pg, &[]).await
    }

    /// Like [`Env::start`], with `extra` environment for the Core (a fault).
    pub async fn start_with(
        backend: Backend,
        pg: Option<Arc<PgCluster>>,
        extra: &[(&str, &str)],
    ) -> Result<Env, String> {
        let place = core::fresh_database(backend, pg.as_deref()).await?;
        let core = core::start(backend, &place.url, extra)?;
        let api = Api::new(&core.url);
        let minted = api
            .post(
                &format!("/api/v1/users/{}/tokens", core::ADMIN),
                &Auth::Basic(core::ADMIN.into(), core::ADMIN_PASSWORD.into()),
                &json!({"name": "setup", "scopes": ["all"]}),
            )
            .await?
            .expect(201, "mint admin token")?;
        let admin_token = minted.json()["sha1"].as_str().ok_or("no sha1")?.to_string();
        Ok(Env {
            backend,
            core,
            pg,
            admin_token,
            _place: place,
        })
    }
}

static COUNTER: AtomicU32 = AtomicU32::new(0);

/// A unique suffix for names.
pub fn unique() -> String {
    format!(
        "{}x{}",
        std::process::id() % 10000,
        COUNTER.fetch_add(1, Ordering::SeqCst)
    )
}

/// A fresh canonical request key.
pub fn key() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// The proposal triple for `digest`.
pub fn triple(digest: &str) -> Value {
    json!({
        "proposal_schema": "agent_work_grant.v1",
        "proposal_version": 1,
        "proposal_digest": digest,
    })
}

/// A submit body.
pub fn submission(digest: &str, request_key: &str, title: &str, body: &str) -> Value {
    let mut v = triple(digest);
    v["request_key"] = json!(request_key);
    v["title"] = json!(title);
    v["body"] = json!(body);
    v
}

/// One test's fixtures: an owner (`alice-*`) signed in through a browser, a
/// private repository, and a bot with write access and a grant-ready token.
pub struct World {
    /// API client.
    pub api: Api,
    /// The site admin's token.
    pub admin: Auth,
    /// The repository owner's login.
    pub owner: String,
    /// Its password.
    pub owner_password: String,
    /// The repository name.
    pub repo: String,
    /// The bot's login.
    pub bot: String,
    /// The bot's token (`read:repository`, `write:issue`).
    pub bot_auth: Auth,
    /// The owner's signed-in browser.
    pub browser: Browser,
    /// The base URL.
    pub base: String,
}

impl World {
    /// Creates the fixtures.
    pub async fn new(env: &Env) -> Result<World, String> {
        let api = Api::new(&env.core.url);
        let admin = Auth::Token(env.admin_token.clone());
        let n = unique();
        let mut world = World {
            api,
            admin,
            owner: format!("alice-{n}"),
            owner_password: format!("alice-pw-{n}"),
            repo: format!("lab-{n}"),
            bot: format!("lab-bot-{n}"),
            bot_auth: Auth::None,
            browser: Browser::new(&env.core.url),
            base: env.core.url.clone(),
        };
        world
            .user(
                &world.owner.clone(),
                "individual",
                &world.owner_password.clone(),
            )
            .await?;
        world
            .user(&world.bot.clone(), "bot", "bot-password-1")
            .await?;
        world
            .create_repo(&world.owner.clone(), &world.repo.clone(), true)
            .await?;
        world.collaborator(&world.bot.clone(), "write").await?;
        world.bot_auth = Auth::Token(
            world
                .token(&world.bot.clone(), &["read:repository", "write:issue"])
                .await?,
        );
        world
            .browser
            .login(&world.owner, &world.owner_password)
            .await?
            .expect(303, "owner login")?;
        Ok(world)
    }

    /// Creates a user with a password.
    pub async fn user(&self, login: &str, kind: &str, password: &str) -> Result<Value, String> {
        let resp = self
            .api
            .post(
                "/api/v1/admin/users",
                &self.admin,
                &json!({"login": login, "email": format!("{login}@example.test"), "password": password, "type": kind}),
            )
            .await?
            .expect(201, "create user")?;
        Ok(resp.json())
    }

    /// Mints a token for `login` as the site admin.
    pub async fn token(&self, login: &str, scopes: &[&str]) -> Result<String, String> {
        let resp = self
            .api
            .post(
                &format!("/api/v1/users/{login}/tokens"),
                &self.admin,
                &json!({"name": format!("t-{}", unique()), "scopes": scopes}),
            )
            .await?
            .expect(201, "mint token")?;
        Ok(resp.json()["sha1"].as_str().ok_or("no sha1")?.to_string())
    }

    /// Creates a repository.
    pub async fn create_repo(
        &self,
        owner: &str,
        name: &str,
        private: bool,
    ) -> Result<Value, String> {
        let resp = self
            .api
            .post(
                &format!("/api/v1/admin/users/{owner}/repos"),
                &self.admin,
                &json!({"name": name, "private": private}),
            )
            .await?
            .expect(201, "create repo")?;
        Ok(resp.json())
    }

    /// Makes `login` a collaborator of the world's repository.
    pub async fn collaborator(&self, login: &str, permission: &str) -> Result<(), String> {
        self.collaborator_in(&self.repo, login, permission).await
    }

    /// Makes `login` a collaborator of the owner's repository `repo`.
    pub async fn collaborator_in(
        &self,
        repo: &str,
        login: &str,
        permission: &str,
    ) -> Result<(), String> {
        self.api
            .call(
                reqwest::Method::PUT,
                &format!("/api/v1/repos/{}/{repo}/collaborators/{login}", self.owner),
                &self.admin,
                Some(&json!({"permission": permission})),
            )
            .await?
            .expect(204, "add collaborator")?;
        Ok(())
    }

    /// Removes `login` from the collaborators of the owner's repository
    /// `repo`, as the site admin.
    pub async fn remove_collaborator_in(&self, repo: &str, login: &str) -> Result<(), String> {
        self.api
            .call(
                reqwest::Method::DELETE,
                &format!("/api/v1/repos/{}/{repo}/collaborators/{login}", self.owner),
                &self.admin,
                None,
            )
            .await?
            .expect(204, "remove collaborator")?;
        Ok(())
    }

    /// Makes the owner's repository `repo` private or public, as the site
    /// admin.
    pub async fn set_private(&self, repo: &str, private: bool) -> Result<(), String> {
        self.api
            .call(
                reqwest::Method::PATCH,
                &format!("/api/v1/repos/{}/{repo}", self.owner),
                &self.admin,
                Some(&json!({"private": private})),
            )
            .await?
            .expect(200, "change visibility")?;
        Ok(())
    }

    /// `/{owner}/{repo}/agent-work-grants`.
    pub fn pages(&self) -> String {
        format!("/{}/{}/agent-work-grants", self.owner, self.repo)
    }

    /// `/api/v1/repos/{owner}/{repo}/agent-work-grants/{id}`.
    pub fn grant_path(&self, id: i64) -> String {
        format!(
            "/api/v1/repos/{}/{}/agent-work-grants/{id}",
            self.owner, self.repo
        )
    }

    /// Prepares a grant for the world's bot through the browser form.
    pub async fn prepare(&self, task: &str, summary: &str) -> Result<i64, String> {
        self.prepare_for(&self.bot.clone(), task, summary).await
    }

    /// Prepares a grant for `agent` through the browser form.
    pub async fn prepare_for(&self, agent: &str, task: &str, summary: &str) -> Result<i64, String> {
        self.prepare_in(&self.repo, agent, task, summary).await
    }

    /// Prepares a grant for `agent` in the owner's repository `repo`.
    pub async fn prepare_in(
        &self,
        repo: &str,
        agent: &str,
        task: &str,
        summary: &str,
    ) -> Result<i64, String> {
        let resp = self
            .post_prepare(
                repo,
                &[("agent", agent), ("task", task), ("summary", summary)],
            )
            .await?
            .expect(303, "prepare")?;
        let location = resp.header("location").ok_or("prepare: no Location")?;
        location
            .rsplit('/')
            .next()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("prepare: odd Location {location}"))
    }

    /// Posts the prepare form of the owner's repository `repo` with `fields`
    /// and a fresh `_csrf`; returns the answer, whatever it is.
    pub async fn post_prepare(&self, repo: &str, fields: &[(&str, &str)]) -> Result<Resp, String> {
        let pages = format!("/{}/{repo}/agent-work-grants", self.owner);
        let (_, csrf) = self.browser.csrf_from(&format!("{pages}/new")).await?;
        let mut form = vec![("_csrf", csrf.as_str())];
        form.extend_from_slice(fields);
        self.browser.post_form(&pages, &form).await
    }

    /// Reads a grant as the bot.
    pub async fn grant(&self, id: i64) -> Result<Value, String> {
        Ok(self
            .api
            .get(&self.grant_path(id), &self.bot_auth)
            .await?
            .expect(200, "get grant")?
            .json())
    }

    /// The grant's digest, read as the bot.
    pub async fn digest(&self, id: i64) -> Result<String, String> {
        let grant = self.grant(id).await?;
        Ok(grant["proposal"]["digest"]
            .as_str()
            .ok_or("no digest")?
            .to_string())
    }

    /// Prepares a grant, reads the `state_revision` its page shows, lets the
    /// bot confirm it, then posts the withdraw form with that stale
    /// revision: the grant's id and the answer, unchecked.
    #[cfg(feature = "faults")]
    pub async fn stale_withdraw(&self) -> Result<(i64, Resp), String> {
        let id = self.prepare("t", "s").await?;
        let path = format!("{}/{id}", self.pages());
        let (page, csrf) = self.browser.csrf_from(&path).await?;
        let old = input_value(&page.text, "state_revision").ok_or("no revision")?;
        self.confirm(id).await?;
        let answer = self
            .browser
            .post_form(
                &format!("{path}/withdraw"),
                &[("_csrf", &csrf), ("state_revision", &old)],
            )
            .await?;
        Ok((id, answer))
    }

    /// Confirms as the bot with the exact triple.
    pub async fn confirm(&self, id: i64) -> Result<Value, String> {
        let digest = self.digest(id).await?;
        Ok(self
            .api
            .post(
                &format!("{}/confirm", self.grant_path(id)),
                &self.bot_auth,
                &triple(&digest),
            )
            .await?
            .expect(200, "confirm")?
            .json())
    }

    /// Submits a browser decision (`approve` or `withdraw`) with the page's
    /// current revision; returns the response.
    pub async fn decide(&self, id: i64, action: &str) -> Result<super::client::Resp, String> {
        let path = format!("{}/{id}", self.pages());
        let (page, csrf) = self.browser.csrf_from(&path).await?;
        let revision =
            input_value(&page.text, "state_revision").ok_or("no state_revision input")?;
        self.browser
            .post_form(
                &format!("{path}/{action}"),
                &[("_csrf", &csrf), ("state_revision", &revision)],
            )
            .await
    }

    /// Prepares, confirms and approves a grant; returns its id and digest.
    pub async fn active_grant(&self) -> Result<(i64, String), String> {
        let id = self
            .prepare("Triage the flaky tests.", "Open one issue per flaky test.")
            .await?;
        self.confirm(id).await?;
        self.decide(id, "approve").await?.expect(303, "approve")?;
        let digest = self.digest(id).await?;
        Ok((id, digest))
    }

    /// How many Issues the world's repository has (read as the admin).
    pub async fn issue_count(&self) -> Result<i64, String> {
        let resp = self
            .api
            .get(
                &format!("/api/v1/repos/{}/{}/issues?limit=1", self.owner, self.repo),
                &self.admin,
            )
            .await?
            .expect(200, "list issues")?;
        resp.header("x-total-count")
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| "no X-Total-Count".to_string())
    }
}
