//! The states and the per-session tokens, behind one lock.
//!
//! A state is the only thing that ties a browser's callback to an MCP
//! session, so it is random (256 bits), spent on first use, expires with the
//! consent timeout, and carries its own fresh PKCE verifier. A token lives
//! here, in memory, for the one session its state belonged to, and goes when
//! that session ends. Nothing in this file logs or formats a secret.

use std::{
    sync::{Arc, Mutex, MutexGuard},
    time::{Duration, Instant},
};

use percent_encoding::utf8_percent_encode;
use tokio::sync::oneshot;

use super::model::{Authorization, Inner, Pending, Token};
pub use super::model::{Claim, Outcome};
use super::{SCOPE, pkce};
use crate::{
    config::ConsentConfig,
    edges::{Edge, Edges},
    upstream::{UNRESERVED, Upstream},
};

/// At most this many open states per session; minting more forgets the oldest.
const MAX_STATES_PER_SESSION: usize = 8;

impl Pending {
    /// Whether this state has outlived the consent timeout at `now`: the one
    /// expiry rule, for spending a state and for clearing old ones.
    fn expired(&self, now: Instant) -> bool {
        Edge::state_expired(now >= self.expires)
    }
}

/// A freshly minted state, as the tool call sees it.
pub struct Minted {
    /// The state itself (to withdraw it later).
    pub state: String,
    /// The authorize URL on the fixed Core origin.
    pub url: String,
    /// Where a parked call waits, when it asked to park.
    pub waiter: Option<oneshot::Receiver<Outcome>>,
}

/// Consent mode's shared state: one per process, shared by all sessions.
pub struct Consent {
    config: ConsentConfig,
    upstream: Upstream,
    inner: Mutex<Inner>,
}

impl std::fmt::Debug for Consent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Consent")
            .field("client_id", &self.config.client_id)
            .field("public_url", &self.config.public_url)
            .finish_non_exhaustive()
    }
}

impl Consent {
    /// Consent mode for `config`. The authorize URL and the token POST go
    /// to `upstream`'s fixed origin, the POST through its client (no
    /// redirect followed, never retried, the upstream timeout).
    pub fn new(config: ConsentConfig, upstream: Upstream) -> Arc<Self> {
        Arc::new(Self {
            config,
            upstream,
            inner: Mutex::new(Inner::default()),
        })
    }

    /// The consent timeout (state lifetime and parking deadline).
    pub fn timeout(&self) -> Duration {
        self.config.timeout
    }

    pub(super) fn upstream(&self) -> &Upstream {
        &self.upstream
    }

    pub(super) fn client_id(&self) -> &str {
        &self.config.client_id
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic elsewhere while holding the lock leaves consistent maps.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The session's consented token, unless it has expired.
    pub fn token_for(&self, session: &str) -> Option<String> {
        let mut inner = self.lock();
        let token = inner.tokens.get(session)?;
        if token.expires.is_some_and(|e| Instant::now() >= e) {
            inner.tokens.remove(session);
            return None;
        }
        Some(token.secret.clone())
    }

    /// A new MCP session: from now until [`Consent::end_session`] it may
    /// mint states and keep a token. Never again after it ended.
    pub fn begin_session(&self, session: &str) {
        self.lock().live.insert(session.to_owned());
    }

    /// Mints a state for `session` with a fresh verifier and builds the
    /// authorize URL; `None` when the session is not live (never created, or
    /// ended). `park` gives the caller a receiver to wait on.
    /// `host` is the MCP request's `Host`, used only by a fault.
    pub fn mint(&self, session: &str, host: Option<&str>, park: bool) -> Option<Minted> {
        let state = pkce::random_secret();
        let (url, verifier, redirect_uri) = self.authorize_url(&state, host);
        let (sender, receiver) = if park {
            let (s, r) = oneshot::channel();
            (Some(s), Some(r))
        } else {
            (None, None)
        };
        let now = Instant::now();
        let mut inner = self.lock();
        if !inner.live.contains(session) {
            return None;
        }
        inner.states.retain(|_, p| !p.expired(now));
        let mut own: Vec<(Instant, String)> = inner
            .states
            .iter()
            .filter(|(_, p)| Edge::shares_cap(p.session == session))
            .map(|(s, p)| (p.minted, s.clone()))
            .collect();
        own.sort();
        while own.len() >= MAX_STATES_PER_SESSION {
            let (_, oldest) = own.remove(0);
            inner.states.remove(&oldest);
        }
        inner.states.insert(
            state.clone(),
            Pending {
                session: session.to_owned(),
                verifier,
                redirect_uri,
                expires: now + self.config.timeout,
                minted: now,
                waiter: sender,
            },
        );
        Some(Minted {
            state,
            url,
            waiter: receiver,
        })
    }

    /// The authorize URL for `state`, with the verifier and the redirect URI
    /// that its token POST repeats.
    fn authorize_url(&self, state: &str, host: Option<&str>) -> (String, String, String) {
        let verifier = pkce::random_secret();
        let fresh = Authorization {
            challenge: pkce::s256(&verifier),
            method: "S256",
            verifier,
            redirect_uri: self.config.redirect_uri(),
        };
        let Authorization {
            verifier,
            method,
            challenge,
            redirect_uri,
        } = Edge::authorization(fresh, host);
        let enc = |s: &str| utf8_percent_encode(s, UNRESERVED).to_string();
        let url = format!(
            "{core}login/oauth/authorize?response_type=code&client_id={client}&redirect_uri={redirect}&state={state}&code_challenge={challenge}&code_challenge_method={method}&scope={scope}",
            core = self.upstream.origin().url(),
            client = enc(&self.config.client_id),
            redirect = enc(&redirect_uri),
            state = enc(state),
            challenge = enc(&challenge),
            scope = enc(SCOPE),
        );
        (url, verifier, redirect_uri)
    }

    /// Forgets a state (a declined, timed-out or cancelled parked call).
    pub fn withdraw(&self, state: &str) {
        self.lock().states.remove(state);
    }

    /// Keeps a state but wakes nobody with it: its callback will store the
    /// token for the session, for the client's next call.
    pub fn unpark(&self, state: &str) {
        if let Some(pending) = self.lock().states.get_mut(state) {
            pending.waiter = None;
        }
    }

    /// Spends `state`: `None` if it is unknown, spent, expired or its session
    /// has ended (all the same to the caller: 400, nothing exchanged).
    pub fn claim(&self, state: &str) -> Option<Claim> {
        let mut inner = self.lock();
        let pending = inner.states.get_mut(state)?;
        if pending.expired(Instant::now()) {
            inner.states.remove(state);
            return None;
        }
        let pending = Edge::spend(&mut inner.states, state)?;
        Some(Claim {
            session: pending.session,
            verifier: pending.verifier,
            redirect_uri: pending.redirect_uri,
            waiter: pending.waiter,
        })
    }

    /// Keeps `secret` for `session`. `false` when the session ended during
    /// the exchange: the token is dropped.
    pub fn store_token(&self, session: &str, secret: &str, expires_in: Option<u64>) -> bool {
        let expires = expires_in
            .filter(|s| *s > 0)
            .map(|s| Instant::now() + Duration::from_secs(s));
        let token = Token {
            secret: secret.to_owned(),
            expires,
        };
        Edge::keep_token(&mut self.lock(), session, token)
    }

    /// The MCP session ended: its token and states go, parked calls wake
    /// (their receivers close).
    pub fn end_session(&self, session: &str) {
        Edge::session_ended(&mut self.lock(), session);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn consent() -> Arc<Consent> {
        let origin = |url| crate::config::CoreOrigin::parse(url).unwrap();
        let config = ConsentConfig {
            client_id: "client".to_owned(),
            public_url: origin("http://127.0.0.1:9"),
            timeout: Duration::from_secs(60),
        };
        let upstream = Upstream::new(origin("http://127.0.0.1:8"), Duration::from_secs(1));
        Consent::new(config, upstream.unwrap())
    }

    /// Consents `session` through one state: begin, mint, spend, keep the token.
    fn consented(consent: &Consent, session: &str, token: &str) {
        consent.begin_session(session);
        let minted = consent.mint(session, None, false).expect("a live session");
        let claim = consent.claim(&minted.state).expect("a fresh state");
        assert_eq!(claim.session, session);
        assert!(consent.store_token(session, token, None));
    }

    #[test]
    fn an_ended_session_leaves_no_token_and_no_state_behind() {
        let consent = consent();
        consented(&consent, "alice", "alice-token");
        consented(&consent, "bob", "bob-token");
        let open = consent.mint("alice", None, false).unwrap();
        assert_eq!(consent.token_for("alice").as_deref(), Some("alice-token"));

        consent.end_session("alice");
        assert_eq!(consent.token_for("alice"), None, "the token goes");
        assert!(consent.claim(&open.state).is_none(), "its states go");
        assert_eq!(
            consent.token_for("bob").as_deref(),
            Some("bob-token"),
            "another session keeps its own"
        );
    }

    #[test]
    fn only_a_live_session_mints_and_keeps_a_token() {
        let consent = consent();
        assert!(
            consent.mint("stranger", None, false).is_none(),
            "never created"
        );
        consent.begin_session("alice");
        let open = consent
            .mint("alice", None, false)
            .expect("a live session mints");
        consent.end_session("alice");
        // Ended is final: minting again revives nothing.
        assert!(consent.mint("alice", None, false).is_none());
        assert!(consent.claim(&open.state).is_none());
        assert!(!consent.store_token("alice", "late-token", None));
        assert_eq!(consent.token_for("alice"), None);
    }
}
