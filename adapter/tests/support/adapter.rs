//! Starting the real `awg-mcp` binary and talking MCP to it through rmcp.

use std::{
    path::Path,
    process::Stdio,
    sync::{Arc, Mutex},
    time::Duration,
};

use rmcp::{
    RoleClient,
    model::{
        CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation,
        ProtocolVersion,
    },
    service::{ClientLifecycleMode, ClientServiceExt, RunningService, Service, ServiceExt},
    transport::{
        StreamableHttpClientTransport, TokioChildProcess,
        streamable_http_client::StreamableHttpClientTransportConfig,
    },
};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};

/// The MCP client the tests use.
pub type Client = RunningService<RoleClient, ClientConfig>;

/// The adapter binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_awg-mcp");

/// A client identity pinned to one protocol version.
pub fn client_config(version: ProtocolVersion) -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("awg-mcp-tests", "0"),
    )
    .with_protocol_version(version)
}

/// A running `awg-mcp --transport http` child.
pub struct HttpAdapter {
    child: tokio::process::Child,
    /// The `/mcp` URL from the adapter's one stdout line.
    pub url: String,
    stderr: Arc<Mutex<Vec<u8>>>,
}

impl HttpAdapter {
    /// Starts the adapter on 127.0.0.1:0 with a clean environment plus `env`.
    pub async fn start(core: &str, env: &[(&str, &str)], args: &[&str]) -> Self {
        Self::start_in(core, env, args, None).await
    }

    /// Like [`HttpAdapter::start`], in the working directory `dir` when given.
    pub async fn start_in(
        core: &str,
        env: &[(&str, &str)],
        args: &[&str],
        dir: Option<&Path>,
    ) -> Self {
        let mut command = tokio::process::Command::new(BIN);
        if let Some(dir) = dir {
            command.current_dir(dir);
        }
        command
            .env_clear()
            .args(["--transport", "http", "--core-url", core])
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = command.spawn().expect("spawn awg-mcp");
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let mut pipe = child.stderr.take().unwrap();
        let sink = stderr.clone();
        tokio::spawn(async move {
            let mut buf = [0u8; 4096];
            while let Ok(n) = pipe.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        tokio::time::timeout(Duration::from_secs(20), stdout.read_line(&mut line))
            .await
            .expect("awg-mcp printed no address line within 20 s")
            .unwrap();
        let url = line
            .trim_end()
            .strip_prefix("awg-mcp listening on ")
            .unwrap_or_else(|| panic!("unexpected first stdout line {line:?}"))
            .to_owned();
        assert!(
            url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"),
            "{url}"
        );
        Self { child, url, stderr }
    }

    /// Connects an rmcp client (negotiating 2025-11-25), optionally with its own bearer.
    pub async fn connect(&self, bearer: Option<&str>) -> Client {
        self.connect_with(
            bearer,
            client_config(ProtocolVersion::V_2025_11_25),
            ClientLifecycleMode::Initialize,
        )
        .await
    }

    /// Connects with an explicit client identity and lifecycle.
    pub async fn connect_with(
        &self,
        bearer: Option<&str>,
        config: ClientConfig,
        lifecycle: ClientLifecycleMode,
    ) -> Client {
        let mut transport = StreamableHttpClientTransportConfig::with_uri(self.url.clone());
        if let Some(bearer) = bearer {
            transport = transport.auth_header(bearer);
        }
        transport.max_json_response_size = 64 * 1024 * 1024;
        config
            .serve_with_lifecycle(
                StreamableHttpClientTransport::from_config(transport),
                lifecycle,
            )
            .await
            .expect("MCP handshake over Streamable HTTP")
    }

    /// Connects an rmcp client with its own handler (for example one that
    /// answers elicitations), optionally with a bearer.
    pub async fn connect_handler<H: Service<RoleClient>>(
        &self,
        bearer: Option<&str>,
        handler: H,
    ) -> RunningService<RoleClient, H> {
        let mut transport = StreamableHttpClientTransportConfig::with_uri(self.url.clone());
        if let Some(bearer) = bearer {
            transport = transport.auth_header(bearer);
        }
        handler
            .serve(StreamableHttpClientTransport::from_config(transport))
            .await
            .expect("MCP handshake over Streamable HTTP")
    }

    /// `http://127.0.0.1:PORT`, the adapter's own origin.
    pub fn origin(&self) -> &str {
        self.url.trim_end_matches("/mcp")
    }

    /// `127.0.0.1:PORT`, for a raw socket.
    pub fn addr(&self) -> &str {
        self.origin().trim_start_matches("http://")
    }

    /// Everything the adapter wrote to stderr so far.
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.stderr.lock().unwrap()).into_owned()
    }

    /// Sends SIGTERM and waits up to five seconds for the exit status.
    pub async fn terminate(&mut self) -> std::process::ExitStatus {
        let pid = self.child.id().expect("still running").to_string();
        let sent = std::process::Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap();
        assert!(sent.success(), "kill -TERM {pid}");
        tokio::time::timeout(Duration::from_secs(5), self.child.wait())
            .await
            .expect("awg-mcp did not stop within 5 s of SIGTERM")
            .unwrap()
    }

    /// Whether the child is still running.
    pub fn is_running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }
}

/// Starts `awg-mcp` with `args` and a clean environment plus `env`, expects
/// the start to be refused (exit status 2, no address line), and returns stderr.
pub async fn start_error(args: &[&str], env: &[(&str, &str)]) -> String {
    let output = tokio::process::Command::new(BIN)
        .env_clear()
        .args(args)
        .envs(env.iter().copied())
        .output()
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{args:?}");
    assert!(output.stdout.is_empty(), "no address line on failure");
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Starts `awg-mcp` on stdio with a clean environment plus `env`, and connects.
pub async fn stdio(
    core: &str,
    env: &[(&str, &str)],
    config: ClientConfig,
    lifecycle: ClientLifecycleMode,
) -> Client {
    let mut command = tokio::process::Command::new(BIN);
    command
        .env_clear()
        .args(["--core-url", core])
        .envs(env.iter().copied());
    let (transport, _stderr) = TokioChildProcess::builder(command)
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn awg-mcp on stdio");
    config
        .serve_with_lifecycle(transport, lifecycle)
        .await
        .expect("MCP handshake over stdio")
}

/// Calls a tool with a JSON object of arguments.
pub async fn call<S: Service<RoleClient>>(
    client: &RunningService<RoleClient, S>,
    name: &str,
    args: Value,
) -> CallToolResult {
    let mut params = CallToolRequestParams::new(name.to_owned());
    if let Value::Object(map) = args {
        params = params.with_arguments(map);
    }
    client.call_tool(params).await.expect("tools/call answered")
}

/// Asserts a success and returns its structured content (equal to its one text item).
pub fn ok(result: &CallToolResult) -> Value {
    assert_ne!(
        result.is_error,
        Some(true),
        "expected success, got {result:?}"
    );
    let structured = result
        .structured_content
        .clone()
        .expect("structuredContent");
    assert_eq!(result.content.len(), 1, "one text item");
    let text = result.content[0].as_text().expect("text item");
    let parsed: Value = serde_json::from_str(&text.text).unwrap();
    assert_eq!(parsed, structured, "text item and structuredContent differ");
    structured
}

/// Asserts a bounded tool error and returns its JSON.
pub fn err(result: &CallToolResult) -> Value {
    assert_eq!(
        result.is_error,
        Some(true),
        "expected a tool error, got {result:?}"
    );
    assert!(
        result.structured_content.is_none(),
        "a tool error has no structuredContent"
    );
    assert_eq!(result.content.len(), 1, "one text item");
    let text = &result.content[0].as_text().expect("text item").text;
    let error: Value = serde_json::from_str(text).unwrap();
    let message = error["message"].as_str().expect("message");
    assert!(
        message.chars().count() <= 300,
        "message too long: {message}"
    );
    let keys: Vec<&str> = error
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    for key in &keys {
        assert!(
            ["code", "native_status", "message", "field"].contains(key),
            "unexpected key {key}"
        );
    }
    error
}

/// Asserts an error code and native status.
pub fn expect_error(result: &CallToolResult, code: &str, native_status: Option<u16>) -> Value {
    let error = err(result);
    assert_eq!(error["code"], code, "{error}");
    assert_eq!(
        error["native_status"],
        native_status.map_or(Value::Null, Value::from),
        "{error}"
    );
    error
}
