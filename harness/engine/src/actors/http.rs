//! One recorded HTTP exchange: send a request, read the whole answer (up to
//! [`crate::limits::body_limit`], streamed, so a larger or endless body is
//! never held beyond it), and put both into the scenario's journal
//! (redacted there). A transport failure names its cause from the whole
//! error chain ([`transport_cause`]).

use std::time::Instant;

use serde_json::Value;

use super::links::Links;
use crate::journal::Journal;
use crate::views::{ErrorBody, Grant, Issue, Submitted};
use crate::vocab::Exchange;
use crate::vocab::{Abort, Step};

/// A complete HTTP answer.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The status code.
    pub status: u16,
    /// The URL that was requested.
    pub url: String,
    /// The response headers.
    pub headers: http::HeaderMap,
    /// The body as text (lossy UTF-8 where it is not UTF-8; see
    /// [`Answer::text`]).
    pub body: String,
    /// Where the body stops being UTF-8 (the byte offset), if it does.
    pub invalid_utf8_at: Option<usize>,
}

impl Answer {
    /// The body as strict UTF-8 text (spec §2, RFC 8259 §8.1), or a contract
    /// failure saying where it is not.
    pub fn text(&self) -> Step<&str> {
        match self.invalid_utf8_at {
            None => Ok(&self.body),
            Some(at) => Err(Abort::failed(format!(
                "{} answered {} with a body that is not UTF-8 (invalid byte sequence at byte {at})",
                self.url, self.status
            ))),
        }
    }

    /// The body parsed as JSON, or a contract failure naming the URL (and
    /// the depth limit, for JSON nested deeper than
    /// [`crate::limits::JSON_DEPTH`]).
    pub fn json(&self) -> Step<serde_json::Value> {
        serde_json::from_str(self.text()?).map_err(|e| {
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
    sent(client, journal, actor, request)
        .await
        .map_err(|(abort, _)| abort)
}

/// As [`exchange`], for a request the server may refuse before reading it
/// whole: the connection closed while its body was still being written is
/// `None` (RFC 9110 §15.5.14: a server refusing a request as too large "MAY
/// close the connection").
pub async fn exchange_refusable(
    client: &reqwest::Client,
    journal: &Journal,
    actor: &str,
    request: reqwest::Request,
) -> Step<Option<Answer>> {
    match sent(client, journal, actor, request).await {
        Ok(answer) => Ok(Some(answer)),
        Err((_, true)) => Ok(None),
        Err((abort, false)) => Err(abort),
    }
}

/// [`exchange`]'s work; a failure says whether the connection closed while
/// the body was being written.
async fn sent(
    client: &reqwest::Client,
    journal: &Journal,
    actor: &str,
    request: reqwest::Request,
) -> Result<Answer, (Abort, bool)> {
    let method = request.method().as_str().to_owned();
    let url = request.url().to_string();
    let request_headers = headers_of(request.headers());
    let request_body = request
        .body()
        .and_then(|b| b.as_bytes())
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .unwrap_or_default();
    let _turn = journal.request_turn().await;
    let started = Instant::now();
    let limit = crate::limits::exchange_timeout();
    let answer = tokio::time::timeout(limit, async {
        let no_answer = |e: reqwest::Error| {
            let text = format!("no answer from the Core: {}", transport_cause(&e));
            (text, closed_while_sending(&e), true)
        };
        let mut resp = client.execute(request).await.map_err(no_answer)?;
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let limit = crate::limits::body_limit();
        let too_large = || {
            format!(
                "answered {status} with a body larger than the harness's limit of {limit} bytes (--max-body)"
            )
        };
        if resp.content_length().is_some_and(|n| n > limit as u64) {
            return Err((too_large(), false, false));
        }
        let mut bytes = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(no_answer)? {
            let len = bytes.len() + chunk.len();
            if len > limit {
                return Err((too_large(), false, false));
            }
            // Grown by doubling, but never past the limit: a body read up
            // to it costs the limit, not twice it.
            if len > bytes.capacity() {
                bytes.reserve_exact((bytes.capacity() * 2).clamp(len, limit) - bytes.len());
            }
            bytes.extend_from_slice(&chunk);
        }
        let (body, invalid_utf8_at) = match String::from_utf8(bytes) {
            Ok(text) => (text, None),
            Err(e) => {
                let at = e.utf8_error().valid_up_to();
                (String::from_utf8_lossy(e.as_bytes()).into_owned(), Some(at))
            }
        };
        Ok::<_, (String, bool, bool)>(Answer {
            status,
            url: url.clone(),
            headers,
            body,
            invalid_utf8_at,
        })
    })
    .await
    .unwrap_or_else(|_| {
        let text = format!("no answer from the Core: no complete answer within {limit:?}");
        Err((text, false, true))
    });
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
        Err((e, closed, unanswered)) => {
            record.response_body = format!("transport error: {e}");
            journal.exchange(record);
            // A connection closed while a refusable request was sent is an
            // answer of its kind ([`exchange_refusable`]).
            if unanswered && !closed {
                journal.unanswered();
            }
            Err((Abort::failed(format!("{method} {url}: {e}")), closed))
        }
    }
}

/// Whether writing the request failed because the peer had closed the
/// connection (EPIPE: only a write sees it).
fn closed_while_sending(e: &reqwest::Error) -> bool {
    let mut source: Option<&dyn std::error::Error> = Some(e);
    while let Some(err) = source {
        if err
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
        {
            return true;
        }
        source = err.source();
    }
    false
}

/// Why a request got no answer, from the whole error chain (reqwest's own
/// message is only "error sending request"): a header section over the
/// client's limits, an answer that is not HTTP, a refused connection, a
/// timeout and a connection closed early each read as such, followed by the
/// chain itself.
pub fn transport_cause(e: &reqwest::Error) -> String {
    let mut chain: Vec<String> = Vec::new();
    let mut source: Option<&dyn std::error::Error> = Some(e);
    while let Some(err) = source {
        let text = err.to_string();
        // Wrappers often repeat their source's message.
        if !chain.iter().any(|c| c.contains(&text)) {
            chain.push(text);
        }
        source = err.source();
    }
    let all = chain.join(": ");
    let has = |needle: &str| all.contains(needle);
    let cause = if has("message head is too large") {
        format!(
            "its header section is too large (more than {} header fields or {} bytes, the harness's limits)",
            crate::limits::MAX_HEADERS,
            crate::limits::MAX_HEAD_BYTES
        )
    } else if has("invalid HTTP")
        || has("invalid URI")
        || has("invalid content-length")
        || has("transfer-encoding")
        || has("received unexpected message")
    {
        "it does not answer in HTTP/1.1".to_owned()
    } else if e.is_timeout() {
        "it timed out".to_owned()
    } else if has("Connection refused") {
        "connection refused: nothing listens there".to_owned()
    } else if has("connection closed before message completed") || has("reset by peer") {
        "it closed the connection before a complete answer".to_owned()
    } else if e.is_body() || e.is_decode() {
        "its body could not be read".to_owned()
    } else {
        "the request could not be completed".to_owned()
    };
    format!("{cause} ({})", crate::limits::cut_at(&all, 512))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::secrets::SecretRegistry;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A loopback "Core" that answers every connection with `answer`, then
    /// (when `endless`) with 64 KiB chunks of a chunked body without end.
    async fn core(answer: Vec<u8>, endless: bool) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/x", listener.local_addr().unwrap());
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let answer = answer.clone();
                tokio::spawn(async move {
                    let mut buf = [0u8; 4096];
                    let _ = socket.read(&mut buf).await;
                    let _ = socket.write_all(&answer).await;
                    let chunk = format!("10000\r\n{}\r\n", "0".repeat(0x10000));
                    while endless && socket.write_all(chunk.as_bytes()).await.is_ok() {}
                });
            }
        });
        url
    }

    async fn get(url: &str) -> Step<Answer> {
        let client = reqwest::Client::new();
        let request = client.get(url).build().unwrap();
        exchange(&client, &Journal::new(SecretRegistry::new()), "t", request).await
    }

    #[tokio::test]
    async fn only_a_request_left_without_an_answer_marks_the_trial_unanswered() {
        let unanswered = |url: String| async move {
            let client = reqwest::Client::new();
            let journal = Journal::new(SecretRegistry::new());
            let request = client.get(&url).build().unwrap();
            let _ = exchange(&client, &journal, "t", request).await;
            journal.was_unanswered()
        };
        let not_http = core(b"SSH-2.0-hostile\r\n\r\n".to_vec(), false).await;
        assert!(unanswered(not_http).await, "an answer that is not HTTP");
        let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let refused = format!("http://{}/x", closed.local_addr().unwrap());
        drop(closed);
        assert!(unanswered(refused).await, "a refused connection");
        let big = core(
            b"HTTP/1.1 200 OK\r\nContent-Length: 999999999\r\n\r\n".to_vec(),
            false,
        )
        .await;
        assert!(!unanswered(big).await, "an answer over the limit is one");
        let ok = core(
            b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n".to_vec(),
            false,
        )
        .await;
        assert!(!unanswered(ok).await, "a wrong status is an answer");
    }

    fn failure(result: Step<Answer>) -> String {
        match result {
            Err(Abort::Failed(m)) => m,
            other => panic!("expected a contract failure, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn each_limit_and_cause_is_named() {
        let not_http = core(b"SSH-2.0-hostile\r\n\r\n".to_vec(), false).await;
        let m = failure(get(&not_http).await);
        assert!(m.contains("does not answer in HTTP/1.1"), "{m}");

        let cookies: String = (0..10_000)
            .map(|i| format!("Set-Cookie: c{i}=x\r\n"))
            .collect();
        let heads = core(
            format!("HTTP/1.1 200 OK\r\n{cookies}\r\n").into_bytes(),
            false,
        )
        .await;
        let m = failure(get(&heads).await);
        assert!(m.contains("header section is too large"), "{m}");

        let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let refused = format!("http://{}/x", closed.local_addr().unwrap());
        drop(closed);
        let m = failure(get(&refused).await);
        assert!(m.contains("connection refused"), "{m}");

        let big = core(
            b"HTTP/1.1 200 OK\r\nContent-Length: 999999999\r\n\r\n".to_vec(),
            false,
        )
        .await;
        let m = failure(get(&big).await);
        assert!(m.contains("larger than the harness's limit"), "{m}");

        let endless = core(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec(),
            true,
        )
        .await;
        let m = failure(get(&endless).await);
        assert!(m.contains("larger than the harness's limit"), "{m}");

        let latin1 = core(
            b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n{\"a\":\"\xe9\"}".to_vec(),
            false,
        )
        .await;
        let answer = get(&latin1).await.expect("an answer");
        let m = failure(answer.json().map(|_| answer.clone()));
        assert!(
            m.contains("not UTF-8 (invalid byte sequence at byte 6)"),
            "{m}"
        );
    }
}
