//! A real refcore for the whole-flow test: launched per the spec's launch
//! contract on a fresh SQLite file, set up through its setup API, and driven
//! by a human through its real HTML forms (cookie session + `_csrf`).

use std::{path::PathBuf, process::Stdio, time::Duration};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

/// The site admin refcore creates on first start.
pub const ADMIN: &str = "site-admin";
const ADMIN_PASSWORD: &str = "site-admin-password-41c9";

/// The refcore binary next to the adapter binary under test.
pub fn refcore_binary() -> PathBuf {
    let adapter = PathBuf::from(super::BIN);
    let path = adapter.with_file_name("refcore");
    assert!(
        path.is_file(),
        "{} is missing: the whole-flow test needs the reference Core built with the same profile. \
         Run `cargo build -p refcore` (add `--release` for the release profile) first.",
        path.display()
    );
    path
}

/// A running refcore; killed on drop.
pub struct Refcore {
    child: tokio::process::Child,
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    /// The site admin's token (setup privilege; never given to the adapter).
    pub admin_token: String,
    _dir: tempfile::TempDir,
}

impl Refcore {
    /// Starts refcore on a fresh SQLite database and mints the admin token.
    pub async fn start() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let db = format!("sqlite://{}/core.db", dir.path().display());
        let mut child = tokio::process::Command::new(refcore_binary())
            .env_clear()
            .env("CORE_LISTEN", "127.0.0.1:0")
            .env("CORE_DATABASE_URL", &db)
            .env("CORE_SECRET_KEY", "adapter-flow-secret-key-0123456789")
            .env("CORE_ADMIN_USER", ADMIN)
            .env("CORE_ADMIN_PASSWORD", ADMIN_PASSWORD)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn refcore");
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let line = tokio::time::timeout(Duration::from_secs(60), lines.next_line())
            .await
            .expect("refcore printed no listening line within 60 s")
            .unwrap()
            .expect("refcore closed stdout");
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        let url = line
            .strip_prefix("core listening on ")
            .unwrap_or_else(|| panic!("odd line {line:?}"))
            .to_owned();
        let minted = reqwest::Client::new()
            .post(format!("{url}/api/v1/users/{ADMIN}/tokens"))
            .basic_auth(ADMIN, Some(ADMIN_PASSWORD))
            .json(&json!({"name": "setup", "scopes": ["all"]}))
            .send()
            .await
            .unwrap();
        assert_eq!(minted.status(), 201, "mint admin token");
        let admin_token = minted.json::<Value>().await.unwrap()["sha1"]
            .as_str()
            .unwrap()
            .to_owned();
        Self {
            child,
            url,
            admin_token,
            _dir: dir,
        }
    }

    /// A setup-API call as the site admin; asserts the status and returns the JSON (or null).
    pub async fn admin(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Value,
        status: u16,
    ) -> Value {
        let response = reqwest::Client::new()
            .request(method, format!("{}{path}", self.url))
            .header("Authorization", format!("token {}", self.admin_token))
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), status, "{path}");
        let text = response.text().await.unwrap();
        serde_json::from_str(&text).unwrap_or(Value::Null)
    }

    /// Creates a user.
    pub async fn user(&self, login: &str, kind: &str, password: &str) {
        let body = json!({"login": login, "email": format!("{login}@example.test"), "password": password, "type": kind});
        self.admin(reqwest::Method::POST, "/api/v1/admin/users", body, 201)
            .await;
    }

    /// Mints a token for `login` with `scopes`.
    pub async fn token(&self, login: &str, scopes: &[&str]) -> String {
        let body = json!({"name": format!("t-{}", uuid::Uuid::new_v4()), "scopes": scopes});
        let minted = self
            .admin(
                reqwest::Method::POST,
                &format!("/api/v1/users/{login}/tokens"),
                body,
                201,
            )
            .await;
        minted["sha1"].as_str().unwrap().to_owned()
    }

    /// Whether the process still runs.
    pub fn is_running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }
}

/// A human's browser: a cookie session, no redirects followed.
pub struct Browser {
    client: reqwest::Client,
    base: String,
}

impl Browser {
    /// A fresh browser for `base`.
    pub fn new(base: &str) -> Self {
        let client = reqwest::Client::builder()
            .cookie_store(true)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap();
        Self {
            client,
            base: base.to_owned(),
        }
    }

    /// GETs a page and returns its HTML (asserting 200).
    pub async fn page(&self, path: &str) -> String {
        let response = self
            .client
            .get(format!("{}{path}", self.base))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "GET {path}");
        response.text().await.unwrap()
    }

    /// POSTs a form; returns the status and the Location header.
    pub async fn post(&self, path: &str, fields: &[(&str, &str)]) -> (u16, Option<String>) {
        let response = self
            .client
            .post(format!("{}{path}", self.base))
            .form(fields)
            .send()
            .await
            .unwrap();
        let location = response
            .headers()
            .get("location")
            .map(|v| v.to_str().unwrap().to_owned());
        (response.status().as_u16(), location)
    }

    /// Signs in through the login form.
    pub async fn login(&self, user: &str, password: &str) {
        let csrf = input(&self.page("/user/login").await, "_csrf");
        let (status, _) = self
            .post(
                "/user/login",
                &[
                    ("_csrf", &csrf),
                    ("user_name", user),
                    ("password", password),
                ],
            )
            .await;
        assert_eq!(status, 303, "login");
    }

    /// Prepares a grant through the form; returns its id.
    pub async fn prepare(
        &self,
        owner: &str,
        repo: &str,
        agent: &str,
        task: &str,
        summary: &str,
    ) -> i64 {
        let pages = format!("/{owner}/{repo}/agent-work-grants");
        let csrf = input(&self.page(&format!("{pages}/new")).await, "_csrf");
        let (status, location) = self
            .post(
                &pages,
                &[
                    ("_csrf", &csrf),
                    ("agent", agent),
                    ("task", task),
                    ("summary", summary),
                ],
            )
            .await;
        assert_eq!(status, 303, "prepare");
        location
            .unwrap()
            .rsplit('/')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    }

    /// Approves or withdraws (`action`) with the page's current `state_revision`.
    pub async fn decide(&self, owner: &str, repo: &str, id: i64, action: &str) {
        let path = format!("/{owner}/{repo}/agent-work-grants/{id}");
        let page = self.page(&path).await;
        let (csrf, revision) = (input(&page, "_csrf"), input(&page, "state_revision"));
        let (status, _) = self
            .post(
                &format!("{path}/{action}"),
                &[("_csrf", &csrf), ("state_revision", &revision)],
            )
            .await;
        assert_eq!(status, 303, "{action}");
    }
}

/// The value of the first `<input name=…>` in `html`.
pub fn input(html: &str, name: &str) -> String {
    let document = scraper::Html::parse_document(html);
    let selector = scraper::Selector::parse(&format!("input[name=\"{name}\"]")).unwrap();
    document
        .select(&selector)
        .next()
        .and_then(|e| e.value().attr("value"))
        .unwrap_or_else(|| panic!("no input {name}"))
        .to_owned()
}
