//! The hostile modes that rewrite answers: one middleware around the
//! unchanged application. The health route is left alone by every mode but
//! `500-everywhere`, so a stack starts and its trials meet the misbehaviour.

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::{ACTIVE, Mode};

/// Nesting of the deep JSON and HTML answers.
const DEEP: usize = 100_000;

/// Length of a huge `_csrf` value.
const HUGE_CSRF: usize = 1024 * 1024;

/// Size of the huge list.
const HUGE: usize = 64 * 1024 * 1024;

/// Rewrites the answer of `request` as the active mode says.
pub(super) async fn misbehave(request: Request, next: Next) -> Response {
    let Some(&mode) = ACTIVE.get() else {
        return next.run(request).await;
    };
    let path = request.uri().path().to_owned();
    let is_get = request.method() == axum::http::Method::GET;
    if mode == Mode::Status500 {
        return (StatusCode::INTERNAL_SERVER_ERROR, "hostile: 500 everywhere").into_response();
    }
    if path == "/api/healthz" {
        return next.run(request).await;
    }
    // A Core that stops answering once it has said who it is: every
    // request but health and version is left unanswered.
    if mode == Mode::NeverAnswers && path != "/api/v1/version" {
        return std::future::pending().await;
    }
    let is_list = is_get && path == "/api/v1/agent-work-grants";
    match mode {
        Mode::HugeList if is_list => return json(huge_list()),
        Mode::EndlessList if is_list => return endless_list(),
        _ => {}
    }
    let response = next.run(request).await;
    let (mut parts, body) = response.into_parts();
    let content_type = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let (is_json, is_html) = (
        content_type.starts_with("application/json"),
        content_type.starts_with("text/html"),
    );
    let headers = &mut parts.headers;
    match mode {
        Mode::HugeHeaders => {
            let pad = HeaderValue::from_str(&"x".repeat(1024 * 1024)).expect("ascii");
            headers.insert("x-hostile-pad", pad);
        }
        Mode::ManyCookies => {
            for i in 0..10_000 {
                let cookie =
                    HeaderValue::from_str(&format!("hostile{i}=x; Path=/")).expect("ascii");
                headers.append(header::SET_COOKIE, cookie);
            }
        }
        Mode::HugeLink if is_list => {
            let link: Vec<String> = (1..=100_000)
                .map(|i| {
                    format!("<http://127.0.0.1/api/v1/agent-work-grants?page={i}>; rel=\"item\"")
                })
                .collect();
            headers.insert(
                header::LINK,
                HeaderValue::from_str(&link.join(", ")).expect("ascii"),
            );
        }
        _ => {}
    }
    if mode == Mode::DripList && is_list {
        parts.headers.remove(header::CONTENT_LENGTH);
        return Response::from_parts(parts, drip(body));
    }
    let rewrite = match mode {
        Mode::HugeCsrf => is_html,
        Mode::DeepJsonError => is_json && parts.status.as_u16() >= 400,
        Mode::DeepHtml => is_html && path.contains("/agent-work-grants/"),
        Mode::EveryIssueExists => {
            parts.status == StatusCode::NOT_FOUND && is_get && issue_index(&path).is_some()
        }
        Mode::InvalidUtf8Json => is_json,
        Mode::InvalidUtf8Html => is_html,
        _ => false,
    };
    if !rewrite {
        return Response::from_parts(parts, body);
    }
    let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    let new: Vec<u8> = match mode {
        Mode::DeepJsonError => format!(
            "{{\"message\":\"hostile\",\"detail\":{}{}}}",
            "[".repeat(DEEP),
            "]".repeat(DEEP)
        )
        .into_bytes(),
        Mode::DeepHtml => {
            let mut page = "<div>".repeat(DEEP).into_bytes();
            page.extend_from_slice(&bytes);
            page.extend_from_slice("</div>".repeat(DEEP).as_bytes());
            page
        }
        Mode::EveryIssueExists => {
            // An Issue for every index: the one asked for, well formed.
            let index = issue_index(&path).unwrap_or(1);
            parts.status = StatusCode::OK;
            parts.headers.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            serde_json::json!({
                "id": 1_000_000 + index, "index": index, "title": "hostile", "body": "",
                "user": {"id": 1, "login": "admin"}, "html_url": "http://127.0.0.1/",
                "repository_id": 1, "agent_work_grant": null,
            })
            .to_string()
            .into_bytes()
        }
        Mode::InvalidUtf8Json => {
            let text = String::from_utf8_lossy(&bytes);
            match text.find("\":\"") {
                Some(at) => {
                    let mut out = bytes[..at + 3].to_vec();
                    out.push(0xff);
                    out.extend_from_slice(&bytes[at + 3..]);
                    out
                }
                None => bytes.to_vec(),
            }
        }
        Mode::HugeCsrf => huge_csrf(&bytes),
        Mode::InvalidUtf8Html => {
            let mut out = b"<!-- \xff -->".to_vec();
            out.extend_from_slice(&bytes);
            out
        }
        _ => bytes.to_vec(),
    };
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(new))
}

/// `n` of `/api/v1/repos/{owner}/{repo}/issues/{n}`.
fn issue_index(path: &str) -> Option<i64> {
    let rest = path.strip_prefix("/api/v1/repos/")?;
    let parts: Vec<&str> = rest.split('/').collect();
    match parts.as_slice() {
        [_, _, "issues", n] => n.parse().ok(),
        _ => None,
    }
}

fn json(body: Vec<u8>) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// A JSON array of zeros, [`HUGE`] bytes long.
fn huge_list() -> Vec<u8> {
    let mut body = Vec::with_capacity(HUGE + 2);
    body.push(b'[');
    while body.len() < HUGE {
        body.extend_from_slice(b"0,");
    }
    body.extend_from_slice(b"0]");
    body
}

/// A chunked JSON array that never ends.
fn endless_list() -> Response {
    let chunk = bytes::Bytes::from("0,".repeat(32 * 1024));
    let head =
        futures::stream::once(async { Ok::<_, std::io::Error>(bytes::Bytes::from_static(b"[")) });
    let rest = futures::stream::repeat_with(move || Ok(chunk.clone()));
    let body = Body::from_stream(futures::StreamExt::chain(head, rest));
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// `page` with every `_csrf` value made [`HUGE_CSRF`] bytes long: the value
/// repeated (so each stays distinct), which the Core then refuses.
fn huge_csrf(page: &[u8]) -> Vec<u8> {
    const FIELD: &str = "name=\"_csrf\" value=\"";
    let page = String::from_utf8_lossy(page);
    let mut out = String::with_capacity(page.len());
    let mut rest: &str = &page;
    while let Some(at) = rest.find(FIELD) {
        let start = at + FIELD.len();
        let len = rest[start..].find('"').unwrap_or(0);
        let value = &rest[start..start + len];
        out.push_str(&rest[..start]);
        if !value.is_empty() {
            out.push_str(&value.repeat(HUGE_CSRF / value.len() + 1)[..HUGE_CSRF]);
        }
        rest = &rest[start + len..];
    }
    out.push_str(rest);
    out.into_bytes()
}

/// `body` sent one byte a second, its headers at once.
fn drip(body: Body) -> Body {
    let bytes = futures::stream::once(axum::body::to_bytes(body, usize::MAX));
    let drops = futures::StreamExt::flat_map(bytes, |whole| {
        let whole = whole.unwrap_or_default();
        futures::stream::iter((0..whole.len()).map(move |i| whole.slice(i..i + 1)))
    });
    let paced = futures::StreamExt::then(drops, |byte| async move {
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        Ok::<_, std::io::Error>(byte)
    });
    Body::from_stream(paced)
}
