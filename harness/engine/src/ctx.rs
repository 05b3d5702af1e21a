//! The scenario context: what a scenario sees of its stack. Actors by name
//! (`ctx.human("alice")`, `ctx.bot("lab-bot")`), the setup client, the fault
//! proxy, named steps and assertions. The plumbing (URLs, credentials,
//! processes) stays in here, out of the scenario's sight.

use std::collections::HashMap;

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;

use crate::actors::bot::{AdapterSettings, Bot, ConsentSettings, ToolReply};
use crate::actors::consent::{ConsentToken, Elicitation, TokenPost};
use crate::actors::http::Answer;
use crate::actors::human::Human;
use crate::actors::native::NativeClient;
use crate::actors::setup::SetupClient;
use crate::core_api::oauth;
use crate::fixtures::Applied;
use crate::journal::{Journal, json_text};
use crate::proxy::FaultProxy;
use crate::stack::Backend;
use crate::vocab::{Abort, Step};
use crate::vocab::{NamedLog, StepRecord};

/// A bot token a scenario minted ([`Ctx::mint_bot_token`]): its owner and
/// id, to start a bot or native client with it and to delete it. The secret
/// stays inside the engine (and is a registered secret). No `Debug`.
#[derive(Clone)]
pub struct BotToken {
    /// The bot's login.
    pub login: String,
    /// The token's id, as the Core answered the minting.
    pub id: i64,
    secret: String,
}

/// A bot's secrets, lent to [`Ctx::authorizations`] to build
/// `Authorization` values; no `Debug`, and never kept.
pub struct Credentials {
    /// The bot's login.
    pub login: String,
    /// Its token's secret.
    pub token: String,
    /// Its fixture password.
    pub password: String,
}

/// `Basic` and the standard base64 of `text` as it is (RFC 7617: `user:pass`
/// when well formed; a grammar may leave the colon out).
pub fn basic(text: &str) -> String {
    use base64::Engine as _;
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(text.as_bytes())
    )
}

/// How to start a bot's adapter, from [`Ctx::bot_builder`]; `start` runs it.
pub struct BotBuilder<'a> {
    ctx: &'a mut Ctx,
    login: String,
    via_proxy: bool,
    upstream_timeout: Option<std::time::Duration>,
    token: Option<String>,
    scopes: Option<Vec<String>>,
    process_token_of: Option<String>,
    bearer: bool,
    basic: bool,
    consent: Option<Elicitation>,
    consent_timeout_secs: Option<u64>,
}

impl BotBuilder<'_> {
    /// Consent mode (spec §9): the adapter holds no credential; the harness
    /// registers an OAuth application whose one redirect URI is the
    /// adapter's callback on a reserved loopback port, and starts the
    /// adapter with `--oauth-client-id` and `--public-url`. Its MCP client
    /// declares URL-mode elicitation or none. The builder's login only
    /// names the bot in the report: the token will be whoever consents
    /// (unless [`BotBuilder::bearer`] gives its client the bot's own).
    pub fn consent(mut self, elicitation: Elicitation) -> Self {
        self.consent = Some(elicitation);
        self
    }

    /// `--consent-timeout-secs` of a consent-mode adapter.
    pub fn consent_timeout_secs(mut self, secs: u64) -> Self {
        self.consent_timeout_secs = Some(secs);
        self
    }

    /// Its adapter reaches the Core through the scenario's fault proxy.
    pub fn via_proxy(mut self) -> Self {
        self.via_proxy = true;
        self
    }

    /// Its adapter gives up on an upstream request after `timeout`
    /// (`--upstream-timeout-ms`), so timeout scenarios stay fast.
    pub fn upstream_timeout(mut self, timeout: std::time::Duration) -> Self {
        self.upstream_timeout = Some(timeout);
        self
    }

    /// It holds a freshly minted token with exactly `scopes`.
    pub fn scopes(mut self, scopes: &[&str]) -> Self {
        self.scopes = Some(scopes.iter().map(|s| s.to_string()).collect());
        self
    }

    /// It holds `token` (from [`Ctx::mint_bot_token`]) instead of its
    /// fixture token.
    pub fn token(mut self, token: &BotToken) -> Self {
        self.login = token.login.clone();
        self.token = Some(token.secret.clone());
        self
    }

    /// Its adapter process holds `other`'s token while every MCP request
    /// carries this bot's token as its bearer (spec §6: over HTTP the
    /// request's bearer wins); through the fault proxy.
    pub fn process_token_of(mut self, other: &str) -> Self {
        self.process_token_of = Some(other.to_owned());
        self.via_proxy = true;
        self
    }

    /// Its MCP client sends this bot's own token (its fixture token, or
    /// the one `token` or `scopes` gives it) as the bearer of every
    /// request. With `consent`, the adapter still starts in consent mode,
    /// so the bearer must take precedence (spec §9).
    pub fn bearer(mut self) -> Self {
        self.bearer = true;
        self
    }

    /// The adapter's process credential is the bot's Basic `login:password`
    /// (`AWG_BASIC_*`, spec §6) instead of its token.
    pub fn basic(mut self) -> Self {
        self.basic = true;
        self
    }

    /// This bot's own token: the one given, a fresh one of the asked
    /// scopes, or its fixture token.
    async fn own_token(
        ctx: &Ctx,
        login: &str,
        token: Option<String>,
        scopes: Option<Vec<String>>,
    ) -> Step<String> {
        match (token, scopes) {
            (Some(token), _) => Ok(token),
            (None, Some(scopes)) => {
                let scopes: Vec<&str> = scopes.iter().map(String::as_str).collect();
                ctx.mint_token(login, &scopes).await
            }
            (None, None) => ctx.token(login),
        }
    }

    /// Starts the adapter; the context stops it when the scenario ends.
    pub async fn start(self) -> Step<Bot> {
        let ctx = self.ctx;
        let url = if self.via_proxy {
            ctx.proxy().await?.url()
        } else {
            ctx.base_url.clone()
        };
        let (process_token, caller_bearer, consent) = if let Some(elicitation) = self.consent {
            // No process credential: a call without a bearer must ask for consent.
            // The adapter's public URL must be known before its OAuth
            // application is registered (its redirect URI), so the port is
            // chosen first; an adapter that then cannot bind it fails its
            // start loudly (never retried).
            let port = crate::ports::unassigned_loopback_port()
                .map_err(|e| Abort::errored(format!("choosing a loopback port: {e}")))?;
            let public_url = format!("http://127.0.0.1:{port}");
            let name = format!("grantgate-{}", uuid::Uuid::new_v4().simple());
            let client_id = ctx
                .setup
                .register_oauth_app(&name, &[format!("{public_url}{}", oauth::CALLBACK)])
                .await?;
            let consent = ConsentSettings {
                client_id,
                port,
                elicitation,
                timeout_secs: self.consent_timeout_secs,
                dir: ctx.dir.join(format!("adapter-{name}")),
            };
            let bearer = if self.bearer {
                Some(Self::own_token(ctx, &self.login, self.token, self.scopes).await?)
            } else {
                None
            };
            (String::new(), bearer, Some(consent))
        } else {
            let own = Self::own_token(ctx, &self.login, self.token, self.scopes).await?;
            match self.process_token_of {
                Some(other) => (ctx.token(&other)?, Some(own), None),
                None if self.bearer => (own.clone(), Some(own), None),
                None => (own, None, None),
            }
        };
        let basic_password = match self.basic {
            true => Some(ctx.bot_password(&self.login)?),
            false => None,
        };
        let settings = AdapterSettings {
            env: ctx.adapter_env.clone(),
            upstream_timeout: self.upstream_timeout,
            caller_bearer,
            basic_password,
            consent,
        };
        let bot = Bot::start(
            &self.login,
            &process_token,
            &url,
            &ctx.adapter_bin,
            &ctx.dir,
            &settings,
            ctx.journal.clone(),
        )
        .await?;
        ctx.bots.push(bot.clone());
        Ok(bot)
    }
}

/// One scenario's view of its stack.
pub struct Ctx {
    backend: Backend,
    base_url: String,
    journal: Journal,
    setup: SetupClient,
    applied: Applied,
    humans: HashMap<String, Human>,
    bots: Vec<Bot>,
    proxy: Option<Arc<FaultProxy>>,
    adapter_bin: PathBuf,
    adapter_env: Vec<(String, String)>,
    dir: PathBuf,
    core_log: Option<crate::child::SharedLog>,
    slot: Option<crate::runner::slots::Slot>,
    browser: Option<Arc<crate::browser::Driver>>,
}

impl Ctx {
    /// Builds the context of a stack whose fixtures have been applied.
    pub(crate) fn new(
        backend: Backend,
        base_url: String,
        journal: Journal,
        setup: SetupClient,
        applied: Applied,
        adapter_bin: PathBuf,
        dir: PathBuf,
    ) -> Self {
        Ctx {
            backend,
            base_url,
            journal,
            setup,
            applied,
            humans: HashMap::new(),
            bots: Vec::new(),
            proxy: None,
            adapter_bin,
            adapter_env: Vec::new(),
            dir,
            core_log: None,
            slot: None,
            browser: None,
        }
    }

    /// Humans sit at real browsers of `driver`'s (`--browser chromium`).
    pub(crate) fn with_browser(mut self, driver: Option<Arc<crate::browser::Driver>>) -> Self {
        self.browser = driver;
        self
    }

    /// Whether humans sit at a real browser (`--browser chromium`).
    pub fn real_browser(&self) -> bool {
        self.browser.is_some()
    }

    /// `human` at a real browser of its own when the run has one.
    fn seat(&self, human: Human) -> Human {
        match &self.browser {
            Some(driver) => human.in_browser(Arc::new(crate::browser::Tab::new(driver.clone()))),
            None => human,
        }
    }

    /// The `--jobs` slot the trial holds, lent out by [`Ctx::wait_out`].
    pub(crate) fn with_slot(mut self, slot: Option<crate::runner::slots::Slot>) -> Self {
        self.slot = slot;
        self
    }

    /// Waits `d` for a clock the contract gives no way to hasten (a CSRF,
    /// code or state lifetime). Another trial uses the run's slot meanwhile.
    pub async fn wait_out(&self, d: std::time::Duration) {
        self.journal.waited(d);
        match &self.slot {
            Some(slot) => slot.idle(d).await,
            None => tokio::time::sleep(d).await,
        }
    }

    /// The Core's captured output, for [`Ctx::core_log`].
    pub(crate) fn with_core_log(mut self, log: crate::child::SharedLog) -> Self {
        self.core_log = Some(log);
        self
    }

    /// Extra environment for every adapter this context starts (the run's
    /// `--adapter-env`).
    pub(crate) fn with_adapter_env(mut self, env: Vec<(String, String)>) -> Self {
        self.adapter_env = env;
        self
    }

    /// The backend this scenario runs on.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// The Core's origin.
    pub fn core_url(&self) -> &str {
        &self.base_url
    }

    /// Starts a named step; what follows is reported under it.
    pub fn step(&self, name: &str) {
        self.journal.step(name);
    }

    /// The setup client (site admin). Scenarios use it for administrative
    /// moves; it is never handed to a bot.
    pub fn setup(&self) -> &SetupClient {
        &self.setup
    }

    /// The Core's log so far (stdout and stderr as captured), unredacted:
    /// for a scenario that proves something never reaches the log (spec §8
    /// "the raw patterns never appear in … logs"). Empty when the runtime
    /// captures none.
    pub fn core_log(&self) -> String {
        self.core_log
            .as_ref()
            .map(crate::child::SharedLog::text)
            .unwrap_or_default()
    }

    /// Registers a value the scenario made up as a secret (e.g. a fake
    /// credential planted in a faulted answer), so no report shows it even
    /// if a Core or adapter leaks it.
    pub fn register_secret(&self, value: &str) {
        self.journal.secrets().register(value);
    }

    /// The human with this login, with a browser of their own (the same
    /// browser every time within a scenario).
    pub fn human(&mut self, login: &str) -> Step<Human> {
        if let Some(h) = self.humans.get(login) {
            return Ok(h.clone());
        }
        let password = self
            .applied
            .passwords
            .get(login)
            .ok_or_else(|| Abort::errored(format!("no human `{login}` in the fixture")))?;
        let human = Human::new(login, password, &self.base_url, self.journal.clone())?;
        let human = self.seat(human);
        self.humans.insert(login.to_owned(), human.clone());
        Ok(human)
    }

    /// A human with a second, separate browser (another session).
    pub fn second_browser(&self, login: &str) -> Step<Human> {
        let password = self
            .applied
            .passwords
            .get(login)
            .ok_or_else(|| Abort::errored(format!("no human `{login}` in the fixture")))?;
        let human = Human::new(login, password, &self.base_url, self.journal.clone())?;
        Ok(self.seat(human))
    }

    /// The site admin (`CORE_ADMIN_USER`) with a fresh browser of its own,
    /// holding its password to sign in through the login form (spec §4 says
    /// "repo admin" only; whether a site admin is one is the Core's own). The
    /// password is a registered secret and goes only to the Core's login form.
    pub fn site_admin(&self) -> Step<Human> {
        let (login, password) = self.setup.admin_credential();
        let human = Human::new(login, password, &self.base_url, self.journal.clone())?;
        Ok(self.seat(human))
    }

    /// A browser in a bot's hands, holding the bot's own login and fixture
    /// password: to prove that a bot never signs in through the login form
    /// (spec §1, §4). Nothing is signed in until the scenario tries.
    pub fn bot_browser(&self, login: &str) -> Step<Human> {
        let password = self
            .applied
            .bot_passwords
            .get(login)
            .ok_or_else(|| Abort::errored(format!("no bot `{login}` in the fixture")))?;
        let human = Human::new(login, password, &self.base_url, self.journal.clone())?;
        Ok(self.seat(human))
    }

    /// Every `Authorization` value with which the bot's credentials reach the
    /// native API (spec §1): `token T`, `Bearer T`, Basic `login:token` and
    /// Basic `login:password`. For proving that the browser surface ignores
    /// them; transcripts drop `Authorization` and the values are registered
    /// secrets, so they never reach a report.
    pub fn bot_authorization_headers(&self, login: &str) -> Step<Vec<String>> {
        let token = self.token(login)?;
        let password = self.bot_password(login)?;
        Ok(vec![
            format!("token {token}"),
            format!("Bearer {token}"),
            self.basic_authorization(login, &token)?,
            self.basic_authorization(login, &password)?,
        ])
    }

    /// `Authorization` values that carry no valid credential of `login`,
    /// each with what it is: a made-up token and Bearer, its own token with
    /// its last character changed, Basic with a wrong password, and Basic
    /// of an unknown login. The native API must answer each with 401 (spec
    /// §3); the values are registered secrets all the same.
    pub fn wrong_authorization_headers(&self, login: &str) -> Step<Vec<(&'static str, String)>> {
        let token = self.token(login)?;
        let made_up = || {
            let fake = format!(
                "{}{}",
                uuid::Uuid::new_v4().simple(),
                &uuid::Uuid::new_v4().simple().to_string()[..8]
            );
            self.journal.secrets().register(&fake);
            fake
        };
        let mut near = token.clone();
        let last = if near.ends_with('0') { "1" } else { "0" };
        near.replace_range(near.len().saturating_sub(1).., last);
        self.journal.secrets().register(&near);
        Ok(vec![
            ("a made-up token", format!("token {}", made_up())),
            ("a made-up Bearer token", format!("Bearer {}", made_up())),
            (
                "its own token with the last character changed",
                format!("token {near}"),
            ),
            (
                "Basic with a wrong password",
                self.basic_authorization(login, &made_up())?,
            ),
            (
                "Basic of an unknown login",
                self.basic_authorization("no-such-login-gg", &made_up())?,
            ),
        ])
    }

    /// `Authorization` values that `make` builds from `login`'s secrets
    /// (its fixture token, or `minted`'s instead, and its fixture password):
    /// the scenario writes a credential grammar, the engine holds the
    /// secrets. Every value, and the encoded part of a `Basic` one, is
    /// registered as a secret, so no report shows it.
    pub fn authorizations(
        &self,
        login: &str,
        minted: Option<&BotToken>,
        make: impl FnOnce(&Credentials) -> Vec<(String, Option<String>)>,
    ) -> Step<Vec<(String, Option<String>)>> {
        let token = match minted {
            Some(t) => t.secret.clone(),
            None => self.token(login)?,
        };
        // A bot's fixture password, or a human's (Basic `login:password`).
        let password = (self.applied.bot_passwords.get(login))
            .or_else(|| self.applied.passwords.get(login))
            .cloned()
            .ok_or_else(|| Abort::errored(format!("no user `{login}` in the fixture")))?;
        let values = make(&Credentials {
            login: login.to_owned(),
            token,
            password,
        });
        let secrets = self.journal.secrets();
        for value in values.iter().filter_map(|(_, v)| v.as_deref()) {
            secrets.register(value);
            if let Some((_, rest)) = value.split_once(' ') {
                secrets.register(rest.trim());
            }
        }
        Ok(values)
    }

    /// `Authorization: Basic` of `login:secret`, encoded by reqwest exactly
    /// as a client would; the encoded value is registered as a secret.
    fn basic_authorization(&self, login: &str, secret: &str) -> Step<String> {
        let request = reqwest::Client::new()
            .get(&self.base_url)
            .basic_auth(login, Some(secret))
            .build()
            .map_err(|e| Abort::errored(format!("basic credential for {login}: {e}")))?;
        let value = request
            .headers()
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
            .ok_or_else(|| Abort::errored("reqwest set no Basic authorization"))?;
        if let Some(encoded) = value.strip_prefix("Basic ") {
            self.journal.secrets().register(encoded);
        }
        Ok(value)
    }

    /// The bot with this login, running its own adapter against the Core
    /// with its fixture token: `ctx.bot_builder(login).start()`.
    pub async fn bot(&mut self, login: &str) -> Step<Bot> {
        self.bot_builder(login).start().await
    }

    /// A bot's adapter with other settings: through the fault proxy, a
    /// short upstream timeout, a token of narrower scopes or one minted
    /// apart, another bot's token in the process, or its own as the MCP
    /// requests' bearer (see [`BotBuilder`]).
    pub fn bot_builder(&mut self, login: &str) -> BotBuilder<'_> {
        BotBuilder {
            ctx: self,
            login: login.to_owned(),
            via_proxy: false,
            upstream_timeout: None,
            token: None,
            scopes: None,
            process_token_of: None,
            bearer: false,
            basic: false,
            consent: None,
            consent_timeout_secs: None,
        }
    }

    /// Bot `login`'s fixture password, for an adapter's Basic credential.
    fn bot_password(&self, login: &str) -> Step<String> {
        (self.applied.bot_passwords.get(login).cloned())
            .ok_or_else(|| Abort::errored(format!("no bot `{login}` in the fixture")))
    }

    /// True when `haystack` holds the fixture token of any bot other than
    /// `login`: privilege-separation checks on an adapter's environment,
    /// arguments and traffic, without handing any token out.
    pub fn token_of_other_bots_in(&self, login: &str, haystack: &[u8]) -> bool {
        self.applied
            .tokens
            .iter()
            .filter(|(l, _)| l.as_str() != login)
            .any(|(_, t)| crate::secrets::contains_bytes(haystack, t.as_bytes()))
    }

    /// True when `haystack` holds `login`'s own fixture token.
    pub fn own_token_in(&self, login: &str, haystack: &[u8]) -> bool {
        self.applied
            .tokens
            .get(login)
            .is_some_and(|t| crate::secrets::contains_bytes(haystack, t.as_bytes()))
    }

    /// True when `value` is exactly the `Authorization` an adapter sends for
    /// `login`'s fixture token: `token T`.
    pub fn is_token_authorization_of(&self, login: &str, value: &[u8]) -> bool {
        self.applied
            .tokens
            .get(login)
            .is_some_and(|t| value == format!("token {t}").as_bytes())
    }

    /// True when `haystack` holds any secret registered in the run other
    /// than `login`'s own fixture token: the setup token, the admin password,
    /// the Core's `CORE_SECRET_KEY`, passwords, other tokens.
    pub fn secret_other_than_own_token_in(&self, login: &str, haystack: &[u8]) -> bool {
        let mut rest = haystack.to_vec();
        if let Some(own) = self.applied.tokens.get(login) {
            rest = replace_bytes(&rest, own.as_bytes(), b"<own token>");
        }
        self.journal.secrets().occurrences(&rest) > 0
    }

    /// The bot's direct line to the native API with its fixture token, to see
    /// exactly what the Core answers (statuses, `Link`, `X-Total-Count`).
    pub fn native(&self, login: &str) -> Step<NativeClient> {
        let token = self.token(login)?;
        NativeClient::new(login, &token, &self.base_url, self.journal.clone())
    }

    /// The bot's direct line to the native API with a freshly minted token
    /// holding exactly `scopes`.
    pub async fn native_with_scopes(&self, login: &str, scopes: &[&str]) -> Step<NativeClient> {
        let token = self.mint_token(login, scopes).await?;
        NativeClient::new(login, &token, &self.base_url, self.journal.clone())
    }

    /// Mints another token for bot `login` with its fixture scopes, through
    /// the setup surface: a credential of its own that a scenario can hand
    /// to a bot or native client and later delete (exact replay, spec §10).
    pub async fn mint_bot_token(&self, login: &str) -> Step<BotToken> {
        let scopes = self
            .applied
            .scopes
            .get(login)
            .cloned()
            .ok_or_else(|| Abort::errored(format!("no bot `{login}` in the fixture")))?;
        self.mint_token_with_id(login, &scopes).await
    }

    /// Deletes a token minted with [`mint_bot_token`](Self::mint_bot_token)
    /// (the `token-delete` setup extension).
    pub async fn delete_bot_token(&self, token: &BotToken) -> Step<()> {
        self.setup.delete_token(&token.login, token.id).await
    }

    /// The token's bot's direct line to the native API with that token.
    pub fn native_with_token(&self, token: &BotToken) -> Step<NativeClient> {
        NativeClient::new(
            &token.login,
            &token.secret,
            &self.base_url,
            self.journal.clone(),
        )
    }

    /// Mints a token for `login` with exactly `scopes`. Token names are unique
    /// per user on a Forgejo-like Core, so each gets a fresh one.
    async fn mint_token(&self, login: &str, scopes: &[&str]) -> Step<String> {
        let scopes: Vec<String> = scopes.iter().map(|s| s.to_string()).collect();
        let name = format!("grantgate-{}", uuid::Uuid::new_v4().simple());
        self.setup.mint_token(login, &name, &scopes).await
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

    /// Registers a public OAuth application with exactly `redirect_uris`
    /// through the setup surface; returns its `client_id` (spec §9).
    pub async fn oauth_app(&self, redirect_uris: &[String]) -> Step<String> {
        let name = format!("grantgate-{}", uuid::Uuid::new_v4().simple());
        self.setup.register_oauth_app(&name, redirect_uris).await
    }

    /// Posts `fields` as a form to the Core's token endpoint, directly (no
    /// proxy, no cookies), and returns the answer whatever it is. Codes and
    /// verifiers sent, and tokens answered, are registered secrets.
    pub async fn token_request(&self, fields: &[(&str, &str)]) -> Step<Answer> {
        for (name, value) in fields {
            if matches!(*name, "code" | "code_verifier") {
                self.journal.secrets().register(value);
            }
        }
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| Abort::errored(format!("token client: {e}")))?;
        let request = client
            .post(format!("{}{}", self.base_url, oauth::TOKEN))
            .form(fields)
            .build()
            .map_err(|e| Abort::errored(format!("token request: {e}")))?;
        // A token in the answer is registered right after; the journal
        // redacts every recorded exchange again when it is read.
        let answer =
            crate::actors::http::exchange(&client, &self.journal, "oauth client", request).await?;
        if let Ok(Value::Object(json)) = serde_json::from_str::<Value>(&answer.body)
            && let Some(token) = json.get("access_token").and_then(|t| t.as_str())
        {
            self.journal.secrets().register(token);
        }
        Ok(answer)
    }

    /// The token of a 200 token answer (from [`token_request`](Self::token_request)),
    /// kept opaque; an answer without one is the Core's failure.
    pub fn consent_token_in(&self, answer: &Answer) -> Step<ConsentToken> {
        let token = ConsentToken::from_json(&answer.json()?)
            .ok_or_else(|| Abort::failed("the token answer has no access_token"))?;
        self.journal.secrets().register(&token.secret);
        Ok(token)
    }

    /// A direct line to the native API holding a token a consent produced
    /// (its owner is whoever consented, `login` names them in the report).
    pub fn native_with_consent(&self, login: &str, token: &ConsentToken) -> Step<NativeClient> {
        NativeClient::new(login, &token.secret, &self.base_url, self.journal.clone())
    }

    /// Mints a token for human `login` with `scopes` through the setup
    /// surface: the token a person would paste into a client instead of
    /// consenting (spec §9 compares the two). Its owner is `login`.
    pub async fn mint_human_token(&self, login: &str, scopes: &[&str]) -> Step<BotToken> {
        let scopes: Vec<String> = scopes.iter().map(|s| s.to_string()).collect();
        self.mint_token_with_id(login, &scopes).await
    }

    /// A new named token of `login` with `scopes`, its id kept for deletion.
    async fn mint_token_with_id(&self, login: &str, scopes: &[String]) -> Step<BotToken> {
        let name = format!("grantgate-{}", uuid::Uuid::new_v4().simple());
        let (id, secret) = self.setup.mint_token_with_id(login, &name, scopes).await?;
        Ok(BotToken {
            login: login.to_owned(),
            id,
            secret,
        })
    }

    /// Every file under each adapter's own directory (its working
    /// directory, `HOME` and `TMPDIR`) whose bytes hold `token`, and each
    /// adapter log that does. Only the adapter's places: the Core's own
    /// storage and log are the Core's business (spec §9 binds the adapter),
    /// and the report is checked for every registered secret when written.
    pub fn places_holding(&self, token: &ConsentToken) -> Step<Vec<String>> {
        let mut found = Vec::new();
        for bot in &self.bots {
            let Some(root) = bot.workdir() else { continue };
            let files = crate::secrets::files_under(&root)
                .map_err(|e| Abort::errored(format!("reading the adapter's directory: {e}")))?;
            for path in files {
                if std::fs::read(&path).is_ok_and(|bytes| token.is_in(&bytes)) {
                    let shown = path.strip_prefix(&self.dir).unwrap_or(&path);
                    found.push(format!("file {}", shown.display()));
                }
            }
            if token.is_in(bot.adapter_log().as_bytes()) {
                found.push(format!("the log of awg-mcp of {}", bot.login()));
            }
        }
        Ok(found)
    }

    /// Records an observable result for the backend-parity check: a trial
    /// of a parity scenario must observe the same values, in the same order,
    /// on every backend. Observe only what the contract makes deterministic
    /// (states, texts, statuses, ids of a fresh stack), never timestamps,
    /// ports or random keys.
    ///
    /// Values pass through [`stable`] first, so timestamps, origins and
    /// random keys inside a grant or submission do not need picking out.
    pub fn observe<T: serde::Serialize>(&self, key: &str, value: &T) {
        let json = serde_json::to_value(value)
            .map(stable)
            .and_then(|v| serde_json_canonicalizer::to_string(&v))
            .unwrap_or_else(|e| format!("unserialisable observation: {e}"));
        self.journal.observe(key, json);
    }

    /// Checks that `actual == expected`; a mismatch ends the scenario as
    /// failed. Values are recorded as JSON, the contract's own notation
    /// (`null`, `{"grant_id": 1}`), in which invisible characters (`\r`,
    /// trailing spaces inside quotes) still show.
    pub fn expect_eq<T: PartialEq + serde::Serialize>(
        &self,
        what: &str,
        actual: T,
        expected: T,
    ) -> Step<()> {
        let passed = actual == expected;
        let (a, e) = (json_text(&actual), json_text(&expected));
        self.journal.assertion(what, &e, &a, passed);
        if passed {
            Ok(())
        } else {
            Err(Abort::failed(self.journal.secrets().redact(&format!(
                "{what}: expected {}, got {}",
                crate::journal::truncate(&e),
                crate::journal::truncate(&a)
            ))))
        }
    }

    /// Checks a condition; `detail` says what was seen.
    pub fn expect(&self, what: &str, condition: bool, detail: &str) -> Step<()> {
        self.journal.assertion(what, "true", detail, condition);
        if condition {
            Ok(())
        } else {
            Err(Abort::failed(
                self.journal.secrets().redact(&format!("{what}: {detail}")),
            ))
        }
    }

    /// Checks an HTTP status.
    pub fn expect_status(&self, what: &str, actual: u16, expected: u16) -> Step<()> {
        self.expect_eq(what, actual, expected)
    }

    /// Checks that a tool call succeeded and returns its structured content.
    pub fn expect_tool_ok(&self, what: &str, reply: &ToolReply) -> Step<Value> {
        let ok = !reply.is_error && reply.structured.is_some();
        let detail = if ok {
            "success with structured content".to_owned()
        } else {
            format!("isError={} text={}", reply.is_error, reply.text)
        };
        self.expect(what, ok, &detail)?;
        Ok(reply.structured.clone().unwrap_or(Value::Null))
    }

    /// Checks that a tool call failed with `code`.
    pub fn expect_tool_error(&self, what: &str, reply: &ToolReply, code: &str) -> Step<()> {
        self.expect_eq(
            what,
            (reply.is_error, reply.error_code()),
            (true, Some(code)),
        )
    }

    fn token(&self, login: &str) -> Step<String> {
        self.applied
            .tokens
            .get(login)
            .cloned()
            .ok_or_else(|| Abort::errored(format!("no bot `{login}` in the fixture")))
    }

    /// Stops every adapter and returns what the report needs.
    /// Adds the page each human's real browser shows to the trail, with a
    /// screenshot, marked failed when the trial failed: where the trial left
    /// them.
    pub(crate) async fn picture_browsers(&self, failed: bool) {
        for human in self.humans.values() {
            human.picture(failed).await;
        }
    }

    pub(crate) async fn finish(self) -> (Vec<StepRecord>, Vec<NamedLog>) {
        let mut logs = Vec::new();
        for bot in &self.bots {
            bot.stop().await;
            logs.push(NamedLog {
                name: format!("awg-mcp of {}", bot.login()),
                text: self.journal.secrets().redact(&bot.adapter_log()),
            });
        }
        (self.journal.steps(), logs)
    }
}

fn replace_bytes(haystack: &[u8], needle: &[u8], with: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(haystack.len());
    let mut i = 0;
    while i < haystack.len() {
        if !needle.is_empty() && haystack[i..].starts_with(needle) {
            out.extend_from_slice(with);
            i += needle.len();
        } else {
            out.push(haystack[i]);
            i += 1;
        }
    }
    out
}

/// Makes a JSON value comparable across stacks: every `*_at` timestamp
/// becomes `"<timestamp>"`, every absolute `http://host:port` origin in a
/// string is cut to its path, and every UUID becomes `"<uuid>"`. What is left
/// (states, texts, ids of a fresh stack, statuses) must agree across backends.
pub fn stable(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| {
                    let v = if k.ends_with("_at") && v.is_string() {
                        Value::String("<timestamp>".into())
                    } else {
                        stable(v)
                    };
                    (k, v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(stable).collect()),
        Value::String(s) => {
            if uuid::Uuid::parse_str(&s).is_ok() && s.len() == 36 {
                Value::String("<uuid>".into())
            } else if let Some(rest) = s.strip_prefix("http://") {
                Value::String(
                    rest.find('/')
                        .map(|i| rest[i..].to_owned())
                        .unwrap_or_default(),
                )
            } else {
                Value::String(s)
            }
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn stable_values_drop_what_differs_between_stacks_and_keep_the_rest() {
        let v = json!({
            "state": "active",
            "created_at": "2026-01-01T00:00:00Z",
            "approved_at": null,
            "issue": {"id": 3, "html_url": "http://127.0.0.1:41234/alice/lab/issues/1"},
            "request_key": "9b2f0c1e-4a6b-4c8d-9e0f-1a2b3c4d5e6f",
            "body": "text http://example.test/x stays a path",
        });
        assert_eq!(
            stable(v),
            json!({
                "state": "active",
                "created_at": "<timestamp>",
                "approved_at": null,
                "issue": {"id": 3, "html_url": "/alice/lab/issues/1"},
                "request_key": "<uuid>",
                "body": "text http://example.test/x stays a path",
            })
        );
    }
}
