//! What a scenario sees of the fault proxy and of consent (spec §9): the
//! proxy and the requests it passed, OAuth applications, the token
//! endpoint, consented tokens, and where an adapter may have left one.

use std::sync::Arc;

use serde_json::Value;

use super::stack::Ctx;
use crate::actors::consent::{ConsentToken, TokenPost};
use crate::actors::http::Answer;
use crate::actors::native::NativeClient;
use crate::core_api::oauth;
use crate::proxy::FaultProxy;
use crate::vocab::{Abort, Step};

impl Ctx {
    /// The consent facet (spec §9): OAuth applications, the token endpoint,
    /// consented tokens, and where an adapter may have left one.
    pub fn consent(&self) -> Consent<'_> {
        Consent { ctx: self }
    }

    /// The fault proxy in front of the Core, started on first use. A shared
    /// handle, so the scenario can program faults while using the context.
    pub async fn proxy(&mut self) -> Step<Arc<FaultProxy>> {
        if self.proxy.is_none() {
            self.proxy = Some(Arc::new(
                FaultProxy::start_with(&self.base_url, Some(self.journal.secrets().clone()))
                    .await?,
            ));
        }
        Ok(self.proxy.clone().expect("just started"))
    }

    /// The token POSTs the fault proxy has seen so far, in order (spec §9:
    /// a consent-mode bot built `.via_proxy()` makes its exchange there).
    /// Codes, verifiers and tokens in them are registered secrets.
    pub async fn token_posts(&self) -> Step<Vec<TokenPost>> {
        Ok(crate::actors::consent::token_posts(
            self.started_proxy()?.captured(),
        ))
    }

    /// The proxy a bot built `.via_proxy()` started; none is the
    /// scenario's mistake.
    fn started_proxy(&self) -> Step<&Arc<FaultProxy>> {
        self.proxy
            .as_ref()
            .ok_or_else(|| Abort::errored("no fault proxy: start a bot `.via_proxy()` first"))
    }

    /// Every request the fault proxy has passed so far, as `(method, path)`.
    pub async fn proxy_requests(&self) -> Step<Vec<(String, String)>> {
        Ok(self.started_proxy()?.requests())
    }

    /// How many requests to the native API (`/api/…`) the fault proxy has
    /// passed so far: a parked call makes none.
    pub async fn api_requests(&self) -> Step<usize> {
        Ok(self
            .started_proxy()?
            .requests()
            .iter()
            .filter(|(_, path)| path.starts_with("/api/"))
            .count())
    }
}

/// What [`Ctx::consent`] gives a scenario; borrowed for one call at a time.
pub struct Consent<'a> {
    ctx: &'a Ctx,
}

impl Consent<'_> {
    /// Registers a public OAuth application with exactly `redirect_uris`
    /// through the setup surface; returns its `client_id` (spec §9).
    pub async fn oauth_app(&self, redirect_uris: &[String]) -> Step<String> {
        let name = format!("grantgate-{}", uuid::Uuid::new_v4().simple());
        self.ctx
            .setup
            .register_oauth_app(&name, redirect_uris)
            .await
    }

    /// Posts `fields` as a form to the Core's token endpoint, directly (no
    /// proxy, no cookies), and returns the answer whatever it is. Codes and
    /// verifiers sent, and tokens answered, are registered secrets.
    pub async fn token_request(&self, fields: &[(&str, &str)]) -> Step<Answer> {
        for (name, value) in fields {
            if matches!(*name, "code" | "code_verifier") {
                self.ctx.journal.secrets().register(value);
            }
        }
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| Abort::errored(format!("token client: {e}")))?;
        let request = client
            .post(format!("{}{}", self.ctx.base_url, oauth::TOKEN))
            .form(fields)
            .build()
            .map_err(|e| Abort::errored(format!("token request: {e}")))?;
        // A token in the answer is registered right after; the journal
        // redacts every recorded exchange again when it is read.
        let answer =
            crate::actors::http::exchange(&client, &self.ctx.journal, "oauth client", request)
                .await?;
        if let Ok(Value::Object(json)) = serde_json::from_str::<Value>(&answer.body)
            && let Some(token) = json.get("access_token").and_then(|t| t.as_str())
        {
            self.ctx.journal.secrets().register(token);
        }
        Ok(answer)
    }

    /// The token of a 200 token answer (from [`token_request`](Self::token_request)),
    /// kept opaque; an answer without one is the Core's failure.
    pub fn consent_token_in(&self, answer: &Answer) -> Step<ConsentToken> {
        let token = ConsentToken::from_json(&answer.json()?)
            .ok_or_else(|| Abort::failed("the token answer has no access_token"))?;
        self.ctx.journal.secrets().register(&token.secret);
        Ok(token)
    }

    /// A direct line to the native API holding a token a consent produced
    /// (its owner is whoever consented, `login` names them in the report).
    pub fn native_with_consent(&self, login: &str, token: &ConsentToken) -> Step<NativeClient> {
        NativeClient::new(
            login,
            &token.secret,
            &self.ctx.base_url,
            self.ctx.journal.clone(),
        )
    }

    /// Every file under each adapter's own directory (its working
    /// directory, `HOME` and `TMPDIR`) whose bytes hold `token`, and each
    /// adapter log that does. Only the adapter's places: the Core's own
    /// storage and log are the Core's business (spec §9 binds the adapter),
    /// and the report is checked for every registered secret when written.
    pub fn places_holding(&self, token: &ConsentToken) -> Step<Vec<String>> {
        let mut found = Vec::new();
        for bot in &self.ctx.bots {
            let Some(root) = bot.workdir() else { continue };
            let files = crate::secrets::files_under(&root)
                .map_err(|e| Abort::errored(format!("reading the adapter's directory: {e}")))?;
            for path in files {
                if std::fs::read(&path).is_ok_and(|bytes| token.is_in(&bytes)) {
                    let shown = path.strip_prefix(&self.ctx.dir).unwrap_or(&path);
                    found.push(format!("file {}", shown.display()));
                }
            }
            if token.is_in(bot.adapter_log().as_bytes()) {
                found.push(format!("the log of awg-mcp of {}", bot.login()));
            }
        }
        Ok(found)
    }
}
