//! The domain's faults: [`Bent`] answers each edge of the rules
//! (`domain::edges`) as the active fault bends it, and honestly otherwise.
//! Each override names the faults it serves.

use crate::domain::edges::{Edges, Honest};
use crate::domain::envelope;
use crate::domain::grant::GrantState;

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
    fn shown_patterns(&self, envelope: &envelope::Stored) -> Option<Vec<String>> {
        if fault!(EnvelopePatternsExposed) {
            return Some(envelope.patterns());
        }
        Honest.shown_patterns(envelope)
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
    fn is_request_key(&self, value: &str) -> bool {
        if fault!(RequestKeyLenient) {
            return value.len() == 36
                && value.bytes().enumerate().all(|(i, b)| match i {
                    8 | 13 | 18 | 23 => b == b'-',
                    _ => b.is_ascii_hexdigit(),
                });
        }
        Honest.is_request_key(value)
    }

    /// `oauth-login-open-redirect`: any non-empty `redirect_to`.
    fn is_local_redirect(&self, target: &str) -> bool {
        if fault!(OauthLoginOpenRedirect) {
            return !target.is_empty();
        }
        Honest.is_local_redirect(target)
    }
}
