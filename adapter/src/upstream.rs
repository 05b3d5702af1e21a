//! The HTTP client for the one fixed Core origin.
//!
//! Every URL is built here from the configured origin and path segments that
//! are percent-encoded one by one, so no input can change the host or add a
//! path level. Redirects are never followed, nothing is retried, and each call
//! sends exactly one request. Upstream bodies, `Location` headers and error
//! text never leave this module except as parsed JSON of an expected success.

use std::time::Duration;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use reqwest::{Method, RequestBuilder, StatusCode, header};
use serde_json::Value;
use url::Url;

pub use crate::model::Op;
use crate::{
    config::{CoreOrigin, Credential},
    edges::{Edge, Edges},
    error::{ConfigError, ErrorCode, ToolError},
};

/// RFC 3986 unreserved bytes, left as they are in a path segment or a query
/// value (consent mode's authorize URL); everything else is percent-encoded.
pub(crate) const UNRESERVED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// Native statuses that keep their meaning in a tool error.
const NATIVE: &[(u16, ErrorCode, &str)] = &[
    (
        400,
        ErrorCode::BadRequest,
        "the Core refused the request as malformed (400)",
    ),
    (
        401,
        ErrorCode::Unauthenticated,
        "the Core did not accept the credential (401)",
    ),
    (
        403,
        ErrorCode::Forbidden,
        "the credential lacks a scope or permission for this (403)",
    ),
    (
        404,
        ErrorCode::NotFound,
        "not found, or not visible to this caller (404)",
    ),
    (
        409,
        ErrorCode::Conflict,
        "the Core reported a state, proposal or request-key conflict (409)",
    ),
    (
        422,
        ErrorCode::Unprocessable,
        "the Core refused a value as invalid (422)",
    ),
];

/// A successful upstream answer, already parsed as JSON.
#[derive(Debug)]
pub struct Reply {
    /// The HTTP status (one of the expected ones).
    pub status: u16,
    /// The parsed body.
    pub body: Value,
    /// `X-Total-Count`, raw.
    pub total_count: Option<String>,
    /// `Link`, raw (parsed only for `rel="next"`, never followed).
    pub link: Option<String>,
}

/// The client for one Core origin.
#[derive(Debug, Clone)]
pub struct Upstream {
    origin: CoreOrigin,
    client: reqwest::Client,
}

impl Upstream {
    /// Builds the client: no redirects, no retries, no proxy, the given
    /// timeout. Consent mode's token POST uses the same client.
    pub fn new(origin: CoreOrigin, timeout: Duration) -> Result<Self, ConfigError> {
        let client = reqwest::Client::builder()
            .redirect(Edge::redirects())
            .retry(reqwest::retry::never())
            .no_proxy()
            .timeout(timeout)
            .user_agent(concat!("awg-mcp/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| ConfigError::Client(e.to_string()))?;
        Ok(Self { origin, client })
    }

    /// The one Core origin.
    pub fn origin(&self) -> &CoreOrigin {
        &self.origin
    }

    /// The client itself, for a request [`Upstream::call`] does not shape
    /// (consent mode's token POST).
    pub(crate) fn client(&self) -> &reqwest::Client {
        &self.client
    }

    /// `origin/api/v1/<segments…>?<query>`, each segment encoded as exactly one path segment.
    ///
    /// Callers pass only validated segments: never empty, `.` or `..`, which
    /// URL normalisation would fold even when percent-encoded.
    pub fn url(&self, segments: &[&str], query: &[(&str, String)]) -> Url {
        let mut path = String::from("/api/v1");
        for segment in segments {
            assert!(
                !matches!(*segment, "" | "." | ".."),
                "unvalidated path segment reached the upstream client"
            );
            path.push('/');
            path.push_str(&Edge::encode_segment(segment, encode_segment(segment)));
        }
        let mut url = self.origin.url().clone();
        url.set_path(&path);
        if !query.is_empty() {
            url.query_pairs_mut()
                .extend_pairs(query.iter().map(|(k, v)| (*k, v.as_str())));
        }
        url
    }

    /// Sends one request and classifies the answer: a success with one of
    /// `expected` statuses and a JSON body, or a bounded [`ToolError`].
    pub async fn call(
        &self,
        method: Method,
        url: Url,
        credential: &Credential,
        body: Option<&Value>,
        expected: &[u16],
        op: Op,
    ) -> Result<Reply, ToolError> {
        let path = url.path().to_owned();
        let mut request = self
            .client
            .request(method.clone(), url)
            .header(header::ACCEPT, "application/json");
        request = authorized(request, credential);
        if let Some(body) = body {
            request = request.json(body);
        }
        let started = std::time::Instant::now();
        let response = match send(request).await {
            Ok(response) => response,
            Err(error) => {
                let why = send_failure(&error);
                tracing::warn!(%method, %path, why, "upstream request failed");
                return Err(op.unclear(None, why));
            }
        };
        let status = response.status();
        tracing::info!(%method, %path, status = status.as_u16(), elapsed_ms = started.elapsed().as_millis() as u64, "upstream answered");
        if let Some((_, code, message)) = NATIVE.iter().find(|(s, _, _)| *s == status.as_u16()) {
            return Err(Edge::native_refusal(*code, status.as_u16(), message, response).await);
        }
        if !expected.contains(&status.as_u16()) {
            return Err(op.unclear(Some(status.as_u16()), &describe(status)));
        }
        let header_text = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let total_count = header_text("x-total-count");
        // `Link` is a list field: every field line, joined (RFC 9110 §5.3).
        let links: Vec<&str> = response
            .headers()
            .get_all("link")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .collect();
        let link = (!links.is_empty()).then(|| links.join(", "));
        let bytes = match read_body(response, Edge::answer_limit()).await {
            Ok(bytes) => bytes,
            Err(why) => {
                tracing::warn!(%method, %path, why, "upstream body failed");
                return Err(op.unclear(Some(status.as_u16()), why));
            }
        };
        let body: Value =
            serde_json::from_slice(&bytes).map_err(|_| op.bad_body(status.as_u16(), "not JSON"))?;
        Ok(Reply {
            status: status.as_u16(),
            body,
            total_count,
            link,
        })
    }
}

/// A short description of an unexpected status, without any upstream text.
fn describe(status: StatusCode) -> String {
    if status.is_redirection() {
        format!("redirect {} not followed", status.as_u16())
    } else {
        format!("unexpected status {}", status.as_u16())
    }
}

/// Why a request got no response at all, in words fit for a message or a log.
pub(crate) fn send_failure(error: &reqwest::Error) -> &'static str {
    if error.is_timeout() {
        "timed out"
    } else {
        "no response"
    }
}

/// `segment` percent-encoded as exactly one path segment.
pub(crate) fn encode_segment(segment: &str) -> String {
    utf8_percent_encode(segment, UNRESERVED).to_string()
}

/// `request` with `credential` in its `Authorization`.
fn authorized(request: RequestBuilder, credential: &Credential) -> RequestBuilder {
    match credential {
        Credential::Token(token) => request.header(header::AUTHORIZATION, format!("token {token}")),
        Credential::Basic { user, password } => {
            request.basic_auth(user, Some(Edge::basic_password(password)))
        }
    }
}

/// Sends `request` once (a spare copy only if an edge keeps one).
async fn send(request: RequestBuilder) -> Result<reqwest::Response, reqwest::Error> {
    let spare = Edge::spare_request(&request);
    let sent = request.send().await;
    match (sent, spare) {
        (Err(_), Some(spare)) => spare.send().await,
        (sent, _) => sent,
    }
}

/// Reads the whole body, up to `limit` bytes.
pub(crate) async fn read_body(
    mut response: reqwest::Response,
    limit: usize,
) -> Result<Vec<u8>, &'static str> {
    let mut bytes = Vec::new();
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                if bytes.len() + chunk.len() > limit {
                    return Err("response body too large");
                }
                bytes.extend_from_slice(&chunk);
            }
            Ok(None) => return Ok(bytes),
            Err(error) if error.is_timeout() => return Err("timed out while reading the response"),
            Err(_) => return Err("response body lost"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_stay_single() {
        let upstream = Upstream::new(
            CoreOrigin::parse("http://127.0.0.1:9").unwrap(),
            Duration::from_secs(1),
        )
        .unwrap();
        let url = upstream.url(&["repos", "a/b", "a.b", "x y?#%"], &[("page", "2".into())]);
        assert_eq!(
            url.as_str(),
            "http://127.0.0.1:9/api/v1/repos/a%2Fb/a.b/x%20y%3F%23%25?page=2"
        );
    }
}
