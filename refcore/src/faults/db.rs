//! Storage's faults: [`Bent`] answers each edge of `db::edges` as the
//! active fault bends it, and honestly otherwise; each override names the
//! faults it serves. Then the queries only a fault runs (a real Core never
//! does), for the service's faults (`faults::service`).

use sqlx::AnyConnection;

use crate::db::edges::{Edges, Honest};
use crate::db::oauth::{CODE_COLUMNS, CodeRow, code_from};
use crate::db::submissions::{SUBMISSION_SELECT, submission_from};
use crate::domain::grant::GrantState;
use crate::domain::submission::Submission;

/// Storage's edges in a faults build.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bent;

impl Edges for Bent {
    /// `list-shows-invisible-grants`: every repository (`$2` stays
    /// referenced so both backends accept the same binds).
    fn listed_repos() -> &'static str {
        if fault!(ListShowsInvisibleGrants) {
            return "$2 IN (0, 1)";
        }
        Honest::listed_repos()
    }

    /// `withdraw-clears-approval`.
    fn transition_stamp(to: GrantState) -> &'static str {
        if fault!(WithdrawClearsApproval) && to == GrantState::Revoked {
            return "revoked_at = $5, approved_at = NULL, approved_by = NULL";
        }
        Honest::transition_stamp(to)
    }

    /// `withdraw-keeps-revision`: a withdrawal before approval.
    fn revision_step(from: GrantState, to: GrantState) -> i64 {
        if fault!(WithdrawKeepsRevision)
            && (from, to) == (GrantState::AwaitingHuman, GrantState::Revoked)
        {
            return 0;
        }
        Honest::revision_step(from, to)
    }

    /// `body-truncated`: at most 65,536 bytes, cut on a char boundary.
    fn stored_body(body: &str) -> &str {
        if fault!(BodyTruncated) {
            let mut end = body.len().min(65_536);
            while !body.is_char_boundary(end) {
                end -= 1;
            }
            return &body[..end];
        }
        Honest::stored_body(body)
    }

    /// `collaborator-demotion-ignored`: the permission already held stays.
    fn collaborator_again() -> &'static str {
        if fault!(CollaboratorDemotionIgnored) {
            return "DO NOTHING";
        }
        Honest::collaborator_again()
    }

    /// `deleted-token-basic-still-works`: the token is only marked deleted
    /// (`faults::auth::DELETED`), and only the token schemes check the mark.
    fn delete_token() -> &'static str {
        if fault!(DeletedTokenBasicStillWorks) {
            return "UPDATE access_tokens SET name = 'deleted:' || name \
                    WHERE user_id = $1 AND id = $2";
        }
        Honest::delete_token()
    }
}

/// For `request-key-global` (a key is scoped to its grant): the oldest
/// receipt of `request_key` in any grant.
pub(super) async fn receipt_in_any_grant(
    conn: &mut AnyConnection,
    request_key: &str,
) -> Result<Option<Submission>, sqlx::Error> {
    let row = sqlx::query(&format!(
        "{SUBMISSION_SELECT} WHERE s.request_key = $1 ORDER BY s.id ASC LIMIT 1"
    ))
    .bind(request_key)
    .fetch_optional(conn)
    .await?;
    row.as_ref().map(submission_from).transpose()
}

/// For `deleted-issue-frees-key` (a real Core keeps receipts forever): the
/// receipts of an Issue deleted.
pub(super) async fn delete_receipts_of_issue(
    conn: &mut AnyConnection,
    issue_id: i64,
) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM agent_work_submissions WHERE issue_id = $1")
        .bind(issue_id)
        .execute(conn)
        .await?;
    Ok(())
}

/// For `oauth-code-reusable` (a real exchange takes the code,
/// `db::oauth::take_code`): the code read without spending it.
pub(super) async fn peek_code(
    conn: &mut AnyConnection,
    code_hash: &str,
) -> Result<Option<CodeRow>, sqlx::Error> {
    let row = sqlx::query(&format!(
        "SELECT {CODE_COLUMNS} FROM oauth_codes WHERE code_hash = $1"
    ))
    .bind(code_hash)
    .fetch_optional(conn)
    .await?;
    row.as_ref().map(code_from).transpose()
}
