//! The edges of the pages' rules: who a page takes as signed in, which
//! forms check their `_csrf` and how, and who reaches a grant's page, each
//! a function whose default is the contract. A page asks [`Edge`] at the
//! edge instead of deciding inline, so a faults build can bend exactly that
//! point (`crate::faults::web`) while `web/` reads as the contract only.

use axum::http::request::Parts;

use super::csrf;
use super::session::Session;
use crate::db::{self, Db, repos::RepoRow, users::UserRow};
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

/// A form that checks its `_csrf` on its own route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Form {
    Login,
    Logout,
    Consent,
}

/// The bendable points of the pages' rules; every default is the contract.
pub(crate) trait Edges {
    /// How many pairs of each `Cookie` field line are read for the session
    /// cookie: all (RFC 6265 §5.4).
    fn cookie_pairs() -> usize {
        usize::MAX
    }

    /// A sign-in by other means than the session cookie: none, as pages
    /// trust the cookie alone (§4).
    async fn signed_in_otherwise(
        _parts: &mut Parts,
        _state: &AppState,
    ) -> Result<Option<Session>, PageError> {
        Ok(None)
    }

    /// Whether a `_csrf` tag covers the session id: yes, so a token is
    /// valid for its own session only (§4).
    fn csrf_binds_session() -> bool {
        true
    }

    /// Whether `form` checks its `_csrf`: every form does (§4).
    fn checks_csrf(_form: Form) -> bool {
        true
    }

    /// Whether `token` (from the `X-Csrf-Token` header when `from_header`)
    /// passes for `session`: a live token of this session (§4).
    fn csrf_passes(
        session: &Session,
        state: &AppState,
        token: Option<&str>,
        _from_header: bool,
    ) -> bool {
        match (&session.id, token) {
            (Some(id), Some(token)) => {
                csrf::verify(&state.secret_key, id, token, db::unix_now(), state.csrf_ttl)
            }
            _ => false,
        }
    }

    /// Whether signing out ends the session: yes (§4).
    fn logout_ends_session() -> bool {
        true
    }

    /// The repository whose grant's page `user` shows (`transition` `None`)
    /// or decides on: only its admin's (§4).
    async fn grant_page_repo(
        db: &Db,
        user: &UserRow,
        owner: &str,
        repo: &str,
        _transition: Option<Transition>,
    ) -> Result<RepoRow, AppError> {
        human::admin_repo(db, user, owner, repo).await
    }
}

/// The contract at every edge.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Honest;

impl Edges for Honest {}
