//! The domain's faults: [`Bent`] answers each edge of the rules
//! (`domain::edges`) as the active fault bends it, and honestly otherwise.
//! Each override names the faults it serves.

use serde_json::Value;

use crate::domain::edges::{Edges, Honest};
use crate::domain::model::GrantState;
use crate::domain::oauth;
use crate::domain::scopes::Scopes;
use crate::error::AppError;

/// The edges of a faults build.
#[derive(Debug, Clone, Copy)]
pub struct Bent;

impl Edges for Bent {
    /// `approve-before-confirmation`, `approve-revives-revoked`.
    fn approvable(&self, from: GrantState) -> bool {
        match from {
            GrantState::AwaitingAgent if fault!(ApproveBeforeConfirmation) => true,
            GrantState::Revoked if fault!(ApproveRevivesRevoked) => true,
            _ => Honest.approvable(from),
        }
    }

    /// `digest-case-folded`.
    fn digest_matches(&self, given: &str, grant: &str) -> bool {
        if fault!(DigestCaseFolded) {
            return given.eq_ignore_ascii_case(grant);
        }
        Honest.digest_matches(given, grant)
    }

    /// `digest-not-bound-to-task`.
    fn bound_task<'a>(&self, task: &'a str) -> &'a str {
        if fault!(DigestNotBoundToTask) {
            return "";
        }
        Honest.bound_task(task)
    }

    /// `envelope-patterns-exposed`.
    fn shown_patterns(&self, patterns: Vec<String>) -> Option<Vec<String>> {
        if fault!(EnvelopePatternsExposed) {
            return Some(patterns);
        }
        Honest.shown_patterns(patterns)
    }

    /// `timestamps-not-rfc3339`: SQL text, no `T`, no offset.
    fn wire_time(&self, stored: &str) -> String {
        if fault!(TimestampsNotRfc3339) {
            return stored
                .replacen('T', " ", 1)
                .trim_end_matches('Z')
                .to_owned();
        }
        Honest.wire_time(stored)
    }

    /// `moved-issue-reads-submitted`, `moved-back-reads-submitted`.
    fn binding_kept(&self, receipt: (i64, i64), now: (i64, i64)) -> bool {
        fault!(MovedIssueReadsSubmitted)
            || (fault!(MovedBackReadsSubmitted) && now.0 == receipt.0)
            || Honest.binding_kept(receipt, now)
    }

    /// `write-repository-not-read`.
    fn write_implies_read(&self, area: &str) -> bool {
        if fault!(WriteRepositoryNotRead) && area == "repository" {
            return false;
        }
        Honest.write_implies_read(area)
    }

    /// `nul-accepted-on-sqlite` (active on SQLite only).
    fn refuses_nul(&self) -> bool {
        !fault!(NulAcceptedOnSqlite) && Honest.refuses_nul()
    }

    /// `blank-title-accepted`, `blank-title-spaces-only` (tabs, CR, LF pass).
    fn blank_title(&self, value: &str) -> bool {
        if fault!(BlankTitleAccepted) {
            return false;
        }
        if fault!(BlankTitleSpacesOnly) {
            return value.trim_matches(' ').is_empty();
        }
        Honest.blank_title(value)
    }

    /// `title-limit-off`.
    fn title_too_long(&self, value: &str) -> bool {
        !fault!(TitleLimitOff) && Honest.title_too_long(value)
    }

    /// `body-limit-off`.
    fn body_too_long(&self, value: &str) -> bool {
        !fault!(BodyLimitOff) && Honest.body_too_long(value)
    }

    /// `request-key-lenient`: any UUID, any version or variant, any case.
    fn is_request_key(&self, value: &str, canonical: bool) -> bool {
        if fault!(RequestKeyLenient) {
            return value.len() == 36
                && value.bytes().enumerate().all(|(i, b)| match i {
                    8 | 13 | 18 | 23 => b == b'-',
                    _ => b.is_ascii_hexdigit(),
                });
        }
        Honest.is_request_key(value, canonical)
    }

    /// `oauth-login-open-redirect`: any non-empty `redirect_to`.
    fn is_local_redirect(&self, target: &str, local: bool) -> bool {
        if fault!(OauthLoginOpenRedirect) {
            return !target.is_empty();
        }
        Honest.is_local_redirect(target, local)
    }

    /// `oauth-redirect-prefix-match`, `oauth-redirect-loose-match`.
    fn redirect_uri_matches(&self, expected: &str, given: &str) -> bool {
        (fault!(OauthRedirectPrefixMatch) && given.starts_with(expected))
            || (fault!(OauthRedirectLooseMatch)
                && given
                    .trim_end_matches('/')
                    .eq_ignore_ascii_case(expected.trim_end_matches('/')))
            || Honest.redirect_uri_matches(expected, given)
    }

    /// `oauth-consent-trusts-form`: the consent form (no `response_type`)
    /// is trusted with any redirect URI.
    fn redirect_uri_allowed(&self, response_type: Option<&str>, registered: bool) -> bool {
        (fault!(OauthConsentTrustsForm) && response_type.is_none())
            || Honest.redirect_uri_allowed(response_type, registered)
    }

    /// `oauth-response-type-unchecked`.
    fn response_type_ok(&self, response_type: &str) -> bool {
        fault!(OauthResponseTypeUnchecked) || Honest.response_type_ok(response_type)
    }

    /// `oauth-method-case-folded`, `oauth-plain-accepted` (also no method).
    fn challenge_method(&self, given: Option<&str>) -> Option<&'static str> {
        match given {
            Some(m) if fault!(OauthMethodCaseFolded) && m.eq_ignore_ascii_case(oauth::S256) => {
                Some(oauth::S256)
            }
            None | Some(oauth::PLAIN) if fault!(OauthPlainAccepted) => Some(oauth::PLAIN),
            _ => Honest.challenge_method(given),
        }
    }

    /// `pkce-verifier-max-127`.
    fn is_verifier(&self, verifier: &str, well_formed: bool) -> bool {
        !(fault!(PkceVerifierMax127) && verifier.len() == 128)
            && Honest.is_verifier(verifier, well_formed)
    }

    /// `oauth-scope-unfiltered`: any Forgejo scope is granted.
    fn offered_scope(&self, name: &str) -> bool {
        Honest.offered_scope(name)
            || (fault!(OauthScopeUnfiltered) && Scopes::parse(&[name]).is_ok())
    }

    /// `oauth-token-all-scopes`.
    fn token_scopes(&self, granted: String) -> String {
        if fault!(OauthTokenAllScopes) {
            return Scopes::parse(&oauth::OFFERED_SCOPES).map_or(granted, |all| all.stored());
        }
        Honest.token_scopes(granted)
    }

    /// `oauth-state-unencoded`.
    fn redirect_query(&self, params: &[(&str, &str)], encoded: String) -> String {
        if fault!(OauthStateUnencoded) {
            return params
                .iter()
                .map(|(n, v)| format!("{n}={v}"))
                .collect::<Vec<_>>()
                .join("&");
        }
        Honest.redirect_query(params, encoded)
    }

    /// `redirect-query-ignored`: always `?`, even after a query.
    fn query_separator(&self, redirect_uri: &str, separator: &'static str) -> &'static str {
        if fault!(RedirectQueryIgnored) && redirect_uri.contains('?') {
            return "?";
        }
        Honest.query_separator(redirect_uri, separator)
    }

    /// `oauth-code-never-expires`.
    fn expiry_horizon(&self, now: i64) -> i64 {
        if fault!(OauthCodeNeverExpires) {
            return i64::MIN;
        }
        Honest.expiry_horizon(now)
    }

    /// `oauth-code-any-client`.
    fn same_client(&self, issued_to: &str, client: &str) -> bool {
        fault!(OauthCodeAnyClient) || Honest.same_client(issued_to, client)
    }

    /// `oauth-skips-pkce`.
    fn proves(&self, matches: bool) -> bool {
        fault!(OauthSkipsPkce) || Honest.proves(matches)
    }

    /// `envelope-unknown-member-accepted`.
    fn admits_member(&self, allowed: &[&str], key: &str) -> bool {
        fault!(EnvelopeUnknownMemberAccepted) || Honest.admits_member(allowed, key)
    }

    /// `envelope-integral-floats-accepted`: `1.0` reads as 1.
    fn integer(&self, value: &Value, read: Result<i64, AppError>) -> Result<i64, AppError> {
        if let Value::Number(n) = value
            && fault!(EnvelopeIntegralFloatsAccepted)
            && !(n.is_i64() || n.is_u64())
            && let Some(f) = n.as_f64().filter(|f| f.fract() == 0.0 && f.abs() < 1e15)
        {
            return Ok(f as i64);
        }
        Honest.integer(value, read)
    }

    /// `envelope-publish-accepted`.
    fn publish_ok(&self, publish: &Value) -> bool {
        (fault!(EnvelopePublishAccepted) && *publish == Value::Bool(true))
            || Honest.publish_ok(publish)
    }

    /// `envelope-max-off-by-one`: 33.
    fn max_commits(&self) -> i64 {
        Honest.max_commits() + i64::from(fault!(EnvelopeMaxOffByOne))
    }

    /// `envelope-digest-unsorted`: the paths in the order given.
    fn digest_order<'a>(&self, given: &'a [String], sorted: &'a [String]) -> &'a [String] {
        if fault!(EnvelopeDigestUnsorted) {
            return given;
        }
        Honest.digest_order(given, sorted)
    }

    /// `envelope-traversal-accepted` (every segment passes),
    /// `envelope-git-case-sensitive` (only `.git` in lowercase is refused).
    fn refused_segment(&self, segment: &str) -> Option<&'static str> {
        if fault!(EnvelopeTraversalAccepted) {
            return None;
        }
        if fault!(EnvelopeGitCaseSensitive)
            && segment != ".git"
            && segment.eq_ignore_ascii_case(".git")
        {
            return None;
        }
        Honest.refused_segment(segment)
    }
}
