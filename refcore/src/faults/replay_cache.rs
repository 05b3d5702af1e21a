//! A response cache in front of submit: only the `replay-served-from-cache`
//! fault installs it (`faults::answers`). It models a Core that answers identical requests
//! (same credential header, path and bytes) from memory before anything is
//! rechecked, so a deleted token still gets its stored receipt. The real
//! rule (spec §10): every replay is authenticated and checked again, and a
//! deleted or revoked token is 401.

use std::collections::BTreeMap;
use std::sync::Mutex;

use axum::body::{Body, Bytes, to_bytes};
use axum::extract::Request;
use axum::http::header::{AUTHORIZATION, CONTENT_TYPE};
use axum::http::{HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

use crate::extract::BODY_LIMIT;

/// Successful submit answers by the SHA-256 of credential, path and body.
static ANSWERS: Mutex<BTreeMap<[u8; 32], Bytes>> = Mutex::new(BTreeMap::new());

/// Serves an identical submit from the cache, or runs it and caches a
/// success.
pub(super) async fn serve(request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    let Ok(bytes) = to_bytes(body, BODY_LIMIT).await else {
        return StatusCode::PAYLOAD_TOO_LARGE.into_response();
    };
    let mut hasher = Sha256::new();
    let authorization = parts.headers.get(AUTHORIZATION).map(HeaderValue::as_bytes);
    hasher.update(authorization.unwrap_or_default());
    hasher.update([0]);
    hasher.update(parts.uri.path().as_bytes());
    hasher.update([0]);
    hasher.update(&bytes);
    let key: [u8; 32] = hasher.finalize().into();
    let cached = ANSWERS.lock().ok().and_then(|m| m.get(&key).cloned());
    if let Some(answer) = cached {
        return (StatusCode::OK, [(CONTENT_TYPE, "application/json")], answer).into_response();
    }
    let response = next
        .run(Request::from_parts(parts, Body::from(bytes)))
        .await;
    if !response.status().is_success() {
        return response;
    }
    let (parts, body) = response.into_parts();
    let Ok(answer) = to_bytes(body, usize::MAX).await else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    if let Ok(mut map) = ANSWERS.lock() {
        map.insert(key, answer.clone());
    }
    Response::from_parts(parts, Body::from(answer))
}
