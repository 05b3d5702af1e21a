//! The edges of the pages' rules: who a page takes as signed in, which
//! forms check their `_csrf` and how, and who reaches a grant's page, each
//! a function whose default is the contract. A page asks [`Edge`] at the
//! edge instead of deciding inline, so a faults build can bend exactly that
//! point (`crate::faults::web`) while `web/` reads as the contract only.

use std::time::Duration;

use axum::http::request::Parts;

use crate::db::{Db, repos::RepoRow, users::UserRow};
use crate::domain::grant::Transition;
use crate::error::{AppError, PageError};
use crate::service::human;
use crate::state::AppState;

/// The edges this build answers with: [`Honest`], or a faults build's.
#[cfg(feature = "faults")]
pub(crate) use crate::faults::web::Bent as Edge;
/// The edges this build answers with: [`Honest`].
#[cfg(not(feature = "faults"))]
pub(crate) use Honest as Edge;

/// The bendable points of the pages' rules; every default is the contract.
pub(crate) trait Edges {
    /// How many pairs of each `Cookie` field line are read for the session
    /// cookie: all (RFC 6265 §5.4).
    fn cookie_pairs() -> usize {
        usize::MAX
    }

    /// A user signed in by other means than the session cookie: none, as
    /// pages trust the cookie alone (§4).
    async fn signed_in_otherwise(
        _parts: &mut Parts,
        _state: &AppState,
    ) -> Result<Option<UserRow>, PageError> {
        Ok(None)
    }

    /// Whether a `_csrf` tag covers the session id: yes, so a token is
    /// valid for its own session only (§4).
    fn csrf_binds_session() -> bool {
        true
    }

    /// Whether the login form checks its `_csrf`: yes (§4).
    fn login_checks_csrf() -> bool {
        true
    }

    /// Whether the logout form checks its `_csrf`: yes (§4).
    fn logout_checks_csrf() -> bool {
        true
    }

    /// Whether the consent form checks its `_csrf`: yes (§9).
    fn consent_checks_csrf() -> bool {
        true
    }

    /// How long a `_csrf` lives: `CORE_CSRF_TTL_SECS` (`configured`).
    fn csrf_ttl(configured: Duration) -> Duration {
        configured
    }

    /// Whether a form needs a live `_csrf` of its session at all: yes (§4).
    fn csrf_required() -> bool {
        true
    }

    /// Whether a `token` that is not this session's passes all the same
    /// (`from_header`: sent as `X-Csrf-Token`): never (§4).
    fn csrf_of_another_session_passes(_token: &str, _from_header: bool, _ttl: Duration) -> bool {
        false
    }

    /// Whether a user signed in without a session id (`sessionless`) passes
    /// the check without a token: never, as only a session signs in (§4).
    fn csrf_without_session_passes(_sessionless: bool) -> bool {
        false
    }

    /// Whether signing out ends the session: yes (§4).
    fn logout_ends_session() -> bool {
        true
    }

    /// The repository whose grant's page `user` may see: only its admin's (§4).
    async fn grant_page_repo(
        db: &Db,
        user: &UserRow,
        owner: &str,
        repo: &str,
    ) -> Result<RepoRow, AppError> {
        human::admin_repo(db, user, owner, repo).await
    }

    /// The repository whose grant `user` may decide on by `transition`:
    /// only its admin's (§4).
    async fn deciding_repo(
        db: &Db,
        user: &UserRow,
        owner: &str,
        repo: &str,
        _transition: Transition,
    ) -> Result<RepoRow, AppError> {
        human::admin_repo(db, user, owner, repo).await
    }
}

/// The contract at every edge.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Honest;

impl Edges for Honest {}
