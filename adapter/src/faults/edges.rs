//! The adapter's faults: [`Bent`] answers each edge of the adapter's rules
//! (`crate::edges`) as the active fault bends it, and honestly otherwise.
//! Each override names the faults it serves.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, OnceLock};

use reqwest::RequestBuilder;
use rmcp::model::{CallToolResult, JsonObject, ProtocolVersion, Tool};
use rmcp::service::ElicitationMode;
use serde_json::Value;

use crate::check::{self, Reason};
use crate::config::Credential;
use crate::consent::CALLBACK_PATH;
use crate::consent::model::{Authorization, Claim, Inner, Outcome, Pending, Token};
use crate::consent::pkce;
use crate::edges::{Edges, Honest};
use crate::error::{ErrorCode, ToolError};
use crate::tools::{CredentialProblem, grants, submissions};
use crate::upstream::{self, Op};

/// The adapter's edges in a faults build.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bent;

/// Other names of the request key (ADR 0047 says `requestId`), which only
/// `adapter-accepts-request-id` takes.
const REQUEST_KEY_ALIASES: &[&str] = &["requestId", "request_id"];

impl Edges for Bent {
    /// `adapter-schema-without-context`: the grant tools' schemas lose
    /// `owner`, `repo` and `grant_id` (still required).
    fn tool_list(tools: Vec<Tool>) -> Vec<Tool> {
        if !fault!(AdapterSchemaWithoutContext) {
            return Honest::tool_list(tools);
        }
        let grant_tools = ["get_agent_work_grant", "confirm_agent_work_grant"];
        let context = ["owner", "repo", "grant_id"];
        let without_context = |mut tool: Tool| {
            if grant_tools.contains(&tool.name.as_ref()) {
                let mut schema = (*tool.input_schema).clone();
                if let Some(Value::Object(props)) = schema.get_mut("properties") {
                    props.retain(|name, _| !context.contains(&name.as_str()));
                }
                tool.input_schema = Arc::new(schema);
            }
            tool
        };
        tools.into_iter().map(without_context).collect()
    }

    /// `adapter-drops-old-revisions`: the newest revision only.
    fn protocol_versions() -> &'static [ProtocolVersion] {
        const NEWEST_ONLY: &[ProtocolVersion] = &[ProtocolVersion::V_2025_11_25];
        if fault!(AdapterDropsOldRevisions) {
            return NEWEST_ONLY;
        }
        Honest::protocol_versions()
    }

    /// `adapter-forwards-wrong-credential`: the process credential wins;
    /// `consent-ignores-bearer`: in consent mode a usable bearer counts as none.
    fn call_credential(
        header: Option<Result<Credential, CredentialProblem>>,
        process: Option<&Credential>,
        consent: bool,
    ) -> Result<Credential, CredentialProblem> {
        if fault!(AdapterForwardsWrongCredential)
            && let Some(process) = process
        {
            return Ok(process.clone());
        }
        if fault!(ConsentIgnoresBearer) && consent && matches!(header, Some(Ok(_))) {
            return Err(CredentialProblem::Missing);
        }
        Honest::call_credential(header, process, consent)
    }

    /// `adapter-bearer-scheme-case-sensitive`: `Bearer` exactly.
    fn is_bearer_scheme(scheme: &str) -> bool {
        if fault!(AdapterBearerSchemeCaseSensitive) {
            return scheme == "Bearer";
        }
        Honest::is_bearer_scheme(scheme)
    }

    /// `adapter-loopback-prefix`: any name starting with `localhost`.
    fn is_loopback_host_name(name: &str) -> bool {
        fault!(AdapterLoopbackPrefix) && name.to_ascii_lowercase().starts_with("localhost")
            || Honest::is_loopback_host_name(name)
    }

    /// `adapter-ignores-origin`.
    fn refuses_origin(origin: &str, allowed: bool) -> bool {
        !fault!(AdapterIgnoresOrigin) && Honest::refuses_origin(origin, allowed)
    }

    /// `adapter-no-body-limit`: no declared length is refused...
    fn refuses_declared_body(declared: u64) -> bool {
        !fault!(AdapterNoBodyLimit) && Honest::refuses_declared_body(declared)
    }

    /// ...and the transport reads up to 64 MiB.
    fn transport_body_limit() -> usize {
        if fault!(AdapterNoBodyLimit) {
            return 64 * Honest::transport_body_limit();
        }
        Honest::transport_body_limit()
    }

    /// `adapter-drops-unknown-input`: none refused; `adapter-unknown-null-ignored`:
    /// `null` ones not; `adapter-confirm-takes-submit-inputs`: confirm takes
    /// submit's three more; `adapter-accepts-request-id`: submit takes the
    /// request key's aliases.
    fn refuses_unknown_input(allowed: &[&str], name: &str, value: &Value) -> bool {
        let taken = fault!(AdapterDropsUnknownInput)
            || fault!(AdapterUnknownNullIgnored) && value.is_null()
            || fault!(AdapterConfirmTakesSubmitInputs)
                && allowed == grants::CONFIRM_INPUTS
                && ["request_key", "title", "body"].contains(&name)
            || fault!(AdapterAcceptsRequestId)
                && allowed == submissions::SUBMIT_FIELDS
                && REQUEST_KEY_ALIASES.contains(&name);
        !taken && Honest::refuses_unknown_input(allowed, name, value)
    }

    /// `adapter-dot-segment-accepted`: `.` too; `adapter-segment-max-99`:
    /// not 100 characters; `adapter-segments-unescaped`: any characters but
    /// `/` (sent unescaped, see [`Bent::encode_segment`]).
    fn is_segment(text: &str, segment: bool) -> bool {
        if fault!(AdapterDotSegmentAccepted) && text == "." {
            return true;
        }
        if fault!(AdapterSegmentMax99) && text.len() == 100 {
            return false;
        }
        if fault!(AdapterSegmentsUnescaped) {
            return !matches!(text, "." | "..")
                && (1..=100).contains(&text.len())
                && !text.contains('/');
        }
        Honest::is_segment(text, segment)
    }

    /// `adapter-version-float-accepted`: `1.0` too.
    fn is_integer_version(version: &Value) -> bool {
        fault!(AdapterVersionFloatAccepted) || Honest::is_integer_version(version)
    }

    /// `adapter-accepts-string-ids`: a string of digits too.
    fn id_from_non_integer(value: &Value) -> Option<i64> {
        if fault!(AdapterAcceptsStringIds) {
            return value.as_str().and_then(|s| s.parse::<i64>().ok());
        }
        Honest::id_from_non_integer(value)
    }

    /// `adapter-invents-request-key`: a fresh one; `adapter-accepts-request-id`:
    /// an alias's string.
    fn unsent_request_key(args: Option<&JsonObject>) -> Option<String> {
        if fault!(AdapterInventsRequestKey) {
            return Some(invented_key());
        }
        if fault!(AdapterAcceptsRequestId) {
            let alias = REQUEST_KEY_ALIASES
                .iter()
                .find_map(|n| args.and_then(|m| m.get(*n)));
            return alias.and_then(Value::as_str).map(str::to_owned);
        }
        Honest::unsent_request_key(args)
    }

    /// `adapter-lost-confirm-is-read-error`: reported as a failed read.
    fn confirm_op(advice: &'static str) -> Op {
        if fault!(AdapterLostConfirmIsReadError) {
            return Op::Read;
        }
        Honest::confirm_op(advice)
    }

    /// `adapter-get-grant-repo-unchecked`: only the grant's id is compared.
    fn read_grant_consistent(
        body: &Value,
        grant_id: i64,
        verdict: Result<(), Reason>,
    ) -> Result<(), Reason> {
        if fault!(AdapterGetGrantRepoUnchecked) {
            return check::grant(body, None).and_then(|id| match id == grant_id {
                true => Ok(()),
                false => Err("grant id differs from the requested one".into()),
            });
        }
        Honest::read_grant_consistent(body, grant_id, verdict)
    }

    /// `adapter-publishes-inconsistent-receipt`: any receipt.
    fn receipt_consistent(verdict: Result<(), Reason>) -> Result<(), Reason> {
        if fault!(AdapterPublishesInconsistentReceipt) {
            return Ok(());
        }
        Honest::receipt_consistent(verdict)
    }

    /// `adapter-accepts-non-positive-integers`.
    fn least_native_id() -> i64 {
        if fault!(AdapterAcceptsNonPositiveIntegers) {
            return i64::MIN;
        }
        Honest::least_native_id()
    }

    /// `adapter-content-priority-over-one`: every text item gets `priority`
    /// 2.0, which MCP's schema bounds to 0..1 and rmcp does not check.
    fn tool_success(mut result: CallToolResult) -> CallToolResult {
        if fault!(AdapterContentPriorityOverOne) {
            for item in &mut result.content {
                if let rmcp::model::ContentBlock::Text(text) = item {
                    text.annotations = Some(rmcp::model::Annotations::default().with_priority(2.0));
                }
            }
        }
        Honest::tool_success(result)
    }

    /// `adapter-assumes-full-pages`: a short page ends the list;
    /// `adapter-linkless-ends`: so does one without `Link`.
    fn continues(has_more: bool, returned: i64, link: Option<&str>) -> bool {
        let ended = fault!(AdapterAssumesFullPages) && returned < crate::pagination::LIMIT
            || fault!(AdapterLinklessEnds) && link.is_none();
        !ended && Honest::continues(has_more, returned, link)
    }

    /// `adapter-link-ignores-quotes`: split on every `sep`.
    fn split_link<'a>(text: &'a str, sep: char, split: Vec<&'a str>) -> Vec<&'a str> {
        if fault!(AdapterLinkIgnoresQuotes) {
            return text.split(sep).collect();
        }
        Honest::split_link(text, sep, split)
    }

    /// `adapter-link-rel-name-case-sensitive`: `rel` exactly.
    fn is_rel_name(name: &str) -> bool {
        if fault!(AdapterLinkRelNameCaseSensitive) {
            return name == "rel";
        }
        Honest::is_rel_name(name)
    }

    /// `adapter-follows-redirect`: up to five.
    fn redirects() -> reqwest::redirect::Policy {
        if fault!(AdapterFollowsRedirect) {
            return reqwest::redirect::Policy::limited(5);
        }
        Honest::redirects()
    }

    /// `adapter-segments-unescaped`: as given.
    fn encode_segment(segment: &str, encoded: String) -> String {
        if fault!(AdapterSegmentsUnescaped) {
            return segment.to_owned();
        }
        Honest::encode_segment(segment, encoded)
    }

    /// `adapter-basic-password-cut-at-colon`.
    fn basic_password(password: &str) -> &str {
        if fault!(AdapterBasicPasswordCutAtColon) {
            return password.split(':').next().unwrap_or_default();
        }
        Honest::basic_password(password)
    }

    /// `adapter-retries-post`: any request, once more.
    fn spare_request(request: &RequestBuilder) -> Option<RequestBuilder> {
        if fault!(AdapterRetriesPost) {
            return request.try_clone();
        }
        Honest::spare_request(request)
    }

    /// `adapter-echoes-upstream-body`: the Core's body after the message.
    async fn native_refusal(
        code: ErrorCode,
        status: u16,
        message: &'static str,
        response: reqwest::Response,
    ) -> ToolError {
        if fault!(AdapterEchoesUpstreamBody) {
            // Even a faulty adapter reads no more than its limit.
            let body = upstream::read_body(response, crate::model::MAX_BODY_BYTES)
                .await
                .unwrap_or_default();
            let text = String::from_utf8_lossy(&body);
            return ToolError::new(code, Some(status), format!("{message}: {text}"));
        }
        Honest::native_refusal(code, status, message, response).await
    }

    /// `adapter-reads-one-mebibyte`.
    fn answer_limit() -> usize {
        if fault!(AdapterReadsOneMebibyte) {
            return 1 << 20;
        }
        Honest::answer_limit()
    }

    /// `adapter-knows-every-session`.
    fn session_known(known: bool) -> bool {
        fault!(AdapterKnowsEverySession) || Honest::session_known(known)
    }

    /// `consent-elicits-any-client`: any client declaring a mode at all.
    fn elicits_url(modes: &HashSet<ElicitationMode>) -> bool {
        fault!(ConsentElicitsAnyClient) && !modes.is_empty() || Honest::elicits_url(modes)
    }

    /// `consent-shared-verifier`: one verifier for every state;
    /// `consent-plain-challenge`: the verifier as its own challenge;
    /// `consent-redirect-from-host`: the redirect URI from the MCP
    /// request's `Host`.
    fn authorization(fresh: Authorization, host: Option<&str>) -> Authorization {
        let mut authorization = Honest::authorization(fresh, host);
        if fault!(ConsentSharedVerifier) {
            static SHARED: OnceLock<String> = OnceLock::new();
            authorization.verifier = SHARED.get_or_init(pkce::random_secret).clone();
            authorization.challenge = pkce::s256(&authorization.verifier);
        }
        if fault!(ConsentPlainChallenge) {
            authorization.method = "plain";
            authorization.challenge = authorization.verifier.clone();
        }
        if let Some(host) = host.filter(|_| fault!(ConsentRedirectFromHost)) {
            authorization.redirect_uri = format!("http://{host}{CALLBACK_PATH}");
        }
        authorization
    }

    /// `consent-states-capped-together`: every session's states count.
    fn shares_cap(own: bool) -> bool {
        fault!(ConsentStatesCappedTogether) || Honest::shares_cap(own)
    }

    /// `consent-state-never-expires`.
    fn state_expired(over: bool) -> bool {
        !fault!(ConsentStateNeverExpires) && Honest::state_expired(over)
    }

    /// `consent-state-reusable`: the state stays open (its parked call is
    /// woken once).
    fn spend(states: &mut HashMap<String, Pending>, state: &str) -> Option<Pending> {
        if fault!(ConsentStateReusable) {
            let pending = states.get_mut(state)?;
            return Some(Pending {
                session: pending.session.clone(),
                verifier: pending.verifier.clone(),
                redirect_uri: pending.redirect_uri.clone(),
                expires: pending.expires,
                minted: pending.minted,
                waiter: pending.waiter.take(),
            });
        }
        Honest::spend(states, state)
    }

    /// `consent-any-error-denied`.
    fn declined(access_denied: bool) -> bool {
        fault!(ConsentAnyErrorDenied) || Honest::declined(access_denied)
    }

    /// `consent-resume-before-exchange`: the parked call resumes at once.
    fn before_exchange(claim: &mut Claim) {
        if fault!(ConsentResumeBeforeExchange)
            && let Some(waiter) = claim.waiter.take()
        {
            let _ = waiter.send(Outcome::Granted);
        }
        Honest::before_exchange(claim);
    }

    /// `consent-small-token-answer`: 1 KiB.
    fn token_answer_limit() -> usize {
        if fault!(ConsentSmallTokenAnswer) {
            return 1024;
        }
        Honest::token_answer_limit()
    }

    /// `consent-any-token-type`.
    fn is_bearer_token_type(token_type: &str) -> bool {
        fault!(ConsentAnyTokenType) || Honest::is_bearer_token_type(token_type)
    }

    /// `consent-state-unbound`: the token goes to every session there is,
    /// live or not, and every parked call wakes.
    fn keep_token(inner: &mut Inner, session: &str, token: Token) -> bool {
        if !fault!(ConsentStateUnbound) {
            return Honest::keep_token(inner, session, token);
        }
        let mut sessions: Vec<String> = inner.states.values().map(|p| p.session.clone()).collect();
        sessions.extend(inner.tokens.keys().cloned());
        sessions.push(session.to_owned());
        for s in sessions {
            inner.tokens.insert(s, token.clone());
        }
        for pending in inner.states.values_mut() {
            if let Some(waiter) = pending.waiter.take() {
                let _ = waiter.send(Outcome::Granted);
            }
        }
        true
    }

    /// `consent-token-on-disk`: also written to `awg-mcp-token`.
    fn token_kept(token: &str) {
        if fault!(ConsentTokenOnDisk) {
            let _ = std::fs::write("awg-mcp-token", token);
        }
        Honest::token_kept(token);
    }

    /// `consent-session-end-forgets-nothing`.
    fn session_ended(inner: &mut Inner, session: &str) {
        if !fault!(ConsentSessionEndForgetsNothing) {
            Honest::session_ended(inner, session);
        }
    }
}

/// A fresh canonical UUIDv4 (for `adapter-invents-request-key`), from the
/// standard library's randomly keyed hasher: no extra dependency.
pub(super) fn invented_key() -> String {
    use std::hash::{BuildHasher, RandomState};
    let random = |n: u64| RandomState::new().hash_one(n);
    let hex = format!("{:016x}{:016x}", random(1), random(2));
    let (a, b, c, d, e) = (
        &hex[0..8],
        &hex[8..12],
        &hex[13..16],
        &hex[17..20],
        &hex[20..32],
    );
    format!("{a}-{b}-4{c}-a{d}-{e}")
}
