//! Delegated consent (spec §9), as a client and a browser see it: the MCP
//! client handler that declares and accepts URL-mode elicitation, the
//! authorize URL an adapter hands out, the Core's redirect to the callback,
//! and the token POSTs the fault proxy saw.
//!
//! Every state, code, verifier and token met here is a registered secret
//! before anything records it, and none of these types print one: no
//! `Debug` shows a value.

use std::sync::Arc;

use rmcp::ClientHandler;
use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationCapability, FormElicitationCapability, UrlElicitationCapability,
};
use rmcp::service::{RequestContext, RoleClient};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::core_api::oauth;
use crate::proxy::CapturedRequest;
use crate::secrets::SecretRegistry;
use crate::vocab::{Abort, Step};

/// How a consent-mode bot's MCP client hears that it must consent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Elicitation {
    /// The client declares URL-mode elicitation (`elicitation: {url: {}}`)
    /// and accepts each `elicitation/create` in URL mode, handing the URL
    /// to the scenario.
    Url,
    /// The client declares form-mode elicitation only: to the adapter it
    /// is a client without URL mode (spec §9), so the call ends with
    /// `auth_required` too; any elicitation it is sent counts as unread.
    Form,
    /// The client declares no elicitation: the adapter must end the call
    /// with `auth_required` whose message holds the URL.
    None,
}

/// The MCP client every bot runs: with [`Elicitation::Url`] it declares
/// URL-mode elicitation and hands every URL it is sent to the scenario;
/// otherwise it declares nothing (as rmcp's `()` client does).
pub(crate) struct BotClient {
    pub(crate) elicitation: Option<Elicitation>,
    pub(crate) urls: mpsc::UnboundedSender<ElicitedUrl>,
    pub(crate) secrets: SecretRegistry,
}

/// One URL-mode elicitation as the client received it.
pub(crate) struct ElicitedUrl {
    pub(crate) url: String,
    pub(crate) elicitation_id: String,
}

impl ClientHandler for BotClient {
    fn get_info(&self) -> ClientConfig {
        let mut config = ClientConfig::default();
        let declared = match self.elicitation {
            Some(Elicitation::Url) => {
                ElicitationCapability::new().with_url(UrlElicitationCapability::new())
            }
            Some(Elicitation::Form) => {
                ElicitationCapability::new().with_form(FormElicitationCapability::new())
            }
            _ => return config,
        };
        let mut capabilities = ClientCapabilities::default();
        capabilities.elicitation = Some(declared);
        config.capabilities = capabilities;
        config
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, rmcp::ErrorData> {
        match (self.elicitation, request) {
            (
                Some(Elicitation::Url),
                ElicitRequestParams::UrlElicitationParams {
                    url,
                    elicitation_id,
                    ..
                },
            ) => {
                register_url_secrets(&self.secrets, &url);
                let _ = self.urls.send(ElicitedUrl {
                    url,
                    elicitation_id,
                });
                // The person agrees to open the URL; consenting is done in
                // the browser, by the scenario.
                Ok(ElicitResult::new(ElicitationAction::Accept))
            }
            // A form elicitation (no URL mode) is counted for the scenario
            // and declined: a person has nothing to type for a consent.
            (Some(Elicitation::Form), request) => {
                let elicitation_id = match request {
                    ElicitRequestParams::UrlElicitationParams { elicitation_id, .. } => {
                        elicitation_id
                    }
                    _ => "form".to_owned(),
                };
                let url = String::new();
                let _ = self.urls.send(ElicitedUrl {
                    url,
                    elicitation_id,
                });
                Ok(ElicitResult::new(ElicitationAction::Decline))
            }
            // A client that declared no such mode refuses it, as a real
            // client would; the scenario sees the call's outcome.
            _ => Ok(ElicitResult::new(ElicitationAction::Decline)),
        }
    }
}

/// Registers the `state` (and any `code`) a URL carries.
pub(crate) fn register_url_secrets(secrets: &SecretRegistry, url: &str) {
    if let Ok(parsed) = url::Url::parse(url) {
        for (name, value) in parsed.query_pairs() {
            if matches!(name.as_ref(), "state" | "code") {
                secrets.register(&value);
            }
        }
    }
}

/// An authorize URL an adapter handed out (by elicitation or in an
/// `auth_required` message). No `Debug`: it carries the state.
#[derive(Clone)]
pub struct ConsentUrl {
    url: url::Url,
    /// The `elicitationId` of a URL-mode elicitation (empty otherwise).
    pub elicitation_id: String,
}

impl ConsentUrl {
    /// Parses `text` as an absolute URL; its state is registered first.
    pub(crate) fn parse(
        text: &str,
        elicitation_id: String,
        secrets: &SecretRegistry,
    ) -> Step<Self> {
        register_url_secrets(secrets, text);
        let url = url::Url::parse(text).map_err(|e| {
            Abort::failed(secrets.redact(&format!("the consent URL `{text}` is not a URL: {e}")))
        })?;
        Ok(ConsentUrl {
            url,
            elicitation_id,
        })
    }

    /// The whole URL, to open in a browser.
    pub fn url(&self) -> &url::Url {
        &self.url
    }

    /// `scheme://host:port` of the URL.
    pub fn origin(&self) -> String {
        self.url.origin().ascii_serialization()
    }

    /// The URL's path.
    pub fn path(&self) -> &str {
        self.url.path()
    }

    /// Every value of query parameter `name`, in order.
    pub fn params(&self, name: &str) -> Vec<String> {
        self.url
            .query_pairs()
            .filter(|(n, _)| n == name)
            .map(|(_, v)| v.into_owned())
            .collect()
    }

    /// The single value of query parameter `name` (`None` when absent or
    /// repeated).
    pub fn param(&self, name: &str) -> Option<String> {
        let mut all = self.params(name);
        (all.len() == 1).then(|| all.remove(0))
    }

    /// `state` (a registered secret).
    pub fn state(&self) -> Option<String> {
        self.param("state")
    }

    /// `code_challenge`.
    pub fn challenge(&self) -> Option<String> {
        self.param("code_challenge")
    }
}

/// Where the Core's consent decision sent the browser: `redirect_uri`
/// with `code` and `state`, or `error` and `state`. No `Debug`.
#[derive(Clone)]
pub struct ConsentRedirect {
    /// The status of the consent POST's answer (303 expected).
    pub status: u16,
    url: url::Url,
}

impl ConsentRedirect {
    pub(crate) fn new(status: u16, url: url::Url) -> Self {
        ConsentRedirect { status, url }
    }

    /// The whole redirect target.
    pub fn url(&self) -> &url::Url {
        &self.url
    }

    /// The target without its query: the `redirect_uri` it went to.
    pub fn target(&self) -> String {
        let mut u = self.url.clone();
        u.set_query(None);
        u.set_fragment(None);
        u.to_string()
    }

    fn param(&self, name: &str) -> Option<String> {
        self.url
            .query_pairs()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.into_owned())
    }

    /// `code` (a registered secret).
    pub fn code(&self) -> Option<String> {
        self.param("code")
    }

    /// `state` (a registered secret).
    pub fn state(&self) -> Option<String> {
        self.param("state")
    }

    /// `error` (`access_denied` after a refusal).
    pub fn error(&self) -> Option<String> {
        self.param("error")
    }

    /// The callback URL with `code` and `state` replaced (`None` leaves
    /// that parameter out): to deliver a code with another state, or none.
    pub fn with(&self, code: Option<&str>, state: Option<&str>) -> url::Url {
        let mut url = self.url.clone();
        {
            let mut q = url.query_pairs_mut();
            q.clear();
            if let Some(c) = code {
                q.append_pair("code", c);
            }
            if let Some(s) = state {
                q.append_pair("state", s);
            }
        }
        url
    }
}

/// One token POST the fault proxy saw (spec §9: exactly one per valid
/// callback). No `Debug`: it carries the code, verifier and token.
#[derive(Clone)]
pub struct TokenPost {
    request: CapturedRequest,
}

impl TokenPost {
    pub(crate) fn new(request: CapturedRequest) -> Self {
        TokenPost { request }
    }

    /// A form field of the POST (`grant_type`, `code`, `redirect_uri`,
    /// `client_id`, `code_verifier`).
    pub fn field(&self, name: &str) -> Option<String> {
        self.request.form_field(name)
    }

    /// `code_verifier` (a registered secret).
    pub fn verifier(&self) -> Option<String> {
        self.field("code_verifier")
    }

    /// The status the proxy passed back (`None`: in flight or dropped).
    pub fn answer_status(&self) -> Option<u16> {
        self.request.answer.as_ref().map(|(s, _)| *s)
    }

    /// The answer's JSON body, when it had one.
    pub fn answer_json(&self) -> Option<Value> {
        self.request
            .answer
            .as_ref()
            .and_then(|(_, b)| serde_json::from_slice(b).ok())
    }

    /// `access_token` of a 200 answer, kept opaque.
    pub fn token(&self) -> Option<ConsentToken> {
        ConsentToken::from_json(&self.answer_json()?)
    }
}

/// A token a consent produced. The secret stays inside the engine.
#[derive(Clone)]
pub struct ConsentToken {
    pub(crate) secret: String,
    /// The `scope` member of the token answer, as the Core wrote it.
    pub scope: String,
}

impl ConsentToken {
    /// The token of an RFC 6749 §5.1 answer (`access_token`, `scope`).
    pub(crate) fn from_json(json: &serde_json::Value) -> Option<ConsentToken> {
        Some(ConsentToken {
            secret: json.get("access_token")?.as_str()?.to_owned(),
            scope: json
                .get("scope")
                .and_then(|s| s.as_str())
                .unwrap_or_default()
                .to_owned(),
        })
    }

    /// The scopes of the answer, split on spaces (RFC 6749 §3.3).
    pub fn scopes(&self) -> Vec<String> {
        self.scope.split_whitespace().map(str::to_owned).collect()
    }

    /// True when `haystack` holds the token.
    pub fn is_in(&self, haystack: &[u8]) -> bool {
        crate::secrets::contains_bytes(haystack, self.secret.as_bytes())
    }
}

/// The token POSTs among `captured`, in order.
pub fn token_posts(captured: Vec<CapturedRequest>) -> Vec<TokenPost> {
    captured
        .into_iter()
        .filter(|r| r.method == "POST" && r.path_and_query.split('?').next() == Some(oauth::TOKEN))
        .map(TokenPost::new)
        .collect()
}

/// The URLs a consent bot has been sent, waiting to be read.
pub(crate) type UrlInbox = Arc<tokio::sync::Mutex<mpsc::UnboundedReceiver<ElicitedUrl>>>;
