//! MCP's own JSON schema on the wire. rmcp reads both ends of a bot's
//! session here, so a message rmcp accepts but MCP's schema forbids would
//! never be seen: every message awg-mcp sends a bot, and every message a bot
//! sends, is validated against the official schema of the negotiated
//! revision (`harness/engine/mcp-schema/`) by a validator that is not rmcp.
//!
//! [`Checked`] is the bot's HTTP client: it passes every request and answer
//! through unchanged and hands each message, as the bytes carried it, to the
//! session's [`Wire`], which keeps what was wrong for the bot's next step.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use futures::StreamExt;
use futures::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use serde_json::Value;

use crate::vocab::{Abort, Step};

/// Every revision whose schema the harness holds, oldest first.
const REVISIONS: [(&str, &str); 4] = [
    (
        "2024-11-05",
        include_str!("../../mcp-schema/2024-11-05.json"),
    ),
    (
        "2025-03-26",
        include_str!("../../mcp-schema/2025-03-26.json"),
    ),
    (
        "2025-06-18",
        include_str!("../../mcp-schema/2025-06-18.json"),
    ),
    (
        "2025-11-25",
        include_str!("../../mcp-schema/2025-11-25.json"),
    ),
];

/// The most of a message a violation quotes.
const QUOTED: usize = 2048;

/// Messages validated in this process (a run's evidence that the check ran).
static VALIDATED: AtomicU64 = AtomicU64::new(0);

/// How many messages this process validated.
pub fn validated() -> u64 {
    VALIDATED.load(Ordering::Relaxed)
}

/// The validator of one definition of one revision's schema, built once.
fn validator(revision: &str, def: &'static str) -> Option<&'static jsonschema::Validator> {
    type Cache = Mutex<HashMap<(String, &'static str), &'static jsonschema::Validator>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let (_, text) = REVISIONS.iter().find(|(r, _)| *r == revision)?;
    let mut cache = CACHE.get_or_init(Default::default).lock().unwrap();
    if let Some(v) = cache.get(&(revision.to_owned(), def)) {
        return Some(v);
    }
    let mut schema: Value = serde_json::from_str(text).expect("the schema files are JSON");
    // The whole document, asked to be one of its definitions.
    let defs = match schema.get("$defs") {
        Some(_) => "$defs",
        None => "definitions",
    };
    schema["$ref"] = Value::String(format!("#/{defs}/{def}"));
    let built = jsonschema::validator_for(&schema)
        .unwrap_or_else(|e| panic!("MCP schema {revision} #{def}: {e}"));
    let built: &'static jsonschema::Validator = Box::leak(Box::new(built));
    cache.insert((revision.to_owned(), def), built);
    Some(built)
}

/// The definition a message's result must meet, by the method it answers.
fn result_of(method: &str) -> &'static str {
    match method {
        "initialize" => "InitializeResult",
        "tools/list" => "ListToolsResult",
        "tools/call" => "CallToolResult",
        "ping" => "EmptyResult",
        _ => "Result",
    }
}

/// What is wrong with `message` under `revision`, as one line; `None` when
/// it is valid. `from_server` says which side sent it; `answers` the method
/// of the request a response answers, if the session sent one.
fn invalid(
    revision: &str,
    message: &Value,
    from_server: bool,
    answers: Option<&str>,
) -> Option<String> {
    let Some(envelope) = validator(revision, "JSONRPCMessage") else {
        return Some(format!("protocol revision `{revision}` has no schema"));
    };
    let first_error = |v: &jsonschema::Validator, instance: &Value, what: &str| {
        v.iter_errors(instance)
            .next()
            .map(|e| format!("not a valid {what}: {e} (at `{}`)", e.instance_path()))
    };
    if let Some(e) = first_error(envelope, message, "JSON-RPC message") {
        return Some(e);
    }
    let (request, notification, result) = match from_server {
        true => ("ServerRequest", "ServerNotification", None),
        false => ("ClientRequest", "ClientNotification", Some("ClientResult")),
    };
    let (def, instance) = match (
        message.get("method"),
        message.get("id"),
        message.get("result"),
    ) {
        (Some(_), Some(_), _) => (request, message),
        (Some(_), None, _) => (notification, message),
        (None, _, Some(answer)) => (
            result.unwrap_or_else(|| result_of(answers.unwrap_or(""))),
            answer,
        ),
        _ => return None,
    };
    match validator(revision, def) {
        Some(v) => first_error(v, instance, def),
        None => Some(format!("protocol revision `{revision}` has no schema")),
    }
}

/// One MCP session's wire: the negotiated revision, the requests it has
/// sent, and the first message that broke the schema.
#[derive(Default)]
pub struct Wire {
    state: Mutex<WireState>,
}

#[derive(Default)]
struct WireState {
    revision: Option<String>,
    /// Request ids (as JSON text) the bot sent, with their methods.
    asked: HashMap<String, String>,
    /// The first invalid message from awg-mcp, then the first from the bot.
    adapter: Option<String>,
    bot: Option<String>,
    /// What the bot sent before a revision was agreed (its `initialize`).
    unnegotiated: Vec<Value>,
}

impl WireState {
    fn check_bot(&mut self, revision: &str, message: &Value) {
        VALIDATED.fetch_add(1, Ordering::Relaxed);
        if let Some(e) = invalid(revision, message, false, None)
            && self.bot.is_none()
        {
            self.bot = Some(format!("{e}: {}", quote(&message.to_string())));
        }
    }
}

impl Wire {
    /// A message the bot sends. Its `initialize` proposes a revision, which
    /// the answer may change: it is held to the one the answer names.
    fn sent(&self, message: &ClientJsonRpcMessage) {
        let Ok(value) = serde_json::to_value(message) else {
            return;
        };
        let mut state = self.state.lock().unwrap();
        if let (Some(method), Some(id)) = (value.get("method"), value.get("id")) {
            let method = method.as_str().unwrap_or_default().to_owned();
            state.asked.insert(id.to_string(), method);
        }
        match state.revision.clone() {
            Some(revision) => state.check_bot(&revision, &value),
            None => state.unnegotiated.push(value),
        }
    }

    /// A message awg-mcp sent, as its bytes carried it.
    fn received(&self, text: &str) {
        let mut state = self.state.lock().unwrap();
        let value: Value = match serde_json::from_str(text) {
            Ok(v) => v,
            Err(e) => {
                state
                    .adapter
                    .get_or_insert_with(|| format!("not JSON ({e}): {}", quote(text)));
                return;
            }
        };
        let answers = value
            .get("id")
            .filter(|_| value.get("method").is_none())
            .and_then(|id| state.asked.remove(&id.to_string()));
        // The answer to `initialize` names the revision the rest is held to.
        if answers.as_deref() == Some("initialize")
            && let Some(revision) = value
                .pointer("/result/protocolVersion")
                .and_then(Value::as_str)
        {
            state.revision = Some(revision.to_owned());
            for sent in std::mem::take(&mut state.unnegotiated) {
                state.check_bot(revision, &sent);
            }
        }
        let Some(revision) = state.revision.clone() else {
            return;
        };
        VALIDATED.fetch_add(1, Ordering::Relaxed);
        if let Some(e) = invalid(&revision, &value, true, answers.as_deref())
            && state.adapter.is_none()
        {
            state.adapter = Some(format!("{e}: {}", quote(text)));
        }
    }

    /// The step's verdict on the wire so far: a message from awg-mcp that
    /// breaks MCP's schema fails it; one the bot sent is the harness's own
    /// fault, so the trial is errored.
    pub fn verdict(&self, who: &str) -> Step<()> {
        let state = self.state.lock().unwrap();
        let revision = state.revision.as_deref().unwrap_or("?");
        if let Some(e) = &state.adapter {
            return Err(Abort::failed(format!(
                "awg-mcp of {who} sent a message MCP's schema ({revision}) forbids: {e}"
            )));
        }
        if let Some(e) = &state.bot {
            return Err(Abort::errored(format!(
                "the harness's MCP client sent a message MCP's schema ({revision}) forbids: {e}"
            )));
        }
        Ok(())
    }
}

fn quote(text: &str) -> String {
    match text.char_indices().nth(QUOTED) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

/// The bot's HTTP client: reqwest's, with every message shown to its wire.
#[derive(Clone)]
pub(crate) struct Checked {
    pub(crate) http: reqwest::Client,
    pub(crate) wire: Arc<Wire>,
}

type Events = BoxStream<'static, Result<sse_stream::Sse, SseError>>;

impl Checked {
    fn answer(&self, answer: StreamableHttpPostResponse) -> StreamableHttpPostResponse {
        match answer {
            StreamableHttpPostResponse::Json(message, session) => {
                // Already parsed by rmcp: checked as rmcp writes it back.
                if let Ok(text) = serde_json::to_string(&message) {
                    self.wire.received(&text);
                }
                StreamableHttpPostResponse::Json(message, session)
            }
            StreamableHttpPostResponse::Sse(events, session) => {
                StreamableHttpPostResponse::Sse(self.events(events), session)
            }
            other => other,
        }
    }

    fn events(&self, events: Events) -> Events {
        let wire = self.wire.clone();
        events
            .inspect(move |event| {
                // An event without data carries no message (MCP's priming
                // event: an id to resume from, and empty data).
                if let Ok(sse_stream::Sse {
                    data: Some(data), ..
                }) = event
                    && !data.trim().is_empty()
                {
                    wire.received(data);
                }
            })
            .boxed()
    }
}

type Answer = Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>>;

impl StreamableHttpClient for Checked {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Answer {
        self.wire.sent(&message);
        let answer = (self.http)
            .post_message(uri, message, session_id, auth_header, custom_headers)
            .await?;
        Ok(self.answer(answer))
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Answer {
        self.wire.sent(&message);
        let answer = (self.http)
            .post_message_with_max_sse_event_size(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await?;
        Ok(self.answer(answer))
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Answer {
        self.wire.sent(&message);
        let answer = (self.http)
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await?;
        Ok(self.answer(answer))
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        (self.http)
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<Events, StreamableHttpError<Self::Error>> {
        let events = (self.http)
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await?;
        Ok(self.events(events))
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<Events, StreamableHttpError<Self::Error>> {
        let events = (self.http)
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await?;
        Ok(self.events(events))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Each revision's schema compiles, and tells a valid answer from one
    /// rmcp would take (a content annotation's priority over 1).
    #[test]
    fn every_revision_tells_a_valid_tool_result_from_an_invalid_one() {
        let answer = |priority: f64| {
            json!({"jsonrpc": "2.0", "id": 3, "result": {"content": [
                {"type": "text", "text": "ok", "annotations": {"priority": priority}}
            ]}})
        };
        for (revision, _) in REVISIONS {
            assert_eq!(
                invalid(revision, &answer(0.5), true, Some("tools/call")),
                None,
                "{revision}"
            );
            let wrong = invalid(revision, &answer(2.0), true, Some("tools/call"));
            assert!(
                wrong.is_some_and(|e| e.contains("CallToolResult")),
                "{revision}"
            );
            let not_rpc = invalid(revision, &json!({"jsonrpc": "1.0", "id": 1}), true, None);
            assert!(
                not_rpc.is_some_and(|e| e.contains("JSON-RPC")),
                "{revision}"
            );
        }
    }

    /// Every definition a message may be held to is in every revision held.
    #[test]
    fn every_revision_has_every_definition_used() {
        let defs = [
            "JSONRPCMessage",
            "ServerRequest",
            "ServerNotification",
            "ClientRequest",
            "ClientNotification",
            "ClientResult",
            "InitializeResult",
            "ListToolsResult",
            "CallToolResult",
            "EmptyResult",
            "Result",
        ];
        for (revision, _) in REVISIONS {
            for def in defs {
                assert!(validator(revision, def).is_some(), "{revision} #{def}");
            }
        }
    }

    /// A session is held to the revision its `initialize` answer names; the
    /// first violation by awg-mcp fails the step, the bot's errs it.
    #[test]
    fn the_wire_keeps_the_first_violation_of_each_side() {
        let wire = Wire::default();
        let init: ClientJsonRpcMessage = serde_json::from_value(json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "bot", "version": "1"}}
        }))
        .unwrap();
        wire.sent(&init);
        wire.received(
            &json!({"jsonrpc": "2.0", "id": 0, "result": {
                "protocolVersion": "2025-03-26", "capabilities": {},
                "serverInfo": {"name": "awg-mcp", "version": "1"}}})
            .to_string(),
        );
        assert!(wire.verdict("bot").is_ok());
        wire.received(r#"{"jsonrpc": "2.0", "method": "notifications/message"}"#);
        let failed = wire.verdict("bot").unwrap_err().into_verdict();
        assert_eq!(failed.label(), "failed");
        assert!(
            failed.message().unwrap().contains("(2025-03-26)"),
            "{failed:?}"
        );
    }
}
