//! A small loopback OAuth authorization server with one API route, standing
//! in for the Core in consent-mode tests.
//!
//! `GET /login/oauth/authorize` checks the request and answers 303 to the
//! redirect URI with a fresh code bound to the client, redirect URI and S256
//! challenge (no browser session: the test is the person). `POST
//! /login/oauth/access_token` counts every request and checks the verifier
//! against the code's challenge, or answers as a [`TokenMode`] scripts it
//! (a status, a malformed body, a 307 to a second, counting endpoint). `GET /api/v1/repos/{owner}/{repo}` answers
//! only to a token this server issued, and records the `Authorization` it saw.

use std::{
    collections::HashMap,
    net::SocketAddr,
    sync::{Arc, Mutex},
    time::Duration,
};

use axum::{
    Form, Json, Router,
    extract::{Path, Query, State},
    http::{HeaderMap, StatusCode, header},
    response::{IntoResponse, Response},
    routing::{any, get, post},
};
use base64::{Engine, engine::general_purpose::URL_SAFE_NO_PAD};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::fixtures;

/// The client id the fake knows.
pub const CLIENT_ID: &str = "awg-mcp-test-client";

/// What the token endpoint does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenMode {
    /// Checks the code, client, redirect URI and verifier; 200 or 400 `invalid_grant`.
    Honest,
    /// Answers this status with a JSON error body, whatever was sent.
    Status(u16),
    /// Answers 200 with a body that is not a token answer.
    Malformed,
    /// Answers 307 with a `Location` on [`MOVED_TOKEN_PATH`], whose token
    /// endpoint issues a token to any request and counts them.
    Redirect,
}

/// Where [`TokenMode::Redirect`] points: a second token endpoint that
/// grants anything, so an adapter that follows the redirect would succeed.
pub const MOVED_TOKEN_PATH: &str = "/moved/login/oauth/access_token";

#[derive(Debug, Clone)]
struct Issued {
    client_id: String,
    redirect_uri: String,
    challenge: String,
}

#[derive(Debug, Default)]
struct Inner {
    codes: HashMap<String, Issued>,
    tokens: Vec<String>,
    token_posts: Vec<HashMap<String, String>>,
    moved_requests: usize,
    api_auth: Vec<String>,
    mode: Option<TokenMode>,
    serial: u64,
}

/// The running fake.
#[derive(Clone)]
pub struct FakeCore {
    addr: SocketAddr,
    inner: Arc<Mutex<Inner>>,
}

/// The parameters of an authorize URL.
#[derive(Debug, Clone)]
pub struct Authorize {
    /// Every query parameter (the last of each name).
    pub params: HashMap<String, String>,
    /// The URL without its query.
    pub base: String,
}

impl Authorize {
    /// Parses an authorize URL.
    pub fn parse(url: &str) -> Self {
        let parsed = url::Url::parse(url).unwrap_or_else(|e| panic!("not a URL ({e}): {url}"));
        let params = parsed.query_pairs().into_owned().collect();
        let mut base = parsed.clone();
        base.set_query(None);
        Self {
            params,
            base: base.to_string(),
        }
    }

    /// One parameter, which must be present.
    pub fn get(&self, name: &str) -> &str {
        self.params
            .get(name)
            .unwrap_or_else(|| panic!("no {name} in the authorize URL"))
    }
}

/// The S256 challenge of `verifier` (RFC 7636 §4.2).
pub fn s256(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

impl FakeCore {
    /// Starts on 127.0.0.1, an honest token endpoint.
    pub async fn start() -> Self {
        let inner = Arc::new(Mutex::new(Inner::default()));
        let app = Router::new()
            .route("/login/oauth/authorize", get(authorize))
            .route("/login/oauth/access_token", post(access_token))
            .route(MOVED_TOKEN_PATH, any(moved_access_token))
            .route("/api/v1/repos/{owner}/{repo}", get(repository))
            .with_state(inner.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Self { addr, inner }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn origin(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Sets what the token endpoint does from now on.
    pub fn token_mode(&self, mode: TokenMode) {
        self.inner.lock().unwrap().mode = Some(mode);
    }

    /// How many token POSTs arrived.
    pub fn token_posts(&self) -> usize {
        self.inner.lock().unwrap().token_posts.len()
    }

    /// How many requests arrived at [`MOVED_TOKEN_PATH`].
    pub fn moved_requests(&self) -> usize {
        self.inner.lock().unwrap().moved_requests
    }

    /// The forms of every token POST.
    pub fn token_forms(&self) -> Vec<HashMap<String, String>> {
        self.inner.lock().unwrap().token_posts.clone()
    }

    /// Every token this fake issued, in order.
    pub fn issued_tokens(&self) -> Vec<String> {
        self.inner.lock().unwrap().tokens.clone()
    }

    /// Every `Authorization` header the API route saw, in order.
    pub fn api_auth(&self) -> Vec<String> {
        self.inner.lock().unwrap().api_auth.clone()
    }

    /// The person consents: GETs the authorize URL (no redirect followed)
    /// and returns the callback query the browser would carry (`code=…&state=…`).
    pub async fn consent(&self, url: &str) -> String {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap();
        let response = client.get(url).send().await.unwrap();
        assert_eq!(
            response.status(),
            303,
            "the fake refused the authorize URL {url}"
        );
        let location = response.headers()[header::LOCATION].to_str().unwrap();
        url::Url::parse(location)
            .unwrap()
            .query()
            .unwrap()
            .to_owned()
    }
}

async fn authorize(
    State(inner): State<Arc<Mutex<Inner>>>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let field = |n: &str| q.get(n).cloned().unwrap_or_default();
    if field("response_type") != "code"
        || field("client_id") != CLIENT_ID
        || field("code_challenge_method") != "S256"
        || field("code_challenge").len() != 43
        || field("state").is_empty()
        || field("scope") != "read:repository write:issue"
    {
        return (StatusCode::BAD_REQUEST, "bad authorize request").into_response();
    }
    let mut inner = inner.lock().unwrap();
    inner.serial += 1;
    let code = format!(
        "code-{}-{}",
        inner.serial,
        s256(&field("state"))[..8].to_owned()
    );
    inner.codes.insert(
        code.clone(),
        Issued {
            client_id: field("client_id"),
            redirect_uri: field("redirect_uri"),
            challenge: field("code_challenge"),
        },
    );
    let mut location = url::Url::parse(&field("redirect_uri")).unwrap();
    location
        .query_pairs_mut()
        .append_pair("code", &code)
        .append_pair("state", &field("state"));
    (
        StatusCode::SEE_OTHER,
        [(header::LOCATION, location.to_string())],
    )
        .into_response()
}

async fn access_token(
    State(inner): State<Arc<Mutex<Inner>>>,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    let mut inner = inner.lock().unwrap();
    inner.token_posts.push(form.clone());
    match inner.mode.unwrap_or(TokenMode::Honest) {
        TokenMode::Status(status) => {
            return (
                StatusCode::from_u16(status).unwrap(),
                Json(json!({"error": "server_error"})),
            )
                .into_response();
        }
        TokenMode::Malformed => {
            return (StatusCode::OK, Json(json!({"token": "not-the-shape"}))).into_response();
        }
        TokenMode::Redirect => {
            return (
                StatusCode::TEMPORARY_REDIRECT,
                [(header::LOCATION, MOVED_TOKEN_PATH)],
            )
                .into_response();
        }
        TokenMode::Honest => {}
    }
    let invalid = || {
        (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": "invalid_grant"})),
        )
            .into_response()
    };
    let field = |n: &str| form.get(n).cloned().unwrap_or_default();
    if field("grant_type") != "authorization_code" {
        return invalid();
    }
    // A code is single use, whatever happens next.
    let Some(issued) = inner.codes.remove(&field("code")) else {
        return invalid();
    };
    if issued.client_id != field("client_id")
        || issued.redirect_uri != field("redirect_uri")
        || issued.challenge != s256(&field("code_verifier"))
    {
        return invalid();
    }
    issue_token(&mut inner)
}

/// The token endpoint a redirect points to: counts, and grants anything.
async fn moved_access_token(State(inner): State<Arc<Mutex<Inner>>>) -> Response {
    let mut inner = inner.lock().unwrap();
    inner.moved_requests += 1;
    issue_token(&mut inner)
}

/// A fresh token, kept as issued, in a 200 token answer.
fn issue_token(inner: &mut Inner) -> Response {
    inner.serial += 1;
    let token = format!("consented-token-{}", inner.serial);
    inner.tokens.push(token.clone());
    Json(json!({
        "access_token": token,
        "token_type": "bearer",
        "expires_in": 3600,
        "scope": "read:repository write:issue"
    }))
    .into_response()
}

async fn repository(
    State(inner): State<Arc<Mutex<Inner>>>,
    Path((owner, repo)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    let mut inner = inner.lock().unwrap();
    let auth = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    inner.api_auth.push(auth.clone());
    let known = auth
        .split_once(' ')
        .is_some_and(|(_, t)| inner.tokens.iter().any(|k| k == t) || t == "caller-bearer");
    if !known {
        return (StatusCode::UNAUTHORIZED, Json(json!({"message": "no"}))).into_response();
    }
    if (owner.as_str(), repo.as_str()) != ("alice", "lab") {
        return (StatusCode::NOT_FOUND, Json(json!({"message": "no"}))).into_response();
    }
    Json::<Value>(fixtures::repository()).into_response()
}

/// How long a test waits for what must happen soon (an elicitation, a
/// resumed call, a log line) before it fails.
pub const WAIT: Duration = Duration::from_secs(10);

/// How long a test gives what must not happen (a parked call ending, an
/// elicitation arriving) to show before it concludes it did not.
pub const SETTLE: Duration = Duration::from_millis(300);

/// Flags for a one-second consent timeout; [`outlive_short_timeout`] waits past it.
pub const SHORT_TIMEOUT: [&str; 2] = ["--consent-timeout-secs", "1"];

/// Waits until a state minted under [`SHORT_TIMEOUT`] has expired.
pub async fn outlive_short_timeout() {
    tokio::time::sleep(Duration::from_millis(1500)).await;
}

/// The arguments of the one tool call the consent tests make (`get_repository`).
pub fn repo_args() -> Value {
    json!({"owner": "alice", "repo": "lab"})
}

/// The `state` of an authorize URL.
pub fn state_of(url: &str) -> String {
    Authorize::parse(url).get("state").to_owned()
}

/// The `code` of a callback query.
pub fn code_of(query: &str) -> &str {
    query
        .split('&')
        .find_map(|p| p.strip_prefix("code="))
        .unwrap_or_else(|| panic!("no code in the callback query"))
}

/// The adapter's `--public-url` in consent tests: loopback (a remote one
/// needs `--allow-remote`, which would lift the `Host` guard) but deliberately
/// not its real address, so a `redirect_uri` built from anything else shows.
pub const PUBLIC_URL: &str = "http://localhost:9";

/// The `redirect_uri` every authorize URL must carry.
pub const REDIRECT_URI: &str = "http://localhost:9/mcp/oauth/callback";

/// Starts `awg-mcp --transport http` in consent mode against `core`.
pub async fn start_consent(
    core: &FakeCore,
    env: &[(&str, &str)],
    extra: &[&str],
    dir: Option<&std::path::Path>,
) -> super::HttpAdapter {
    let mut args = vec!["--oauth-client-id", CLIENT_ID, "--public-url", PUBLIC_URL];
    args.extend_from_slice(extra);
    super::HttpAdapter::start_in(&core.origin(), env, &args, dir).await
}

/// The browser arriving at the adapter's callback with `query`: status and page.
pub async fn callback(adapter: &super::HttpAdapter, query: &str) -> (u16, String) {
    let url = if query.is_empty() {
        format!("{}/mcp/oauth/callback", adapter.origin())
    } else {
        format!("{}/mcp/oauth/callback?{query}", adapter.origin())
    };
    let response = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
        .get(url)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.text().await.unwrap())
}

/// The URL of an `auth_required` tool error: the message's last word. Also
/// checks the error's shape (the usual keys, `native_status` null, prose within 300).
pub fn auth_required_url(result: &rmcp::model::CallToolResult) -> String {
    assert_eq!(
        result.is_error,
        Some(true),
        "expected auth_required, got {result:?}"
    );
    assert!(result.structured_content.is_none());
    assert_eq!(result.content.len(), 1);
    let text = &result.content[0].as_text().expect("text item").text;
    let error: Value = serde_json::from_str(text).unwrap();
    assert_eq!(error["code"], "auth_required", "{error}");
    assert_eq!(error["native_status"], Value::Null, "{error}");
    let keys: Vec<&String> = error.as_object().unwrap().keys().collect();
    assert_eq!(keys.len(), 3, "{error}");
    let message = error["message"].as_str().unwrap();
    let (prose, url) = message.rsplit_once(' ').expect("prose, then the URL");
    assert!(prose.chars().count() <= 300, "{prose}");
    url.to_owned()
}

/// An MCP client that declares URL-mode elicitation and answers every
/// elicitation with `action`, passing the URL on to the test.
pub struct Eliciting {
    action: rmcp::model::ElicitationAction,
    urls: tokio::sync::mpsc::UnboundedSender<String>,
}

impl Eliciting {
    /// The handler and the receiving end of its URLs.
    pub fn new(
        action: rmcp::model::ElicitationAction,
    ) -> (Self, tokio::sync::mpsc::UnboundedReceiver<String>) {
        let (urls, receiver) = tokio::sync::mpsc::unbounded_channel();
        (Self { action, urls }, receiver)
    }
}

/// A client of `adapter` (no bearer) that accepts every URL elicitation,
/// and the receiving end of the URLs it is sent.
pub async fn accepting_client(
    adapter: &super::HttpAdapter,
) -> (
    rmcp::service::RunningService<rmcp::RoleClient, Eliciting>,
    tokio::sync::mpsc::UnboundedReceiver<String>,
) {
    let (handler, urls) = Eliciting::new(rmcp::model::ElicitationAction::Accept);
    (adapter.connect_handler(None, handler).await, urls)
}

impl rmcp::ClientHandler for Eliciting {
    async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<rmcp::RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        match request {
            rmcp::model::ElicitRequestParams::UrlElicitationParams {
                url,
                elicitation_id,
                message,
                ..
            } => {
                assert!(!elicitation_id.is_empty() && !message.is_empty());
                let _ = self.urls.send(url);
                Ok(rmcp::model::ElicitResult::new(self.action.clone()))
            }
            other => panic!("expected a URL-mode elicitation, got {other:?}"),
        }
    }

    fn get_info(&self) -> rmcp::model::ClientConfig {
        use rmcp::model::{ElicitationCapability, UrlElicitationCapability};
        let capabilities = rmcp::model::ClientCapabilities::builder()
            .enable_elicitation_with(
                ElicitationCapability::new().with_url(UrlElicitationCapability::new()),
            )
            .build();
        rmcp::model::ClientConfig::new(
            capabilities,
            rmcp::model::Implementation::new("awg-mcp-consent-tests", "0"),
        )
        .with_protocol_version(rmcp::model::ProtocolVersion::V_2025_11_25)
    }
}

/// Calls a tool on `peer` in the background (the call may park).
pub fn call_in_background(
    peer: &rmcp::Peer<rmcp::RoleClient>,
    name: &str,
    args: Value,
) -> tokio::task::JoinHandle<rmcp::model::CallToolResult> {
    let peer = peer.clone();
    let mut params = rmcp::model::CallToolRequestParams::new(name.to_owned());
    if let Value::Object(map) = args {
        params = params.with_arguments(map);
    }
    tokio::spawn(async move { peer.call_tool(params).await.expect("tools/call answered") })
}

/// The result of a call made in the background, which must end within [`WAIT`].
pub async fn finished(
    call: tokio::task::JoinHandle<rmcp::model::CallToolResult>,
) -> rmcp::model::CallToolResult {
    tokio::time::timeout(WAIT, call)
        .await
        .expect("the call did not end within 10 s")
        .expect("the call's task")
}

/// Whether a call made in the background is still running after [`SETTLE`].
pub async fn still_parked(call: &tokio::task::JoinHandle<rmcp::model::CallToolResult>) -> bool {
    tokio::time::sleep(SETTLE).await;
    !call.is_finished()
}

/// The next URL an eliciting client received, within ten seconds.
pub async fn next_url(urls: &mut tokio::sync::mpsc::UnboundedReceiver<String>) -> String {
    tokio::time::timeout(WAIT, urls.recv())
        .await
        .expect("no elicitation within 10 s")
        .expect("elicitation channel open")
}

/// The first line of the adapter's log that contains `needle`, waiting up to ten seconds for it.
pub async fn wait_for_log(adapter: &super::HttpAdapter, needle: &str) -> String {
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        if let Some(line) = adapter.stderr().lines().find(|l| l.contains(needle)) {
            return line.to_owned();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no log line with {needle:?} within 10 s"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
