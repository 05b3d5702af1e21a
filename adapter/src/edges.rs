//! The edges of the adapter's rules: each a function whose default is the
//! contract (docs/spec.md §6, §9). The adapter asks [`Edge`] at the edge
//! instead of deciding inline, so a faults build can bend exactly that
//! point (`crate::faults::edges`) while the rest reads as the contract only.
//! A default mostly states the contract's value, or calls the rule where it
//! lives; like a `fault!` test, an edge is no mutant target itself.

use reqwest::RequestBuilder;
use rmcp::model::{CallToolResult, JsonObject, ProtocolVersion, Tool};
use serde_json::Value;

use crate::check::{self, Expect, Reason};
use crate::config::Credential;
use crate::error::{ErrorCode, ToolError};
use crate::http::{self, Guard};
use crate::tools::{CredentialProblem, grants};
use crate::upstream::{self, Op};
use crate::{pagination, validate};

/// The edges this build answers with: [`Honest`], or a faults build's.
pub(crate) use crate::faults::AdapterEdges as Edge;

/// The bendable points of the adapter's rules; every default is the
/// contract. Static dispatch: an edge may be async.
pub(crate) trait Edges {
    /// What `tools/list` answers: the nine tools as defined (§6).
    fn tool_list(tools: Vec<Tool>) -> Vec<Tool> {
        tools
    }

    /// MCP protocol revisions the adapter speaks: every one rmcp knows, so
    /// an older client negotiates its own (§6).
    fn protocol_versions() -> &'static [ProtocolVersion] {
        ProtocolVersion::KNOWN_VERSIONS
    }

    /// The credential a call runs with: the HTTP request's `Authorization`
    /// when there is one (its bearer token, else refused), else the
    /// process's own (§6; in consent mode §9 gives the process none).
    fn call_credential(
        header: Option<Result<Credential, CredentialProblem>>,
        process: Option<&Credential>,
        _consent: bool,
    ) -> Result<Credential, CredentialProblem> {
        header.unwrap_or_else(|| process.cloned().ok_or(CredentialProblem::Missing))
    }

    /// Whether an `Authorization` scheme is `Bearer`: case-insensitively
    /// (RFC 9110 §11.1).
    fn is_bearer_scheme(scheme: &str) -> bool {
        scheme.eq_ignore_ascii_case("bearer")
    }

    /// Whether a host name (not an address) is loopback: `localhost` only (§6).
    fn is_loopback_host_name(name: &str) -> bool {
        name.eq_ignore_ascii_case("localhost")
    }

    /// Whether a request with this `Origin` is refused 403: unless allowed (§6).
    fn refuses_origin(guard: &Guard, origin: &str) -> bool {
        !http::origin_allowed(guard, origin)
    }

    /// Whether a declared `Content-Length` is refused 413: over 1 MiB (§6).
    fn refuses_declared_body(declared: u64) -> bool {
        declared > http::MAX_REQUEST_BODY as u64
    }

    /// The most the MCP transport reads of one request body: 1 MiB (§6).
    fn transport_body_limit() -> usize {
        http::MAX_REQUEST_BODY
    }

    /// Whether an input the tool does not name is refused: always, whatever
    /// its value, `null` too (§6 closed inputs).
    fn refuses_unknown_input(_allowed: &[&str], _name: &str, _value: &Value) -> bool {
        true
    }

    /// Whether `owner` or `repo` is one path segment (§6).
    fn is_segment(text: &str) -> bool {
        validate::is_segment(text)
    }

    /// Whether `proposal_version` is a JSON integer, not `1.0` (§6).
    fn is_integer_version(version: &Value) -> bool {
        version.is_i64()
    }

    /// A native id sent as something other than a JSON integer, read
    /// anyway: never (§6).
    fn id_from_non_integer(_value: &Value) -> Option<i64> {
        None
    }

    /// The request key of a call that sent none: none, as the adapter never
    /// invents one nor reads another input for it (§6).
    fn unsent_request_key(_args: Option<&JsonObject>) -> Option<String> {
        None
    }

    /// How `confirm_agent_work_grant`'s unclear outcome is reported: as the
    /// write it is, `delivery_uncertain` (§6).
    fn confirm_op() -> Op {
        Op::Write(grants::CONFIRM_ADVICE)
    }

    /// Whether a read grant is the requested one, in the requested
    /// repository (§6 consistency).
    fn read_grant_consistent(
        body: &Value,
        expect: Expect<'_>,
        grant_id: i64,
    ) -> Result<(), Reason> {
        check::grant_is(body, expect, grant_id)
    }

    /// Whether a receipt is bound to the requested grant and key (§6).
    fn receipt_consistent(
        body: &Value,
        expect: Expect<'_>,
        grant_id: i64,
        request_key: &str,
    ) -> Result<(), Reason> {
        check::receipt(body, expect, grant_id, request_key)
    }

    /// The least integer a native id in an answer may be: 1 (§6 consistency).
    fn least_native_id() -> i64 {
        1
    }

    /// A successful tool call's answer: as built (§6).
    fn tool_success(result: CallToolResult) -> CallToolResult {
        result
    }

    /// Whether a list continues: as the Core's headers say (§6).
    fn continues(has_more: bool, _returned: i64, _link: Option<&str>) -> bool {
        has_more
    }

    /// `Link` split on `sep` outside `<…>` and quoted strings (RFC 8288 §3).
    fn split_link(text: &str, sep: char) -> Vec<&str> {
        pagination::split_outside(text, sep)
    }

    /// Whether a `Link` parameter is `rel`: case-insensitively (RFC 8288 §3).
    fn is_rel_name(name: &str) -> bool {
        name.eq_ignore_ascii_case("rel")
    }

    /// Redirects from the Core: never followed (§6).
    fn redirects() -> reqwest::redirect::Policy {
        reqwest::redirect::Policy::none()
    }

    /// A path segment as sent: percent-encoded, so it stays one (§6).
    fn encode_segment(segment: &str) -> String {
        upstream::encode_segment(segment)
    }

    /// The Basic password sent: whole, colons and all (RFC 7617).
    fn basic_password(password: &str) -> &str {
        password
    }

    /// A copy of a request to send again if it fails: none, one request per
    /// call (§6).
    fn spare_request(_request: &RequestBuilder) -> Option<RequestBuilder> {
        None
    }

    /// A native refusal's tool error: its code, status and fixed message,
    /// never the Core's body (§6).
    async fn native_refusal(
        code: ErrorCode,
        status: u16,
        message: &'static str,
        _response: reqwest::Response,
    ) -> ToolError {
        ToolError::new(code, Some(status), message)
    }

    /// The most of a Core's answer the adapter reads (§6: text passes whole).
    fn answer_limit() -> usize {
        upstream::MAX_BODY_BYTES
    }
}

/// The contract at every edge.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Honest;

impl Edges for Honest {}
