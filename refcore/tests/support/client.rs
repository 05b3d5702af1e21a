//! A plain HTTP client for API calls: no cookies, no redirects followed.

use std::time::Duration;

use base64::Engine;
use reqwest::Method;
use reqwest::header::HeaderMap;
use serde_json::Value;

/// How a request authenticates.
#[derive(Debug, Clone)]
pub enum Auth {
    /// No `Authorization` header.
    None,
    /// `Authorization: token T`.
    Token(String),
    /// `Authorization: Bearer T`.
    Bearer(String),
    /// `Authorization: Basic base64(login:secret)`.
    Basic(String, String),
    /// A raw header value.
    Raw(String),
}

impl Auth {
    fn header(&self) -> Option<String> {
        match self {
            Auth::None => None,
            Auth::Token(t) => Some(format!("token {t}")),
            Auth::Bearer(t) => Some(format!("Bearer {t}")),
            Auth::Basic(l, s) => Some(format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(format!("{l}:{s}"))
            )),
            Auth::Raw(v) => Some(v.clone()),
        }
    }
}

/// A response read whole.
#[derive(Debug, Clone)]
pub struct Resp {
    /// Status code.
    pub status: u16,
    /// Headers.
    pub headers: HeaderMap,
    /// Body text.
    pub text: String,
}

impl Resp {
    /// Sends `req` and reads the whole answer; `what` names the request in
    /// errors.
    pub async fn read(req: reqwest::RequestBuilder, what: &str) -> Result<Resp, String> {
        let resp = req.send().await.map_err(|e| format!("{what}: {e}"))?;
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let text = resp
            .text()
            .await
            .map_err(|e| format!("{what}: body: {e}"))?;
        Ok(Resp {
            status,
            headers,
            text,
        })
    }

    /// The body as JSON (`Null` if it is not JSON).
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or(Value::Null)
    }

    /// Fails unless the status is `expected`; the message shows the body.
    pub fn expect(self, expected: u16, what: &str) -> Result<Resp, String> {
        if self.status == expected {
            Ok(self)
        } else {
            Err(format!(
                "{what}: expected {expected}, got {} with body {}",
                self.status,
                self.text.chars().take(400).collect::<String>()
            ))
        }
    }

    /// A header as text.
    pub fn header(&self, name: &str) -> Option<String> {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    }
}

/// Talks to one Core.
#[derive(Clone)]
pub struct Api {
    http: reqwest::Client,
    /// Base URL.
    pub base: String,
}

impl Api {
    /// A client for `base`.
    pub fn new(base: &str) -> Self {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(60))
            .build()
            .expect("reqwest client");
        Api {
            http,
            base: base.to_string(),
        }
    }

    /// Sends a request with an optional JSON body.
    pub async fn call(
        &self,
        method: Method,
        path: &str,
        auth: &Auth,
        body: Option<&Value>,
    ) -> Result<Resp, String> {
        let mut req = self
            .http
            .request(method.clone(), format!("{}{path}", self.base));
        if let Some(h) = auth.header() {
            req = req.header("authorization", h);
        }
        if let Some(body) = body {
            req = req
                .header("content-type", "application/json")
                .body(serde_json::to_vec(body).map_err(|e| e.to_string())?);
        }
        Resp::read(req, &format!("{method} {path}")).await
    }

    /// Sends raw bytes with an optional content type.
    pub async fn raw(
        &self,
        method: Method,
        path: &str,
        auth: &Auth,
        content_type: Option<&str>,
        body: Vec<u8>,
    ) -> Result<Resp, String> {
        let mut req = self
            .http
            .request(method.clone(), format!("{}{path}", self.base));
        if let Some(h) = auth.header() {
            req = req.header("authorization", h);
        }
        if let Some(ct) = content_type {
            req = req.header("content-type", ct);
        }
        Resp::read(req.body(body), &format!("{method} {path}")).await
    }

    /// `GET`.
    pub async fn get(&self, path: &str, auth: &Auth) -> Result<Resp, String> {
        self.call(Method::GET, path, auth, None).await
    }

    /// `POST` with JSON.
    pub async fn post(&self, path: &str, auth: &Auth, body: &Value) -> Result<Resp, String> {
        self.call(Method::POST, path, auth, Some(body)).await
    }
}
