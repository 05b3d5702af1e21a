//! The setup client: the only holder of the site-admin credential. It creates
//! fixtures and performs the administrative moves scenarios need (remove a
//! collaborator, delete or move an Issue). Bots never see it: the adapter
//! children are started with their own token only.

use serde_json::{Value, json};

use super::http::{Answer, exchange};
use crate::core_api;
use crate::journal::Journal;
use crate::stack::AdminCredential;
use crate::views::Issue;
use crate::vocab::{Abort, Step};

/// Scopes of the setup token: everything fixtures and admin moves need.
const SETUP_SCOPES: &[&str] = &[
    "write:admin",
    "write:repository",
    "write:issue",
    "write:user",
];

/// The most Issue indexes [`SetupClient::issues`] reads in one repository:
/// far above any scenario's writes (a dozen at most), far below what keeps
/// a run busy.
pub const MAX_ISSUES: i64 = 1_000;

/// The admin's API client for one stack. Cloning shares the connection
/// pool; the credential never leaves the harness either way.
#[derive(Clone)]
pub struct SetupClient {
    base: String,
    client: reqwest::Client,
    token: String,
    admin_login: String,
    admin_password: String,
    journal: Journal,
}

impl SetupClient {
    /// A setup client holding an admin token minted earlier (a fixture
    /// snapshot's): nothing to mint, and it is already a registered secret.
    pub(crate) fn with_token(
        base: &str,
        admin: &AdminCredential,
        token: &str,
        journal: Journal,
    ) -> Step<SetupClient> {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| Abort::errored(format!("setup client: {e}")))?;
        Ok(SetupClient {
            base: base.to_owned(),
            client,
            token: token.to_owned(),
            admin_login: admin.user.clone(),
            admin_password: admin.password.clone(),
            journal,
        })
    }

    /// The admin token this client holds (for a fixture snapshot to hand on).
    pub(crate) fn token(&self) -> &str {
        &self.token
    }

    /// Mints the admin's token with Basic auth (spec §5) and keeps it.
    pub(crate) async fn connect(
        base: &str,
        admin: &AdminCredential,
        journal: Journal,
    ) -> Step<SetupClient> {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| Abort::errored(format!("setup client: {e}")))?;
        let request = client
            .post(format!("{base}/api/v1/users/{}/tokens", admin.user))
            .basic_auth(&admin.user, Some(&admin.password))
            .json(&json!({"name": "grantgate-setup", "scopes": SETUP_SCOPES}))
            .build()
            .map_err(|e| Abort::errored(format!("setup token request: {e}")))?;
        let answer = exchange(&client, &journal, "setup", request).await?;
        let token = token_of(&answer, "the admin")?;
        register_token(&journal, &token);
        Ok(SetupClient {
            base: base.to_owned(),
            client,
            token,
            admin_login: admin.user.clone(),
            admin_password: admin.password.clone(),
            journal,
        })
    }

    /// The site admin's login (not a secret): for a scenario that mints
    /// the site admin a token of its own, with chosen scopes, to call a
    /// route as the site admin (the authority matrix).
    pub fn admin_login(&self) -> &str {
        &self.admin_login
    }

    /// The secret registry of the run (to mint fixture passwords).
    pub(crate) fn secrets(&self) -> &crate::secrets::SecretRegistry {
        self.journal.secrets()
    }

    /// The site admin's login and password (`CORE_ADMIN_USER`,
    /// `CORE_ADMIN_PASSWORD`), for [`Ctx::site_admin`](crate::ctx::Ctx::site_admin)
    /// only: a browser that signs the site admin in through the login form.
    pub(crate) fn admin_credential(&self) -> (&str, &str) {
        (&self.admin_login, &self.admin_password)
    }

    /// True when `haystack` holds the setup credential (the admin's token or
    /// password): for privilege-separation checks on an adapter's environment,
    /// arguments and traffic, without ever handing the credential out.
    pub fn credential_in(&self, haystack: &[u8]) -> bool {
        [&self.token, &self.admin_password]
            .iter()
            .any(|c| haystack.windows(c.len()).any(|w| w == c.as_bytes()))
    }

    /// Sends an admin request and returns the answer, whatever its status.
    pub async fn call(&self, method: &str, path: &str, body: Option<Value>) -> Step<Answer> {
        let method: reqwest::Method = method
            .parse()
            .map_err(|_| Abort::errored(format!("method {method}")))?;
        let mut req = self
            .client
            .request(method, format!("{}{path}", self.base))
            .header("authorization", format!("token {}", self.token));
        if let Some(body) = body {
            req = req.json(&body);
        }
        let request = req
            .build()
            .map_err(|e| Abort::errored(format!("setup request {path}: {e}")))?;
        exchange(&self.client, &self.journal, "setup", request).await
    }

    /// An admin request whose body is `body` exactly, sent as
    /// `application/json` (broken JSON, another top-level type).
    pub async fn call_raw(&self, method: &str, path: &str, body: &str) -> Step<Answer> {
        let method: reqwest::Method = method
            .parse()
            .map_err(|_| Abort::errored(format!("method {method}")))?;
        let request = self
            .client
            .request(method, format!("{}{path}", self.base))
            .header("authorization", format!("token {}", self.token))
            .header("content-type", "application/json")
            .body(body.to_owned())
            .build()
            .map_err(|e| Abort::errored(format!("setup raw request {path}: {e}")))?;
        exchange(&self.client, &self.journal, "setup", request).await
    }

    /// Like [`call`](Self::call), but any status outside `expected` is a
    /// contract failure of the setup surface.
    async fn expect(
        &self,
        method: &str,
        path: &str,
        body: Option<Value>,
        expected: &[u16],
    ) -> Step<Answer> {
        let answer = self.call(method, path, body).await?;
        if !expected.contains(&answer.status) {
            return Err(Abort::failed(format!(
                "setup: {method} {path} answered {} (expected {expected:?}): {}",
                answer.status,
                crate::journal::truncate(&self.journal.secrets().redact(&answer.body))
            )));
        }
        Ok(answer)
    }

    /// Registers a public OAuth application with exactly these redirect
    /// URIs (spec §9, `POST /api/v1/user/applications/oauth2`) and returns
    /// its `client_id`. Any status but 201 is a failure of the setup surface.
    pub async fn register_oauth_app(&self, name: &str, redirect_uris: &[String]) -> Step<String> {
        let answer = self
            .expect(
                "POST",
                core_api::oauth::APPLICATIONS,
                Some(core_api::oauth::application_body(name, redirect_uris)),
                &[201],
            )
            .await?;
        let json = answer.json()?;
        if let Some(secret) = json.get("client_secret").and_then(|s| s.as_str()) {
            self.journal.secrets().register(secret);
        }
        json.get("client_id")
            .and_then(|c| c.as_str())
            .map(str::to_owned)
            .ok_or_else(|| Abort::failed("setup: the OAuth application answer has no `client_id`"))
    }

    /// Creates a user (`individual` or `bot`) with a password.
    pub async fn create_user(&self, login: &str, kind: &str, password: &str) -> Step<Value> {
        let body = json!({
            "login": login,
            "email": format!("{login}@grantgate.test"),
            "password": password,
            "type": kind,
        });
        self.expect("POST", core_api::ADMIN_USERS, Some(body), &[201])
            .await?
            .json()
    }

    /// Mints an access token for `login` with `scopes`; the secret is
    /// registered before anything can record it.
    pub async fn mint_token(&self, login: &str, name: &str, scopes: &[String]) -> Step<String> {
        let answer = self
            .call(
                "POST",
                &core_api::tokens(login),
                Some(json!({"name": name, "scopes": scopes})),
            )
            .await?;
        let token = token_of(&answer, login)?;
        register_token(&self.journal, &token);
        Ok(token)
    }

    /// Mints an access token for `login` with `scopes` and returns its id
    /// with the secret; the secret is registered before anything can record
    /// it. The id is what deleting the token needs.
    pub async fn mint_token_with_id(
        &self,
        login: &str,
        name: &str,
        scopes: &[String],
    ) -> Step<(i64, String)> {
        let answer = self
            .call(
                "POST",
                &core_api::tokens(login),
                Some(json!({"name": name, "scopes": scopes})),
            )
            .await?;
        let token = token_of(&answer, login)?;
        register_token(&self.journal, &token);
        let id = answer.json()?["id"].as_i64().ok_or_else(|| {
            Abort::failed(format!(
                "setup: token answer for {login} has no integer `id`"
            ))
        })?;
        Ok((id, token))
    }

    /// Deletes token `id` of `login` (the `token-delete` setup extension,
    /// `DELETE /api/v1/users/{login}/tokens/{id}`); any status but 204 is a
    /// failure of the setup surface.
    pub async fn delete_token(&self, login: &str, id: i64) -> Step<()> {
        self.expect("DELETE", &core_api::token(login, id), None, &[204])
            .await
            .map(|_| ())
    }

    /// Creates a repository owned by `owner`.
    pub async fn create_repo(&self, owner: &str, name: &str, private: bool) -> Step<Value> {
        self.expect(
            "POST",
            &core_api::admin_repos(owner),
            Some(json!({"name": name, "private": private})),
            &[201],
        )
        .await?
        .json()
    }

    /// Makes `login` a collaborator of `owner/repo` with `permission`.
    pub async fn add_collaborator(&self, repo: &str, login: &str, permission: &str) -> Step<()> {
        self.expect(
            "PUT",
            &core_api::collaborator(repo, login),
            Some(json!({"permission": permission})),
            &[200, 201, 204],
        )
        .await
        .map(|_| ())
    }

    /// Removes `login` from the collaborators of `owner/repo`.
    pub async fn remove_collaborator(&self, repo: &str, login: &str) -> Step<()> {
        self.expect(
            "DELETE",
            &core_api::collaborator(repo, login),
            None,
            &[200, 204],
        )
        .await
        .map(|_| ())
    }

    /// Reads an Issue through the native API (with its `agent_work_grant`).
    pub async fn issue(&self, repo: &str, index: i64) -> Step<Answer> {
        self.call("GET", &core_api::issue(repo, index), None).await
    }

    /// The `html_url` of Issue `index` of `repo`: the Core's public URL
    /// (the harness launched it there, or at its bound address when unset)
    /// and the Issue page's path, one `/` between.
    pub fn issue_page(&self, repo: &str, index: i64) -> String {
        format!("{}/{repo}/issues/{index}", self.base.trim_end_matches('/'))
    }

    /// Every Issue of `repo`, by index, read one by one through the
    /// contract's `GET …/issues/{index}` (the contract has no Issue list).
    /// Indexes count from 1; the scan ends after three free indexes in a
    /// row, so a deleted or moved Issue does not hide the ones after it.
    /// What a "nothing was written" witness compares.
    ///
    /// Bounded and checked: each Issue found must carry the index it was
    /// read by (a Core answering one Issue for every index is caught at the
    /// second) and its own page as `html_url`, and a repository holding
    /// more than [`MAX_ISSUES`] is a failure, so no Core can keep the scan
    /// going.
    pub async fn issues(&self, repo: &str) -> Step<Vec<Issue>> {
        let mut found = Vec::new();
        let (mut index, mut misses) = (1, 0);
        while misses < 3 {
            if index > MAX_ISSUES {
                return Err(Abort::failed(format!(
                    "setup: {repo} answers an Issue at more than {MAX_ISSUES} indexes; \
                     no scenario writes that many, so the scan stops"
                )));
            }
            let answer = self.issue(repo, index).await?;
            match answer.status {
                200 => {
                    let issue = answer.issue()?;
                    if issue.index != index {
                        return Err(Abort::failed(format!(
                            "setup: reading Issue {index} of {repo} answered the Issue with \
                             index {} (spec §1: an Issue's `index` is its place in its repository)",
                            issue.index
                        )));
                    }
                    let page = self.issue_page(repo, index);
                    if issue.html_url != page {
                        return Err(Abort::failed(format!(
                            "setup: Issue {index} of {repo} has html_url {:?}, not {page:?} \
                             (spec §1, §5: the public URL, one `/`, then the Issue page's path)",
                            issue.html_url
                        )));
                    }
                    found.push(issue);
                    misses = 0;
                }
                404 => misses += 1,
                other => {
                    return Err(Abort::failed(format!(
                        "setup: reading Issue {index} of {repo} answered {other}"
                    )));
                }
            }
            index += 1;
        }
        Ok(found)
    }

    /// Deletes an Issue.
    pub async fn delete_issue(&self, repo: &str, index: i64) -> Step<Answer> {
        self.call("DELETE", &core_api::issue(repo, index), None)
            .await
    }

    /// Moves an Issue to another repository.
    pub async fn move_issue(&self, issue_id: i64, to_repo: &str) -> Step<Answer> {
        let (owner, repo) = core_api::split_repo(to_repo)?;
        self.call(
            "POST",
            &core_api::move_issue(issue_id),
            Some(json!({"owner": owner, "repo": repo})),
        )
        .await
    }

    /// The Core's `/api/v1/version` answer.
    pub async fn version(&self) -> Step<Value> {
        self.expect("GET", core_api::VERSION, None, &[200])
            .await?
            .json()
    }
}

/// The token secret (`sha1`) of a token-creation answer.
fn token_of(answer: &Answer, whose: &str) -> Step<String> {
    if answer.status != 201 {
        return Err(Abort::failed(format!(
            "setup: minting a token for {whose} answered {} (expected 201)",
            answer.status
        )));
    }
    answer.json()?["sha1"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| Abort::failed(format!("setup: token answer for {whose} has no `sha1`")))
}

/// Registers a minted token and its tail: a Forgejo-like Core echoes the last
/// eight characters (`token_last_eight`) in the same answer, and even a piece
/// of a token has no place in a report.
fn register_token(journal: &Journal, token: &str) {
    journal.secrets().register(token);
    if let Some(tail) = token.get(token.len().saturating_sub(8)..) {
        journal.secrets().register(tail);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::extract::Path;
    use axum::routing::get;

    /// A Core answering `GET …/issues/{index}` with `issue_at(index)`, its
    /// `html_url` the page of that index, or `/x` after it when `off`.
    async fn core(issue_at: fn(i64) -> i64) -> SetupClient {
        core_with(issue_at, false).await
    }

    async fn core_with(issue_at: fn(i64) -> i64, off: bool) -> SetupClient {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let public = base.clone();
        let app = axum::Router::new().route(
            "/api/v1/repos/{owner}/{repo}/issues/{index}",
            get(
                move |Path((owner, repo, index)): Path<(String, String, i64)>| async move {
                    let at = issue_at(index);
                    let tail = if off { "/x" } else { "" };
                    let page = format!("{public}/{owner}/{repo}/issues/{at}{tail}");
                    axum::Json(json!({
                        "id": index, "index": at, "title": "t", "body": "b",
                        "user": {"id": 1, "login": "alice"}, "html_url": page,
                        "repository_id": 1, "agent_work_grant": null,
                    }))
                },
            ),
        );
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        let admin = AdminCredential {
            user: "gg-admin".into(),
            password: "pw".into(),
        };
        let journal = Journal::new(crate::secrets::SecretRegistry::new());
        SetupClient::with_token(&base, &admin, "token", journal).unwrap()
    }

    fn failure(result: Step<Vec<Issue>>) -> String {
        match result.map(|_| ()).unwrap_err().into_verdict() {
            crate::vocab::Verdict::Failed { message } => message,
            other => panic!("not a contract failure: {other:?}"),
        }
    }

    #[tokio::test]
    async fn an_issue_at_the_wrong_index_ends_the_scan_as_a_failure() {
        let setup = core(|_| 1).await;
        let message = failure(setup.issues("alice/lab").await);
        assert!(message.contains("reading Issue 2"), "{message}");
        assert!(message.contains("index 1"), "{message}");
    }

    #[tokio::test]
    async fn an_issue_not_at_its_own_page_ends_the_scan_as_a_failure() {
        let setup = core_with(|index| if index == 1 { 1 } else { 0 }, true).await;
        let message = failure(setup.issues("alice/lab").await);
        assert!(
            message.contains("Issue 1 of alice/lab has html_url"),
            "{message}"
        );
        assert!(message.ends_with("path)"), "{message}");
    }

    #[tokio::test]
    async fn a_core_with_an_issue_at_every_index_ends_the_scan_at_the_cap() {
        let setup = core(|index| index).await;
        let message = failure(setup.issues("alice/lab").await);
        assert!(
            message.contains(&format!("more than {MAX_ISSUES}")),
            "{message}"
        );
    }
}
