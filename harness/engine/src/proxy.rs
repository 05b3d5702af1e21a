//! The fault proxy: a loopback HTTP proxy between an adapter and its Core,
//! whose faults are programmed per request, and which counts every request by
//! method and path.
//!
//! Why hyper directly rather than axum: the "lost response" fault must close
//! the connection without writing a single byte of answer, which only the
//! connection layer can do (a service error ends the connection unanswered).

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use bytes::Bytes;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::error::{HarnessError, Result};

/// What the proxy does to one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// Forward the request and return the Core's answer untouched.
    Pass,
    /// Forward the request, let the Core act on it, then close the
    /// connection without answering: a lost response.
    DropResponse,
    /// Forward, then replace the answer's body with malformed JSON (status
    /// and headers kept).
    MalformedJson,
    /// Forward, then replace the answer's body with these bytes.
    ReplaceBody(Bytes),
    /// Forward, then replace the answer's status (body kept).
    Status(u16),
    /// Do not forward; answer `302 Found` with this `Location`.
    Redirect(String),
    /// Do not forward; answer exactly this (any status, such as another
    /// redirect or an error whose body and headers carry a marker).
    Respond(Canned),
    /// Forward, then hold the answer back this long before sending it, so
    /// that a client with a shorter timeout gives up.
    Delay(Duration),
    /// Forward with the query's `limit` lowered to at most this width: the
    /// Core's own answer (items, `X-Total-Count`, `Link`) is then exactly
    /// that of a Core whose page maximum is this width.
    ClampLimit(u32),
    /// Forward (with the query's `limit` lowered to this width first, when
    /// given) and strip `Link` from the answer: a Core that pages by
    /// `X-Total-Count` alone.
    DropLink(Option<u32>),
    /// Forward (with the query's `limit` lowered to this width first, when
    /// given) and write the answer's `Link` as another Core may: one field
    /// line per target, relations in upper case (those sharing the target in
    /// one quoted `rel`, a lone one as a bare token), empty list elements
    /// around it, `,` and `;` in its URL's query, and a `title` before `rel`
    /// that reads like a link of its own (`<`, `,`, `;`, escaped quotes,
    /// `rel=\"next`).
    /// The same links to a reader of RFC 8288 (a `Link` the harness cannot
    /// read passes unchanged).
    RespellLink(Option<u32>),
    /// Forward, then add to the answer's JSON object a member of this name
    /// whose value is a string of this many bytes (a Core's answer may hold
    /// members the contract does not name).
    ExtraMember(String, usize),
}

/// A canned answer for [`Fault::Respond`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Canned {
    /// The status.
    pub status: u16,
    /// Headers, in order.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Bytes,
}

impl Canned {
    /// A redirect with `status` (301, 302, 303, 307, 308) to `location`.
    pub fn redirect(status: u16, location: &str) -> Self {
        Canned {
            status,
            headers: vec![("location".into(), location.to_owned())],
            body: Bytes::new(),
        }
    }
}

/// The body [`Fault::MalformedJson`] sends: JSON that stops mid-object.
pub const MALFORMED_JSON: &str = "{\"grant\": {\"id\": 1, \"state\": ";

/// A fault waiting for the next request that matches it.
#[derive(Debug, Clone)]
struct Rule {
    method: String,
    pattern: String,
    fault: Fault,
}

/// A request as it reached the proxy, kept whole so scenarios can check
/// what an adapter sent (e.g. that no setup credential travelled).
#[derive(Debug, Clone)]
pub struct CapturedRequest {
    /// The method.
    pub method: String,
    /// Path and query.
    pub path_and_query: String,
    /// Every header, as sent.
    pub headers: Vec<(String, Vec<u8>)>,
    /// The body.
    pub body: Bytes,
    /// What the proxy answered the adapter, `(status, body)`, once sent
    /// (`None` while in flight, or when no answer went on: the fault dropped
    /// it, or the Core's could not be read).
    pub answer: Option<(u16, Bytes)>,
}

impl CapturedRequest {
    /// The form fields of an `application/x-www-form-urlencoded` body.
    pub fn form(&self) -> Vec<(String, String)> {
        url::form_urlencoded::parse(&self.body)
            .into_owned()
            .collect()
    }

    /// The value of form field `name`, if the body has it.
    pub fn form_field(&self, name: &str) -> Option<String> {
        self.form()
            .into_iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
    }

    /// True when `needle` occurs in the request line, a header or the body.
    pub fn contains(&self, needle: &[u8]) -> bool {
        let has = |hay: &[u8]| crate::secrets::contains_bytes(hay, needle);
        has(self.path_and_query.as_bytes())
            || self
                .headers
                .iter()
                .any(|(k, v)| has(k.as_bytes()) || has(v))
            || has(&self.body)
    }
}

#[derive(Default)]
struct ProxyState {
    rules: Mutex<VecDeque<Rule>>,
    seen: Mutex<Vec<(String, String)>>,
    captured: Mutex<Vec<CapturedRequest>>,
    /// Where OAuth codes, verifiers and tokens seen on the token route are
    /// registered as they pass (spec §9: they are credentials).
    secrets: Option<crate::secrets::SecretRegistry>,
}

/// A running fault proxy; dropping it stops it.
pub struct FaultProxy {
    addr: SocketAddr,
    state: Arc<ProxyState>,
    stop: CancellationToken,
}

impl FaultProxy {
    /// Starts a proxy on `127.0.0.1:0` forwarding to `upstream` (an origin
    /// such as `http://127.0.0.1:4000`).
    pub async fn start(upstream: &str) -> Result<Self> {
        Self::start_with(upstream, None).await
    }

    /// Starts a proxy as [`start`](Self::start) does; every code, verifier
    /// and token that crosses the OAuth token route is registered in
    /// `secrets` before the answer is passed on.
    pub async fn start_with(
        upstream: &str,
        secrets: Option<crate::secrets::SecretRegistry>,
    ) -> Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| HarnessError::io("127.0.0.1:0", e))?;
        let addr = listener
            .local_addr()
            .map_err(|e| HarnessError::io("127.0.0.1:0", e))?;
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| HarnessError::Config(format!("proxy client: {e}")))?;
        let state = Arc::new(ProxyState {
            secrets,
            ..ProxyState::default()
        });
        let stop = CancellationToken::new();
        let forward = Forward {
            upstream: upstream.trim_end_matches('/').to_owned(),
            client,
            state: state.clone(),
        };
        tokio::spawn(accept_loop(listener, forward, stop.clone()));
        Ok(FaultProxy { addr, state, stop })
    }

    /// The proxy's origin, to give the adapter as its Core URL.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Queues `fault` for the next request whose method is `method` and whose
    /// path matches `pattern` (`*` matches one path segment). Faults apply
    /// once each, in the order queued; unmatched requests pass.
    pub fn inject(&self, method: &str, pattern: &str, fault: Fault) {
        self.state
            .rules
            .lock()
            .expect("proxy rules")
            .push_back(Rule {
                method: method.to_ascii_uppercase(),
                pattern: pattern.to_owned(),
                fault,
            });
    }

    /// How many requests with `method` and a path matching `pattern` reached
    /// the proxy so far.
    pub fn count(&self, method: &str, pattern: &str) -> usize {
        let method = method.to_ascii_uppercase();
        self.state
            .seen
            .lock()
            .expect("proxy log")
            .iter()
            .filter(|(m, p)| *m == method && path_matches(pattern, p))
            .count()
    }

    /// Every request seen so far, as `(method, path)`.
    pub fn requests(&self) -> Vec<(String, String)> {
        self.state.seen.lock().expect("proxy log").clone()
    }

    /// Every request seen so far, whole.
    pub fn captured(&self) -> Vec<CapturedRequest> {
        self.state.captured.lock().expect("proxy log").clone()
    }

    /// Faults queued but not yet used.
    pub fn pending_faults(&self) -> usize {
        self.state.rules.lock().expect("proxy rules").len()
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// True when `path` matches `pattern` segment by segment; `*` matches any
/// one segment.
pub fn path_matches(pattern: &str, path: &str) -> bool {
    let pat: Vec<&str> = pattern.trim_end_matches('/').split('/').collect();
    let got: Vec<&str> = path.trim_end_matches('/').split('/').collect();
    pat.len() == got.len() && pat.iter().zip(&got).all(|(p, g)| *p == "*" || p == g)
}

#[derive(Clone)]
struct Forward {
    upstream: String,
    client: reqwest::Client,
    state: Arc<ProxyState>,
}

async fn accept_loop(listener: TcpListener, forward: Forward, stop: CancellationToken) {
    loop {
        let stream = tokio::select! {
            _ = stop.cancelled() => return,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(_) => continue,
            },
        };
        let forward = forward.clone();
        let stop = stop.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| {
                let forward = forward.clone();
                async move { forward.handle(req).await }
            });
            let conn = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service);
            tokio::select! {
                _ = stop.cancelled() => {}
                // A connection ended by DropResponse is an error by design.
                _ = conn => {}
            }
        });
    }
}

/// The error a service returns to make hyper close the connection unanswered.
#[derive(Debug, thiserror::Error)]
#[error("response dropped by fault injection")]
struct Dropped;

impl Forward {
    async fn handle(
        &self,
        req: http::Request<Incoming>,
    ) -> std::result::Result<http::Response<Body>, Dropped> {
        let method = req.method().as_str().to_owned();
        let path = req.uri().path().to_owned();
        self.state
            .seen
            .lock()
            .expect("proxy log")
            .push((method.clone(), path.clone()));
        let (parts, incoming) = req.into_parts();
        // An adapter's request is read up to the harness's body limit too.
        let limit = crate::limits::body_limit();
        let body = match axum::body::to_bytes(Body::new(incoming), limit).await {
            Ok(b) => b,
            Err(_) => return Err(Dropped),
        };
        let index = self.capture(&parts, &body);
        let fault = self.take_fault(&method, &path);
        if let Fault::Redirect(location) = &fault {
            return Ok(http::Response::builder()
                .status(302)
                .header("location", location)
                .body(Body::empty())
                .expect("a valid redirect"));
        }
        if let Fault::Respond(canned) = &fault {
            let mut builder = http::Response::builder().status(canned.status);
            for (name, value) in &canned.headers {
                builder = builder.header(name, value);
            }
            return Ok(builder
                .body(Body::from(canned.body.clone()))
                .unwrap_or_else(|_| http::Response::new(Body::empty())));
        }
        let mut parts = parts;
        if let Fault::ClampLimit(width)
        | Fault::DropLink(Some(width))
        | Fault::RespellLink(Some(width)) = &fault
        {
            parts.uri = clamp_limit(&parts.uri, *width);
        }
        let (status, headers, body) = match self.send(parts, body).await {
            Ok(Sent::Whole(status, headers, body)) => (status, headers, body),
            // Over the limit, or unreadable past its head: what was read
            // goes on as it came, then the connection breaks off, as the
            // Core's own answer would reach the adapter (no fault applies to
            // an answer the proxy never had whole).
            Ok(Sent::Cut(status, headers, head, why)) => {
                let shown = head.first().cloned().unwrap_or_default();
                self.answered(index, status, &shown);
                let mut builder = http::Response::builder().status(status);
                for (name, value) in headers.iter() {
                    if !is_hop_header(name.as_str()) {
                        builder = builder.header(name, value);
                    }
                }
                // The break waits one turn, so that hyper writes out what
                // was read before it ends the connection.
                let broken = futures::stream::once(async move {
                    tokio::task::yield_now().await;
                    Err(std::io::Error::other(why))
                });
                let cut = futures::StreamExt::chain(
                    futures::stream::iter(head.into_iter().map(Ok)),
                    broken,
                );
                return Ok(builder
                    .body(Body::from_stream(cut))
                    .unwrap_or_else(|_| http::Response::new(Body::empty())));
            }
            // No answer the proxy could read (refused, reset, a head HTTP
            // does not allow): the adapter's connection ends unanswered, as
            // its own client would have failed on those bytes; a made-up
            // `502` would be an honest answer no Core gave.
            Err(()) => return Err(Dropped),
        };
        // What the Core really answered holds its secrets (a token), whatever
        // the fault then puts in its place.
        self.register_oauth(index, &body);
        let respelled = matches!(fault, Fault::RespellLink(_))
            .then(|| respelled_link(&headers))
            .flatten();
        let drop_link = matches!(fault, Fault::DropLink(_)) || respelled.is_some();
        let (status, body) = match fault {
            Fault::Pass
            | Fault::Redirect(_)
            | Fault::Respond(_)
            | Fault::ClampLimit(_)
            | Fault::DropLink(_)
            | Fault::RespellLink(_) => (status, body),
            Fault::DropResponse => return Err(Dropped),
            Fault::MalformedJson => (status, Bytes::from_static(MALFORMED_JSON.as_bytes())),
            Fault::ReplaceBody(bytes) => (status, bytes),
            Fault::ExtraMember(name, size) => (status, with_member(&body, name, size)),
            Fault::Status(code) => (code, body),
            Fault::Delay(d) => {
                tokio::time::sleep(d).await;
                (status, body)
            }
        };
        self.answered(index, status, &body);
        let mut builder = http::Response::builder().status(status);
        for (name, value) in headers.iter() {
            let dropped = drop_link && name == http::header::LINK;
            if !is_hop_header(name.as_str()) && !dropped {
                builder = builder.header(name, value);
            }
        }
        for line in respelled.unwrap_or_default() {
            builder = builder.header(http::header::LINK, line);
        }
        Ok(builder
            .body(Body::from(body))
            .unwrap_or_else(|_| http::Response::new(Body::empty())))
    }

    fn take_fault(&self, method: &str, path: &str) -> Fault {
        let mut rules = self.state.rules.lock().expect("proxy rules");
        match rules
            .iter()
            .position(|r| r.method == method && path_matches(&r.pattern, path))
        {
            Some(i) => rules.remove(i).map(|r| r.fault).unwrap_or(Fault::Pass),
            None => Fault::Pass,
        }
    }

    /// Records the answer of captured request `index`.
    fn answered(&self, index: usize, status: u16, body: &Bytes) {
        if let Some(c) = self
            .state
            .captured
            .lock()
            .expect("proxy log")
            .get_mut(index)
        {
            c.answer = Some((status, body.clone()));
        }
    }

    /// On the OAuth token route, registers the answer's tokens as secrets
    /// before the answer goes on (whatever the fault does next).
    fn register_oauth(&self, index: usize, body: &Bytes) {
        let Some(secrets) = &self.state.secrets else {
            return;
        };
        let captured = self.state.captured.lock().expect("proxy log");
        let Some(request) = captured.get(index) else {
            return;
        };
        let path = request.path_and_query.split('?').next().unwrap_or("");
        if !path_matches(crate::core_api::oauth::TOKEN, path) {
            return;
        }
        drop(captured);
        if let Ok(serde_json::Value::Object(answer)) = serde_json::from_slice(body) {
            for name in ["access_token", "refresh_token", "id_token"] {
                if let Some(v) = answer.get(name).and_then(|v| v.as_str()) {
                    secrets.register(v);
                }
            }
        }
    }

    fn capture(&self, parts: &http::request::Parts, body: &Bytes) -> usize {
        if let Some(secrets) = &self.state.secrets
            && path_matches(crate::core_api::oauth::TOKEN, parts.uri.path())
        {
            // Before the request is visible to anyone reading the capture.
            for (name, value) in url::form_urlencoded::parse(body).into_owned() {
                if matches!(name.as_str(), "code" | "code_verifier" | "refresh_token") {
                    secrets.register(&value);
                }
            }
        }
        let mut captured = self.state.captured.lock().expect("proxy log");
        captured.push(CapturedRequest {
            method: parts.method.as_str().to_owned(),
            path_and_query: parts
                .uri
                .path_and_query()
                .map(|pq| pq.as_str().to_owned())
                .unwrap_or_else(|| "/".into()),
            headers: parts
                .headers
                .iter()
                .map(|(k, v)| (k.as_str().to_owned(), v.as_bytes().to_vec()))
                .collect(),
            body: body.clone(),
            answer: None,
        });
        captured.len() - 1
    }

    async fn send(
        &self,
        parts: http::request::Parts,
        body: Bytes,
    ) -> std::result::Result<Sent, ()> {
        let path_and_query = parts
            .uri
            .path_and_query()
            .map(|pq| pq.as_str())
            .unwrap_or("/");
        let mut out = self
            .client
            .request(parts.method, format!("{}{path_and_query}", self.upstream));
        for (name, value) in parts.headers.iter() {
            if !is_hop_header(name.as_str()) && name != http::header::HOST {
                out = out.header(name, value);
            }
        }
        let mut resp = out.body(body).send().await.map_err(|_| ())?;
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        // Read while capped: a Core's endless answer costs the proxy its
        // limit, not what the Core can send before the adapter gives up.
        // Chunks are kept as they came (no buffer doubling as it grows).
        let limit = crate::limits::body_limit();
        let (mut chunks, mut read) = (Vec::new(), 0);
        loop {
            let chunk = match resp.chunk().await {
                Ok(Some(chunk)) => chunk,
                Ok(None) => break,
                Err(_) => return Ok(Sent::Cut(status, headers, chunks, BROKEN)),
            };
            let room = limit - read;
            if chunk.len() > room {
                chunks.push(chunk.slice(..room));
                return Ok(Sent::Cut(status, headers, chunks, OVER_LIMIT));
            }
            read += chunk.len();
            chunks.push(chunk);
        }
        let body = match chunks.len() {
            1 => chunks.pop().unwrap_or_default(),
            _ => chunks.concat().into(),
        };
        Ok(Sent::Whole(status, headers, body))
    }
}

/// The Core's answer as the proxy read it.
enum Sent {
    /// Status, headers and the whole body.
    Whole(u16, http::HeaderMap, Bytes),
    /// Status, headers and what was read of the body, in the chunks it
    /// came in, and why the rest was not: [`OVER_LIMIT`] or [`BROKEN`].
    Cut(u16, http::HeaderMap, Vec<Bytes>, &'static str),
}

/// Why an answer was cut: its body passed [`crate::limits::body_limit`].
const OVER_LIMIT: &str = "answer over the harness's body limit";
/// Why an answer was cut: its body broke off or broke HTTP's framing.
const BROKEN: &str = "the Core's answer broke off";

/// [`Fault::RespellLink`]'s field lines for the links of `headers`, or
/// `None` when there are none the harness can read.
fn respelled_link(headers: &http::HeaderMap) -> Option<Vec<String>> {
    let value: Vec<&str> = headers
        .get_all(http::header::LINK)
        .iter()
        .map(|v| v.to_str().ok())
        .collect::<Option<_>>()?;
    let links = crate::actors::Links::parse(&value.join(", ")).ok()?;
    // Relations sharing a target in one `rel`; a lone one as a bare token.
    let mut targets: Vec<(&url::Url, Vec<String>)> = Vec::new();
    for rel in links.rels() {
        let url = links.get(rel)?;
        let rel = rel.to_ascii_uppercase();
        match targets.iter_mut().find(|(u, _)| *u == url) {
            Some((_, rels)) => rels.push(rel),
            None => targets.push((url, vec![rel])),
        }
    }
    let lines: Vec<String> = targets
        .into_iter()
        .map(|(url, rels)| {
            let join = if url.query().is_some() { '&' } else { '?' };
            let words = rels.join(" ");
            let rel = match rels.len() {
                1 => words.clone(),
                _ => format!("\"{words}\""),
            };
            format!(
                r#" , <{url}{join}v=1,2;3>; title="<,; rel=\"next, <x; y\", {words}"; REL={rel} , ,"#
            )
        })
        .collect();
    (!lines.is_empty()).then_some(lines)
}

/// `body` with a member `name` of `size` bytes added, if it is a JSON object.
fn with_member(body: &Bytes, name: String, size: usize) -> Bytes {
    match serde_json::from_slice::<serde_json::Value>(body) {
        Ok(serde_json::Value::Object(mut object)) => {
            object.insert(name, "x".repeat(size).into());
            serde_json::Value::Object(object).to_string().into()
        }
        _ => body.clone(),
    }
}

/// `uri` with its `limit` query parameter lowered to at most `width`; every
/// other parameter is kept, in order.
fn clamp_limit(uri: &http::Uri, width: u32) -> http::Uri {
    let Some(query) = uri.query() else {
        return uri.clone();
    };
    let pairs = url::form_urlencoded::parse(query.as_bytes())
        .into_owned()
        .map(|(k, v)| match v.parse::<u64>() {
            Ok(n) if k == "limit" => (k, n.min(u64::from(width)).to_string()),
            _ => (k, v),
        });
    let query = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs)
        .finish();
    format!("{}?{query}", uri.path())
        .parse()
        .unwrap_or_else(|_| uri.clone())
}

/// Hop-by-hop and length headers are the proxy's own business on each side.
fn is_hop_header(name: &str) -> bool {
    matches!(
        name.to_ascii_lowercase().as_str(),
        "connection"
            | "keep-alive"
            | "transfer-encoding"
            | "content-length"
            | "te"
            | "trailer"
            | "upgrade"
            | "proxy-connection"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A Core that answers every connection with `raw`, whatever was asked.
    async fn raw_core(raw: &'static [u8]) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let mut head = [0u8; 4096];
                let _ = stream.read(&mut head).await;
                let _ = stream.write_all(raw).await;
            }
        });
        format!("http://{addr}")
    }

    /// A Core's answer that breaks off reaches the adapter as it came (its
    /// status, then a broken body), and a head HTTP does not allow reaches
    /// it as no answer: the proxy makes up no `502` in either case.
    #[tokio::test]
    async fn a_malformed_answer_goes_on_as_malformed() {
        let short = b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc";
        let proxy = FaultProxy::start(&raw_core(short).await).await.unwrap();
        let answer = reqwest::get(format!("{}/api/v1/version", proxy.url()))
            .await
            .unwrap();
        assert_eq!(answer.status(), 200);
        assert!(answer.bytes().await.is_err(), "the body broke off");

        let garbage = b"NOT HTTP AT ALL\r\n\r\n";
        let proxy = FaultProxy::start(&raw_core(garbage).await).await.unwrap();
        let answer = reqwest::get(format!("{}/api/v1/version", proxy.url())).await;
        assert!(
            answer.is_err(),
            "no answer, not {:?}",
            answer.map(|a| a.status())
        );
    }

    /// The respelled `Link` holds the same links, written as the fault says.
    #[test]
    fn a_respelled_link_reads_the_same() {
        let core = "<http://h/l?page=3&limit=10>; rel=\"next\", <http://h/l?page=3&limit=10>; \
                    rel=\"last\", <http://h/l?page=1&limit=10>; rel=\"first\"";
        let mut headers = http::HeaderMap::new();
        headers.insert(http::header::LINK, core.parse().unwrap());
        let lines = respelled_link(&headers).unwrap();
        assert_eq!(
            lines,
            vec![
                r#" , <http://h/l?page=1&limit=10&v=1,2;3>; title="<,; rel=\"next, <x; y\", FIRST"; REL=FIRST , ,"#,
                r#" , <http://h/l?page=3&limit=10&v=1,2;3>; title="<,; rel=\"next, <x; y\", LAST NEXT"; REL="LAST NEXT" , ,"#,
            ]
        );
        let read = crate::actors::Links::parse(&lines.join(", ")).unwrap();
        assert_eq!(read.rels(), vec!["first", "last", "next"]);
        assert_eq!(read.query("next", "page").as_deref(), Some("3"));
        assert_eq!(read.query("first", "page").as_deref(), Some("1"));
    }
}
