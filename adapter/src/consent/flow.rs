//! A tool call without a credential, in consent mode.
//!
//! The call's own input has already passed validation (tools resolve the
//! credential last). The session's consented token is used if there is one;
//! otherwise a state is minted and the authorize URL delivered: by URL-mode
//! elicitation to a client that declared it (the call parks until the
//! callback resumes it, the person declines, or the deadline), else as the
//! tool error `auth_required`, whose state stays valid for the next call.

use std::sync::Arc;

use rmcp::{
    RoleServer,
    model::{ElicitRequestParams, ElicitationAction},
    service::Peer,
};
use tokio_util::sync::CancellationToken;

use super::{
    pkce,
    store::{Consent, Outcome},
};
use crate::{
    config::Credential,
    edges::{Edge, Edges},
    error::{ErrorCode, ToolError},
};

/// What the adapter says with the URL, as `auth_required` and in the elicitation.
const PROSE: &str = "consent needed: open this URL in a browser, sign in to the Core and approve; the token stays in this MCP session's memory. Without URL elicitation, call the tool again afterwards:";

/// The elicitation's message (the URL travels in its own field).
const ELICIT_MESSAGE: &str = "awg-mcp needs your consent at the Core: open the link, sign in and approve. This call continues when you are done.";

/// Everything one call needs to ask for consent.
#[derive(Debug, Clone)]
pub struct ConsentCall {
    /// The process's consent state.
    pub consent: Arc<Consent>,
    /// The MCP session this call belongs to (`Mcp-Session-Id`).
    pub session: String,
    /// The MCP request's `Host` (read only by the fault `consent-redirect-from-host`).
    pub host: Option<String>,
    /// The client, for the elicitation request.
    pub peer: Peer<RoleServer>,
    /// Cancelled when the client cancels the call.
    pub cancelled: CancellationToken,
}

impl ConsentCall {
    /// The credential this call runs with, or why it ends here. `Ok(None)`
    /// when consent has nothing to give: the session is not live (it ended),
    /// or no token was stored for it. The call is then refused like any call
    /// without a credential.
    pub async fn credential(&self) -> Result<Option<Credential>, ToolError> {
        if let Some(token) = self.consent.token_for(&self.session) {
            return Ok(Some(Credential::Token(token)));
        }
        let modes = self.peer.supported_elicitation_modes();
        let url_mode = Edge::elicits_url(&modes);
        let Some(minted) = self
            .consent
            .mint(&self.session, self.host.as_deref(), url_mode)
        else {
            tracing::info!("consent: the session is not live; nothing minted");
            return Ok(None);
        };
        let Some(mut waiter) = minted.waiter else {
            tracing::info!("consent: state minted; auth_required with the URL");
            return Err(ToolError::auth_required(PROSE, &minted.url));
        };
        tracing::info!("consent: state minted; URL elicitation sent, call parked");
        let deadline = tokio::time::Instant::now() + self.consent.timeout();
        let elicit = self
            .peer
            .create_elicitation(ElicitRequestParams::UrlElicitationParams {
                meta: None,
                message: ELICIT_MESSAGE.to_owned(),
                url: minted.url.clone(),
                elicitation_id: pkce::random_secret(),
            });
        tokio::pin!(elicit);
        let mut answered = false;
        let outcome = loop {
            tokio::select! {
                answer = &mut elicit, if !answered => match answer {
                    Ok(result) if result.action == ElicitationAction::Accept => answered = true,
                    Ok(_) => {
                        tracing::info!("consent: the client declined the elicitation");
                        self.consent.withdraw(&minted.state);
                        break Some(Outcome::Denied);
                    }
                    Err(_) => {
                        // The client could not take the request after all:
                        // fall back to the URL in the error, state kept.
                        tracing::warn!("consent: the elicitation request failed; auth_required instead");
                        self.consent.unpark(&minted.state);
                        return Err(ToolError::auth_required(PROSE, &minted.url));
                    }
                },
                woken = &mut waiter => break woken.ok(),
                () = tokio::time::sleep_until(deadline) => {
                    tracing::info!("consent: no consent before the deadline");
                    self.consent.withdraw(&minted.state);
                    break None;
                }
                () = self.cancelled.cancelled() => {
                    // The client withdrew the call: its own "no", like an
                    // elicitation answered `cancel`, and no deadline passed.
                    tracing::info!("consent: the client cancelled the parked call");
                    self.consent.withdraw(&minted.state);
                    break Some(Outcome::Denied);
                }
            }
        };
        let (code, message) = match outcome {
            Some(Outcome::Granted) => {
                return Ok(self.consent.token_for(&self.session).map(Credential::Token));
            }
            Some(Outcome::Denied) => (
                ErrorCode::ConsentDenied,
                "consent denied: the person or the client declined; nothing was run.",
            ),
            Some(Outcome::Failed) => (
                ErrorCode::ConsentFailed,
                "consent failed: the Core did not exchange the sign-in for a token; nothing was run. Call the tool again to start over.",
            ),
            // The deadline passed, or the state went without a word (it
            // expired, or the session ended).
            None => (
                ErrorCode::ConsentTimeout,
                "consent timed out: no consent arrived in time; nothing was run. Call the tool again to start over.",
            ),
        };
        Err(ToolError::new(code, None, message))
    }
}
