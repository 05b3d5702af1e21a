//! What the consent store (`store`) and the edges (`crate::edges`) share:
//! the open states, the per-session tokens and the live sessions, the
//! authorize parameters of a state, what a callback's state unlocks and how
//! a parked call is woken, and the token answer's bound (`exchange`). It
//! names nothing else of the crate, so `edges` takes these without leading
//! back into the rules that ask it. Nothing in this file logs or formats a
//! secret.

use std::{
    collections::{HashMap, HashSet},
    time::Instant,
};

use tokio::sync::oneshot;

/// Largest token answer read.
pub(crate) const MAX_BODY_BYTES: usize = 64 * 1024;

/// How a parked call is woken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The exchange succeeded and the token is kept for the session: run
    /// with the session's token (the call reads it from the store, so it
    /// can only ever run with a token that was actually stored).
    Granted,
    /// The person declined at the Core (`error=access_denied`).
    Denied,
    /// The callback was not usable or the exchange failed.
    Failed,
}

/// One open state.
pub(crate) struct Pending {
    pub(crate) session: String,
    pub(crate) verifier: String,
    pub(crate) redirect_uri: String,
    pub(crate) expires: Instant,
    pub(crate) minted: Instant,
    pub(crate) waiter: Option<oneshot::Sender<Outcome>>,
}

/// A session's consented token.
#[derive(Clone)]
pub(crate) struct Token {
    pub(crate) secret: String,
    pub(crate) expires: Option<Instant>,
}

/// The open states, the tokens and the live sessions.
#[derive(Default)]
pub(crate) struct Inner {
    pub(crate) states: HashMap<String, Pending>,
    pub(crate) tokens: HashMap<String, Token>,
    /// MCP sessions created and not ended: only these mint states and keep tokens.
    pub(crate) live: HashSet<String>,
}

impl Inner {
    /// Keeps `token` for `session`; `false` when the session is not live.
    pub(crate) fn keep(&mut self, session: &str, token: Token) -> bool {
        if !self.live.contains(session) {
            return false;
        }
        self.tokens.insert(session.to_owned(), token);
        true
    }

    /// Forgets `session`: its token, its states, and the session itself.
    pub(crate) fn forget(&mut self, session: &str) {
        self.tokens.remove(session);
        self.states.retain(|_, p| p.session != session);
        self.live.remove(session);
    }
}

/// A state's own authorize parameters.
pub(crate) struct Authorization {
    /// The PKCE verifier the token POST sends.
    pub(crate) verifier: String,
    /// `code_challenge_method`.
    pub(crate) method: &'static str,
    /// `code_challenge`.
    pub(crate) challenge: String,
    /// Where the Core sends the browser back.
    pub(crate) redirect_uri: String,
}

/// What a callback's state unlocked.
pub struct Claim {
    /// The session the state was bound to.
    pub session: String,
    /// That state's verifier.
    pub verifier: String,
    /// The redirect URI the authorize URL carried (the token POST repeats it).
    pub redirect_uri: String,
    /// The parked call, if one waits.
    pub waiter: Option<oneshot::Sender<Outcome>>,
}
