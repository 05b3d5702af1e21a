//! Consistency checks on every native success before anything is returned.
//!
//! A Core (or anything between it and the adapter) can answer 200 with a body
//! that is malformed or belongs to something else. The adapter publishes a
//! receipt only when the body is the object it asked for: the right grant,
//! repository, key, agent and Issue binding. The error strings are short and
//! written here; no upstream value is ever quoted in them.

use serde_json::Value;

use crate::edges::{Edge, Edges};
pub use crate::model::Reason;

/// What the caller asked for, to compare the answer against.
#[derive(Debug, Clone, Copy)]
pub struct Expect<'a> {
    /// Requested owner (compared case-insensitively).
    pub owner: &'a str,
    /// Requested repository (compared case-insensitively).
    pub repo: &'a str,
}

fn field<'v>(value: &'v Value, path: &str) -> Result<&'v Value, Reason> {
    path.split('.')
        .try_fold(value, |v, key| v.get(key))
        .ok_or_else(|| format!("{path} missing"))
}

/// A positive integer at `path`.
pub fn int(value: &Value, path: &str) -> Result<i64, Reason> {
    match field(value, path)?.as_i64() {
        Some(n) if n >= Edge::least_native_id() => Ok(n),
        _ => Err(format!("{path} is not a positive integer")),
    }
}

/// A string at `path`.
pub fn string<'v>(value: &'v Value, path: &str) -> Result<&'v str, Reason> {
    field(value, path)?
        .as_str()
        .ok_or_else(|| format!("{path} is not a string"))
}

fn user(value: &Value, path: &str) -> Result<i64, Reason> {
    let id = int(value, &format!("{path}.id"))?;
    string(value, &format!("{path}.login"))?;
    Ok(id)
}

/// A well-formed grant in the expected repository; returns its id.
pub fn grant(grant: &Value, expect: Option<Expect<'_>>) -> Result<i64, Reason> {
    if !grant.is_object() {
        return Err("grant is not an object".into());
    }
    let id = int(grant, "id")?;
    int(grant, "repository.id")?;
    let owner = string(grant, "repository.owner")?;
    let name = string(grant, "repository.name")?;
    if let Some(expect) = expect
        && (!owner.eq_ignore_ascii_case(expect.owner) || !name.eq_ignore_ascii_case(expect.repo))
    {
        return Err("grant belongs to another repository".into());
    }
    user(grant, "agent")?;
    let state = string(grant, "state")?;
    if !matches!(
        state,
        "awaiting_agent" | "awaiting_human" | "active" | "revoked"
    ) {
        return Err("grant state is unknown".into());
    }
    int(grant, "state_revision")?;
    string(grant, "task")?;
    string(grant, "summary")?;
    string(grant, "proposal.schema")?;
    int(grant, "proposal.version")?;
    let digest = string(grant, "proposal.digest")?;
    if digest.len() != 64
        || !digest
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    {
        return Err("grant proposal.digest is not 64 lowercase hex".into());
    }
    Ok(id)
}

/// The grant is the requested one.
pub fn grant_is(grant_value: &Value, expect: Expect<'_>, grant_id: i64) -> Result<(), Reason> {
    if grant(grant_value, Some(expect))? != grant_id {
        return Err("grant id differs from the requested one".into());
    }
    Ok(())
}

/// The grant carries exactly the triple the caller sent.
pub fn same_proposal(grant: &Value, digest: &str) -> Result<(), Reason> {
    let same = grant.pointer("/proposal/schema").and_then(Value::as_str)
        == Some(crate::validate::PROPOSAL_SCHEMA)
        && grant.pointer("/proposal/version").and_then(Value::as_i64)
            == Some(crate::validate::PROPOSAL_VERSION)
        && grant.pointer("/proposal/digest").and_then(Value::as_str) == Some(digest);
    if same {
        Ok(())
    } else {
        Err("grant proposal differs from the sent triple".into())
    }
}

/// `{grant, submission}` for the requested grant and key, bound consistently.
pub fn receipt(
    body: &Value,
    expect: Expect<'_>,
    grant_id: i64,
    request_key: &str,
) -> Result<(), Reason> {
    let grant_value = field(body, "grant")?;
    grant_is(grant_value, expect, grant_id)?;
    let submission = field(body, "submission")?;
    if int(submission, "grant_id")? != grant_id {
        return Err("submission.grant_id differs from the grant".into());
    }
    if string(submission, "request_key")? != request_key {
        return Err("submission.request_key differs from the sent key".into());
    }
    if !matches!(
        string(submission, "status")?,
        "submitted" | "issue_deleted" | "issue_binding_changed"
    ) {
        return Err("submission.status is unknown".into());
    }
    if string(submission, "review_state")? != "awaiting_review" {
        return Err("submission.review_state is not awaiting_review".into());
    }
    if user(submission, "submitted_by")? != int(grant_value, "agent.id")? {
        return Err("submission was not made by the grant's agent".into());
    }
    int(submission, "issue.id")?;
    int(submission, "issue.index")?;
    string(submission, "issue.html_url")?;
    if int(submission, "issue.repository_id")? != int(grant_value, "repository.id")? {
        return Err("submission.issue.repository_id differs from the grant's repository".into());
    }
    Ok(())
}

/// A repository object for the requested owner/repo.
pub fn repository(repo: &Value, expect: Expect<'_>) -> Result<(), Reason> {
    int(repo, "id")?;
    user(repo, "owner")?;
    let owner = string(repo, "owner.login")?;
    let name = string(repo, "name")?;
    string(repo, "full_name")?;
    if !owner.eq_ignore_ascii_case(expect.owner) || !name.eq_ignore_ascii_case(expect.repo) {
        return Err("repository differs from the requested one".into());
    }
    Ok(())
}

/// An issue object; when the Core names its repository, it must be the requested one.
pub fn issue(issue: &Value, expect: Expect<'_>) -> Result<i64, Reason> {
    if !issue.is_object() {
        return Err("issue is not an object".into());
    }
    int(issue, "id")?;
    let index = int(issue, "index")?;
    string(issue, "title")?;
    string(issue, "body")?;
    let repository_id = int(issue, "repository_id")?;
    if let Some(repo) = issue.get("repository").filter(|r| !r.is_null()) {
        if int(repo, "id")? != repository_id {
            return Err("issue.repository.id differs from issue.repository_id".into());
        }
        let full_name = string(repo, "full_name")?;
        if !full_name.eq_ignore_ascii_case(&format!("{}/{}", expect.owner, expect.repo)) {
            return Err("issue belongs to another repository".into());
        }
    }
    Ok(index)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sample() -> Value {
        json!({
            "grant": {"id": 17, "repository": {"id": 3, "owner": "alice", "name": "lab", "full_name": "alice/lab"},
                      "agent": {"id": 9, "login": "lab-bot"}, "state": "active", "state_revision": 3,
                      "task": "t", "summary": "s",
                      "proposal": {"schema": "agent_work_grant.v1", "version": 1, "digest": "ab".repeat(32)}},
            "submission": {"grant_id": 17, "request_key": "k", "status": "submitted", "review_state": "awaiting_review",
                           "submitted_by": {"id": 9, "login": "lab-bot"},
                           "issue": {"id": 123, "index": 4, "repository_id": 3, "html_url": "http://x/alice/lab/issues/4"}}
        })
    }

    const LAB: Expect<'static> = Expect {
        owner: "Alice",
        repo: "LAB",
    };

    #[test]
    fn a_consistent_receipt_passes() {
        assert_eq!(receipt(&sample(), LAB, 17, "k"), Ok(()));
    }

    #[test]
    fn each_inconsistency_is_refused() {
        let cases: [(&str, Value); 8] = [
            ("/grant/id", json!(18)),
            ("/grant/repository/name", json!("other")),
            ("/submission/request_key", json!("k2")),
            ("/submission/grant_id", json!(16)),
            ("/submission/issue/repository_id", json!(4)),
            ("/submission/submitted_by/id", json!(10)),
            ("/grant/agent", json!(null)),
            ("/grant/state_revision", json!(0)),
        ];
        for (pointer, value) in cases {
            let mut body = sample();
            *body.pointer_mut(pointer).unwrap() = value;
            assert!(receipt(&body, LAB, 17, "k").is_err(), "{pointer} accepted");
        }
    }
}
