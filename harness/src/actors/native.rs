//! A bot's direct line to the native API, bypassing its adapter: what a
//! scenario uses to see exactly what the Core answers (statuses, `Link`,
//! `X-Total-Count`) with that bot's own token, and nothing more.

use serde_json::{Value, json};

use super::grant::{GrantRef, Proposal, Submission};
use super::http::{Answer, exchange};
use crate::journal::Journal;
use crate::runner::outcome::{Abort, Step};

/// A native API client holding one bot token.
#[derive(Clone)]
pub struct NativeClient {
    actor: String,
    base: String,
    token: String,
    client: reqwest::Client,
    journal: Journal,
}

impl NativeClient {
    /// A client for `login` with `token`; the API never redirects, so
    /// neither does this client.
    pub(crate) fn new(login: &str, token: &str, base: &str, journal: Journal) -> Step<Self> {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| Abort::errored(format!("native client: {e}")))?;
        Ok(NativeClient {
            actor: format!("{login} (native)"),
            base: base.to_owned(),
            token: token.to_owned(),
            client,
            journal,
        })
    }

    /// Sends `method path` (path starts at `/api/v1`) with an optional JSON
    /// body and returns the answer, whatever its status.
    pub async fn call(&self, method: &str, path: &str, body: Option<&Value>) -> Step<Answer> {
        let method: reqwest::Method = method
            .parse()
            .map_err(|_| Abort::errored(format!("method {method}")))?;
        let mut req = self
            .client
            .request(method, format!("{}{path}", self.base))
            .header("authorization", format!("token {}", self.token));
        if let Some(body) = body {
            req = req.json(body);
        }
        let request = req
            .build()
            .map_err(|e| Abort::errored(format!("native request {path}: {e}")))?;
        exchange(&self.client, &self.journal, &self.actor, request).await
    }

    /// `GET /api/v1/agent-work-grants` with a raw query string (`""`,
    /// `"state=all&page=2&limit=30"`, ...).
    pub async fn list_grants(&self, query: &str) -> Step<Answer> {
        let sep = if query.is_empty() { "" } else { "?" };
        self.call(
            "GET",
            &format!("/api/v1/agent-work-grants{sep}{query}"),
            None,
        )
        .await
    }

    /// `GET` the grant.
    pub async fn get_grant(&self, grant: &GrantRef) -> Step<Answer> {
        self.call("GET", &grant_path(grant), None).await
    }

    /// `POST .../confirm` with the triple.
    pub async fn confirm(&self, grant: &GrantRef, proposal: &Proposal) -> Step<Answer> {
        let body = triple(proposal);
        self.call(
            "POST",
            &format!("{}/confirm", grant_path(grant)),
            Some(&body),
        )
        .await
    }

    /// `POST .../issues` with the triple, key, title and body.
    pub async fn submit(
        &self,
        grant: &GrantRef,
        proposal: &Proposal,
        submission: &Submission,
    ) -> Step<Answer> {
        let mut body = triple(proposal);
        body["request_key"] = json!(submission.request_key);
        body["title"] = json!(submission.title);
        body["body"] = json!(submission.body);
        self.call(
            "POST",
            &format!("{}/issues", grant_path(grant)),
            Some(&body),
        )
        .await
    }

    /// `GET .../submissions/{request_key}`.
    pub async fn submission(&self, grant: &GrantRef, request_key: &str) -> Step<Answer> {
        let path = format!("{}/submissions/{request_key}", grant_path(grant));
        self.call("GET", &path, None).await
    }

    /// `GET /api/v1/repos/{repo}/issues/{index}` (`repo` is `owner/name`).
    pub async fn issue(&self, repo: &str, index: i64) -> Step<Answer> {
        self.call("GET", &format!("/api/v1/repos/{repo}/issues/{index}"), None)
            .await
    }
}

fn grant_path(grant: &GrantRef) -> String {
    format!(
        "/api/v1/repos/{}/{}/agent-work-grants/{}",
        grant.owner, grant.repo, grant.id
    )
}

fn triple(proposal: &Proposal) -> Value {
    json!({
        "proposal_schema": proposal.schema,
        "proposal_version": proposal.version,
        "proposal_digest": proposal.digest,
    })
}
