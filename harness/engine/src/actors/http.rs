//! One recorded HTTP exchange: send a request, read the whole answer, and put
//! both into the scenario's journal (redacted there).

use std::time::{Duration, Instant};

use serde_json::Value;

use super::links::Links;
use crate::journal::Journal;
use crate::views::{ErrorBody, Grant, Issue, Submitted};
use crate::vocab::Exchange;
use crate::vocab::{Abort, Step};

/// The longest one exchange may take, from sending the request to the last
/// byte of the answer. Why a whole-exchange bound rather than a connect or
/// idle timeout: a Core that never answers, or answers one byte a second,
/// must fail its trial in bounded time instead of hanging the run. Every
/// contract request is answered in well under a second; this leaves room
/// for a loaded machine.
pub const EXCHANGE_TIMEOUT: Duration = Duration::from_secs(30);

/// A complete HTTP answer.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The status code.
    pub status: u16,
    /// The URL that was requested.
    pub url: String,
    /// The response headers.
    pub headers: http::HeaderMap,
    /// The body as text (lossy UTF-8; every contract body is UTF-8).
    pub body: String,
}

impl Answer {
    /// The body parsed as JSON, or a contract failure naming the URL.
    pub fn json(&self) -> Step<serde_json::Value> {
        serde_json::from_str(&self.body).map_err(|e| {
            Abort::failed(format!(
                "{} answered {} with a body that is not JSON: {e}",
                self.url, self.status
            ))
        })
    }

    /// A header's value as text.
    pub fn header(&self, name: &str) -> Option<String> {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    }

    /// Every value of a header that may repeat (`Set-Cookie`), in order.
    pub fn header_values(&self, name: &str) -> Vec<String> {
        self.headers
            .get_all(name)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .map(str::to_owned)
            .collect()
    }

    /// The body as one grant.
    pub fn grant(&self) -> Step<Grant> {
        Grant::from_json(&self.json()?)
    }

    /// The body as a JSON array of grants (the native list).
    pub fn grants(&self) -> Step<Vec<Grant>> {
        match self.json()? {
            Value::Array(items) => items.iter().map(Grant::from_json).collect(),
            other => Err(Abort::failed(format!(
                "{} answered {} with a list that is not a JSON array: {}",
                self.url,
                self.status,
                crate::journal::truncate(&other.to_string())
            ))),
        }
    }

    /// The body as `{grant, submission}`.
    pub fn submitted(&self) -> Step<Submitted> {
        Submitted::from_json(&self.json()?)
    }

    /// The body as an Issue.
    pub fn issue(&self) -> Step<Issue> {
        Issue::from_json(&self.json()?)
    }

    /// The body as a repository.
    pub fn repository(&self) -> Step<crate::views::Repository> {
        crate::views::Repository::from_json(&self.json()?)
    }

    /// The body as an error: `{"message": …}` (wording is the Core's own).
    pub fn error(&self) -> Step<ErrorBody> {
        crate::views::read("the error body", &self.json()?)
    }

    /// `X-Total-Count` as a number, or the Core's failure.
    pub fn total_count(&self) -> Step<i64> {
        self.header("x-total-count")
            .and_then(|v| v.trim().parse().ok())
            .ok_or_else(|| {
                Abort::failed(format!(
                    "{} answered without a numeric X-Total-Count ({:?})",
                    self.url,
                    self.header("x-total-count")
                ))
            })
    }

    /// The `Link` header, parsed (empty when absent).
    pub fn links(&self) -> Step<Links> {
        // A list field: several field lines read as one comma-joined value (RFC 9110 §5.3).
        Links::parse(&self.header_values("link").join(", "))
    }
}

/// Sends `request` with `client`, records the exchange as `actor` and returns
/// the answer. A transport failure is the Core's failure: it stopped
/// answering.
pub async fn exchange(
    client: &reqwest::Client,
    journal: &Journal,
    actor: &str,
    request: reqwest::Request,
) -> Step<Answer> {
    let method = request.method().as_str().to_owned();
    let url = request.url().to_string();
    let request_headers = headers_of(request.headers());
    let request_body = request
        .body()
        .and_then(|b| b.as_bytes())
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .unwrap_or_default();
    let started = Instant::now();
    let answer = tokio::time::timeout(EXCHANGE_TIMEOUT, async {
        let resp = client.execute(request).await.map_err(|e| e.to_string())?;
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let bytes = resp.bytes().await.map_err(|e| e.to_string())?;
        Ok::<_, String>(Answer {
            status,
            url: url.clone(),
            headers,
            body: String::from_utf8_lossy(&bytes).into_owned(),
        })
    })
    .await
    .unwrap_or_else(|_| Err(format!("no complete answer within {EXCHANGE_TIMEOUT:?}")));
    let mut record = Exchange {
        actor: actor.to_owned(),
        kind: "http".into(),
        method: method.clone(),
        target: url.clone(),
        request_headers,
        request_body,
        status: 0,
        response_headers: Vec::new(),
        response_body: String::new(),
        elapsed_ms: started.elapsed().as_millis() as u64,
    };
    match answer {
        Ok(answer) => {
            record.status = answer.status;
            record.response_headers = headers_of(&answer.headers);
            record.response_body = answer.body.clone();
            journal.exchange(record);
            Ok(answer)
        }
        Err(e) => {
            record.response_body = format!("transport error: {e}");
            journal.exchange(record);
            Err(Abort::failed(format!(
                "{method} {url}: no answer from the Core: {e}"
            )))
        }
    }
}

fn headers_of(map: &http::HeaderMap) -> Vec<(String, String)> {
    map.iter()
        .map(|(k, v)| {
            (
                k.as_str().to_owned(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect()
}
