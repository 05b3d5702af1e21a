//! The Issue page: title, poster, body kept byte for byte, and the
//! "via agent work grant #N" attribution for grant submissions.

use axum::extract::State;
use axum::response::{IntoResponse, Response};

use super::html::{self, escape, pre};
use super::session::Session;
use crate::error::PageError;
use crate::extract::{WebPath, path_id};
use crate::service::issues;
use crate::state::AppState;

/// `GET /{owner}/{repo}/issues/{index}`: whoever may read the repository,
/// anonymous included for public ones.
pub async fn issues_show_page(
    State(state): State<AppState>,
    session: Session,
    WebPath((owner, repo, index)): WebPath<(String, String, String)>,
) -> Result<Response, PageError> {
    let index = path_id(&index)?;
    let issue = issues::get(&state, session.user.as_ref(), &owner, &repo, index).await?;
    let grant = issue
        .grant_id
        .map(|id| format!("<p class=\"issue-grant\">via agent work grant #{id}</p>\n"))
        .unwrap_or_default();
    let body = format!(
        "<h1 class=\"issue-title\">{}</h1>\n\
         <p class=\"issue-meta\"><span class=\"issue-repo\">{}/{}</span> \
         #<span class=\"issue-index\">{}</span> opened by \
         <span class=\"issue-poster\">{}</span> at <span class=\"issue-created-at\">{}</span></p>\n\
         {grant}{}",
        escape(&issue.title),
        escape(&issue.repo_owner),
        escape(&issue.repo_name),
        issue.index,
        escape(&issue.poster_login),
        escape(&issue.created_at),
        pre("issue-body", &issue.body)
    );
    let user = session.user.as_ref().map(|u| u.login.as_str());
    Ok(html::page(&issue.title, user, &body).into_response())
}
