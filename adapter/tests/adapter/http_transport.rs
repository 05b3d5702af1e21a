//! The Streamable HTTP transport's guards and the process's start-up contract:
//! the one address line, Origin and Host checks, the 1 MiB body limit, clear
//! exit-2 errors for a Core URL that is not a bare origin, and answers that
//! do not wait on the client's delayed ACKs.

use std::time::Duration;

use crate::support::*;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn initialize_body() -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}})
    .to_string()
}

/// One raw HTTP/1.1 POST to the adapter at `addr`; returns the status code.
async fn raw_post(addr: &str, headers: &[(&str, &str)], body: &[u8]) -> u16 {
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
    let addr = adapter.addr();
    assert_eq!(
        raw_post(addr, &[], body.as_bytes()).await,
        200,
        "no Origin is fine"
    );
    assert_eq!(
        raw_post(
            addr,
            &[("Origin", "http://localhost:6274")],
            body.as_bytes()
        )
        .await,
        200
    );
    assert_eq!(
        raw_post(
            addr,
            &[("Origin", "http://127.0.0.1:3000")],
            body.as_bytes()
        )
        .await,
        200
    );
    assert_eq!(
        raw_post(addr, &[("Origin", "https://evil.example")], body.as_bytes()).await,
        403
    );
    assert_eq!(
        raw_post(addr, &[("Origin", "null")], body.as_bytes()).await,
        403
    );
    assert_eq!(
        raw_post(addr, &[("Host", "evil.example")], body.as_bytes()).await,
        403
    );
    assert_eq!(
        raw_post(
            addr,
            &[("Host", "localhost.evil.example:80")],
            body.as_bytes()
        )
        .await,
        403
    );
    assert_eq!(
        raw_post(addr, &[("Host", "localhost")], body.as_bytes()).await,
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
            adapter.addr(),
            &[("Origin", "https://app.example")],
            body.as_bytes()
        )
        .await,
        200
    );
    assert_eq!(
        raw_post(
            adapter.addr(),
            &[("Origin", "https://app.example:443")],
            body.as_bytes()
        )
        .await,
        200
    );
    assert_eq!(
        raw_post(
            adapter.addr(),
            &[("Origin", "http://localhost:6274")],
            body.as_bytes()
        )
        .await,
        403
    );
    assert_eq!(
        raw_post(
            adapter.addr(),
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
    assert_eq!(raw_post(adapter.addr(), &[], &big).await, 413);
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
    let addr = adapter.addr();
    let mut socket = tokio::net::TcpStream::connect(addr).await.unwrap();
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
        raw_post(adapter.addr(), &[("Host", "mcp.example")], body.as_bytes()).await,
        200
    );
    assert_eq!(
        raw_post(
            adapter.addr(),
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

/// Sends one request on a kept-alive connection and reads its whole answer
/// (a `Content-Length` body or a chunked SSE stream); returns the head.
async fn exchange(socket: &mut tokio::net::TcpStream, session: Option<&str>, body: &str) -> String {
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
        body.len()
    );
    if let Some(id) = session {
        head.push_str(&format!(
            "Mcp-Session-Id: {id}\r\nMcp-Protocol-Version: 2025-06-18\r\n"
        ));
    }
    // One write: the request itself never waits on Nagle.
    socket
        .write_all(format!("{head}\r\n{body}").as_bytes())
        .await
        .unwrap();
    let mut answer = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        let n = socket.read(&mut buf).await.unwrap();
        assert!(n > 0, "the adapter closed the connection mid-answer");
        answer.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&answer);
        let Some((head, rest)) = text.split_once("\r\n\r\n") else {
            continue;
        };
        let lower = head.to_ascii_lowercase();
        let length = lower
            .lines()
            .find_map(|l| l.strip_prefix("content-length: "))
            .and_then(|n| n.trim().parse::<usize>().ok());
        let done = match length {
            Some(n) => rest.len() >= n,
            // Chunked: the last chunk is empty.
            None => rest.ends_with("\r\n0\r\n\r\n"),
        };
        if done {
            return head.to_owned();
        }
    }
}

/// An MCP client whose TCP stack delays its ACKs (every Linux socket does,
/// out of quick-ack mode) must not wait for them: a tool's answer is an SSE
/// stream written in pieces, and with Nagle's algorithm on, each piece after
/// the first waited for the client's delayed ACK, 40 ms a call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_in_pieces_do_not_wait_for_delayed_acks() {
    let upstream = ScriptedUpstream::start().await;
    let adapter = HttpAdapter::start(&upstream.origin(), TOKEN_ENV, &[]).await;
    let mut socket = tokio::net::TcpStream::connect(adapter.addr())
        .await
        .unwrap();
    let head = exchange(&mut socket, None, &initialize_body()).await;
    let session = head
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(": ")?;
            name.eq_ignore_ascii_case("mcp-session-id").then_some(value)
        })
        .expect("initialize answered with a session id")
        .to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    exchange(&mut socket, Some(&session), &initialized.to_string()).await;
    // A Nagle wait is at least the 40 ms delayed-ACK timer, so it shows as
    // a median of 40 ms or more; a busy machine slows some calls, not half.
    let mut took = Vec::new();
    for id in 2..22 {
        let list = json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"});
        let started = std::time::Instant::now();
        let head = exchange(&mut socket, Some(&session), &list.to_string()).await;
        assert!(head.starts_with("HTTP/1.1 200"), "{head}");
        took.push(started.elapsed());
    }
    took.sort();
    assert!(
        took[took.len() / 2] < Duration::from_millis(35),
        "twenty tools/list calls took {took:?}"
    );
}
