//! The bots of a scenario: each one's adapter, started as a builder says,
//! and its direct line to the native API.

use super::credentials::BotToken;
use super::stack::Ctx;
use crate::actors::bot::{AdapterSettings, Bot, ConsentSettings};
use crate::actors::consent::Elicitation;
use crate::actors::native::NativeClient;
use crate::core_api::oauth;
use crate::vocab::{Abort, Step};

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

    /// It holds `token` (from `ctx.tokens().mint_bot_token(..)`) instead of its
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

impl Ctx {
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

    /// The token's bot's direct line to the native API with that token.
    pub fn native_with_token(&self, token: &BotToken) -> Step<NativeClient> {
        NativeClient::new(
            &token.login,
            &token.secret,
            &self.base_url,
            self.journal.clone(),
        )
    }
}
