//! Grant pages for repository admins: list, prepare, show, approve and
//! withdraw. Not signed in → 303 to the login page; signed in without admin
//! permission → 404; successful POSTs → 303 to the grant's page.

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Redirect, Response};

use super::edges::{Edge, Edges};
use super::html::{self, escape, hidden, pre};
use super::login::csrf_header;
use super::session::Session;
use crate::db::repos::RepoRow;
use crate::domain::grant::{Grant, GrantState, Transition};
use crate::domain::submission::Submission;
use crate::error::{AppError, PageError};
use crate::extract::{FormBody, WebPath, path_id};
use crate::service::human;
use crate::state::AppState;

fn base(repo: &RepoRow) -> String {
    format!("/{}/{}/agent-work-grants", repo.owner_login, repo.name)
}

/// `GET /{owner}/{repo}/agent-work-grants`.
pub async fn grants_list_page(
    State(state): State<AppState>,
    session: Session,
    WebPath((owner, repo)): WebPath<(String, String)>,
) -> Result<Response, PageError> {
    let user = match session.user_or_login() {
        Ok(u) => u,
        Err(redirect) => return Ok(redirect.into_response()),
    };
    let repo = human::admin_repo(&state.db, user, &owner, &repo).await?;
    let grants = human::list(&state.db, &repo).await?;
    let rows: String = grants
        .iter()
        .map(|g| {
            format!(
                "<tr class=\"grant-row\"><td><a class=\"grant-link\" href=\"{}/{}\">#{}</a></td>\
                 <td class=\"grant-state\">{}</td><td class=\"grant-agent\">{}</td>\
                 <td class=\"grant-revision\">{}</td></tr>\n",
                escape(&base(&repo)),
                g.id,
                g.id,
                g.state.as_str(),
                escape(&g.agent.login),
                g.state_revision
            )
        })
        .collect();
    let body = format!(
        "<h1>Agent work grants of {}</h1>\n<p><a class=\"grant-new\" href=\"{}/new\">Prepare a grant</a></p>\n\
         <table class=\"grants\">\n<tr><th>Grant</th><th>State</th><th>Agent</th><th>Revision</th></tr>\n{rows}</table>",
        escape(&repo.full_name()),
        escape(&base(&repo))
    );
    Ok(html::page("Agent work grants", Some(&user.login), &body).into_response())
}

/// `GET /{owner}/{repo}/agent-work-grants/new`.
pub async fn grants_new_page(
    State(state): State<AppState>,
    session: Session,
    WebPath((owner, repo)): WebPath<(String, String)>,
) -> Result<Response, PageError> {
    let user = match session.user_or_login() {
        Ok(u) => u,
        Err(redirect) => return Ok(redirect.into_response()),
    };
    let repo = human::admin_repo(&state.db, user, &owner, &repo).await?;
    let body = format!(
        "<h1>Prepare an agent work grant for {}</h1>\n\
         <form method=\"post\" action=\"{}\" class=\"grant-prepare\">\n{}\n\
         <label>Agent (bot login) <input type=\"text\" name=\"agent\" required></label>\n\
         <label>Task <textarea name=\"task\" required></textarea></label>\n\
         <label>Summary <textarea name=\"summary\" required></textarea></label>\n\
         <label>Repository grant (optional JSON envelope, spec §8) \
         <textarea name=\"repository_grant\"></textarea></label>\n\
         <button type=\"submit\">Prepare</button>\n</form>",
        escape(&repo.full_name()),
        escape(&base(&repo)),
        hidden("_csrf", &session.csrf(&state))
    );
    Ok(html::page("Prepare a grant", Some(&user.login), &body).into_response())
}

/// `POST /{owner}/{repo}/agent-work-grants` (`_csrf`, `agent`, `task`,
/// `summary`, optional `repository_grant`): prepares a grant, 303 to its
/// page; an invalid envelope is a 422 page naming the rule it breaks.
pub async fn grants_create(
    State(state): State<AppState>,
    session: Session,
    headers: HeaderMap,
    WebPath((owner, repo)): WebPath<(String, String)>,
    FormBody(form): FormBody,
) -> Result<Response, PageError> {
    session.check_csrf(&state, &form, csrf_header(&headers))?;
    let user = match session.user_or_login() {
        Ok(u) => u,
        Err(redirect) => return Ok(redirect.into_response()),
    };
    let repo = human::admin_repo(&state.db, user, &owner, &repo).await?;
    let field = |name: &str| -> Result<String, PageError> {
        Ok(form
            .get(name)?
            .ok_or_else(|| AppError::invalid(format!("{name} is required")))?
            .to_string())
    };
    let (agent, task, summary) = (field("agent")?, field("task")?, field("summary")?);
    let repository_grant = form.get("repository_grant")?;
    let preparation = human::Preparation {
        agent: &agent,
        task: &task,
        summary: &summary,
        repository_grant,
    };
    let id = human::prepare(&state.db, user, &repo, &preparation).await?;
    Ok(Redirect::to(&format!("{}/{id}", base(&repo))).into_response())
}

fn receipts_table(receipts: &[Submission]) -> String {
    if receipts.is_empty() {
        return "<p class=\"no-receipts\">No submissions yet.</p>".to_string();
    }
    let rows: String = receipts
        .iter()
        .map(|s| {
            let json = s.to_json();
            format!(
                "<tr class=\"receipt\"><td class=\"receipt-key\">{}</td><td class=\"receipt-status\">{}</td>\
                 <td><a class=\"receipt-issue\" href=\"{}\">issue #{}</a></td>\
                 <td class=\"receipt-by\">{}</td><td class=\"receipt-created\">{}</td></tr>\n",
                escape(&s.request_key),
                json.status,
                escape(&s.issue_html_url),
                s.issue_index,
                escape(&s.submitted_by.login),
                escape(&s.created_at)
            )
        })
        .collect();
    format!(
        "<table class=\"receipts\">\n<tr><th>Request key</th><th>Status</th><th>Issue</th><th>By</th><th>Submitted</th></tr>\n{rows}</table>"
    )
}

/// The repository grant envelope on the admin's page (spec §8: the only
/// place its patterns are shown), or a line saying there is none.
fn envelope_section(grant: &Grant) -> String {
    let Some(envelope) = &grant.envelope else {
        return "<h2>Repository grant</h2>\n<p class=\"grant-envelope-none\">None.</p>\n"
            .to_string();
    };
    let patterns: String = envelope
        .patterns()
        .iter()
        .map(|p| format!("<li><code>{}</code></li>", escape(p)))
        .collect();
    format!(
        "<h2>Repository grant</h2>\n<p class=\"grant-envelope\">Not execution-enabled: submissions \
         to this grant are refused. Digest <code class=\"grant-envelope-digest\">{}</code>, \
         {} path pattern(s):</p>\n<ul class=\"grant-envelope-paths\">{patterns}</ul>\n\
         <pre class=\"grant-envelope-json\">{}</pre>\n",
        escape(&envelope.digest),
        envelope.path_count,
        escape(&envelope.canonical)
    )
}

fn decision_form(action: &str, class: &str, label: &str, csrf: &str, grant: &Grant) -> String {
    format!(
        "<form method=\"post\" action=\"{}\" class=\"{class}\">{}{}<button type=\"submit\">{label}</button></form>\n",
        escape(action),
        hidden("_csrf", csrf),
        hidden("state_revision", &grant.state_revision.to_string())
    )
}

/// The body of a grant's page: its members, task and summary, its
/// repository grant, the decisions still open to it (each a form posting
/// `_csrf` and `state_revision`) and its receipts.
pub(crate) fn show_body(
    repo: &RepoRow,
    grant: &Grant,
    receipts: &[Submission],
    csrf: &str,
) -> String {
    let url = format!("{}/{}", base(repo), grant.id);
    let mut forms = String::new();
    if grant.state == GrantState::AwaitingHuman {
        forms.push_str(&decision_form(
            &format!("{url}/approve"),
            "grant-approve",
            "Approve",
            csrf,
            grant,
        ));
    }
    if grant.state != GrantState::Revoked {
        forms.push_str(&decision_form(
            &format!("{url}/withdraw"),
            "grant-withdraw",
            "Withdraw",
            csrf,
            grant,
        ));
    }
    let optional = |v: &Option<String>| escape(v.as_deref().unwrap_or("-"));
    format!(
        "<h1>Agent work grant <span class=\"grant-id\">#{}</span></h1>\n<dl class=\"grant\">\n\
         <dt>Repository</dt><dd class=\"grant-repository\">{}</dd>\n\
         <dt>State</dt><dd class=\"grant-state\">{}</dd>\n\
         <dt>State revision</dt><dd class=\"grant-state-revision\">{}</dd>\n\
         <dt>Agent</dt><dd class=\"grant-agent\">{}</dd>\n\
         <dt>Prepared by</dt><dd class=\"grant-prepared-by\">{}</dd>\n\
         <dt>Approved by</dt><dd class=\"grant-approved-by\">{}</dd>\n\
         <dt>Proposal</dt><dd class=\"grant-proposal\">agent_work_grant.v1, version 1, digest <code class=\"grant-digest\">{}</code></dd>\n\
         <dt>Created</dt><dd class=\"grant-created-at\">{}</dd>\n\
         <dt>Confirmed</dt><dd class=\"grant-confirmed-at\">{}</dd>\n\
         <dt>Approved</dt><dd class=\"grant-approved-at\">{}</dd>\n\
         <dt>Revoked</dt><dd class=\"grant-revoked-at\">{}</dd>\n</dl>\n\
         <h2>Task</h2>\n{}\n<h2>Summary</h2>\n{}\n{}<div class=\"grant-actions\">\n{forms}</div>\n\
         <h2>Receipts</h2>\n{}",
        grant.id,
        escape(&repo.full_name()),
        grant.state.as_str(),
        grant.state_revision,
        escape(&grant.agent.login),
        escape(&grant.prepared_by.login),
        escape(
            grant
                .approved_by
                .as_ref()
                .map(|u| u.login.as_str())
                .unwrap_or("-")
        ),
        escape(&grant.digest),
        escape(&grant.created_at),
        optional(&grant.confirmed_at),
        optional(&grant.approved_at),
        optional(&grant.revoked_at),
        pre("grant-task", &grant.task),
        pre("grant-summary", &grant.summary),
        envelope_section(grant),
        receipts_table(receipts)
    )
}

/// `GET /{owner}/{repo}/agent-work-grants/{id}`.
pub async fn grants_show_page(
    State(state): State<AppState>,
    session: Session,
    WebPath((owner, repo, id)): WebPath<(String, String, String)>,
) -> Result<Response, PageError> {
    let user = match session.user_or_login() {
        Ok(u) => u,
        Err(redirect) => return Ok(redirect.into_response()),
    };
    let repo = Edge::grant_page_repo(&state.db, user, &owner, &repo).await?;
    let (grant, receipts) = human::show(&state.db, &repo, path_id(&id)?).await?;
    let body = show_body(&repo, &grant, &receipts, &session.csrf(&state));
    Ok(html::page(
        &format!("Agent work grant #{}", grant.id),
        Some(&user.login),
        &body,
    )
    .into_response())
}

async fn decide(
    state: AppState,
    session: Session,
    headers: HeaderMap,
    (owner, repo, id): (String, String, String),
    form: crate::extract::Params,
    transition: Transition,
) -> Result<Response, PageError> {
    session.check_csrf(&state, &form, csrf_header(&headers))?;
    let user = match session.user_or_login() {
        Ok(u) => u,
        Err(redirect) => return Ok(redirect.into_response()),
    };
    let repo = Edge::deciding_repo(&state.db, user, &owner, &repo, transition).await?;
    let id = path_id(&id)?;
    let revision = match form.get("state_revision")? {
        Some(raw) if !raw.is_empty() && raw.bytes().all(|b| b.is_ascii_digit()) => raw
            .parse::<i64>()
            .map_err(|_| AppError::bad_request("state_revision must be an integer"))?,
        _ => return Err(AppError::bad_request("state_revision must be an integer").into()),
    };
    human::decide(&state.db, user, &repo, id, revision, transition).await?;
    Ok(Redirect::to(&format!("{}/{id}", base(&repo))).into_response())
}

/// `POST …/{id}/approve` (`_csrf`, `state_revision`).
pub async fn grants_approve(
    State(state): State<AppState>,
    session: Session,
    headers: HeaderMap,
    WebPath(path): WebPath<(String, String, String)>,
    FormBody(form): FormBody,
) -> Result<Response, PageError> {
    decide(state, session, headers, path, form, Transition::Approve).await
}

/// `POST …/{id}/withdraw` (`_csrf`, `state_revision`).
pub async fn grants_withdraw(
    State(state): State<AppState>,
    session: Session,
    headers: HeaderMap,
    WebPath(path): WebPath<(String, String, String)>,
    FormBody(form): FormBody,
) -> Result<Response, PageError> {
    decide(state, session, headers, path, form, Transition::Withdraw).await
}
