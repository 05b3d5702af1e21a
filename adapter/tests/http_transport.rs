//! The Streamable HTTP transport's guards and the process's start-up contract:
//! the one address line, Origin and Host checks, the 1 MiB body limit, and
//! clear exit-2 errors for a Core URL that is not a bare origin.

mod support;

use std::time::Duration;

use serde_json::json;
use support::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn initialize_body() -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}})
    .to_string()
}

/// One raw HTTP/1.1 POST to the adapter; returns the status code.
async fn raw_post(url: &str, headers: &[(&str, &str)], body: &[u8]) -> u16 {
    let addr = url.trim_start_matches("http://").trim_end_matches("/mcp");
    let mut socket = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("host")) {
        head.push_str(&format!("Host: {addr}\r\n"));
    }
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(
        "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\r\n",
    );
    socket.write_all(head.as_bytes()).await.unwrap();
    // The adapter may answer (and close) before reading a large body.
    let _ = socket.write_all(body).await;
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), socket.read_to_end(&mut answer)).await;
    let answer = String::from_utf8_lossy(&answer);
    answer
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {answer:?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn origin_and_host_are_checked() {
    let upstream = ScriptedUpstream::start().await;
    let adapter = HttpAdapter::start(&upstream.origin(), TOKEN_ENV, &[]).await;
    let body = initialize_body();
    let url = &adapter.url;
    assert_eq!(
        raw_post(url, &[], body.as_bytes()).await,
        200,
        "no Origin is fine"
    );
    assert_eq!(
        raw_post(url, &[("Origin", "http://localhost:6274")], body.as_bytes()).await,
        200
    );
    assert_eq!(
        raw_post(url, &[("Origin", "http://127.0.0.1:3000")], body.as_bytes()).await,
        200
    );
    assert_eq!(
        raw_post(url, &[("Origin", "https://evil.example")], body.as_bytes()).await,
        403
    );
    assert_eq!(
        raw_post(url, &[("Origin", "null")], body.as_bytes()).await,
        403
    );
    assert_eq!(
        raw_post(url, &[("Host", "evil.example")], body.as_bytes()).await,
        403
    );
    assert_eq!(
        raw_post(
            url,
            &[("Host", "localhost.evil.example:80")],
            body.as_bytes()
        )
        .await,
        403
    );
    assert_eq!(
        raw_post(url, &[("Host", "localhost")], body.as_bytes()).await,
        200
    );
    assert_eq!(upstream.count(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allowed_origins_replace_the_loopback_default() {
    let upstream = ScriptedUpstream::start().await;
    let adapter = HttpAdapter::start(
        &upstream.origin(),
        TOKEN_ENV,
        &["--allowed-origin", "https://app.example"],
    )
    .await;
    let body = initialize_body();
    assert_eq!(
        raw_post(
            &adapter.url,
            &[("Origin", "https://app.example")],
            body.as_bytes()
        )
        .await,
        200
    );
    assert_eq!(
        raw_post(
            &adapter.url,
            &[("Origin", "https://app.example:443")],
            body.as_bytes()
        )
        .await,
        200
    );
    assert_eq!(
        raw_post(
            &adapter.url,
            &[("Origin", "http://localhost:6274")],
            body.as_bytes()
        )
        .await,
        403
    );
    assert_eq!(
        raw_post(
            &adapter.url,
            &[("Origin", "http://app.example")],
            body.as_bytes()
        )
        .await,
        403
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_bodies_over_one_mebibyte_are_refused() {
    let upstream = ScriptedUpstream::start().await;
    let mut adapter = HttpAdapter::start(&upstream.origin(), TOKEN_ENV, &[]).await;
    let mut big = initialize_body().into_bytes();
    big.pop();
    big.extend_from_slice(b",\"pad\":\"");
    big.resize(1024 * 1024 + 1 - 2, b'x');
    big.extend_from_slice(b"\"}");
    assert_eq!(big.len(), 1024 * 1024 + 1);
    assert_eq!(raw_post(&adapter.url, &[], &big).await, 413);
    // Just under the limit a real tool call with a large body goes through.
    let client = adapter.connect(None).await;
    let text = "ü".repeat(230 * 1024);
    upstream.script(
        "POST",
        ISSUES_PATH,
        Action::json(201, &issue(1, "t", &text)),
    );
    let args = json!({"owner": "alice", "repo": "lab", "title": "t", "body": text});
    ok(&call(&client, "create_issue", args).await);
    assert_eq!(upstream.count(), 1);
    assert!(adapter.is_running());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chunked_bodies_over_one_mebibyte_are_refused_too() {
    let upstream = ScriptedUpstream::start().await;
    let adapter = HttpAdapter::start(&upstream.origin(), TOKEN_ENV, &[]).await;
    let addr = adapter
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    let mut socket = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\r\n"
    );
    socket.write_all(head.as_bytes()).await.unwrap();
    let chunk = vec![b' '; 64 * 1024];
    for _ in 0..17 {
        if socket
            .write_all(format!("{:x}\r\n", chunk.len()).as_bytes())
            .await
            .is_err()
            || socket.write_all(&chunk).await.is_err()
            || socket.write_all(b"\r\n").await.is_err()
        {
            break;
        }
    }
    let _ = socket.write_all(b"0\r\n\r\n").await;
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), socket.read_to_end(&mut answer)).await;
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer:?}");
    assert_eq!(upstream.count(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allow_remote_accepts_any_host_and_sigterm_stops_cleanly() {
    let upstream = ScriptedUpstream::start().await;
    let mut adapter = HttpAdapter::start(&upstream.origin(), TOKEN_ENV, &["--allow-remote"]).await;
    let body = initialize_body();
    assert_eq!(
        raw_post(&adapter.url, &[("Host", "mcp.example")], body.as_bytes()).await,
        200
    );
    assert_eq!(
        raw_post(
            &adapter.url,
            &[("Origin", "https://evil.example")],
            body.as_bytes()
        )
        .await,
        403
    );
    // An open MCP session (with its event stream) does not hold the process.
    let client = adapter.connect(None).await;
    assert_eq!(client.list_tools(None).await.unwrap().tools.len(), 9);
    let status = adapter.terminate().await;
    assert!(status.success(), "{status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_core_url_that_is_not_a_bare_origin_stops_the_start() {
    for bad in [
        "http://127.0.0.1:3000/api/v1",
        "http://127.0.0.1:3000?x=1",
        "http://127.0.0.1:3000#f",
        "http://bot:secret-1a9f@127.0.0.1:3000",
        "ftp://127.0.0.1",
        "127.0.0.1:3000",
        "",
    ] {
        let stderr = start_error(&["--transport", "http", "--core-url", bad], &[]).await;
        assert!(
            stderr.contains("--core-url") && stderr.contains("bare http(s) origin"),
            "{bad}: {stderr}"
        );
        assert!(
            !stderr.contains("secret-1a9f"),
            "a credential in the URL was echoed: {stderr}"
        );
    }
    let stderr = start_error(&["--transport", "http"], &[]).await;
    assert!(stderr.contains("--core-url"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_non_loopback_listen_needs_allow_remote() {
    let stderr = start_error(
        &[
            "--transport",
            "http",
            "--core-url",
            "http://127.0.0.1:9",
            "--listen",
            "0.0.0.0:0",
        ],
        &[],
    )
    .await;
    assert!(stderr.contains("--allow-remote"), "{stderr}");
}
