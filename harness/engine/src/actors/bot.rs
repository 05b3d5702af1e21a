//! A bot: its own `awg-mcp` child process whose environment holds only that
//! bot's token, reached through an MCP client over Streamable HTTP.
//!
//! Why one adapter per bot: privilege separation is a catalogue claim. Each
//! adapter child gets a cleared environment plus `PATH`, `AWG_TOKEN` and
//! `RUST_LOG`, so neither another bot's token nor the setup credential can
//! reach it.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{Peer, RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};
use tokio::sync::Mutex;

use super::consent::{BotClient, ConsentUrl, Elicitation, UrlInbox, register_url_secrets};
use super::mcp_schema::{Checked, Wire};
use crate::child::{ManagedChild, SharedLog};
use crate::core_api;
use crate::error::{HarnessError, Result};
use crate::journal::Journal;
use crate::views::{Grant, GrantListPage, GrantRef, NewIssue, Proposal, Submitted};
use crate::vocab::Exchange;
use crate::vocab::{Abort, Step};

/// How long the adapter may take to print its listening line.
const ADAPTER_STARTUP: Duration = Duration::from_secs(30);
/// How long one tool call may take before the adapter counts as hung.
const CALL_TIMEOUT: Duration = Duration::from_secs(60);

/// One tool call's result, as data: scenarios assert on it.
#[derive(Debug, Clone)]
pub struct ToolReply {
    /// The tool's name.
    pub tool: String,
    /// `isError` of the result.
    pub is_error: bool,
    /// `structuredContent` of a successful result.
    pub structured: Option<Value>,
    /// The parsed error JSON (`code`, `native_status`, `message`, `field`) of
    /// an error result.
    pub error: Option<Value>,
    /// All text content, joined.
    pub text: String,
}

impl ToolReply {
    /// The error code of an error result.
    pub fn error_code(&self) -> Option<&str> {
        self.error.as_ref().and_then(|e| e["code"].as_str())
    }

    /// The `field` an `invalid_input` error names.
    pub fn error_field(&self) -> Option<&str> {
        self.error.as_ref().and_then(|e| e.get("field")?.as_str())
    }

    /// The structured content of a success, or the adapter's failure.
    fn success(&self) -> Step<&Value> {
        match &self.structured {
            Some(s) if !self.is_error => Ok(s),
            _ => Err(Abort::failed(format!(
                "{} did not succeed: isError={} {}",
                self.tool,
                self.is_error,
                crate::journal::truncate(&self.text)
            ))),
        }
    }

    /// `grant` of a successful single-grant result.
    pub fn grant(&self) -> Step<Grant> {
        Grant::from_json(crate::views::member(self.success()?, "grant")?)
    }

    /// `{grant, submission}` of a successful submit or readback.
    pub fn submitted(&self) -> Step<Submitted> {
        Submitted::from_json(self.success()?)
    }

    /// The page of a successful `list_agent_work_grants`.
    pub fn list(&self) -> Step<GrantListPage> {
        GrantListPage::from_json(self.success()?)
    }

    /// `issue` of a successful `get_issue` or `create_issue`.
    pub fn issue(&self) -> Step<crate::views::Issue> {
        crate::views::Issue::from_json(crate::views::member(self.success()?, "issue")?)
    }

    /// `issues` of a successful `list_issues` page.
    pub fn issues(&self) -> Step<Vec<crate::views::Issue>> {
        let items = crate::views::member(self.success()?, "issues")?;
        items
            .as_array()
            .ok_or_else(|| Abort::failed(format!("`issues` is not a JSON array: {items}")))?
            .iter()
            .map(crate::views::Issue::from_json)
            .collect()
    }

    /// `repository` of a successful `get_repository`.
    pub fn repository(&self) -> Step<crate::views::Repository> {
        crate::views::Repository::from_json(crate::views::member(self.success()?, "repository")?)
    }

    /// `native_status` of the result (success or error).
    pub fn native_status(&self) -> Option<i64> {
        match (&self.structured, &self.error) {
            (Some(s), _) if !self.is_error => s["native_status"].as_i64(),
            (_, Some(e)) => e["native_status"].as_i64(),
            _ => None,
        }
    }
}

/// How a bot's adapter is started beyond its token and Core URL. No
/// `Debug`: it may hold a credential.
#[derive(Clone, Default)]
pub struct AdapterSettings {
    /// Extra environment (the run's `--adapter-env`), added to the cleared
    /// environment; nothing else is inherited.
    pub env: Vec<(String, String)>,
    /// `--upstream-timeout-ms`; `None` keeps the adapter's default.
    pub upstream_timeout: Option<Duration>,
    /// A bearer the MCP client sends on every request (spec §6: over HTTP
    /// it wins over the process credential); `None` sends none.
    pub caller_bearer: Option<String>,
    /// The process credential as Basic `login:password` (`AWG_BASIC_*`)
    /// instead of the token: the bot's password.
    pub basic_password: Option<String>,
    /// Consent mode (spec §9): no process credential, the OAuth client and
    /// public URL instead.
    pub consent: Option<ConsentSettings>,
}

/// How a consent-mode adapter is started (spec §9).
#[derive(Clone)]
pub struct ConsentSettings {
    /// `--oauth-client-id`: the application registered for its callback.
    pub client_id: String,
    /// The loopback port reserved for it: `--listen 127.0.0.1:PORT`,
    /// `--public-url http://127.0.0.1:PORT`.
    pub port: u16,
    /// What its MCP client declares.
    pub elicitation: Elicitation,
    /// `--consent-timeout-secs`; `None` keeps the adapter's default.
    pub timeout_secs: Option<u64>,
    /// The adapter's own working directory (also its `HOME` and `TMPDIR`),
    /// so a token it wrote anywhere it may write would be found there.
    pub dir: std::path::PathBuf,
}

impl ConsentSettings {
    /// `--public-url`.
    pub fn public_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

/// A running bot. Cloning shares the same adapter and session.
#[derive(Clone)]
pub struct Bot {
    inner: Arc<BotInner>,
}

struct BotInner {
    login: String,
    core_url: String,
    mcp_url: String,
    /// Shared by every MCP session opened on this adapter.
    adapter: Arc<Mutex<ManagedChild>>,
    /// The session, kept to close it; calls go through `peer`, so one bot
    /// can have several calls in flight (race scenarios need that).
    client: Mutex<Option<RunningService<RoleClient, BotClient>>>,
    peer: Peer<RoleClient>,
    log: SharedLog,
    pid: Option<i32>,
    journal: Journal,
    /// URL-mode elicitations this session received, not yet read.
    urls: UrlInbox,
    /// This session's messages, held to MCP's schema.
    wire: Arc<Wire>,
    /// Consent mode's settings (`None` for a bot with a token).
    consent: Option<ConsentSettings>,
    /// The header value of `caller_bearer`, for further sessions.
    bearer: Option<String>,
}

/// How long [`Bot::consent_url`] waits for an elicitation.
const ELICITATION_WAIT: Duration = Duration::from_secs(20);

/// Opens an MCP session on `mcp_url` with the bot's client handler.
async fn connect(
    login: &str,
    mcp_url: &str,
    bearer: Option<&String>,
    elicitation: Option<Elicitation>,
    journal: &Journal,
) -> Result<(RunningService<RoleClient, BotClient>, UrlInbox, Arc<Wire>)> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(mcp_url.to_owned());
    if let Some(bearer) = bearer {
        config = config.auth_header(bearer.clone());
    }
    // rmcp's own client settings (no idle pool: its reuse stalls on delayed
    // ACKs), without redirects: awg-mcp's endpoint never redirects.
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| {
            HarnessError::process(format!("awg-mcp of {login}"), format!("MCP client: {e}"))
        })?;
    let wire = Arc::new(Wire::default());
    let checked = Checked {
        http,
        wire: wire.clone(),
    };
    let transport = StreamableHttpClientTransport::with_client(checked, config);
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let handler = BotClient {
        elicitation,
        urls: tx,
        secrets: journal.secrets().clone(),
    };
    let client = handler.serve(transport).await.map_err(|e| {
        HarnessError::process(
            format!("awg-mcp of {login}"),
            format!("MCP initialisation with {mcp_url} failed: {e}"),
        )
    })?;
    Ok((client, Arc::new(Mutex::new(rx)), wire))
}

impl Bot {
    /// Starts the bot's adapter against `core_url` (the Core, or a fault
    /// proxy in front of it) and connects an MCP client to it.
    pub(crate) async fn start(
        login: &str,
        token: &str,
        core_url: &str,
        adapter_bin: &Path,
        dir: &Path,
        settings: &AdapterSettings,
        journal: Journal,
    ) -> Result<Bot> {
        let mut env = vec![("PATH".to_owned(), std::env::var("PATH").unwrap_or_default())];
        match (&settings.consent, &settings.basic_password) {
            (Some(_), _) => {}
            (None, Some(password)) => {
                env.push(("AWG_BASIC_USER".to_owned(), login.to_owned()));
                env.push(("AWG_BASIC_PASSWORD".to_owned(), password.clone()));
            }
            (None, None) => env.push(("AWG_TOKEN".to_owned(), token.to_owned())),
        }
        env.push((
            "RUST_LOG".to_owned(),
            std::env::var("GRANTGATE_ADAPTER_LOG").unwrap_or_else(|_| "info".into()),
        ));
        env.extend(settings.env.iter().cloned());
        let listen = match &settings.consent {
            Some(c) => format!("127.0.0.1:{}", c.port),
            None => "127.0.0.1:0".to_owned(),
        };
        let mut args: Vec<String> = ["--core-url", core_url, "--transport", "http", "--listen"]
            .iter()
            .map(|s| s.to_string())
            .chain([listen])
            .collect();
        let mut workdir = dir.to_owned();
        if let Some(c) = &settings.consent {
            args.extend([
                "--oauth-client-id".to_owned(),
                c.client_id.clone(),
                "--public-url".to_owned(),
                c.public_url(),
            ]);
            if let Some(secs) = c.timeout_secs {
                args.extend(["--consent-timeout-secs".to_owned(), secs.to_string()]);
            }
            std::fs::create_dir_all(&c.dir).map_err(|e| HarnessError::io(&c.dir, e))?;
            let own = c.dir.to_string_lossy().into_owned();
            env.push(("HOME".to_owned(), own.clone()));
            env.push(("TMPDIR".to_owned(), own));
            workdir = c.dir.clone();
        }
        if let Some(timeout) = settings.upstream_timeout {
            args.push("--upstream-timeout-ms".into());
            args.push(timeout.as_millis().max(1).to_string());
        }
        let mut adapter = ManagedChild::spawn(
            &format!("awg-mcp of {login}"),
            adapter_bin,
            &args,
            &env,
            &workdir,
        )?;
        let mut mcp_url = adapter
            .wait_for_line("awg-mcp listening on", ADAPTER_STARTUP)
            .await
            .map_err(|e| HarnessError::AdapterStart(e.to_string()))?;
        if let Some(c) = &settings.consent {
            // The client reaches the adapter by another loopback name than
            // its public URL: an adapter that builds its redirect URI from
            // `Host` (spec §9 forbids it) then shows it.
            mcp_url = mcp_url.replacen("127.0.0.1", "localhost", 1);
            if !mcp_url.contains(&format!(":{}", c.port)) {
                return Err(HarnessError::process(
                    format!("awg-mcp of {login}"),
                    format!(
                        "asked to listen on 127.0.0.1:{} but listens on {mcp_url}",
                        c.port
                    ),
                ));
            }
        }
        let elicitation = settings.consent.as_ref().map(|c| c.elicitation);
        let (client, urls, wire) = connect(
            login,
            &mcp_url,
            settings.caller_bearer.as_ref(),
            elicitation,
            &journal,
        )
        .await?;
        Ok(Bot {
            inner: Arc::new(BotInner {
                login: login.to_owned(),
                core_url: core_url.to_owned(),
                mcp_url,
                log: adapter.log(),
                pid: adapter.pid(),
                adapter: Arc::new(Mutex::new(adapter)),
                peer: client.peer().clone(),
                client: Mutex::new(Some(client)),
                journal,
                urls,
                wire,
                consent: settings.consent.clone(),
                bearer: settings.caller_bearer.clone(),
            }),
        })
    }

    /// Another MCP session on the same adapter (same process, same
    /// settings): consent states are bound to a session (spec §9).
    pub async fn another_session(&self) -> Step<Bot> {
        let i = &self.inner;
        let elicitation = i.consent.as_ref().map(|c| c.elicitation);
        let (client, urls, wire) = connect(
            &i.login,
            &i.mcp_url,
            i.bearer.as_ref(),
            elicitation,
            &i.journal,
        )
        .await?;
        Ok(Bot {
            inner: Arc::new(BotInner {
                login: i.login.clone(),
                core_url: i.core_url.clone(),
                mcp_url: i.mcp_url.clone(),
                adapter: i.adapter.clone(),
                peer: client.peer().clone(),
                client: Mutex::new(Some(client)),
                log: i.log.clone(),
                pid: i.pid,
                journal: i.journal.clone(),
                urls,
                wire,
                consent: i.consent.clone(),
                bearer: i.bearer.clone(),
            }),
        })
    }

    /// Ends this MCP session (the client closes it; the adapter keeps
    /// running for other sessions).
    pub async fn end_session(&self) -> Step<()> {
        if let Some(client) = self.inner.client.lock().await.take() {
            // A session that does not end would let a check about an ended
            // session run against a live one: that is the harness's error.
            tokio::time::timeout(Duration::from_secs(5), client.cancel())
                .await
                .map_err(|_| Abort::errored("the MCP session did not end within 5 s"))?
                .map_err(|e| Abort::errored(format!("ending the MCP session: {e}")))?;
        }
        Ok(())
    }

    /// The adapter's public URL (consent mode).
    pub fn public_url(&self) -> Option<String> {
        self.inner.consent.as_ref().map(ConsentSettings::public_url)
    }

    /// The adapter's working directory (consent mode: its own).
    pub fn workdir(&self) -> Option<std::path::PathBuf> {
        self.inner.consent.as_ref().map(|c| c.dir.clone())
    }

    /// The next URL-mode elicitation this session received, waiting for
    /// it; none within a bounded wait is the adapter's failure.
    pub async fn consent_url(&self) -> Step<ConsentUrl> {
        let mut inbox = self.inner.urls.lock().await;
        let next = tokio::time::timeout(ELICITATION_WAIT, inbox.recv()).await;
        self.inner.wire.verdict(self.login())?;
        match next {
            Ok(Some(e)) => {
                ConsentUrl::parse(&e.url, e.elicitation_id, self.inner.journal.secrets())
            }
            Ok(None) => Err(Abort::failed(format!(
                "{}: the MCP session ended before any URL-mode elicitation",
                self.login()
            ))),
            Err(_) => Err(Abort::failed(format!(
                "{}: no URL-mode elicitation within {ELICITATION_WAIT:?}",
                self.login()
            ))),
        }
    }

    /// How many URL-mode elicitations arrived and are not yet read.
    pub async fn unread_elicitations(&self) -> usize {
        self.inner.urls.lock().await.len()
    }

    /// The URL an `auth_required` error's message holds (spec §9), its
    /// state registered as a secret.
    pub fn url_in(&self, reply: &ToolReply) -> Step<ConsentUrl> {
        let message = reply
            .error
            .as_ref()
            .and_then(|e| e["message"].as_str())
            .unwrap_or("");
        let secrets = self.inner.journal.secrets();
        let start = message.find("http://").or_else(|| message.find("https://"));
        let Some(start) = start else {
            return Err(Abort::failed(format!(
                "{}: the error message holds no URL",
                reply.tool
            )));
        };
        let url: String = message[start..]
            .chars()
            .take_while(|c| !c.is_whitespace() && !matches!(c, '"' | '\'' | '<' | '>' | ')'))
            .collect();
        let url = url.trim_end_matches(['.', ',', ';']).to_owned();
        register_url_secrets(secrets, &url);
        ConsentUrl::parse(&url, String::new(), secrets)
    }

    /// Starts a tool call in the background (it may park, spec §9).
    pub fn start_call(&self, tool: &str, arguments: Value) -> PendingCall {
        let bot = self.clone();
        let tool = tool.to_owned();
        PendingCall {
            handle: tokio::spawn(async move { bot.call(&tool, arguments).await }),
        }
    }

    /// The bot's login.
    pub fn login(&self) -> &str {
        &self.inner.login
    }

    /// The adapter's process id, to inspect its environment and arguments.
    pub fn adapter_pid(&self) -> Option<i32> {
        self.inner.pid
    }

    /// The adapter's MCP endpoint.
    pub fn mcp_url(&self) -> &str {
        &self.inner.mcp_url
    }

    /// An MCP `initialize` POSTed by hand to the adapter's endpoint, as a
    /// web page would send it, with `origin` as its `Origin` header (none:
    /// as MCP clients send it); recorded like any HTTP exchange.
    pub async fn initialize_from(&self, origin: Option<&str>) -> Step<super::http::Answer> {
        let origin: Vec<(&str, &str)> = origin.map(|o| ("Origin", o)).into_iter().collect();
        self.post_mcp(&origin, initialize("2025-06-18", "grantgate-page"))
            .await
    }

    /// A JSON-RPC message POSTed by hand to the adapter's endpoint with
    /// `headers`, outside the MCP client of this bot (for the transport's
    /// own rules: `Origin`, body size, protocol revisions); recorded like
    /// any HTTP exchange.
    pub async fn post_mcp(
        &self,
        headers: &[(&str, &str)],
        body: Value,
    ) -> Step<super::http::Answer> {
        let (client, request) = self.mcp_request(reqwest::Method::POST, headers, Some(body))?;
        super::http::exchange(&client, &self.inner.journal, &self.inner.login, request).await
    }

    /// An HTTP `DELETE` of the adapter's endpoint with `headers` (a client
    /// ending its session by hand), recorded like any HTTP exchange.
    pub async fn delete_mcp(&self, headers: &[(&str, &str)]) -> Step<super::http::Answer> {
        let (client, request) = self.mcp_request(reqwest::Method::DELETE, headers, None)?;
        super::http::exchange(&client, &self.inner.journal, &self.inner.login, request).await
    }

    /// [`Bot::post_mcp`] for a body the adapter may refuse before reading
    /// it whole: `None` when it closed the connection while the body was
    /// being sent.
    pub async fn post_mcp_refusable(
        &self,
        headers: &[(&str, &str)],
        body: Value,
    ) -> Step<Option<super::http::Answer>> {
        let (client, request) = self.mcp_request(reqwest::Method::POST, headers, Some(body))?;
        super::http::exchange_refusable(&client, &self.inner.journal, &self.inner.login, request)
            .await
    }

    fn mcp_request(
        &self,
        method: reqwest::Method,
        headers: &[(&str, &str)],
        body: Option<Value>,
    ) -> Step<(reqwest::Client, reqwest::Request)> {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| Abort::errored(format!("HTTP client: {e}")))?;
        let mut request = client
            .request(method, &self.inner.mcp_url)
            .header("Accept", "application/json, text/event-stream");
        if let Some(body) = body {
            request = request.json(&body);
        }
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let request = request
            .build()
            .map_err(|e| Abort::errored(format!("MCP request: {e}")))?;
        Ok((client, request))
    }

    /// The Core URL the adapter forwards to.
    pub fn core_url(&self) -> &str {
        &self.inner.core_url
    }

    /// The adapter's output so far.
    pub fn adapter_log(&self) -> String {
        self.inner.log.text()
    }

    /// Calls a tool with raw arguments and records the call. A transport or
    /// protocol failure is the adapter's failure.
    pub async fn call(&self, tool: &str, arguments: Value) -> Step<ToolReply> {
        let Value::Object(args) = arguments.clone() else {
            return Err(Abort::errored(format!(
                "{tool}: arguments must be an object"
            )));
        };
        let started = Instant::now();
        let result = tokio::time::timeout(
            CALL_TIMEOUT,
            self.inner
                .peer
                .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(args)),
        )
        .await;
        let mut record = Exchange {
            actor: self.login().to_owned(),
            kind: "mcp".into(),
            method: "tools/call".into(),
            target: tool.to_owned(),
            request_headers: Vec::new(),
            request_body: serde_json::to_string_pretty(&arguments).unwrap_or_default(),
            status: 0,
            response_headers: Vec::new(),
            response_body: String::new(),
            elapsed_ms: started.elapsed().as_millis() as u64,
        };
        // What crossed the wire comes first: a message that breaks MCP's
        // schema is the adapter's failure, whatever rmcp made of it.
        self.inner.wire.verdict(self.login())?;
        let result = match result {
            Err(_) => {
                self.inner.journal.unanswered();
                Err(format!("no answer within {CALL_TIMEOUT:?}"))
            }
            Ok(Err(e)) => Err(e.to_string()),
            Ok(Ok(r)) => Ok(r),
        };
        let result = match result {
            Ok(r) => r,
            Err(e) => {
                record.response_body = format!("MCP failure: {e}");
                self.inner.journal.exchange(record);
                return Err(Abort::failed(format!(
                    "{}: tool {tool} failed at the MCP level: {e}",
                    self.login()
                )));
            }
        };
        let text: String = result
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.clone()))
            .collect::<Vec<_>>()
            .join("\n");
        let is_error = result.is_error.unwrap_or(false);
        let reply = ToolReply {
            tool: tool.to_owned(),
            is_error,
            structured: result.structured_content.clone(),
            error: if is_error {
                serde_json::from_str(&text).ok()
            } else {
                None
            },
            text,
        };
        record.response_body = serde_json::to_string_pretty(&json!({
            "isError": reply.is_error,
            "structuredContent": reply.structured,
            "text": if reply.is_error { Some(&reply.text) } else { None },
        }))
        .unwrap_or_default();
        self.inner.journal.exchange(record);
        Ok(reply)
    }

    /// `list_agent_work_grants`.
    pub async fn list_grants(&self, page: Option<i64>, state: Option<&str>) -> Step<ToolReply> {
        let mut args = serde_json::Map::new();
        if let Some(p) = page {
            args.insert("page".into(), json!(p));
        }
        if let Some(s) = state {
            args.insert("state".into(), json!(s));
        }
        self.call("list_agent_work_grants", Value::Object(args))
            .await
    }

    /// `get_agent_work_grant`.
    pub async fn get_grant(&self, grant: &GrantRef) -> Step<ToolReply> {
        self.call("get_agent_work_grant", grant_args(grant)).await
    }

    /// Reads the grant and returns its proposal triple; a refusal is a
    /// contract failure (for scenarios whose subject is something later in
    /// the flow).
    pub async fn read_proposal(&self, grant: &GrantRef) -> Step<Proposal> {
        Ok(self.get_grant(grant).await?.grant()?.proposal)
    }

    /// `confirm_agent_work_grant` with the given triple.
    pub async fn confirm(&self, grant: &GrantRef, proposal: &Proposal) -> Step<ToolReply> {
        let mut args = grant_args(grant);
        merge(&mut args, core_api::confirm_body(proposal));
        self.call("confirm_agent_work_grant", args).await
    }

    /// `submit_agent_work_proposal`.
    pub async fn submit(
        &self,
        grant: &GrantRef,
        proposal: &Proposal,
        issue: &NewIssue,
    ) -> Step<ToolReply> {
        let mut args = grant_args(grant);
        merge(&mut args, core_api::submit_body(proposal, issue));
        self.call("submit_agent_work_proposal", args).await
    }

    /// `get_agent_work_submission`.
    pub async fn submission(&self, grant: &GrantRef, request_key: &str) -> Step<ToolReply> {
        let mut args = grant_args(grant);
        args["request_key"] = json!(request_key);
        self.call("get_agent_work_submission", args).await
    }

    /// Closes the MCP session and stops the adapter.
    pub async fn stop(&self) {
        if let Some(client) = self.inner.client.lock().await.take() {
            let _ = tokio::time::timeout(Duration::from_secs(2), client.cancel()).await;
        }
        self.inner
            .adapter
            .lock()
            .await
            .stop(Duration::from_secs(2))
            .await;
    }
}

fn grant_args(grant: &GrantRef) -> Value {
    core_api::grant_args(grant)
}

/// The tool's arguments carry the native body's members under the same names.
fn merge(args: &mut Value, body: Value) {
    if let (Some(args), Value::Object(body)) = (args.as_object_mut(), body) {
        args.extend(body);
    }
}

/// An MCP `initialize` request for protocol revision `version` from a
/// client named `name`.
pub fn initialize(version: &str, name: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {},
        "clientInfo": {"name": name, "version": "1"}}})
}

/// The JSON-RPC message of an answer of the Streamable HTTP transport: the
/// body itself (`application/json`), or the first `data:` event holding a
/// JSON object (`text/event-stream`).
pub fn rpc_message(answer: &super::http::Answer) -> Option<Value> {
    let body = answer.text().ok()?;
    if let Ok(value) = serde_json::from_str::<Value>(body) {
        return Some(value);
    }
    body.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .find_map(|d| {
            serde_json::from_str::<Value>(d.trim())
                .ok()
                .filter(Value::is_object)
        })
}

/// A tool call running in the background, so the scenario can consent while
/// it is parked.
pub struct PendingCall {
    pub(crate) handle: tokio::task::JoinHandle<Step<ToolReply>>,
}

impl PendingCall {
    /// Whether the call has ended (answered, or failed at the MCP level).
    pub fn is_finished(&self) -> bool {
        self.handle.is_finished()
    }

    /// Waits for the call's reply.
    pub async fn finish(self) -> Step<ToolReply> {
        self.handle
            .await
            .map_err(|e| Abort::errored(format!("a pending tool call's task ended: {e}")))?
    }
}
