//! Native JSON as a Core would send it, for the scripted upstream.

use serde_json::{Value, json};

pub const DIGEST: &str = "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0";
pub const KEY: &str = "9b2f3c4d-1e2f-4a3b-8c4d-5e6f7a8b9c0d";
pub const GRANT_PATH: &str = "/api/v1/repos/alice/lab/agent-work-grants/17";
pub const CONFIRM_PATH: &str = "/api/v1/repos/alice/lab/agent-work-grants/17/confirm";
pub const SUBMIT_PATH: &str = "/api/v1/repos/alice/lab/agent-work-grants/17/issues";
pub const READBACK_PATH: &str =
    "/api/v1/repos/alice/lab/agent-work-grants/17/submissions/9b2f3c4d-1e2f-4a3b-8c4d-5e6f7a8b9c0d";
pub const LIST_PATH: &str = "/api/v1/agent-work-grants";
pub const ISSUES_PATH: &str = "/api/v1/repos/alice/lab/issues";
/// Text that must never reach the caller or the logs when it is in an upstream error body.
pub const SENTINEL: &str = "UPSTREAM-BODY-SENTINEL-7f3a";

/// A grant of repository alice/lab (id 3) for lab-bot (id 9).
pub fn grant(id: i64, state: &str) -> Value {
    json!({
        "id": id,
        "repository": {"id": 3, "owner": "alice", "name": "lab", "full_name": "alice/lab"},
        "agent": {"id": 9, "login": "lab-bot"},
        "prepared_by": {"id": 2, "login": "alice"},
        "approved_by": null,
        "state": state,
        "state_revision": 1,
        "task": "whole task text",
        "summary": "whole summary text",
        "proposal": {"schema": "agent_work_grant.v1", "version": 1, "digest": DIGEST},
        "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
        "confirmed_at": null, "approved_at": null, "revoked_at": null
    })
}

/// `{grant, submission}` for grant 17 and `key`.
pub fn receipt(key: &str) -> Value {
    json!({
        "grant": grant(17, "active"),
        "submission": {
            "grant_id": 17,
            "request_key": key,
            "status": "submitted",
            "review_state": "awaiting_review",
            "submitted_by": {"id": 9, "login": "lab-bot"},
            "issue": {"id": 123, "index": 4, "repository_id": 3, "html_url": "http://core/alice/lab/issues/4"},
            "created_at": "2026-01-01T00:00:00Z"
        }
    })
}

/// Repository alice/lab.
pub fn repository() -> Value {
    json!({"id": 3, "owner": {"id": 2, "login": "alice"}, "name": "lab", "full_name": "alice/lab",
           "private": false, "html_url": "http://core/alice/lab"})
}

/// An ordinary issue of alice/lab.
pub fn issue(index: i64, title: &str, body: &str) -> Value {
    json!({"id": 100 + index, "index": index, "number": index, "title": title, "body": body,
           "user": {"id": 9, "login": "lab-bot"}, "html_url": format!("http://core/alice/lab/issues/{index}"),
           "repository_id": 3, "repository": {"id": 3, "full_name": "alice/lab"},
           "agent_work_grant": null, "created_at": "2026-01-01T00:00:00Z"})
}

/// Arguments of `get_agent_work_grant` for grant 17.
pub fn grant_args() -> Value {
    json!({"owner": "alice", "repo": "lab", "grant_id": 17})
}

/// Arguments of `confirm_agent_work_grant` for grant 17.
pub fn confirm_args() -> Value {
    json!({"owner": "alice", "repo": "lab", "grant_id": 17, "proposal_schema": "agent_work_grant.v1",
           "proposal_version": 1, "proposal_digest": DIGEST})
}

/// Arguments of `submit_agent_work_proposal` for grant 17 and [`KEY`].
pub fn submit_args(title: &str, body: &str) -> Value {
    let mut args = confirm_args();
    args["request_key"] = KEY.into();
    args["title"] = title.into();
    args["body"] = body.into();
    args
}

/// Arguments of `get_agent_work_submission` for grant 17 and [`KEY`].
pub fn readback_args() -> Value {
    json!({"owner": "alice", "repo": "lab", "grant_id": 17, "request_key": KEY})
}

/// Process environment with a token.
pub const TOKEN_ENV: &[(&str, &str)] = &[("AWG_TOKEN", "process-token-5c1d")];
