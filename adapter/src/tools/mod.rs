//! The nine tools: definitions (for `tools/list`) and dispatch (for `tools/call`).
//!
//! - [`public`]: the four unchanged public tools (ordinary activity).
//! - [`grants`]: listing, reading and confirming grants.
//! - [`submissions`]: submitting a proposal and reading its receipt back.
//!
//! Every handler validates all of its input before it resolves the credential
//! and before it makes its single upstream request.

use rmcp::model::{CallToolResult, JsonObject, Tool};
use serde_json::Value;

pub use crate::model::CredentialProblem;
use crate::{
    config::Credential,
    consent::ConsentCall,
    edges::{Edge, Edges},
    error::{ErrorCode, ToolError},
    upstream::Upstream,
};

pub mod grants;
pub mod public;
pub mod submissions;

/// What one tool call may use: the fixed upstream and the credential chosen for this call.
#[derive(Debug, Clone)]
pub struct Ctx {
    /// The client for the one Core origin.
    pub upstream: Upstream,
    /// The credential for this call, or why there is none usable.
    pub credential: Result<Credential, CredentialProblem>,
    /// Consent mode, for a call with no credential at all (spec §9).
    pub consent: Option<ConsentCall>,
}

impl Ctx {
    /// The credential: the call's own, else consent mode's (which may park
    /// the call, or end it with `auth_required` or a `consent_*` code), else
    /// the local `unauthenticated` refusal. Tools ask for it only after their
    /// input passed validation, so an invalid call never mints a state.
    pub async fn credential(&self) -> Result<Credential, ToolError> {
        if let (Err(CredentialProblem::Missing), Some(consent)) = (&self.credential, &self.consent)
            && let Some(credential) = consent.credential().await?
        {
            return Ok(credential);
        }
        self.credential.clone().map_err(|problem| {
            let message = match problem {
                CredentialProblem::Missing => {
                    "no credential: send Authorization: Bearer <token> on the MCP HTTP request, or start the adapter with AWG_TOKEN or AWG_BASIC_USER/AWG_BASIC_PASSWORD"
                }
                CredentialProblem::UnusableHeader => {
                    "the MCP request's Authorization header is not a usable Bearer token"
                }
            };
            ToolError::new(ErrorCode::Unauthenticated, None, message)
        })
    }
}

/// The native URL of a grant (`/repos/{owner}/{repo}/agent-work-grants/{id}`)
/// followed by `tail`, each segment escaped on its own by the upstream client.
fn grant_url(ctx: &Ctx, owner: &str, repo: &str, grant_id: i64, tail: &[&str]) -> url::Url {
    let id = grant_id.to_string();
    let mut segments = vec!["repos", owner, repo, "agent-work-grants", &id];
    segments.extend_from_slice(tail);
    ctx.upstream.url(&segments, &[])
}

/// Every tool, public four first, in a stable order.
pub fn definitions() -> Vec<Tool> {
    let mut tools = public::definitions();
    tools.extend(grants::definitions());
    tools.extend(submissions::definitions());
    tools
}

/// Runs the named tool; `None` when no tool has that name.
pub async fn dispatch(name: &str, args: Option<&JsonObject>, ctx: &Ctx) -> Option<CallToolResult> {
    let outcome: Result<Value, ToolError> = match name {
        "get_repository" => public::get_repository(args, ctx).await,
        "list_issues" => public::list_issues(args, ctx).await,
        "get_issue" => public::get_issue(args, ctx).await,
        "create_issue" => public::create_issue(args, ctx).await,
        "list_agent_work_grants" => grants::list(args, ctx).await,
        "get_agent_work_grant" => grants::get(args, ctx).await,
        "confirm_agent_work_grant" => grants::confirm(args, ctx).await,
        "submit_agent_work_proposal" => submissions::submit(args, ctx).await,
        "get_agent_work_submission" => submissions::get(args, ctx).await,
        _ => return None,
    };
    Some(match outcome {
        Ok(value) => {
            tracing::info!(tool = name, "tool succeeded");
            Edge::tool_success(CallToolResult::structured(value))
        }
        Err(error) => {
            tracing::info!(tool = name, code = ?error.code, native_status = ?error.native_status, field = ?error.field, "tool failed");
            error.into_result()
        }
    })
}

/// A tool definition with its closed input schema, output schema and hints.
pub(crate) fn tool(
    name: &'static str,
    description: &'static str,
    input: std::sync::Arc<JsonObject>,
    output: std::sync::Arc<JsonObject>,
    read_only: bool,
    idempotent: bool,
) -> Tool {
    let annotations = rmcp::model::ToolAnnotations::new()
        .read_only(read_only)
        .destructive(false)
        .idempotent(idempotent)
        .open_world(false);
    Tool::new(name, description, input)
        .with_raw_output_schema(output)
        .with_annotations(annotations)
}
