//! The API's and request decoding's faults: [`Bent`] answers each edge of
//! those rules (`api::edges`) as the active fault bends it, and honestly
//! otherwise. Each override names the faults it serves.

use std::net::SocketAddr;

use sha2::{Digest, Sha256};

use crate::api::edges::{Edges, Honest};
use crate::auth::Caller;
use crate::config::Config;
use crate::domain::grant::GrantState;
use crate::error::AppError;

/// The API's edges in a faults build.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bent;

impl Edges for Bent {
    /// `scope-unchecked`: a read scope is enough.
    fn grant_write_scopes() -> &'static [&'static str] {
        if fault!(ScopeUnchecked) {
            return &["read:repository"];
        }
        Honest::grant_write_scopes()
    }

    /// `list-default-includes-revoked`.
    fn default_list_states() -> &'static [GrantState] {
        if fault!(ListDefaultIncludesRevoked) {
            return &[
                GrantState::AwaitingAgent,
                GrantState::AwaitingHuman,
                GrantState::Active,
                GrantState::Revoked,
            ];
        }
        Honest::default_list_states()
    }

    /// `state-filter-ignored`.
    fn reads_state_filter() -> bool {
        !fault!(StateFilterIgnored) && Honest::reads_state_filter()
    }

    /// `replay-compares-raw-bytes`: the SHA-256 of the body's bytes, hex.
    fn raw_digest(bytes: &[u8]) -> Option<String> {
        if fault!(ReplayComparesRawBytes) {
            return Some(hex::encode(Sha256::digest(bytes)));
        }
        Honest::raw_digest(bytes)
    }

    /// `repo-admin-moves-issues`: any credential that may write Issues
    /// (the service then asks for admin of both repositories).
    fn require_mover(caller: &Caller) -> Result<(), AppError> {
        if fault!(RepoAdminMovesIssues) {
            return caller.require(&["write:issue"]);
        }
        Honest::require_mover(caller)
    }

    /// `collaborator-scope-unchecked`.
    fn require_collaborator_scope(caller: &Caller) -> Result<(), AppError> {
        if fault!(CollaboratorScopeUnchecked) {
            return Ok(());
        }
        Honest::require_collaborator_scope(caller)
    }

    /// `json-array-read-as-object`.
    fn json_body_is_object() -> bool {
        !fault!(JsonArrayReadAsObject) && Honest::json_body_is_object()
    }

    /// `nul-accepted-on-sqlite` (active on SQLite only).
    fn json_nul_refused() -> bool {
        !fault!(NulAcceptedOnSqlite) && Honest::json_nul_refused()
    }

    /// `json-media-type-params-refused`: the parameters stay, so
    /// `application/json; charset=utf-8` is no JSON.
    fn media_type(content_type: &str) -> &str {
        if fault!(JsonMediaTypeParamsRefused) {
            return content_type;
        }
        Honest::media_type(content_type)
    }

    /// `short-escape-drops-connection`: an escape cut by the end panics,
    /// which drops the connection (the cargo-mutants survivor, `&&` made
    /// `||` in the well-formedness check, that this fault keeps).
    fn malformed_escape(raw: &[u8], at: usize) {
        assert!(
            !(fault!(ShortEscapeDropsConnection) && raw.len() <= at + 2),
            "escape past the end"
        );
        Honest::malformed_escape(raw, at);
    }

    /// `form-plus-decoded-late`: escapes decoded first, so a typed `+`
    /// (`%2B`) becomes a space.
    fn decoded(raw: &[u8]) -> Vec<u8> {
        if fault!(FormPlusDecodedLate) {
            return percent_encoding::percent_decode(raw)
                .map(|b| if b == b'+' { b' ' } else { b })
                .collect();
        }
        Honest::decoded(raw)
    }

    /// `list-numbers-lenient`: read as absent.
    fn not_positive(name: &str) -> Result<Option<i64>, AppError> {
        if fault!(ListNumbersLenient) {
            return Ok(None);
        }
        Honest::not_positive(name)
    }

    /// `public-url-from-listen`: the configured listen address (say
    /// `0.0.0.0:0`), not the bound one.
    fn bound_url(config: &Config, bound: SocketAddr) -> String {
        if fault!(PublicUrlFromListen) {
            return format!("http://{}", config.listen);
        }
        Honest::bound_url(config, bound)
    }

    /// `public-url-keeps-slash`: `CORE_PUBLIC_URL`'s trailing `/`, which
    /// `config` drops, put back.
    fn public_url(url: String) -> String {
        match std::env::var("CORE_PUBLIC_URL") {
            Ok(raw) if fault!(PublicUrlKeepsSlash) && raw.ends_with('/') => format!("{url}/"),
            _ => Honest::public_url(url),
        }
    }
}
