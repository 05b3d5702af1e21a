//! A scriptable upstream on real loopback HTTP.
//!
//! Each route (`METHOD /path`, query excluded) has a queue of canned actions;
//! every request is logged with its method, path, query, headers and body so
//! tests can count requests exactly. It speaks minimal HTTP/1.1 over a raw
//! socket so it can also misbehave: drop the connection, hang past the
//! adapter's timeout, or send malformed bytes.

use std::{
    collections::{HashMap, VecDeque},
    net::SocketAddr,
    sync::{Arc, Mutex},
    time::Duration,
};

use serde_json::Value;
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
};

/// What the upstream does with one request.
#[derive(Debug, Clone)]
pub enum Action {
    /// Answer with this status, headers and body, then close.
    Respond {
        status: u16,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    },
    /// Read the request, then close without answering (a lost response).
    Close,
    /// Read the request and stay silent for this long (past the adapter's timeout).
    Hang(Duration),
    /// Write these raw bytes as the whole answer, then close.
    Raw(Vec<u8>),
}

impl Action {
    /// A JSON answer.
    pub fn json(status: u16, body: &Value) -> Self {
        Action::Respond {
            status,
            headers: vec![("Content-Type".into(), "application/json".into())],
            body: serde_json::to_vec(body).unwrap(),
        }
    }

    /// A plain answer with a raw body.
    pub fn body(status: u16, body: &str) -> Self {
        Action::Respond {
            status,
            headers: vec![("Content-Type".into(), "application/json".into())],
            body: body.as_bytes().to_vec(),
        }
    }

    /// Adds a header to a `Respond`.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        if let Action::Respond { headers, .. } = &mut self {
            headers.push((name.into(), value.into()));
        }
        self
    }
}

/// One request as the upstream saw it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    pub query: Option<String>,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Recorded {
    /// The value of a header (names compared case-insensitively).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body parsed as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("request body is JSON")
    }
}

#[derive(Default)]
struct State {
    scripts: HashMap<String, VecDeque<Action>>,
    log: Vec<Recorded>,
}

/// The running upstream; it stops when dropped.
pub struct ScriptedUpstream {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for ScriptedUpstream {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl ScriptedUpstream {
    /// Binds 127.0.0.1:0 and starts serving.
    pub async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let state = Arc::new(Mutex::new(State::default()));
        let shared = state.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((socket, _)) = listener.accept().await else {
                    return;
                };
                tokio::spawn(serve(socket, shared.clone()));
            }
        });
        Self { addr, state, task }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn origin(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Queues `action` for the next request to `METHOD path`.
    pub fn script(&self, method: &str, path: &str, action: Action) {
        self.state
            .lock()
            .unwrap()
            .scripts
            .entry(format!("{method} {path}"))
            .or_default()
            .push_back(action);
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.state.lock().unwrap().log.clone()
    }

    /// How many requests arrived.
    pub fn count(&self) -> usize {
        self.state.lock().unwrap().log.len()
    }
}

async fn serve(mut socket: TcpStream, state: Arc<Mutex<State>>) {
    // Small writes go out at once: without this, delayed ACKs add tens of
    // milliseconds to every request (the fuzz suite makes thousands).
    let _ = socket.set_nodelay(true);
    let Some(request) = read_request(&mut socket).await else {
        return;
    };
    let action = {
        let mut state = state.lock().unwrap();
        let key = format!("{} {}", request.method, request.path);
        let action = state.scripts.get_mut(&key).and_then(VecDeque::pop_front);
        state.log.push(request);
        action
    };
    let action = action.unwrap_or_else(|| Action::body(418, r#"{"message":"unscripted request"}"#));
    match action {
        Action::Respond {
            status,
            headers,
            body,
        } => {
            let mut head = format!(
                "HTTP/1.1 {status} Status\r\nContent-Length: {}\r\nConnection: close\r\n",
                body.len()
            );
            for (name, value) in headers {
                head.push_str(&format!("{name}: {value}\r\n"));
            }
            head.push_str("\r\n");
            let mut answer = head.into_bytes();
            answer.extend_from_slice(&body);
            let _ = socket.write_all(&answer).await;
        }
        Action::Close => {}
        Action::Hang(duration) => tokio::time::sleep(duration).await,
        Action::Raw(bytes) => {
            let _ = socket.write_all(&bytes).await;
        }
    }
    let _ = socket.shutdown().await;
}

async fn read_request(socket: &mut TcpStream) -> Option<Recorded> {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 65536];
    let head_end = loop {
        if let Some(i) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8(buffer[..head_end].to_vec()).ok()?;
    let mut lines = head.split("\r\n");
    let mut start = lines.next()?.split(' ');
    let method = start.next()?.to_owned();
    let target = start.next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = buffer[head_end + 4..].to_vec();
    while body.len() < length {
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    let (path, query) = match target.split_once('?') {
        Some((p, q)) => (p.to_owned(), Some(q.to_owned())),
        None => (target, None),
    };
    Some(Recorded {
        method,
        path,
        query,
        headers,
        body,
    })
}
