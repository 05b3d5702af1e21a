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
use crate::state::AppState;
use crate::web::edges::{Edges, Honest};

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
    ) -> Result<Option<UserRow>, PageError> {
        if !fault!(PagesAcceptApiTokens) {
            return Honest::signed_in_otherwise(parts, state).await;
        }
        let MaybeCaller(caller) = MaybeCaller::from_request_parts(parts, state).await?;
        Ok(caller.map(|c| c.user))
    }

    /// `csrf-not-session-bound`.
    fn csrf_binds_session() -> bool {
        !fault!(CsrfNotSessionBound) && Honest::csrf_binds_session()
    }

    /// `login-skips-csrf`.
    fn login_checks_csrf() -> bool {
        !fault!(LoginSkipsCsrf) && Honest::login_checks_csrf()
    }

    /// `logout-skips-csrf`.
    fn logout_checks_csrf() -> bool {
        !fault!(LogoutSkipsCsrf) && Honest::logout_checks_csrf()
    }

    /// `oauth-consent-skips-csrf`.
    fn consent_checks_csrf() -> bool {
        !fault!(OauthConsentSkipsCsrf) && Honest::consent_checks_csrf()
    }

    /// `csrf-ttl-ignored`: about 136 years.
    fn csrf_ttl(configured: Duration) -> Duration {
        if fault!(CsrfTtlIgnored) {
            return Duration::from_secs(u32::MAX.into());
        }
        Honest::csrf_ttl(configured)
    }

    /// `csrf-unchecked`.
    fn csrf_required() -> bool {
        !fault!(CsrfUnchecked) && Honest::csrf_required()
    }

    /// `csrf-header-any-session`: a header token of any session passes if
    /// only it looks fresh.
    fn csrf_of_another_session_passes(token: &str, from_header: bool, ttl: Duration) -> bool {
        (fault!(CsrfHeaderAnySession) && from_header && fresh(token, db::unix_now(), ttl))
            || Honest::csrf_of_another_session_passes(token, from_header, ttl)
    }

    /// `pages-accept-api-tokens`: one signed in by an API credential.
    fn csrf_without_session_passes(sessionless: bool) -> bool {
        (fault!(PagesAcceptApiTokens) && sessionless)
            || Honest::csrf_without_session_passes(sessionless)
    }

    /// `logout-keeps-session`.
    fn logout_ends_session() -> bool {
        !fault!(LogoutKeepsSession) && Honest::logout_ends_session()
    }

    /// `reader-sees-grant-page`.
    async fn grant_page_repo(
        db: &Db,
        user: &UserRow,
        owner: &str,
        repo: &str,
    ) -> Result<RepoRow, AppError> {
        if fault!(ReaderSeesGrantPage) {
            return repo_at_least(db, user, owner, repo, Permission::Read).await;
        }
        Honest::grant_page_repo(db, user, owner, repo).await
    }

    /// `writer-may-withdraw`.
    async fn deciding_repo(
        db: &Db,
        user: &UserRow,
        owner: &str,
        repo: &str,
        transition: Transition,
    ) -> Result<RepoRow, AppError> {
        if fault!(WriterMayWithdraw) && transition == Transition::Withdraw {
            return repo_at_least(db, user, owner, repo, Permission::Write).await;
        }
        Honest::deciding_repo(db, user, owner, repo, transition).await
    }
}

/// Like `service::human::admin_repo`, but any user with at least `enough` on the
/// repository passes: only the `reader-sees-grant-page` and
/// `writer-may-withdraw` faults use it (the grant pages are for admins).
async fn repo_at_least(
    db: &Db,
    user: &UserRow,
    owner: &str,
    repo: &str,
    enough: Permission,
) -> Result<RepoRow, AppError> {
    let mut conn = db.conn().await?;
    let (repo, perm) =
        crate::service::access::visible_repo(&mut conn, Some(user), owner, repo).await?;
    if perm < enough {
        return Err(AppError::NotFound);
    }
    Ok(repo)
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
