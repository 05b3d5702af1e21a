//! The state every handler shares.

use std::sync::Arc;
use std::time::Duration;

use crate::db::Db;

/// Cheap to clone: handles and shared configuration only.
#[derive(Clone)]
pub struct AppState {
    /// The database.
    pub db: Db,
    /// Base for `html_url`, `Link` and redirects, without a trailing slash.
    pub public_url: Arc<str>,
    /// Key for CSRF signatures.
    pub secret_key: Arc<[u8]>,
    /// Lifetime of a `_csrf` token.
    pub csrf_ttl: Duration,
    /// Lifetime of an OAuth authorization code.
    pub oauth_code_ttl: Duration,
    /// Lifetime of an access token from the OAuth token endpoint.
    pub oauth_token_ttl: Duration,
}

impl AppState {
    /// The browser address of an Issue.
    pub fn issue_url(&self, owner: &str, repo: &str, index: i64) -> String {
        format!("{}/{owner}/{repo}/issues/{index}", self.public_url)
    }

    /// The browser address of a repository.
    pub fn repo_url(&self, owner: &str, repo: &str) -> String {
        format!("{}/{owner}/{repo}", self.public_url)
    }
}
