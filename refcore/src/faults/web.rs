//! The pages' faults: [`Bent`] answers each edge of the pages' rules
//! (`web::edges`) as the active fault bends it, and honestly otherwise.
//! Each override names the faults it serves.

use std::time::Duration;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;

use crate::auth::MaybeCaller;
use crate::db::{self, Db, repos::RepoRow, users::UserRow};
use crate::domain::grant::Transition;
use crate::domain::permission::Permission;
use crate::error::{AppError, PageError};
use crate::service::human;
use crate::state::AppState;
use crate::web::edges::{Edges, Form, Honest};
use crate::web::session::Session;

/// The pages' edges in a faults build.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bent;

impl Edges for Bent {
    /// `cookie-first-pair-only`.
    fn cookie_pairs() -> usize {
        if fault!(CookieFirstPairOnly) {
            return 1;
        }
        Honest::cookie_pairs()
    }

    /// `pages-accept-api-tokens`: the request's API credential (token,
    /// Bearer, Basic), bots included, without a session.
    async fn signed_in_otherwise(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Option<Session>, PageError> {
        if !fault!(PagesAcceptApiTokens) {
            return Honest::signed_in_otherwise(parts, state).await;
        }
        let MaybeCaller(caller) = MaybeCaller::from_request_parts(parts, state).await?;
        Ok(caller.map(|c| Session {
            id: None,
            user: Some(c.user),
        }))
    }

    /// `csrf-not-session-bound`.
    fn csrf_binds_session() -> bool {
        !fault!(CsrfNotSessionBound) && Honest::csrf_binds_session()
    }

    /// `login-skips-csrf`, `logout-skips-csrf`, `oauth-consent-skips-csrf`.
    fn checks_csrf(form: Form) -> bool {
        let skipped = match form {
            Form::Login => fault!(LoginSkipsCsrf),
            Form::Logout => fault!(LogoutSkipsCsrf),
            Form::Consent => fault!(OauthConsentSkipsCsrf),
        };
        !skipped && Honest::checks_csrf(form)
    }

    /// `csrf-unchecked`; `csrf-ttl-ignored`; `csrf-header-any-session`: a
    /// header token of any session passes if only it looks fresh;
    /// `pages-accept-api-tokens`: one signed in by an API credential (no
    /// session) passes.
    fn csrf_passes(
        session: &Session,
        state: &AppState,
        token: Option<&str>,
        from_header: bool,
    ) -> bool {
        let signed_in_by_api = session.id.is_none() && session.user.is_some();
        let fresh_header = from_header
            && session.id.is_some()
            && token.is_some_and(|t| fresh(t, db::unix_now(), state.csrf_ttl));
        if fault!(CsrfUnchecked)
            || (fault!(PagesAcceptApiTokens) && signed_in_by_api)
            || (fault!(CsrfHeaderAnySession) && fresh_header)
        {
            return true;
        }
        if fault!(CsrfTtlIgnored) {
            let forever = AppState {
                csrf_ttl: Duration::from_secs(u32::MAX.into()),
                ..state.clone()
            };
            return Honest::csrf_passes(session, &forever, token, from_header);
        }
        Honest::csrf_passes(session, state, token, from_header)
    }

    /// `logout-keeps-session`.
    fn logout_ends_session() -> bool {
        !fault!(LogoutKeepsSession) && Honest::logout_ends_session()
    }

    /// `reader-sees-grant-page`: a reader sees a grant's page;
    /// `writer-may-withdraw`: a writer withdraws.
    async fn grant_page_repo(
        db: &Db,
        user: &UserRow,
        owner: &str,
        repo: &str,
        transition: Option<Transition>,
    ) -> Result<RepoRow, AppError> {
        match transition {
            None if fault!(ReaderSeesGrantPage) => {
                human::repo_at_least(db, user, owner, repo, Permission::Read).await
            }
            Some(Transition::Withdraw) if fault!(WriterMayWithdraw) => {
                human::repo_at_least(db, user, owner, repo, Permission::Write).await
            }
            _ => Honest::grant_page_repo(db, user, owner, repo, transition).await,
        }
    }
}

/// For `csrf-header-any-session`: whether `token` looks like a token issued
/// no longer than `ttl` ago, whatever session it was issued to and without
/// checking its MAC (a real check is `csrf::verify`).
fn fresh(token: &str, now: i64, ttl: Duration) -> bool {
    let Some((issued, _)) = token.split_once('.') else {
        return false;
    };
    issued
        .parse::<i64>()
        .is_ok_and(|issued| (-5..=ttl.as_secs() as i64).contains(&(now - issued)))
}
