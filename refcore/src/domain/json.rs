//! JSON shapes shared by several routes: user references, repositories and
//! Issues (Forgejo-like, plus the Core-owned `agent_work_grant`).

use serde::Serialize;

/// `{id, login}`: how a user appears inside other objects.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct UserRef {
    /// The user's id.
    pub id: i64,
    /// The user's login.
    pub login: String,
}

/// A full user, as the admin API answers.
#[derive(Debug, Clone, Serialize)]
pub struct UserJson {
    /// The user's id.
    pub id: i64,
    /// The user's login.
    pub login: String,
    /// The e-mail given at creation.
    pub email: String,
    /// `individual` or `bot`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Site admin flag.
    pub is_admin: bool,
}

/// A repository, as `GET /repos/{owner}/{repo}` answers.
#[derive(Debug, Clone, Serialize)]
pub struct RepoJson {
    /// The repository id.
    pub id: i64,
    /// The owner.
    pub owner: UserRef,
    /// The repository name.
    pub name: String,
    /// `owner/name`.
    pub full_name: String,
    /// Visibility.
    pub private: bool,
    /// The browser address.
    pub html_url: String,
}

/// The Core-owned attribution of an Issue made by a grant submission.
#[derive(Debug, Clone, Serialize)]
pub struct IssueGrantJson {
    /// The grant.
    pub grant_id: i64,
    /// The submission's request key.
    pub request_key: String,
}

/// `{id, full_name}` inside an Issue.
#[derive(Debug, Clone, Serialize)]
pub struct IssueRepoJson {
    /// The repository id.
    pub id: i64,
    /// `owner/name`.
    pub full_name: String,
}

/// An Issue.
#[derive(Debug, Clone, Serialize)]
pub struct IssueJson {
    /// Global id.
    pub id: i64,
    /// Per-repository index.
    pub index: i64,
    /// Same as `index`, as Forgejo names it.
    pub number: i64,
    /// The title, whole.
    pub title: String,
    /// The body, whole.
    pub body: String,
    /// The poster.
    pub user: UserRef,
    /// The browser address.
    pub html_url: String,
    /// The repository id.
    pub repository_id: i64,
    /// The repository.
    pub repository: IssueRepoJson,
    /// Set only for grant submissions.
    pub agent_work_grant: Option<IssueGrantJson>,
    /// RFC 3339.
    pub created_at: String,
}
