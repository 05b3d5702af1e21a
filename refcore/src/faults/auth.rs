//! API authentication's faults: [`Bent`] answers each edge of `auth::edges`
//! as the active fault bends it, and honestly otherwise. Each override
//! names the faults it serves.

use crate::auth::edges::{Edges, Honest};
use crate::db::users::TokenRow;
use crate::domain::scopes::Scopes;
use crate::error::AppError;

/// API authentication's edges in a faults build.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bent;

/// The mark `deleted-token-basic-still-works` puts on a token's name
/// instead of deleting it (`faults::db`).
pub(super) const DELETED: &str = "deleted:";

impl Edges for Bent {
    /// `read-scope-any-area`: any `read:` scope passes for `read:repository`.
    fn holds_scope(scopes: &Scopes, scope: &str) -> bool {
        let any_read =
            scope == "read:repository" && scopes.names().iter().any(|n| n.starts_with("read:"));
        (fault!(ReadScopeAnyArea) && any_read) || Honest::holds_scope(scopes, scope)
    }

    /// `missing-credential-answers-404`.
    fn no_credential() -> AppError {
        if fault!(MissingCredentialAnswers404) {
            return AppError::NotFound;
        }
        Honest::no_credential()
    }

    /// `bearer-scheme-case-sensitive`: only `token`, `Bearer` and `Basic`
    /// as spelled here are known.
    fn scheme(given: &str) -> String {
        if fault!(BearerSchemeCaseSensitive) && !["token", "Bearer", "Basic"].contains(&given) {
            return String::new();
        }
        Honest::scheme(given)
    }

    /// `basic-splits-at-last-colon`.
    fn basic_pair(decoded: &str) -> Option<(&str, &str)> {
        if fault!(BasicSplitsAtLastColon) {
            return decoded.rsplit_once(':');
        }
        Honest::basic_pair(decoded)
    }

    /// `deleted-token-basic-still-works`: a token marked deleted
    /// (`faults::db`) still authenticates as a Basic password.
    fn token_live(token: &TokenRow, as_password: bool) -> bool {
        !(fault!(DeletedTokenBasicStillWorks) && !as_password && token.name.starts_with(DELETED))
            && Honest::token_live(token, as_password)
    }

    /// `basic-nul-reaches-database`.
    fn looks_up_login(login: &str) -> bool {
        fault!(BasicNulReachesDatabase) || Honest::looks_up_login(login)
    }
}
