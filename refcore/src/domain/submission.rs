//! Submission receipts (spec §3). The Issue binding is historical and never
//! changes; `status` is computed when the receipt is read.

use serde::Serialize;

use super::edges::edges;
use super::grant::GrantJson;
use super::json::UserRef;

/// A stored submission with where its Issue is now.
#[derive(Debug, Clone)]
pub struct Submission {
    /// The grant.
    pub grant_id: i64,
    /// The caller's idempotency key.
    pub request_key: String,
    /// Title as submitted, for replay comparison.
    pub title: String,
    /// Body as submitted, for replay comparison.
    pub body: String,
    /// The bot that submitted.
    pub submitted_by: UserRef,
    /// Issue id at submission.
    pub issue_id: i64,
    /// Issue index at submission.
    pub issue_index: i64,
    /// Issue repository at submission.
    pub issue_repo_id: i64,
    /// Issue address at submission.
    pub issue_html_url: String,
    /// RFC 3339.
    pub created_at: String,
    /// Where the Issue lives now: `(repository id, index)`, `None` if deleted.
    pub current: Option<(i64, i64)>,
}

/// Read-time status of a receipt.
pub fn status(receipt: (i64, i64), current: Option<(i64, i64)>) -> &'static str {
    match current {
        None => "issue_deleted",
        Some(now) if edges().binding_kept(receipt, now) => "submitted",
        Some(_) => "issue_binding_changed",
    }
}

/// `issue` inside a submission: the values at submission time.
#[derive(Debug, Clone, Serialize)]
pub struct ReceiptIssueJson {
    /// Issue id.
    pub id: i64,
    /// Index at submission.
    pub index: i64,
    /// Repository at submission.
    pub repository_id: i64,
    /// Address at submission.
    pub html_url: String,
}

/// The submission JSON of spec §3.
#[derive(Debug, Clone, Serialize)]
pub struct SubmissionJson {
    /// The grant.
    pub grant_id: i64,
    /// The request key.
    pub request_key: String,
    /// `submitted`, `issue_deleted` or `issue_binding_changed`.
    pub status: &'static str,
    /// Always `awaiting_review`: a receipt is not acceptance.
    pub review_state: &'static str,
    /// The submitting bot.
    pub submitted_by: UserRef,
    /// The historical Issue binding.
    pub issue: ReceiptIssueJson,
    /// RFC 3339.
    pub created_at: String,
}

/// `{grant, submission}`: what submit and readback answer.
#[derive(Debug, Clone, Serialize)]
pub struct GrantSubmissionJson {
    /// The grant now.
    pub grant: GrantJson,
    /// The receipt.
    pub submission: SubmissionJson,
}

impl Submission {
    /// The wire form, with the status computed now.
    pub fn to_json(&self) -> SubmissionJson {
        SubmissionJson {
            grant_id: self.grant_id,
            request_key: self.request_key.clone(),
            status: status((self.issue_repo_id, self.issue_index), self.current),
            review_state: "awaiting_review",
            submitted_by: self.submitted_by.clone(),
            issue: ReceiptIssueJson {
                id: self.issue_id,
                index: self.issue_index,
                repository_id: self.issue_repo_id,
                html_url: self.issue_html_url.clone(),
            },
            created_at: super::grant::wire_time(&self.created_at),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::status;

    #[test]
    fn status_follows_the_issue() {
        assert_eq!(status((3, 4), Some((3, 4))), "submitted");
        assert_eq!(status((3, 4), None), "issue_deleted");
        assert_eq!(status((3, 4), Some((5, 1))), "issue_binding_changed");
        assert_eq!(status((3, 4), Some((3, 5))), "issue_binding_changed");
    }
}
