//! Built-in faults for the harness's self-test (issue #7, `docs/faults.md`).
//!
//! A faults build (`--features faults`) reads `AWG_FAULT` once at start and
//! then breaks exactly one rule of spec §6 or §9, on purpose, so the harness can
//! prove its catalogue catches that broken adapter. Each hook is a
//! [`fault!`] test at the very place the real rule lives.
//!
//! A default build has no fault names at all: every `fault!(..)` is the
//! constant `false`, and a set `AWG_FAULT` refuses to start, so nobody
//! believes a fault is active when it is not.

use crate::error::ConfigError;

/// The variable that selects a fault.
pub const ENV: &str = "AWG_FAULT";

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
pub use catalogue::{Fault, active, invented_key};

/// Reads `raw` (the value of `AWG_FAULT`; empty counts as unset) once, at
/// start. A faults build activates the named fault, or refuses an unknown
/// name listing the valid ones; a default build refuses any name.
pub fn init(raw: Option<&str>) -> Result<(), ConfigError> {
    let Some(name) = raw.filter(|n| !n.is_empty()) else {
        return Ok(());
    };
    #[cfg(feature = "faults")]
    {
        catalogue::activate(name)
    }
    #[cfg(not(feature = "faults"))]
    {
        let _ = name;
        Err(ConfigError::NotAFaultsBuild)
    }
}

/// The flag that prints the fault catalogue and exits.
pub const LIST_FLAG: &str = "--list-faults";

/// What `awg-mcp --list-faults` prints, so the harness's self-test finds the
/// faults in the binary itself: one line per fault, `name<TAB>any` (no
/// adapter fault depends on the Core's backend). `None` in a default build,
/// which has no faults.
pub fn listing() -> Option<String> {
    #[cfg(feature = "faults")]
    {
        Some(
            catalogue::ALL
                .iter()
                .map(|(_, n)| format!("{n}\tany\n"))
                .collect(),
        )
    }
    #[cfg(not(feature = "faults"))]
    {
        None
    }
}

/// Marks every text item of a tool's answer with `priority` 2.0, which
/// MCP's schema bounds to 0..1 and rmcp does not check (only the fault
/// `adapter-content-priority-over-one` calls it; kept here, out of the
/// tools, so no mutant of it counts against a default build).
pub fn over_one_priority(result: &mut rmcp::model::CallToolResult) {
    for item in &mut result.content {
        if let rmcp::model::ContentBlock::Text(text) = item {
            text.annotations = Some(rmcp::model::Annotations::default().with_priority(2.0));
        }
    }
}

#[cfg(feature = "faults")]
mod catalogue {
    use std::hash::{BuildHasher, RandomState};
    use std::sync::OnceLock;

    use crate::error::ConfigError;

    /// Every fault; `docs/faults.md` says which catalogue line catches each.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Fault {
        /// The upstream client follows redirects (to any origin).
        AdapterFollowsRedirect,
        /// A request whose response is lost is sent a second time.
        AdapterRetriesPost,
        /// A native refusal's message carries the upstream body.
        AdapterEchoesUpstreamBody,
        /// IDs and `page` given as decimal strings are accepted.
        AdapterAcceptsStringIds,
        /// `owner` and `repo` need only be free of `/` and not `.` or
        /// `..`, and go into the URL path unescaped.
        AdapterSegmentsUnescaped,
        /// A missing `request_key` is replaced by a fresh UUIDv4.
        AdapterInventsRequestKey,
        /// Over HTTP the process credential wins over the request's bearer.
        AdapterForwardsWrongCredential,
        /// Submit and readback publish a receipt without the consistency check.
        AdapterPublishesInconsistentReceipt,
        /// The Core's ids, indexes and revisions need only be integers (0 and
        /// negatives pass the consistency check).
        AdapterAcceptsNonPositiveIntegers,
        /// Submit takes `requestId` or `request_id` as another name for `request_key`.
        AdapterAcceptsRequestId,
        /// An unknown input is dropped and the call forwarded without it.
        AdapterDropsUnknownInput,
        /// A list page shorter than 30 is taken as the last one.
        AdapterAssumesFullPages,
        /// A list answer without `Link` is taken as the last page.
        AdapterLinklessEnds,
        /// `Link` is split at every comma and semicolon, inside quoted
        /// strings too.
        AdapterLinkIgnoresQuotes,
        /// The HTTP transport serves a request whatever its `Origin`.
        AdapterIgnoresOrigin,
        /// The HTTP transport takes MCP request bodies of any size.
        AdapterNoBodyLimit,
        /// A Core's answer is read up to 1 MiB only.
        AdapterReadsOneMebibyte,
        /// Only the newest revision with an `initialize` is served: a
        /// 2025-06-18 client is answered with 2025-11-25.
        AdapterDropsOldRevisions,
        /// Every `Mcp-Session-Id` counts as a live session, an ended one too.
        AdapterKnowsEverySession,
        /// `get_agent_work_grant` and `confirm_agent_work_grant` list no
        /// `owner`, `repo` or `grant_id` in their input schemas.
        AdapterSchemaWithoutContext,
        /// The callback stores the token for every session and wakes every parked call.
        ConsentStateUnbound,
        /// A spent state stays valid: a replayed callback exchanges again.
        ConsentStateReusable,
        /// A state never expires (the parked call still times out).
        ConsentStateNeverExpires,
        /// The cap of eight open states counts every session's: a ninth
        /// state pushes out the oldest, whichever session it belongs to.
        ConsentStatesCappedTogether,
        /// A parked call resumes when a known state arrives, before the exchange.
        ConsentResumeBeforeExchange,
        /// One PKCE verifier for every state of the process.
        ConsentSharedVerifier,
        /// `code_challenge_method=plain` with the verifier as the challenge.
        ConsentPlainChallenge,
        /// `redirect_uri` built from the MCP request's `Host` instead of `--public-url`.
        ConsentRedirectFromHost,
        /// The token is also written to `awg-mcp-token` in the working directory.
        ConsentTokenOnDisk,
        /// A session's end forgets nothing: its states stay valid, its token kept.
        ConsentSessionEndForgetsNothing,
        /// In consent mode a request's bearer counts for nothing: the call asks for consent.
        ConsentIgnoresBearer,
        /// The token answer is read up to 1 KiB only.
        ConsentSmallTokenAnswer,
        /// A token of any `token_type` is used as a bearer token.
        ConsentAnyTokenType,
        /// `proposal_version` is compared as a number: `1.0` passes (found blind).
        AdapterVersionFloatAccepted,
        /// Over HTTP, a caller's bearer counts only as `Bearer`, not
        /// `bearer` (found blind).
        AdapterBearerSchemeCaseSensitive,
        /// A confirm whose answer is unclear (lost, unexpected) is reported
        /// as a failed read, `upstream_error`, not `delivery_uncertain`.
        AdapterLostConfirmIsReadError,
        /// A URL-mode elicitation goes to any client that declared an
        /// elicitation mode, form-only clients included.
        ConsentElicitsAnyClient,
        /// A Basic password is sent cut at its first `:` (found blind: the
        /// adapter refused such a password at start).
        AdapterBasicPasswordCutAtColon,
        /// `Link`'s `rel` parameter is found only in lower case (found blind).
        AdapterLinkRelNameCaseSensitive,
        /// An `owner` or `repo` of 100 characters is refused (found blind).
        AdapterSegmentMax99,
        /// The confirm tool takes submit's inputs too (found blind).
        AdapterConfirmTakesSubmitInputs,
        /// An `owner` or `repo` of `.` passes the segment check (found
        /// blind).
        AdapterDotSegmentAccepted,
        /// Any host whose name begins with `localhost` counts as loopback
        /// for `Origin` and `Host` (found blind).
        AdapterLoopbackPrefix,
        /// Any `error` on the consent callback counts as the person's
        /// refusal (found blind).
        ConsentAnyErrorDenied,
        /// `get_agent_work_grant` checks the answer's grant id only, not its
        /// repository (found blind).
        AdapterGetGrantRepoUnchecked,
        /// An unknown input whose value is `null` is ignored (found blind).
        AdapterUnknownNullIgnored,
        /// A successful tool answer's content carries `priority` 2.0, over
        /// the 0..1 MCP's schema allows (rmcp takes it).
        AdapterContentPriorityOverOne,
    }

    /// Every fault with its `AWG_FAULT` name.
    pub const ALL: [(Fault, &str); 47] = [
        (Fault::AdapterFollowsRedirect, "adapter-follows-redirect"),
        (Fault::AdapterRetriesPost, "adapter-retries-post"),
        (
            Fault::AdapterEchoesUpstreamBody,
            "adapter-echoes-upstream-body",
        ),
        (Fault::AdapterAcceptsStringIds, "adapter-accepts-string-ids"),
        (
            Fault::AdapterSegmentsUnescaped,
            "adapter-segments-unescaped",
        ),
        (
            Fault::AdapterInventsRequestKey,
            "adapter-invents-request-key",
        ),
        (
            Fault::AdapterForwardsWrongCredential,
            "adapter-forwards-wrong-credential",
        ),
        (
            Fault::AdapterPublishesInconsistentReceipt,
            "adapter-publishes-inconsistent-receipt",
        ),
        (
            Fault::AdapterAcceptsNonPositiveIntegers,
            "adapter-accepts-non-positive-integers",
        ),
        (Fault::AdapterAcceptsRequestId, "adapter-accepts-request-id"),
        (
            Fault::AdapterDropsUnknownInput,
            "adapter-drops-unknown-input",
        ),
        (Fault::AdapterAssumesFullPages, "adapter-assumes-full-pages"),
        (Fault::AdapterLinklessEnds, "adapter-linkless-ends"),
        (
            Fault::AdapterLinkIgnoresQuotes,
            "adapter-link-ignores-quotes",
        ),
        (Fault::AdapterIgnoresOrigin, "adapter-ignores-origin"),
        (Fault::AdapterNoBodyLimit, "adapter-no-body-limit"),
        (Fault::AdapterReadsOneMebibyte, "adapter-reads-one-mebibyte"),
        (
            Fault::AdapterDropsOldRevisions,
            "adapter-drops-old-revisions",
        ),
        (
            Fault::AdapterKnowsEverySession,
            "adapter-knows-every-session",
        ),
        (
            Fault::AdapterSchemaWithoutContext,
            "adapter-schema-without-context",
        ),
        (Fault::ConsentStateUnbound, "consent-state-unbound"),
        (Fault::ConsentStateReusable, "consent-state-reusable"),
        (
            Fault::ConsentStateNeverExpires,
            "consent-state-never-expires",
        ),
        (
            Fault::ConsentStatesCappedTogether,
            "consent-states-capped-together",
        ),
        (
            Fault::ConsentResumeBeforeExchange,
            "consent-resume-before-exchange",
        ),
        (Fault::ConsentSharedVerifier, "consent-shared-verifier"),
        (Fault::ConsentPlainChallenge, "consent-plain-challenge"),
        (Fault::ConsentRedirectFromHost, "consent-redirect-from-host"),
        (Fault::ConsentTokenOnDisk, "consent-token-on-disk"),
        (
            Fault::ConsentSessionEndForgetsNothing,
            "consent-session-end-forgets-nothing",
        ),
        (Fault::ConsentIgnoresBearer, "consent-ignores-bearer"),
        (Fault::ConsentSmallTokenAnswer, "consent-small-token-answer"),
        (Fault::ConsentAnyTokenType, "consent-any-token-type"),
        (
            Fault::AdapterVersionFloatAccepted,
            "adapter-version-float-accepted",
        ),
        (
            Fault::AdapterBearerSchemeCaseSensitive,
            "adapter-bearer-scheme-case-sensitive",
        ),
        (
            Fault::AdapterLostConfirmIsReadError,
            "adapter-lost-confirm-is-read-error",
        ),
        (Fault::ConsentElicitsAnyClient, "consent-elicits-any-client"),
        (
            Fault::AdapterBasicPasswordCutAtColon,
            "adapter-basic-password-cut-at-colon",
        ),
        (
            Fault::AdapterLinkRelNameCaseSensitive,
            "adapter-link-rel-name-case-sensitive",
        ),
        (Fault::AdapterSegmentMax99, "adapter-segment-max-99"),
        (
            Fault::AdapterConfirmTakesSubmitInputs,
            "adapter-confirm-takes-submit-inputs",
        ),
        (
            Fault::AdapterDotSegmentAccepted,
            "adapter-dot-segment-accepted",
        ),
        (Fault::AdapterLoopbackPrefix, "adapter-loopback-prefix"),
        (Fault::ConsentAnyErrorDenied, "consent-any-error-denied"),
        (
            Fault::AdapterGetGrantRepoUnchecked,
            "adapter-get-grant-repo-unchecked",
        ),
        (
            Fault::AdapterUnknownNullIgnored,
            "adapter-unknown-null-ignored",
        ),
        (
            Fault::AdapterContentPriorityOverOne,
            "adapter-content-priority-over-one",
        ),
    ];

    static ACTIVE: OnceLock<Fault> = OnceLock::new();

    /// Whether `fault` is the active one.
    pub fn active(fault: Fault) -> bool {
        ACTIVE.get() == Some(&fault)
    }

    pub(super) fn parse(name: &str) -> Result<Fault, ConfigError> {
        ALL.iter()
            .find(|(_, n)| *n == name)
            .map(|(f, _)| *f)
            .ok_or_else(|| ConfigError::UnknownFault {
                name: name.chars().take(60).collect(),
                valid: ALL.map(|(_, n)| n).join(", "),
            })
    }

    pub(super) fn activate(name: &str) -> Result<(), ConfigError> {
        let _ = ACTIVE.set(parse(name)?);
        tracing::warn!(
            fault = name,
            "built-in fault ACTIVE: this adapter breaks the contract on purpose"
        );
        Ok(())
    }

    /// A fresh canonical UUIDv4 (for `adapter-invents-request-key`), from the
    /// standard library's randomly keyed hasher: no extra dependency.
    pub fn invented_key() -> String {
        let random = |n: u64| RandomState::new().hash_one(n);
        let hex = format!("{:016x}{:016x}", random(1), random(2));
        let (a, b, c, d, e) = (
            &hex[0..8],
            &hex[8..12],
            &hex[13..16],
            &hex[17..20],
            &hex[20..32],
        );
        format!("{a}-{b}-4{c}-a{d}-{e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unset_or_empty_is_no_fault() {
        assert!(init(None).is_ok());
        assert!(init(Some("")).is_ok());
    }

    #[cfg(not(feature = "faults"))]
    #[test]
    fn a_default_build_refuses_any_name() {
        let err = init(Some("adapter-retries-post")).unwrap_err();
        assert!(
            err.to_string().contains("without the `faults` feature"),
            "{err}"
        );
    }

    #[cfg(feature = "faults")]
    #[test]
    fn names_parse_back_and_invented_keys_are_canonical() {
        for (fault, name) in catalogue::ALL {
            assert_eq!(catalogue::parse(name).unwrap(), fault);
            assert!(
                name.starts_with("adapter-") || name.starts_with("consent-"),
                "{name}"
            );
        }
        let err = catalogue::parse("adapter-retries").unwrap_err().to_string();
        assert!(err.contains("adapter-retries-post"), "{err}");
        let (one, two) = (invented_key(), invented_key());
        assert!(crate::validate::is_uuid_v4(&one), "{one}");
        assert_ne!(one, two);
    }

    #[test]
    fn the_listing_names_every_fault() {
        #[cfg(feature = "faults")]
        {
            let listing = listing().unwrap();
            assert_eq!(listing.lines().count(), catalogue::ALL.len());
            assert!(listing.contains("adapter-retries-post\tany\n"), "{listing}");
        }
        #[cfg(not(feature = "faults"))]
        assert_eq!(listing(), None);
    }
}
