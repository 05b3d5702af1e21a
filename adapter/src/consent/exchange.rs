//! The one token POST: `POST {core}/login/oauth/access_token`.
//!
//! Sent exactly once per spent state, to the fixed Core origin, with the
//! state's own verifier, through the upstream client (no retry, no redirect
//! followed: [`crate::upstream::Upstream::new`]). The answer's body never
//! leaves this file: only a token, or why there is none.

use serde::Deserialize;

use super::store::{Claim, Consent};
use crate::{
    config::is_header_token,
    edges::{Edge, Edges},
    upstream::{read_body, send_failure},
};

/// A token from a successful exchange.
pub struct Granted {
    /// The access token (never logged, never written anywhere).
    pub access_token: String,
    /// Its lifetime in seconds, when the Core said.
    pub expires_in: Option<u64>,
}

/// Why the exchange gave no token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The Core answered 400 (`invalid_grant` and the like).
    Rejected,
    /// Anything else: lost, timed out, redirected, another status, a malformed body.
    Upstream,
}

#[derive(Deserialize)]
struct TokenAnswer {
    access_token: String,
    token_type: String,
    #[serde(default)]
    expires_in: Option<u64>,
}

/// Exchanges `code` under `claim`'s verifier and redirect URI.
pub async fn exchange(consent: &Consent, claim: &Claim, code: &str) -> Result<Granted, Refusal> {
    let upstream = consent.upstream();
    let mut url = upstream.origin().url().clone();
    url.set_path("/login/oauth/access_token");
    let form = [
        ("grant_type", "authorization_code"),
        ("code", code),
        ("redirect_uri", claim.redirect_uri.as_str()),
        ("client_id", consent.client_id()),
        ("code_verifier", claim.verifier.as_str()),
    ];
    let sent = upstream
        .client()
        .post(url)
        .header(reqwest::header::ACCEPT, "application/json")
        .form(&form)
        .send()
        .await;
    let response = sent.map_err(|error| {
        let why = send_failure(&error);
        tracing::warn!(why, "consent: the token request failed");
        Refusal::Upstream
    })?;
    let status = response.status().as_u16();
    tracing::info!(status, "consent: the Core answered the token request");
    if status == 400 {
        return Err(Refusal::Rejected);
    }
    if status != 200 {
        return Err(Refusal::Upstream);
    }
    let answer = read_answer(response).await?;
    if !is_header_token(&answer.access_token) || !Edge::is_bearer_token_type(&answer.token_type) {
        tracing::warn!("consent: the token answer has no usable bearer token");
        return Err(Refusal::Upstream);
    }
    Ok(Granted {
        access_token: answer.access_token,
        expires_in: answer.expires_in,
    })
}

/// The token answer's JSON, read up to its bound.
async fn read_answer(response: reqwest::Response) -> Result<TokenAnswer, Refusal> {
    let body = read_body(response, Edge::token_answer_limit())
        .await
        .map_err(|why| {
            tracing::warn!(why, "consent: the token answer failed");
            Refusal::Upstream
        })?;
    serde_json::from_slice(&body).map_err(|_| {
        tracing::warn!("consent: the token answer is not the expected JSON");
        Refusal::Upstream
    })
}
