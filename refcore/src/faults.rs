//! Built-in faults for the harness's self-test (issue #7, `docs/faults.md`).
//!
//! A faults build (`--features faults`) reads `CORE_FAULT` once at start and
//! then breaks exactly one rule of the contract, on purpose, so the harness
//! can prove its catalogue catches that broken release. Each hook is a
//! [`fault!`] test at the very place the real rule lives.
//!
//! A default build has no fault names at all: every `fault!(..)` is the
//! constant `false`, and a set `CORE_FAULT` refuses to start, so nobody
//! believes a fault is active when it is not.

use crate::config::Backend;
use crate::error::FaultError;

/// The variable that selects a fault.
pub const ENV: &str = "CORE_FAULT";

/// `fault!(Name)`: whether the fault `Name` is active in this process.
#[cfg(feature = "faults")]
macro_rules! fault {
    ($name:ident) => {
        $crate::faults::active($crate::faults::Fault::$name)
    };
}

/// `fault!(Name)`: always `false` in a default build.
#[cfg(not(feature = "faults"))]
macro_rules! fault {
    ($name:ident) => {
        false
    };
}

pub(crate) use fault;

#[cfg(feature = "faults")]
pub use catalogue::{Fault, active};

/// Reads `raw` (the value of `CORE_FAULT`; empty counts as unset) once, at
/// start. A faults build activates the named fault, or refuses an unknown
/// name listing the valid ones; a default build refuses any name.
pub fn init(raw: Option<&str>, backend: Backend) -> Result<(), FaultError> {
    let Some(name) = raw.filter(|n| !n.is_empty()) else {
        return Ok(());
    };
    #[cfg(feature = "faults")]
    {
        catalogue::activate(name, backend)
    }
    #[cfg(not(feature = "faults"))]
    {
        let _ = (name, backend);
        Err(FaultError::NotAFaultsBuild)
    }
}

/// The flag that prints the fault catalogue and exits.
pub const LIST_FLAG: &str = "--list-faults";

/// What `refcore --list-faults` prints, so the harness's self-test finds the
/// faults in the binary itself instead of a list of its own: one line per
/// fault, `name<TAB>active-on`, where active-on is `any` or the one backend
/// the fault is active on (`sqlite`), then `<TAB>browser` when only a real
/// browser shows it. `None` in a default build, which has
/// no faults.
pub fn listing() -> Option<String> {
    #[cfg(feature = "faults")]
    {
        Some(
            catalogue::ALL
                .iter()
                .map(|(f, n)| {
                    let on = catalogue::only_on(*f).map_or("any", Backend::name);
                    let browser = if catalogue::needs_browser(*f) {
                        "\tbrowser"
                    } else {
                        ""
                    };
                    format!("{n}\t{on}{browser}\n")
                })
                .collect(),
        )
    }
    #[cfg(not(feature = "faults"))]
    {
        None
    }
}

#[cfg(feature = "faults")]
mod catalogue {
    use std::sync::OnceLock;

    use crate::config::Backend;
    use crate::error::FaultError;

    /// Every fault; `docs/faults.md` says which catalogue line catches each.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Fault {
        /// The grant list treats `page` as 0-based: page 1 skips a page.
        PaginationOffByOne,
        /// Paged lists send no `Link` header.
        LinkMissing,
        /// `Link`'s `last` rounds down, so a partial last page gets no `next`.
        LinkWrong,
        /// `Link`'s `last` is one page too far whenever the total is one
        /// short of a multiple of the width (rounding up by `limit + 1`).
        LinkLastOvercounts,
        /// `Link`'s `last` is one page too far whenever the total fills
        /// its pages exactly (rounding up by `limit`).
        LinkLastPastFullPage,
        /// A query or form whose `%` ends a value too early makes the
        /// handler panic: the connection closes with no answer.
        ShortEscapeDropsConnection,
        /// A Basic login with NUL is looked up in the database, where
        /// PostgreSQL refuses it: 500 instead of 401.
        BasicNulReachesDatabase,
        /// An authorize `client_id` with NUL is looked up in the database,
        /// where PostgreSQL refuses it: 500 instead of a 400 page.
        ClientIdNulReachesDatabase,
        /// A clamped grant list computes `Link` from the requested limit.
        ClampWithoutContinuation,
        /// The grant list's `X-Total-Count` counts this page only.
        TotalCountWrong,
        /// An identical replay answers 201 instead of 200.
        ReplayAnswers201,
        /// An identical replay creates a second Issue (answer still 200).
        ReplayCreatesSecondIssue,
        /// A new key whose title and body equal an earlier submission's on
        /// the same grant answers that earlier receipt: replay by payload.
        ReplayKeyedByPayload,
        /// Same key with another title or body answers the stored receipt.
        ChangedPayloadAccepted,
        /// Deleting an Issue deletes its receipt, so the key is free again.
        DeletedIssueFreesKey,
        /// Submit accepts a revoked grant.
        RevokedGrantAcceptsSubmit,
        /// Grant routes serve any reader of the repository, not only the agent.
        WrongBotSeesGrant,
        /// Confirm and submit need only `read:repository`, not `write:issue`.
        ScopeUnchecked,
        /// Browser POSTs skip the `_csrf` check.
        CsrfUnchecked,
        /// `_csrf` tokens are not bound to their session.
        CsrfNotSessionBound,
        /// Approve/withdraw ignore a stale `state_revision`.
        StaleRevisionAccepted,
        /// The proposal digest leaves the task out.
        DigestNotBoundToTask,
        /// Ordinary Issues of a bot with an active grant get its marker.
        AttributionOnOrdinaryIssues,
        /// Grant routes skip the bot's current permission on the repository.
        AccessLossIgnored,
        /// The grant list skips the can-still-read filter.
        ListShowsInvisibleGrants,
        /// NUL passes validation when the backend is SQLite (which stores it).
        NulAcceptedOnSqlite,
        /// Approve answers as usual but skips the state update.
        ApproveKeepsState,
        /// Pages take an API credential as a sign-in (and skip `_csrf` then).
        PagesAcceptApiTokens,
        /// The grant list ignores `state` (always the non-revoked default).
        StateFilterIgnored,
        /// Confirm skips the proposal-triple comparison.
        ConfirmIgnoresTriple,
        /// Confirming an `awaiting_human` grant answers 200 again.
        ConfirmTwiceAccepted,
        /// The Issue body is stored cut at 65,536 bytes.
        BodyTruncated,
        /// A moved Issue's receipt still reads `submitted`.
        MovedIssueReadsSubmitted,
        /// Replay detection looks request keys up across all grants.
        RequestKeyGlobal,
        /// Confirm takes a revoked grant back to `awaiting_human`.
        RevokedGrantAcceptsConfirm,
        /// `_csrf` tokens never expire.
        CsrfTtlIgnored,
        /// The grant list without `state` includes revoked grants.
        ListDefaultIncludesRevoked,
        /// Submit accepts an `awaiting_agent` or `awaiting_human` grant.
        SubmitBeforeApproval,
        /// Approve takes an `awaiting_agent` grant straight to `active`.
        ApproveBeforeConfirmation,
        /// A write collaborator opens the grant pages and posts their forms.
        WriteCollaboratorAdministersGrants,
        /// Logout clears the cookie but keeps the session alive.
        LogoutKeepsSession,
        /// The session cookie lacks `HttpOnly`.
        SessionCookieNotHttpOnly,
        /// The session cookie lacks `SameSite` (a browser then sends it
        /// with a fresh cookie's cross-site POST).
        SessionCookieNoSameSite,
        /// The grant page's approve and withdraw buttons sit after their
        /// forms, with no `form` attribute: no click submits them.
        DecisionButtonOutsideForm,
        /// A transparent layer lies over the grant page's approve and
        /// withdraw buttons: a person's click lands on it, not on them.
        DecisionButtonCovered,
        /// The grant page shows its state only in a `title` attribute (a
        /// tooltip), not as text.
        StateWordInTitleOnly,
        /// Submit skips the 255-character title limit.
        TitleLimitOff,
        /// Submit skips the 262,144-byte body limit.
        BodyLimitOff,
        /// A request without any credential is 404 instead of 401.
        MissingCredentialAnswers404,
        /// The API reads the `Authorization` scheme case-sensitively: only
        /// `token`, `Bearer` and `Basic` as spelled, not `bearer`.
        BearerSchemeCaseSensitive,
        /// Deleting a token only marks it, and only `token`/`Bearer` check
        /// the mark: Basic `login:token` still authenticates.
        DeletedTokenBasicStillWorks,
        /// A blank (empty or whitespace-only) title is accepted.
        BlankTitleAccepted,
        /// Replay compares with the live Issue's title and body, not the stored input.
        ReplayComparesLiveIssue,
        /// An identical replay writes the stored title and body back into the Issue.
        ReplayRewritesIssue,
        /// Replay compares the raw request bytes, not the decoded JSON.
        ReplayComparesRawBytes,
        /// Identical replays are answered from a cache before authentication.
        ReplayServedFromCache,
        /// Submit looks the key up and writes the Issue before taking the grant lock.
        ConcurrentSubmitsCreateIssues,
        /// Approve/withdraw check the form's revision before taking the grant lock.
        ConcurrentDecisionsBothApply,
        /// The envelope grammar accepts unknown members (top level and `commit_count`).
        EnvelopeUnknownMemberAccepted,
        /// The envelope grammar accepts `publish: true`.
        EnvelopePublishAccepted,
        /// Envelope patterns may hold `.`, `..` and `.git` segments.
        EnvelopeTraversalAccepted,
        /// The envelope digest covers the paths in the order given, not sorted.
        EnvelopeDigestUnsorted,
        /// Submit accepts a grant that carries an envelope.
        EnvelopeGrantExecutes,
        /// Preparing adopts an envelope found in the task or summary text.
        EnvelopeAdoptedFromTask,
        /// The grant JSON carries the envelope's raw patterns.
        EnvelopePatternsExposed,
        /// The envelope's `commit_count.max` may be 33.
        EnvelopeMaxOffByOne,
        /// The token endpoint does not check the PKCE verifier.
        OauthSkipsPkce,
        /// An authorization code can be exchanged again and again.
        OauthCodeReusable,
        /// A registered redirect URI matches as a prefix (authorize and token).
        OauthRedirectPrefixMatch,
        /// `code_challenge_method` `plain` or missing is accepted, compared as plain.
        OauthPlainAccepted,
        /// Authorization codes never expire.
        OauthCodeNeverExpires,
        /// A code is exchanged for any `client_id`, not only its own.
        OauthCodeAnyClient,
        /// The consent form skips the `_csrf` check.
        OauthConsentSkipsCsrf,
        /// An OAuth token carries both offered scopes whatever was requested.
        OauthTokenAllScopes,
        /// The login form's `redirect_to` takes any URL, absolute ones included.
        OauthLoginOpenRedirect,
        /// Adding a collaborator skips the `write:repository` scope check.
        CollaboratorScopeUnchecked,
        /// Grants and receipts show their timestamps as SQL text
        /// (`2026-01-01 10:00:00`, no `T`, no offset), not RFC 3339.
        TimestampsNotRfc3339,
        /// A request key may be any UUID: any version and variant, any case.
        RequestKeyLenient,
        /// A title is blank only when it is empty or spaces: tabs and
        /// newlines alone pass.
        BlankTitleSpacesOnly,
        /// Confirm and submit compare the digest without regard to case.
        DigestCaseFolded,
        /// A list's `page` or `limit` that is not a positive integer counts
        /// as absent (the default), as Forgejo's form helpers read it.
        ListNumbersLenient,
        /// Preparing stores the task and summary trimmed of surrounding
        /// whitespace.
        GrantTextTrimmed,
        /// Get and readback serve a repository admin (the owner, an admin
        /// collaborator, a site admin) a grant that is not theirs.
        AdminReadsAnyGrant,
        /// `read:repository` is satisfied by any `read:` scope.
        ReadScopeAnyArea,
        /// `write:repository` does not imply `read:repository`.
        WriteRepositoryNotRead,
        /// Deleting an Issue needs only write permission, not admin.
        WriterDeletesIssues,
        /// Adding or removing a collaborator needs only write permission.
        WriterManagesCollaborators,
        /// A repository admin of both repositories may move an Issue.
        RepoAdminMovesIssues,
        /// The login form skips the `_csrf` check.
        LoginSkipsCsrf,
        /// The logout form skips the `_csrf` check.
        LogoutSkipsCsrf,
        /// A token sent as `X-Csrf-Token` is checked for its age only, not
        /// its session (the form field is still checked in full).
        CsrfHeaderAnySession,
        /// A read collaborator opens a grant's page (its forms still refused).
        ReaderSeesGrantPage,
        /// A write collaborator may withdraw a grant (nothing else).
        WriterMayWithdraw,
        /// Approve takes a `revoked` grant back to `active`.
        ApproveRevivesRevoked,
        /// A redirect URI matches a registered one ignoring ASCII case and
        /// one trailing `/` (authorize and token).
        OauthRedirectLooseMatch,
        /// `code_challenge_method` is compared without regard to case: `s256` passes.
        OauthMethodCaseFolded,
        /// The authorize endpoint ignores `response_type`.
        OauthResponseTypeUnchecked,
        /// The consent decision trusts the posted `redirect_uri` (the
        /// authorize page still checks it).
        OauthConsentTrustsForm,
        /// The consent redirect appends `?code=…` to the redirect URI even
        /// when it has a query: that query's last value swallows the code.
        RedirectQueryIgnored,
        /// A consent grants every requested Forgejo scope, not only the two offered.
        OauthScopeUnfiltered,
        /// Envelope patterns refuse `.git` only in lowercase.
        EnvelopeGitCaseSensitive,
        /// The envelope's counts accept integral floats (`1.0`, `32.0`).
        EnvelopeIntegralFloatsAccepted,
        /// Grant routes find the grant by id in any repository the caller
        /// can read, whatever the path's owner/repo.
        GrantRepoUnchecked,
        /// Withdrawing a grant that awaits the human (confirmed, not yet
        /// approved) leaves `state_revision` where it was.
        WithdrawKeepsRevision,
        /// A readback's status is the one its first readback computed:
        /// deleting or moving the Issue afterwards does not show.
        ReadbackStatusRemembered,
        /// Approve and withdraw find the grant by id alone: under another
        /// repository's URL they act on it (found blind).
        GrantFormsAnyRepository,
        /// Changing a collaborator's permission keeps the old one: a
        /// demotion is ignored (found blind).
        CollaboratorDemotionIgnored,
        /// `CORE_PUBLIC_URL`'s trailing `/` is kept: `html_url` and `Link`
        /// get `//` between base and path (found blind).
        PublicUrlKeepsSlash,
        /// The grant list's `Link` URLs leave out the request's `state`
        /// (found blind).
        LinkForgetsState,
        /// A receipt's status compares the Issue's repository only: an
        /// Issue moved away and back reads `submitted` (found blind).
        MovedBackReadsSubmitted,
        /// Preparing accepts a human as the grant's agent (found blind).
        PrepareAcceptsHumanAgent,
        /// A user's API token mints tokens for that user (found blind).
        TokenMintsTokens,
        /// A JSON body of another top-level type is read as the object it
        /// should be: an array of the members in order passes (refcore's
        /// own bug until the malformed-JSON scenario found it).
        JsonArrayReadAsObject,
        /// The token answer says `Cache-Control: private`, not `no-store`
        /// (found blind).
        TokenAnswerCacheable,
        /// A PKCE verifier of 128 characters, RFC 7636's upper bound, is
        /// refused (found blind).
        PkceVerifierMax127,
        /// A Basic credential is split at its last `:`, so a password
        /// holding one fails (found blind).
        BasicSplitsAtLastColon,
        /// Form values are percent-decoded before `+` becomes a space, so a
        /// typed `+` is stored as a space (found blind).
        FormPlusDecodedLate,
        /// A decision records the grant's preparer as its approver (found
        /// blind).
        ApprovedByPreparer,
        /// A JSON body's `Content-Type` with parameters (`; charset=utf-8`)
        /// is refused (found blind).
        JsonMediaTypeParamsRefused,
        /// The consent redirect appends `code` and `state` unencoded (found
        /// blind).
        OauthStateUnencoded,
        /// Without `CORE_PUBLIC_URL` the base is `CORE_LISTEN` as written,
        /// port 0 included, not the bound address (found blind).
        PublicUrlFromListen,
        /// A receipt's Issue `html_url` is built from the Issue's global id
        /// instead of its index (found blind).
        ReceiptUrlByIssueId,
        /// Only the first pair of the `Cookie` header is read (found blind).
        CookieFirstPairOnly,
        /// The `issue-edit` extension lets any writer edit another's Issue
        /// (found blind).
        IssueEditByWriter,
        /// Withdrawing an approved grant clears who approved it and when.
        WithdrawClearsApproval,
        /// The grant page says an active grant is `awaiting_human`.
        PageShowsActiveAsAwaiting,
    }

    /// Every fault with its `CORE_FAULT` name.
    pub const ALL: [(Fault, &str); 126] = [
        (Fault::PaginationOffByOne, "pagination-off-by-one"),
        (Fault::LinkMissing, "link-missing"),
        (Fault::LinkWrong, "link-wrong"),
        (Fault::LinkLastOvercounts, "link-last-overcounts"),
        (Fault::LinkLastPastFullPage, "link-last-past-full-page"),
        (
            Fault::ShortEscapeDropsConnection,
            "short-escape-drops-connection",
        ),
        (
            Fault::ClampWithoutContinuation,
            "clamp-without-continuation",
        ),
        (Fault::TotalCountWrong, "total-count-wrong"),
        (Fault::ReplayAnswers201, "replay-answers-201"),
        (
            Fault::ReplayCreatesSecondIssue,
            "replay-creates-second-issue",
        ),
        (Fault::ReplayKeyedByPayload, "replay-keyed-by-payload"),
        (Fault::ChangedPayloadAccepted, "changed-payload-accepted"),
        (Fault::DeletedIssueFreesKey, "deleted-issue-frees-key"),
        (
            Fault::RevokedGrantAcceptsSubmit,
            "revoked-grant-accepts-submit",
        ),
        (Fault::WrongBotSeesGrant, "wrong-bot-sees-grant"),
        (Fault::ScopeUnchecked, "scope-unchecked"),
        (Fault::CsrfUnchecked, "csrf-unchecked"),
        (Fault::CsrfNotSessionBound, "csrf-not-session-bound"),
        (Fault::StaleRevisionAccepted, "stale-revision-accepted"),
        (Fault::DigestNotBoundToTask, "digest-not-bound-to-task"),
        (
            Fault::AttributionOnOrdinaryIssues,
            "attribution-on-ordinary-issues",
        ),
        (Fault::AccessLossIgnored, "access-loss-ignored"),
        (
            Fault::ListShowsInvisibleGrants,
            "list-shows-invisible-grants",
        ),
        (Fault::NulAcceptedOnSqlite, "nul-accepted-on-sqlite"),
        (Fault::BasicNulReachesDatabase, "basic-nul-reaches-database"),
        (
            Fault::ClientIdNulReachesDatabase,
            "client-id-nul-reaches-database",
        ),
        (Fault::ApproveKeepsState, "approve-keeps-state"),
        (Fault::PagesAcceptApiTokens, "pages-accept-api-tokens"),
        (Fault::StateFilterIgnored, "state-filter-ignored"),
        (Fault::ConfirmIgnoresTriple, "confirm-ignores-triple"),
        (Fault::ConfirmTwiceAccepted, "confirm-twice-accepted"),
        (Fault::BodyTruncated, "body-truncated"),
        (
            Fault::MovedIssueReadsSubmitted,
            "moved-issue-reads-submitted",
        ),
        (Fault::RequestKeyGlobal, "request-key-global"),
        (
            Fault::RevokedGrantAcceptsConfirm,
            "revoked-grant-accepts-confirm",
        ),
        (Fault::CsrfTtlIgnored, "csrf-ttl-ignored"),
        (
            Fault::ListDefaultIncludesRevoked,
            "list-default-includes-revoked",
        ),
        (Fault::SubmitBeforeApproval, "submit-before-approval"),
        (
            Fault::ApproveBeforeConfirmation,
            "approve-before-confirmation",
        ),
        (
            Fault::WriteCollaboratorAdministersGrants,
            "write-collaborator-administers-grants",
        ),
        (Fault::LogoutKeepsSession, "logout-keeps-session"),
        (
            Fault::SessionCookieNotHttpOnly,
            "session-cookie-not-httponly",
        ),
        (Fault::SessionCookieNoSameSite, "session-cookie-no-samesite"),
        (
            Fault::DecisionButtonOutsideForm,
            "decision-button-outside-form",
        ),
        (Fault::DecisionButtonCovered, "decision-button-covered"),
        (Fault::StateWordInTitleOnly, "state-word-in-title-only"),
        (Fault::TitleLimitOff, "title-limit-off"),
        (Fault::BodyLimitOff, "body-limit-off"),
        (
            Fault::MissingCredentialAnswers404,
            "missing-credential-answers-404",
        ),
        (
            Fault::BearerSchemeCaseSensitive,
            "bearer-scheme-case-sensitive",
        ),
        (
            Fault::DeletedTokenBasicStillWorks,
            "deleted-token-basic-still-works",
        ),
        (Fault::BlankTitleAccepted, "blank-title-accepted"),
        (Fault::ReplayComparesLiveIssue, "replay-compares-live-issue"),
        (Fault::ReplayRewritesIssue, "replay-rewrites-issue"),
        (Fault::ReplayComparesRawBytes, "replay-compares-raw-bytes"),
        (Fault::ReplayServedFromCache, "replay-served-from-cache"),
        (
            Fault::ConcurrentSubmitsCreateIssues,
            "concurrent-submits-create-issues",
        ),
        (
            Fault::ConcurrentDecisionsBothApply,
            "concurrent-decisions-both-apply",
        ),
        (
            Fault::EnvelopeUnknownMemberAccepted,
            "envelope-unknown-member-accepted",
        ),
        (Fault::EnvelopePublishAccepted, "envelope-publish-accepted"),
        (
            Fault::EnvelopeTraversalAccepted,
            "envelope-traversal-accepted",
        ),
        (Fault::EnvelopeDigestUnsorted, "envelope-digest-unsorted"),
        (Fault::EnvelopeGrantExecutes, "envelope-grant-executes"),
        (Fault::EnvelopeAdoptedFromTask, "envelope-adopted-from-task"),
        (Fault::EnvelopePatternsExposed, "envelope-patterns-exposed"),
        (Fault::EnvelopeMaxOffByOne, "envelope-max-off-by-one"),
        (Fault::OauthSkipsPkce, "oauth-skips-pkce"),
        (Fault::OauthCodeReusable, "oauth-code-reusable"),
        (
            Fault::OauthRedirectPrefixMatch,
            "oauth-redirect-prefix-match",
        ),
        (Fault::OauthPlainAccepted, "oauth-plain-accepted"),
        (Fault::OauthCodeNeverExpires, "oauth-code-never-expires"),
        (Fault::OauthCodeAnyClient, "oauth-code-any-client"),
        (Fault::OauthConsentSkipsCsrf, "oauth-consent-skips-csrf"),
        (Fault::OauthTokenAllScopes, "oauth-token-all-scopes"),
        (Fault::OauthLoginOpenRedirect, "oauth-login-open-redirect"),
        (
            Fault::CollaboratorScopeUnchecked,
            "collaborator-scope-unchecked",
        ),
        (Fault::TimestampsNotRfc3339, "timestamps-not-rfc3339"),
        (Fault::RequestKeyLenient, "request-key-lenient"),
        (Fault::BlankTitleSpacesOnly, "blank-title-spaces-only"),
        (Fault::DigestCaseFolded, "digest-case-folded"),
        (Fault::ListNumbersLenient, "list-numbers-lenient"),
        (Fault::GrantTextTrimmed, "grant-text-trimmed"),
        (Fault::AdminReadsAnyGrant, "admin-reads-any-grant"),
        (Fault::ReadScopeAnyArea, "read-scope-any-area"),
        (Fault::WriteRepositoryNotRead, "write-repository-not-read"),
        (Fault::WriterDeletesIssues, "writer-deletes-issues"),
        (
            Fault::WriterManagesCollaborators,
            "writer-manages-collaborators",
        ),
        (Fault::RepoAdminMovesIssues, "repo-admin-moves-issues"),
        (Fault::LoginSkipsCsrf, "login-skips-csrf"),
        (Fault::LogoutSkipsCsrf, "logout-skips-csrf"),
        (Fault::CsrfHeaderAnySession, "csrf-header-any-session"),
        (Fault::ReaderSeesGrantPage, "reader-sees-grant-page"),
        (Fault::WriterMayWithdraw, "writer-may-withdraw"),
        (Fault::ApproveRevivesRevoked, "approve-revives-revoked"),
        (Fault::OauthRedirectLooseMatch, "oauth-redirect-loose-match"),
        (Fault::OauthMethodCaseFolded, "oauth-method-case-folded"),
        (
            Fault::OauthResponseTypeUnchecked,
            "oauth-response-type-unchecked",
        ),
        (Fault::OauthConsentTrustsForm, "oauth-consent-trusts-form"),
        (Fault::RedirectQueryIgnored, "redirect-query-ignored"),
        (Fault::OauthScopeUnfiltered, "oauth-scope-unfiltered"),
        (
            Fault::EnvelopeGitCaseSensitive,
            "envelope-git-case-sensitive",
        ),
        (
            Fault::EnvelopeIntegralFloatsAccepted,
            "envelope-integral-floats-accepted",
        ),
        (Fault::GrantRepoUnchecked, "grant-repo-unchecked"),
        (Fault::WithdrawKeepsRevision, "withdraw-keeps-revision"),
        (
            Fault::ReadbackStatusRemembered,
            "readback-status-remembered",
        ),
        (Fault::GrantFormsAnyRepository, "grant-forms-any-repository"),
        (
            Fault::CollaboratorDemotionIgnored,
            "collaborator-demotion-ignored",
        ),
        (Fault::PublicUrlKeepsSlash, "public-url-keeps-slash"),
        (Fault::LinkForgetsState, "link-forgets-state"),
        (Fault::MovedBackReadsSubmitted, "moved-back-reads-submitted"),
        (
            Fault::PrepareAcceptsHumanAgent,
            "prepare-accepts-human-agent",
        ),
        (Fault::TokenMintsTokens, "token-mints-tokens"),
        (Fault::JsonArrayReadAsObject, "json-array-read-as-object"),
        (Fault::TokenAnswerCacheable, "token-answer-cacheable"),
        (Fault::PkceVerifierMax127, "pkce-verifier-max-127"),
        (Fault::BasicSplitsAtLastColon, "basic-splits-at-last-colon"),
        (Fault::FormPlusDecodedLate, "form-plus-decoded-late"),
        (Fault::ApprovedByPreparer, "approved-by-preparer"),
        (
            Fault::JsonMediaTypeParamsRefused,
            "json-media-type-params-refused",
        ),
        (Fault::OauthStateUnencoded, "oauth-state-unencoded"),
        (Fault::PublicUrlFromListen, "public-url-from-listen"),
        (Fault::ReceiptUrlByIssueId, "receipt-url-by-issue-id"),
        (Fault::CookieFirstPairOnly, "cookie-first-pair-only"),
        (Fault::IssueEditByWriter, "issue-edit-by-writer"),
        (Fault::WithdrawClearsApproval, "withdraw-clears-approval"),
        (
            Fault::PageShowsActiveAsAwaiting,
            "page-shows-active-as-awaiting",
        ),
    ];

    static ACTIVE: OnceLock<Fault> = OnceLock::new();

    /// Whether `fault` is the active one.
    pub fn active(fault: Fault) -> bool {
        ACTIVE.get() == Some(&fault)
    }

    pub(super) fn parse(name: &str) -> Result<Fault, FaultError> {
        ALL.iter()
            .find(|(_, n)| *n == name)
            .map(|(f, _)| *f)
            .ok_or_else(|| FaultError::Unknown {
                name: name.chars().take(60).collect(),
                valid: ALL.map(|(_, n)| n).join(", "),
            })
    }

    /// Whether only a real browser shows the fault: its self-test pass runs
    /// with `--browser chromium`.
    pub(super) fn needs_browser(fault: Fault) -> bool {
        matches!(
            fault,
            Fault::DecisionButtonOutsideForm | Fault::DecisionButtonCovered
        )
    }

    /// The one backend a fault is active on, if it is backend-specific. The
    /// NUL fault models a check that only ran where PostgreSQL would have
    /// failed anyway: on PostgreSQL it stays inactive.
    pub(super) fn only_on(fault: Fault) -> Option<Backend> {
        match fault {
            Fault::NulAcceptedOnSqlite => Some(Backend::Sqlite),
            // SQLite stores NUL in text: only PostgreSQL errs on it.
            Fault::BasicNulReachesDatabase | Fault::ClientIdNulReachesDatabase => {
                Some(Backend::Postgres)
            }
            _ => None,
        }
    }

    pub(super) fn activate(name: &str, backend: Backend) -> Result<(), FaultError> {
        let fault = parse(name)?;
        if only_on(fault).is_some_and(|b| b != backend) {
            tracing::warn!(
                fault = name,
                "built-in fault selected, inactive on this backend"
            );
            return Ok(());
        }
        let _ = ACTIVE.set(fault);
        tracing::warn!(
            fault = name,
            "built-in fault ACTIVE: this Core breaks the contract on purpose"
        );
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unset_or_empty_is_no_fault() {
        assert!(init(None, Backend::Sqlite).is_ok());
        assert!(init(Some(""), Backend::Sqlite).is_ok());
    }

    #[cfg(not(feature = "faults"))]
    #[test]
    fn a_default_build_refuses_any_name() {
        let err = init(Some("replay-answers-201"), Backend::Sqlite).unwrap_err();
        assert!(
            err.to_string().contains("without the `faults` feature"),
            "{err}"
        );
    }

    #[cfg(feature = "faults")]
    #[test]
    fn names_are_unique_kebab_case_and_parse_back() {
        for (fault, name) in catalogue::ALL {
            assert_eq!(catalogue::parse(name).unwrap(), fault);
            assert!(
                name.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            );
        }
        let err = catalogue::parse("replay-answers-202")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("replay-answers-201") && err.contains("nul-accepted-on-sqlite"),
            "{err}"
        );
    }

    #[test]
    fn the_listing_names_every_fault_and_where_it_is_active() {
        #[cfg(feature = "faults")]
        {
            let listing = listing().unwrap();
            assert_eq!(listing.lines().count(), catalogue::ALL.len());
            assert!(
                listing.contains("nul-accepted-on-sqlite\tsqlite\n"),
                "{listing}"
            );
            assert!(listing.contains("replay-answers-201\tany\n"), "{listing}");
        }
        #[cfg(not(feature = "faults"))]
        assert_eq!(listing(), None);
    }
}
