//! `GET /mcp/oauth/callback?code&state` (or `?error=…&state`).
//!
//! It needs no credential: its authenticity is the state. A state that does
//! not unlock anything gets a 400 page and nothing is exchanged. A valid one
//! is spent before anything else, then exactly one token POST is made, and
//! only a token resumes the parked call. The pages are fixed text: no query
//! value, upstream byte or secret is ever echoed.

use std::sync::Arc;

use axum::{
    extract::{RawQuery, State},
    http::{StatusCode, header},
    response::{IntoResponse, Response},
};

use super::{
    exchange::{Granted, Refusal, exchange},
    store::{Claim, Consent, Outcome},
};
use crate::edges::{Edge, Edges};

/// The page a browser sees; its status and one sentence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Page {
    /// The token is kept; the call resumes.
    Done,
    /// The person declined at the Core.
    Declined,
    /// Missing, unknown, spent, altered or expired state, or the session ended.
    BadState,
    /// A valid state without a usable code, or the Core refused the code (400).
    Rejected,
    /// The token request failed otherwise (lost, timeout, odd status or body).
    Upstream,
}

impl Page {
    fn status(self) -> StatusCode {
        match self {
            Page::Done | Page::Declined => StatusCode::OK,
            Page::BadState | Page::Rejected => StatusCode::BAD_REQUEST,
            Page::Upstream => StatusCode::BAD_GATEWAY,
        }
    }

    fn text(self) -> (&'static str, &'static str) {
        match self {
            Page::Done => (
                "Signed in",
                "awg-mcp has your consent. You can close this window and return to your MCP client.",
            ),
            Page::Declined => (
                "Consent declined",
                "You declined; awg-mcp received no access. You can close this window.",
            ),
            Page::BadState => (
                "Link not valid",
                "This sign-in link is unknown, already used or expired, or its MCP session has ended. Start again from your MCP client.",
            ),
            Page::Rejected => (
                "Sign-in failed",
                "The Core did not accept this sign-in. Start again from your MCP client.",
            ),
            Page::Upstream => (
                "Sign-in failed",
                "awg-mcp could not complete the sign-in with the Core. Start again from your MCP client.",
            ),
        }
    }
}

impl IntoResponse for Page {
    fn into_response(self) -> Response {
        let (title, sentence) = self.text();
        let html = format!(
            "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title} — awg-mcp</title></head>\n<body><h1>{title}</h1><p>{sentence}</p></body></html>\n"
        );
        (
            self.status(),
            [
                (header::CONTENT_TYPE, "text/html; charset=utf-8"),
                // The URL carried a code and a state: keep both out of caches and referrers.
                (header::CACHE_CONTROL, "no-store"),
                (header::REFERRER_POLICY, "no-referrer"),
            ],
            html,
        )
            .into_response()
    }
}

/// The handler.
pub async fn oauth_callback(
    State(consent): State<Arc<Consent>>,
    RawQuery(query): RawQuery,
) -> Response {
    handle(&consent, query.as_deref().unwrap_or(""))
        .await
        .into_response()
}

/// The value of a parameter given exactly once and non-empty.
fn single(pairs: &[(String, String)], name: &str) -> Option<String> {
    let mut found = pairs.iter().filter(|(k, _)| k == name);
    match (found.next(), found.next()) {
        (Some((_, v)), None) if !v.is_empty() => Some(v.clone()),
        _ => None,
    }
}

async fn handle(consent: &Consent, query: &str) -> Page {
    let pairs: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes())
        .into_owned()
        .collect();
    let Some(state) = single(&pairs, "state") else {
        tracing::warn!("consent: callback without a usable state refused");
        return Page::BadState;
    };
    let Some(mut claim) = consent.claim(&state) else {
        tracing::warn!("consent: callback with an unknown, spent or expired state refused");
        return Page::BadState;
    };
    if pairs.iter().any(|(k, _)| k == "error") {
        let denied = single(&pairs, "error").as_deref() == Some("access_denied");
        return if Edge::declined(denied) {
            tracing::info!("consent: the person declined at the Core");
            wake(&mut claim, Outcome::Denied);
            Page::Declined
        } else {
            tracing::warn!("consent: the Core answered the authorization with an error");
            wake(&mut claim, Outcome::Failed);
            Page::Rejected
        };
    }
    let Some(code) = single(&pairs, "code") else {
        tracing::warn!("consent: callback with a valid state but no usable code");
        wake(&mut claim, Outcome::Failed);
        return Page::Rejected;
    };
    redeem(consent, claim, &code).await
}

/// Exchanges `code` under `claim`, keeps the token for the claim's session
/// and wakes its parked call.
async fn redeem(consent: &Consent, mut claim: Claim, code: &str) -> Page {
    Edge::before_exchange(&mut claim);
    match exchange(consent, &claim, code).await {
        Ok(granted) => keep(consent, claim, &granted),
        Err(refusal) => {
            wake(&mut claim, Outcome::Failed);
            match refusal {
                Refusal::Rejected => Page::Rejected,
                Refusal::Upstream => Page::Upstream,
            }
        }
    }
}

/// Keeps a granted token for the claim's session (in memory only) and wakes
/// its parked call; a session that ended during the exchange drops it.
fn keep(consent: &Consent, mut claim: Claim, granted: &Granted) -> Page {
    if !consent.store_token(&claim.session, &granted.access_token, granted.expires_in) {
        tracing::warn!("consent: the session ended during the exchange; token dropped");
        return Page::BadState;
    }
    Edge::token_kept(&granted.access_token);
    tracing::info!("consent: token kept in memory for its session");
    wake(&mut claim, Outcome::Granted);
    Page::Done
}

/// Wakes the claim's parked call, if one waits.
fn wake(claim: &mut Claim, outcome: Outcome) {
    if let Some(waiter) = claim.waiter.take() {
        let _ = waiter.send(outcome);
    }
}
