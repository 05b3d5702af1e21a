//! The MCP server: `tools/list` and `tools/call` by hand, on any transport.
//!
//! The handler is written by hand instead of with `#[tool_router]` so that
//! the raw `arguments` object reaches [`crate::validate`] untouched and every
//! refusal is a tool error naming its field. Over Streamable HTTP the rmcp
//! service puts the HTTP request's [`http::request::Parts`] into the request
//! context; a `Bearer` token found there wins over the process credential.

use std::borrow::Cow;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::FutureExt;
use rmcp::{
    ErrorData as McpError, RoleServer, ServerHandler, ServiceExt,
    model::{
        CallToolRequestParams, CallToolResponse, Implementation, ListToolsResult,
        PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig, Tool,
    },
    service::RequestContext,
};

use crate::{
    config::{Credential, is_header_token},
    consent::{Consent, ConsentCall, SessionGuard},
    edges::{Edge, Edges},
    error::ConfigError,
    tools::{self, CredentialProblem, Ctx},
    upstream::Upstream,
};

const INSTRUCTIONS: &str = "Agent work grants: a human prepares a grant for you in one repository; list_agent_work_grants and get_agent_work_grant show it; confirm_agent_work_grant repeats its exact proposal triple; after a human approves, submit_agent_work_proposal opens the Issue with your own UUIDv4 request_key. On delivery_uncertain, read back with get_agent_work_submission and the same key; never invent a new key.";

/// The adapter's MCP handler. Cheap to clone: one per HTTP session.
#[derive(Debug, Clone)]
pub struct AdapterServer {
    upstream: Upstream,
    credential: Option<Credential>,
    tools: Arc<Vec<Tool>>,
    consent: Option<Arc<Consent>>,
    session: Arc<SessionGuard>,
}

impl AdapterServer {
    /// A handler forwarding to `upstream`, with the process credential (if any).
    pub fn new(upstream: Upstream, credential: Option<Credential>) -> Self {
        Self {
            upstream,
            credential,
            tools: Arc::new(Edge::tool_list(tools::definitions())),
            consent: None,
            session: Arc::default(),
        }
    }

    /// Turns on consent mode (spec §9) for calls without any credential.
    pub fn with_consent(mut self, consent: Arc<Consent>) -> Self {
        self.session = Arc::new(SessionGuard::new(Some(consent.clone())));
        self.consent = Some(consent);
        self
    }

    /// The process's consent state, if consent mode is on.
    pub fn consent(&self) -> Option<&Arc<Consent>> {
        self.consent.as_ref()
    }

    /// A handler for a new HTTP session: the same configuration, its own session guard.
    pub fn for_session(&self) -> Self {
        Self {
            session: Arc::new(SessionGuard::new(self.consent.clone())),
            ..self.clone()
        }
    }

    /// Consent mode's part of a call that has no credential of its own.
    fn consent_call(&self, context: &RequestContext<RoleServer>) -> Option<ConsentCall> {
        let consent = self.consent.clone()?;
        let parts = context.extensions.get::<http::request::Parts>()?;
        let header = |name| {
            parts
                .headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .filter(|v| !v.is_empty())
                .map(str::to_owned)
        };
        // Without a session there is nothing to bind a state to: no consent.
        let session = header(http::HeaderName::from_static("mcp-session-id"))?;
        self.session.record(&session);
        Some(ConsentCall {
            consent,
            session,
            host: header(http::header::HOST),
            peer: context.peer.clone(),
            cancelled: context.ct.clone(),
        })
    }

    /// The credential for one call: the HTTP request's bearer, else the process one.
    fn credential_for(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> Result<Credential, CredentialProblem> {
        let header = context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.headers.get(http::header::AUTHORIZATION));
        let from_header = header.map(|header| {
            bearer_token(header)
                .map(|t| Credential::Token(t.to_owned()))
                .ok_or(CredentialProblem::UnusableHeader)
        });
        Edge::call_credential(
            from_header,
            self.credential.as_ref(),
            self.consent.is_some(),
        )
    }

    /// Serves MCP over this process's stdin/stdout until the client closes it.
    pub async fn serve_stdio(self) -> Result<(), ConfigError> {
        let running = self
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| ConfigError::Client(format!("stdio transport: {e}")))?;
        running
            .waiting()
            .await
            .map_err(|e| ConfigError::Client(format!("stdio transport: {e}")))?;
        Ok(())
    }
}

/// The token of an `Authorization: Bearer <token>` header, if usable.
fn bearer_token(header: &http::HeaderValue) -> Option<&str> {
    header
        .to_str()
        .ok()
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| Edge::is_bearer_scheme(scheme))
        .map(|(_, token)| token.trim())
        .filter(|token| is_header_token(token))
}

impl ServerHandler for AdapterServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("awg-mcp", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(Edge::protocol_versions())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools.to_vec()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let credential = self.credential_for(&context);
        let consent = match credential {
            Err(CredentialProblem::Missing) => self.consent_call(&context),
            _ => None,
        };
        let ctx = Ctx {
            upstream: self.upstream.clone(),
            credential,
            consent,
        };
        let name = &request.name;
        unwind_to_error(
            name,
            tools::dispatch(name, request.arguments.as_ref(), &ctx),
        )
        .await?
        .map(CallToolResponse::from)
        .ok_or_else(|| McpError::invalid_params(format!("unknown tool {:?}", truncate(name)), None))
    }
}

/// Runs one tool call so that a bug that panics inside it still answers:
/// rmcp runs each request in its own task, and a panicked task sends no
/// response, which would leave the caller waiting forever.
async fn unwind_to_error<T>(tool: &str, call: impl Future<Output = T>) -> Result<T, McpError> {
    AssertUnwindSafe(call).catch_unwind().await.map_err(|_| {
        McpError::internal_error(
            format!(
                "awg-mcp failed internally while running {:?}; if it was a write, its \
                 outcome is unknown: read back the same request key, never send a new one",
                truncate(tool)
            ),
            None,
        )
    })
}

fn truncate(name: &str) -> String {
    name.chars().take(64).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_panicking_tool_still_answers_with_an_internal_error() {
        let answer = unwind_to_error("submit_agent_work_proposal", async {
            panic!("a bug inside a tool")
        })
        .await;
        let error = answer.unwrap_err();
        assert_eq!(error.code, rmcp::model::ErrorCode::INTERNAL_ERROR);
        assert!(
            error.message.contains("\"submit_agent_work_proposal\"")
                && error.message.contains("read back the same request key"),
            "{}",
            error.message
        );
        assert!(!error.message.contains("a bug inside a tool"));
        assert_eq!(unwind_to_error("get_issue", async { 7 }).await.unwrap(), 7);
    }
}
