//! A bot's direct line to the native API, bypassing its adapter: what a
//! scenario uses to see exactly what the Core answers (statuses, `Link`,
//! `X-Total-Count`) with that bot's own token, and nothing more.

use serde_json::Value;

use super::http::{Answer, exchange};
use crate::core_api;
use crate::journal::Journal;
use crate::views::{GrantRef, NewIssue, Proposal};
use crate::vocab::{Abort, Step};

/// Spellings of the JSON media type a client may send (RFC 9110 §8.3.1:
/// type and subtype in any case, parameters allowed, a quoted value): a
/// Core reads each as `application/json`, so the client sends them in turn.
const JSON_MEDIA_TYPES: [&str; 3] = [
    "application/json",
    "application/json; charset=utf-8",
    "Application/JSON;charset=\"UTF-8\"",
];

/// A native API client holding one bot token.
#[derive(Clone)]
pub struct NativeClient {
    actor: String,
    base: String,
    /// The `Authorization` value sent with every request (`token T`), or
    /// none at all.
    authorization: Option<String>,
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
            authorization: Some(format!("token {token}")),
            client,
            journal,
        })
    }

    /// The same client sending `authorization` instead of its token (`None`:
    /// no `Authorization` header at all), named `label` in the transcript:
    /// for the 401 of a missing or wrong credential (spec §3).
    pub fn with_authorization(&self, label: &str, authorization: Option<&str>) -> NativeClient {
        NativeClient {
            actor: format!("{} ({label})", self.actor),
            authorization: authorization.map(str::to_owned),
            ..self.clone()
        }
    }

    /// Adds the client's `Authorization`, if it has one.
    fn authorize(&self, req: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match &self.authorization {
            Some(value) => req.header("authorization", value),
            None => req,
        }
    }

    /// Sends `method path` (path starts at `/api/v1`) with an optional JSON
    /// body and returns the answer, whatever its status.
    pub async fn call(&self, method: &str, path: &str, body: Option<&Value>) -> Step<Answer> {
        let method: reqwest::Method = method
            .parse()
            .map_err(|_| Abort::errored(format!("method {method}")))?;
        let mut req = self.authorize(self.client.request(method, format!("{}{path}", self.base)));
        if let Some(body) = body {
            let turn = self.journal.exchanges_so_far() as usize % JSON_MEDIA_TYPES.len();
            req = req
                .header("content-type", JSON_MEDIA_TYPES[turn])
                .body(body.to_string());
        }
        let request = req
            .build()
            .map_err(|e| Abort::errored(format!("native request {path}: {e}")))?;
        exchange(&self.client, &self.journal, &self.actor, request).await
    }

    /// `GET /api/v1/agent-work-grants` with a raw query string (`""`,
    /// `"state=all&page=2&limit=30"`, ...).
    pub async fn list_grants(&self, query: &str) -> Step<Answer> {
        self.call("GET", &core_api::grant_list(query), None).await
    }

    /// `GET` the grant.
    pub async fn get_grant(&self, grant: &GrantRef) -> Step<Answer> {
        self.call("GET", &core_api::grant(grant), None).await
    }

    /// `POST .../confirm` with the triple.
    pub async fn confirm(&self, grant: &GrantRef, proposal: &Proposal) -> Step<Answer> {
        let body = core_api::confirm_body(proposal);
        self.call("POST", &core_api::confirm(grant), Some(&body))
            .await
    }

    /// `POST .../issues` with the triple, key, title and body.
    pub async fn submit(
        &self,
        grant: &GrantRef,
        proposal: &Proposal,
        issue: &NewIssue,
    ) -> Step<Answer> {
        let body = core_api::submit_body(proposal, issue);
        self.call("POST", &core_api::submit(grant), Some(&body))
            .await
    }

    /// `POST .../issues` with a raw body exactly as given (member order,
    /// whitespace and escapes are the caller's).
    pub async fn submit_raw(&self, grant: &GrantRef, body: &str) -> Step<Answer> {
        self.call_raw("POST", &core_api::submit(grant), body).await
    }

    /// A request whose body is `body` exactly, sent as `application/json`
    /// (broken JSON, another top-level type).
    pub async fn call_raw(&self, method: &str, path: &str, body: &str) -> Step<Answer> {
        let method: reqwest::Method = method
            .parse()
            .map_err(|_| Abort::errored(format!("method {method}")))?;
        let request = self
            .authorize(self.client.request(method, format!("{}{path}", self.base)))
            .header("content-type", "application/json")
            .body(body.to_owned())
            .build()
            .map_err(|e| Abort::errored(format!("native raw request {path}: {e}")))?;
        exchange(&self.client, &self.journal, &self.actor, request).await
    }

    /// `GET .../submissions/{request_key}`.
    pub async fn submission(&self, grant: &GrantRef, request_key: &str) -> Step<Answer> {
        self.call("GET", &core_api::submission(grant, request_key), None)
            .await
    }

    /// `GET /api/v1/repos/{repo}/issues/{index}` (`repo` is `owner/name`).
    pub async fn issue(&self, repo: &str, index: i64) -> Step<Answer> {
        self.call("GET", &core_api::issue(repo, index), None).await
    }
}
