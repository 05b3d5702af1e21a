//! The one place that knows how to talk to a Core: every route, request body
//! and form field name of the contract (spec §3–§5). The setup, native,
//! browser and bot clients all build their requests from here, so a route
//! written twice cannot drift.

use serde_json::{Value, json};

use crate::views::{GrantRef, NewIssue, Proposal};
use crate::vocab::{Abort, Step};

/// Form field names of the browser surface (spec §4).
pub mod fields {
    /// The hidden CSRF token of every state-changing form.
    pub const CSRF: &str = "_csrf";
    /// The header a CSRF token may travel in instead.
    pub const CSRF_HEADER: &str = "X-Csrf-Token";
    /// Login form: the login.
    pub const USER_NAME: &str = "user_name";
    /// Login form: the password.
    pub const PASSWORD: &str = "password";
    /// New-grant form: the bot's login.
    pub const AGENT: &str = "agent";
    /// New-grant form: the task.
    pub const TASK: &str = "task";
    /// New-grant form: the summary.
    pub const SUMMARY: &str = "summary";
    /// New-grant form: the optional repository grant envelope, JSON text (spec §8).
    pub const REPOSITORY_GRANT: &str = "repository_grant";
    /// Approve and withdraw forms: the compare-and-swap value.
    pub const STATE_REVISION: &str = "state_revision";
}

/// A human's decision on a grant page (spec §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// `awaiting_human` → `active`.
    Approve,
    /// Any non-revoked state → `revoked`.
    Withdraw,
}

impl Decision {
    /// The last path segment of its form's action.
    pub fn segment(self) -> &'static str {
        match self {
            Decision::Approve => "approve",
            Decision::Withdraw => "withdraw",
        }
    }
}

/// `/api/v1/version`.
pub const VERSION: &str = "/api/v1/version";
/// The login page and form action.
pub const LOGIN: &str = "/user/login";
/// The logout action.
pub const LOGOUT: &str = "/user/logout";
/// The contract name `/api/v1/version` must answer.
pub const CONTRACT: &str = "agent_work_grant.v1";

/// `GET /api/v1/agent-work-grants?<query>`.
pub fn grant_list(query: &str) -> String {
    if query.is_empty() {
        "/api/v1/agent-work-grants".to_owned()
    } else {
        format!("/api/v1/agent-work-grants?{query}")
    }
}

/// The native route of one grant.
pub fn grant(g: &GrantRef) -> String {
    format!(
        "/api/v1/repos/{}/{}/agent-work-grants/{}",
        g.owner, g.repo, g.id
    )
}

/// `POST …/confirm`.
pub fn confirm(g: &GrantRef) -> String {
    format!("{}/confirm", grant(g))
}

/// `POST …/issues` (submit).
pub fn submit(g: &GrantRef) -> String {
    format!("{}/issues", grant(g))
}

/// `GET …/submissions/{request_key}`.
pub fn submission(g: &GrantRef, request_key: &str) -> String {
    format!("{}/submissions/{request_key}", grant(g))
}

/// `/api/v1/repos/{owner/repo}/issues/{index}`.
pub fn issue(repo: &str, index: i64) -> String {
    format!("/api/v1/repos/{repo}/issues/{index}")
}

/// `/api/v1/repos/{owner/repo}`: one repository.
pub fn repository(repo: &str) -> String {
    format!("/api/v1/repos/{repo}")
}

/// `/api/v1/repos/{owner/repo}/issues`: ordinary Issues.
pub fn issues(repo: &str) -> String {
    format!("/api/v1/repos/{repo}/issues")
}

/// `/api/v1/repos/{owner/repo}/collaborators/{login}`.
pub fn collaborator(repo: &str, login: &str) -> String {
    format!("/api/v1/repos/{repo}/collaborators/{login}")
}

/// `/api/v1/users/{login}/tokens`.
pub fn tokens(login: &str) -> String {
    format!("/api/v1/users/{login}/tokens")
}

/// `/api/v1/users/{login}/tokens/{id}`: one token (the `token-delete`
/// setup extension deletes it).
pub fn token(login: &str, id: i64) -> String {
    format!("/api/v1/users/{login}/tokens/{id}")
}

/// The body of an Issue edit (`PATCH …/issues/{index}`, the `issue-edit`
/// setup extension): only the members given.
pub fn issue_edit_body(title: Option<&str>, body: Option<&str>) -> Value {
    let mut edit = json!({});
    if let Some(title) = title {
        edit["title"] = json!(title);
    }
    if let Some(body) = body {
        edit["body"] = json!(body);
    }
    edit
}

/// `/api/v1/admin/users`.
pub const ADMIN_USERS: &str = "/api/v1/admin/users";

/// `/api/v1/admin/users/{owner}/repos`.
pub fn admin_repos(owner: &str) -> String {
    format!("/api/v1/admin/users/{owner}/repos")
}

/// `/api/v1/admin/issues/{id}/move`.
pub fn move_issue(issue_id: i64) -> String {
    format!("/api/v1/admin/issues/{issue_id}/move")
}

/// The grant list page of a repository.
pub fn grants_page(repo: &str) -> String {
    format!("/{repo}/agent-work-grants")
}

/// The new-grant page of a repository.
pub fn new_grant_page(repo: &str) -> String {
    format!("/{repo}/agent-work-grants/new")
}

/// A grant's page.
pub fn grant_page(g: &GrantRef) -> String {
    format!("/{}/{}/agent-work-grants/{}", g.owner, g.repo, g.id)
}

/// The action of a grant's approve or withdraw form.
pub fn decision(g: &GrantRef, d: Decision) -> String {
    format!("{}/{}", grant_page(g), d.segment())
}

/// An Issue's page.
pub fn issue_page(repo: &str, index: i64) -> String {
    format!("/{repo}/issues/{index}")
}

/// The grant id at the end of a `/{owner}/{repo}/agent-work-grants/{id}`
/// URL: where preparing a grant lands.
pub fn grant_id_of_page(url: &url::Url) -> Option<i64> {
    let segments: Vec<&str> = url.path_segments()?.collect();
    match segments.as_slice() {
        [_, _, "agent-work-grants", id] => id.parse().ok(),
        _ => None,
    }
}

/// The confirm body (spec §3): exactly the triple.
pub fn confirm_body(p: &Proposal) -> Value {
    json!({
        "proposal_schema": p.schema,
        "proposal_version": p.version,
        "proposal_digest": p.digest,
    })
}

/// The submit body (spec §3): the triple, the key, title and body.
pub fn submit_body(p: &Proposal, issue: &NewIssue) -> Value {
    let mut body = confirm_body(p);
    body["request_key"] = json!(issue.request_key);
    body["title"] = json!(issue.title);
    body["body"] = json!(issue.body);
    body
}

/// The tool arguments naming a grant (spec §6).
pub fn grant_args(g: &GrantRef) -> Value {
    json!({"owner": g.owner, "repo": g.repo, "grant_id": g.id})
}

/// Splits `owner/repo`.
pub fn split_repo(repo: &str) -> Step<(&str, &str)> {
    repo.split_once('/')
        .ok_or_else(|| Abort::errored(format!("repository `{repo}` is not owner/name")))
}

/// Delegated consent (spec §9): the Core's OAuth 2.0 routes, the adapter's
/// callback, and PKCE as the contract fixes it (S256 only).
pub mod oauth {
    use base64::Engine as _;
    use sha2::{Digest, Sha256};

    /// `POST` (setup surface): registers an OAuth application.
    pub const APPLICATIONS: &str = "/api/v1/user/applications/oauth2";
    /// `GET`: the authorization endpoint (browser, consent page).
    pub const AUTHORIZE: &str = "/login/oauth/authorize";
    /// `POST`: the consent form's action.
    pub const GRANT: &str = "/login/oauth/grant";
    /// `POST` (form): the token endpoint.
    pub const TOKEN: &str = "/login/oauth/access_token";
    /// The adapter's callback path under its public URL.
    pub const CALLBACK: &str = "/mcp/oauth/callback";
    /// The consent form's decision buttons, Forgejo's (spec §9 "as
    /// Forgejo's"): `granted=true` grants, `granted=false` denies.
    pub const GRANTED: &str = "granted";
    /// The scopes a consented token may carry at most.
    pub const MAX_SCOPES: [&str; 2] = ["read:repository", "write:issue"];

    /// The body registering a public client with these redirect URIs.
    pub fn application_body(name: &str, redirect_uris: &[String]) -> serde_json::Value {
        serde_json::json!({
            "name": name,
            "redirect_uris": redirect_uris,
            "confidential_client": false,
        })
    }

    /// The S256 code challenge of `verifier`: BASE64URL(SHA-256(verifier)),
    /// unpadded (RFC 7636 §4.2).
    pub fn s256(verifier: &str) -> String {
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
    }

    /// A fresh PKCE verifier (43 base64url characters, 256 random bits).
    pub fn verifier() -> String {
        let bytes: Vec<u8> = uuid::Uuid::new_v4()
            .as_bytes()
            .iter()
            .chain(uuid::Uuid::new_v4().as_bytes())
            .copied()
            .collect();
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
    }

    /// True when `s` is made only of base64url characters.
    pub fn is_base64url(s: &str) -> bool {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn s256_matches_rfc_7636_appendix_b() {
            assert_eq!(
                s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
                "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
            );
        }

        #[test]
        fn a_verifier_is_43_base64url_characters() {
            let v = verifier();
            assert_eq!(v.len(), 43);
            assert!(is_base64url(&v));
            assert_ne!(v, verifier());
        }
    }
}
