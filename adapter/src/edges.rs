//! The edges of the adapter's rules: each a function whose default is the
//! contract (docs/spec.md §6; consent mode §9). The adapter asks [`Edge`] at the edge
//! instead of deciding inline, so a faults build can bend exactly that
//! point (`crate::faults::edges`) while the rest reads as the contract only.
//! A default mostly states the contract's value, or returns the answer its
//! rule computed where it lives, which the caller passes in; like a `fault!`
//! test, an edge is no mutant target itself. An edge takes plain values and
//! the types of `model` and `consent::model` only, so this module names none
//! of the rules that ask it, and no import leads back here in a circle.

use std::collections::{HashMap, HashSet};

use reqwest::RequestBuilder;
use rmcp::model::{CallToolResult, JsonObject, ProtocolVersion, Tool};
use rmcp::service::ElicitationMode;
use serde_json::Value;

use crate::consent::model::{self as consent, Authorization, Claim, Inner, Pending, Token};
use crate::error::{ErrorCode, ToolError};
use crate::model::{self, Credential, CredentialProblem, Op, Reason};

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

    /// Whether a request with this `origin` is refused 403: unless
    /// `allowed` (`http::origin_allowed`) (§6).
    fn refuses_origin(_origin: &str, allowed: bool) -> bool {
        !allowed
    }

    /// Whether a declared `Content-Length` is refused 413: over 1 MiB (§6).
    fn refuses_declared_body(declared: u64) -> bool {
        declared > model::MAX_REQUEST_BODY as u64
    }

    /// The most the MCP transport reads of one request body: 1 MiB (§6).
    fn transport_body_limit() -> usize {
        model::MAX_REQUEST_BODY
    }

    /// Whether an input the tool does not name is refused: always, whatever
    /// its value, `null` too (§6 closed inputs).
    fn refuses_unknown_input(_allowed: &[&str], _name: &str, _value: &Value) -> bool {
        true
    }

    /// Whether `owner` or `repo` is one path segment (§6): as `segment`
    /// (`validate::is_segment`) says.
    fn is_segment(_text: &str, segment: bool) -> bool {
        segment
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
    /// write it is, `delivery_uncertain` with its read-back `advice` (§6).
    fn confirm_op(advice: &'static str) -> Op {
        Op::Write(advice)
    }

    /// Whether a read grant `body` is the requested one (`grant_id`), in the
    /// requested repository (§6 consistency): as `verdict`
    /// (`check::grant_is`) says.
    fn read_grant_consistent(
        _body: &Value,
        _grant_id: i64,
        verdict: Result<(), Reason>,
    ) -> Result<(), Reason> {
        verdict
    }

    /// Whether a receipt is bound to the requested grant and key (§6): as
    /// `verdict` (`check::receipt`) says.
    fn receipt_consistent(verdict: Result<(), Reason>) -> Result<(), Reason> {
        verdict
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

    /// `Link` split on `sep` outside `<…>` and quoted strings (RFC 8288 §3):
    /// `split` (`pagination::split_outside`).
    fn split_link<'a>(_text: &'a str, _sep: char, split: Vec<&'a str>) -> Vec<&'a str> {
        split
    }

    /// Whether a `Link` parameter is `rel`: case-insensitively (RFC 8288 §3).
    fn is_rel_name(name: &str) -> bool {
        name.eq_ignore_ascii_case("rel")
    }

    /// Redirects from the Core: never followed (§6).
    fn redirects() -> reqwest::redirect::Policy {
        reqwest::redirect::Policy::none()
    }

    /// A path segment as sent: percent-encoded, so it stays one (§6):
    /// `encoded` (`upstream::encode_segment`).
    fn encode_segment(_segment: &str, encoded: String) -> String {
        encoded
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
        model::MAX_BODY_BYTES
    }

    /// Whether the adapter knows an MCP session id: as rmcp's session
    /// manager says, so an unknown or ended one is refused (§6, §9).
    fn session_known(known: bool) -> bool {
        known
    }

    /// Whether a client is sent the authorize URL by elicitation: only one
    /// declaring URL mode (§9).
    fn elicits_url(modes: &HashSet<ElicitationMode>) -> bool {
        modes.contains(&ElicitationMode::Url)
    }

    /// A state's own authorize parameters: `fresh`, a fresh PKCE verifier
    /// with its S256 challenge, and the configured redirect URI (§9).
    /// (`host` is the MCP request's `Host`.)
    fn authorization(fresh: Authorization, _host: Option<&str>) -> Authorization {
        fresh
    }

    /// Whether a state counts against a session's cap: only if it is the
    /// session's `own` (§9).
    fn shares_cap(own: bool) -> bool {
        own
    }

    /// Whether a state has expired: once its lifetime is `over` (§9).
    fn state_expired(over: bool) -> bool {
        over
    }

    /// A state claimed by a callback: spent, so it unlocks once (§9).
    fn spend(states: &mut HashMap<String, Pending>, state: &str) -> Option<Pending> {
        states.remove(state)
    }

    /// Whether a callback's `error` is the person declining: only when it
    /// is `access_denied` (§9).
    fn declined(access_denied: bool) -> bool {
        access_denied
    }

    /// What happens before the token POST: nothing; a parked call resumes
    /// only once its token is kept (§9).
    fn before_exchange(_claim: &mut Claim) {}

    /// The most of a token answer read: 64 KiB.
    fn token_answer_limit() -> usize {
        consent::MAX_BODY_BYTES
    }

    /// Whether a token answer's `token_type` is `bearer`: case-insensitively
    /// (RFC 6749 §7.1).
    fn is_bearer_token_type(token_type: &str) -> bool {
        token_type.eq_ignore_ascii_case("bearer")
    }

    /// Keeps a consented token: for its own session, if still live (§9).
    fn keep_token(inner: &mut Inner, session: &str, token: Token) -> bool {
        inner.keep(session, token)
    }

    /// Where else a kept token goes: nowhere; it lives in memory (§9).
    fn token_kept(_token: &str) {}

    /// What a session's end forgets: its token, its states, itself (§9).
    fn session_ended(inner: &mut Inner, session: &str) {
        inner.forget(session);
    }
}

/// The contract at every edge.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Honest;

impl Edges for Honest {}
