//! The credentials of a scenario: tokens minted and deleted through the
//! setup surface, `Authorization` values built from secrets the engine
//! keeps, and checks that find a secret where it must not be, without
//! handing any out.

use super::stack::Ctx;
use crate::vocab::{Abort, Step};

/// A bot token a scenario minted ([`Tokens::mint_bot_token`]): its owner and
/// id, to start a bot or native client with it and to delete it. The secret
/// stays inside the engine (and is a registered secret). No `Debug`.
#[derive(Clone)]
pub struct BotToken {
    /// The bot's login.
    pub login: String,
    /// The token's id, as the Core answered the minting.
    pub id: i64,
    pub(super) secret: String,
}

/// A bot's secrets, lent to [`Tokens::authorizations`] to build
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

impl Ctx {
    /// The tokens facet: tokens minted and deleted through the setup
    /// surface, bots' credentials as `Authorization` values, and checks that
    /// find a token where it must not be. The secrets stay inside the engine.
    pub fn tokens(&self) -> Tokens<'_> {
        Tokens { ctx: self }
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

    /// Bot `login`'s fixture password, for an adapter's Basic credential.
    pub(super) fn bot_password(&self, login: &str) -> Step<String> {
        (self.applied.bot_passwords.get(login).cloned())
            .ok_or_else(|| Abort::errored(format!("no bot `{login}` in the fixture")))
    }

    pub(super) fn token(&self, login: &str) -> Step<String> {
        self.applied
            .tokens
            .get(login)
            .cloned()
            .ok_or_else(|| Abort::errored(format!("no bot `{login}` in the fixture")))
    }

    /// Mints a token for `login` with exactly `scopes`. Token names are unique
    /// per user on a Forgejo-like Core, so each gets a fresh one.
    pub(super) async fn mint_token(&self, login: &str, scopes: &[&str]) -> Step<String> {
        let scopes: Vec<String> = scopes.iter().map(|s| s.to_string()).collect();
        let name = format!("grantgate-{}", uuid::Uuid::new_v4().simple());
        self.setup.mint_token(login, &name, &scopes).await
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
}

/// What [`Ctx::tokens`] gives a scenario; borrowed for one call at a time.
pub struct Tokens<'a> {
    ctx: &'a Ctx,
}

impl Tokens<'_> {
    /// Every `Authorization` value with which the bot's credentials reach the
    /// native API (spec §1): `token T`, `Bearer T`, Basic `login:token` and
    /// Basic `login:password`. For proving that the browser surface ignores
    /// them; transcripts drop `Authorization` and the values are registered
    /// secrets, so they never reach a report.
    pub fn bot_authorization_headers(&self, login: &str) -> Step<Vec<String>> {
        let token = self.ctx.token(login)?;
        let password = self.ctx.bot_password(login)?;
        Ok(vec![
            format!("token {token}"),
            format!("Bearer {token}"),
            self.ctx.basic_authorization(login, &token)?,
            self.ctx.basic_authorization(login, &password)?,
        ])
    }

    /// `Authorization` values that carry no valid credential of `login`,
    /// each with what it is: a made-up token and Bearer, its own token with
    /// its last character changed, Basic with a wrong password, and Basic
    /// of an unknown login. The native API must answer each with 401 (spec
    /// §3); the values are registered secrets all the same.
    pub fn wrong_authorization_headers(&self, login: &str) -> Step<Vec<(&'static str, String)>> {
        let token = self.ctx.token(login)?;
        let made_up = || {
            let fake = format!(
                "{}{}",
                uuid::Uuid::new_v4().simple(),
                &uuid::Uuid::new_v4().simple().to_string()[..8]
            );
            self.ctx.journal.secrets().register(&fake);
            fake
        };
        let mut near = token.clone();
        let last = if near.ends_with('0') { "1" } else { "0" };
        near.replace_range(near.len().saturating_sub(1).., last);
        self.ctx.journal.secrets().register(&near);
        Ok(vec![
            ("a made-up token", format!("token {}", made_up())),
            ("a made-up Bearer token", format!("Bearer {}", made_up())),
            (
                "its own token with the last character changed",
                format!("token {near}"),
            ),
            (
                "Basic with a wrong password",
                self.ctx.basic_authorization(login, &made_up())?,
            ),
            (
                "Basic of an unknown login",
                self.ctx
                    .basic_authorization("no-such-login-gg", &made_up())?,
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
            None => self.ctx.token(login)?,
        };
        // A bot's fixture password, or a human's (Basic `login:password`).
        let password = (self.ctx.applied.bot_passwords.get(login))
            .or_else(|| self.ctx.applied.passwords.get(login))
            .cloned()
            .ok_or_else(|| Abort::errored(format!("no user `{login}` in the fixture")))?;
        let values = make(&Credentials {
            login: login.to_owned(),
            token,
            password,
        });
        let secrets = self.ctx.journal.secrets();
        for value in values.iter().filter_map(|(_, v)| v.as_deref()) {
            secrets.register(value);
            if let Some((_, rest)) = value.split_once(' ') {
                secrets.register(rest.trim());
            }
        }
        Ok(values)
    }

    /// True when `haystack` holds the fixture token of any bot other than
    /// `login`: privilege-separation checks on an adapter's environment,
    /// arguments and traffic, without handing any token out.
    pub fn token_of_other_bots_in(&self, login: &str, haystack: &[u8]) -> bool {
        self.ctx
            .applied
            .tokens
            .iter()
            .filter(|(l, _)| l.as_str() != login)
            .any(|(_, t)| crate::secrets::contains_bytes(haystack, t.as_bytes()))
    }

    /// True when `haystack` holds `login`'s own fixture token.
    pub fn own_token_in(&self, login: &str, haystack: &[u8]) -> bool {
        self.ctx
            .applied
            .tokens
            .get(login)
            .is_some_and(|t| crate::secrets::contains_bytes(haystack, t.as_bytes()))
    }

    /// True when `value` is exactly the `Authorization` an adapter sends for
    /// `login`'s fixture token: `token T`.
    pub fn is_token_authorization_of(&self, login: &str, value: &[u8]) -> bool {
        self.ctx
            .applied
            .tokens
            .get(login)
            .is_some_and(|t| value == format!("token {t}").as_bytes())
    }

    /// True when `haystack` holds any secret registered in the run other
    /// than `login`'s own fixture token: the setup token, the admin password,
    /// the Core's `CORE_SECRET_KEY`, passwords, other tokens.
    pub fn secret_other_than_own_token_in(&self, login: &str, haystack: &[u8]) -> bool {
        let mut rest = haystack.to_vec();
        if let Some(own) = self.ctx.applied.tokens.get(login) {
            rest = replace_bytes(&rest, own.as_bytes(), b"<own token>");
        }
        self.ctx.journal.secrets().occurrences(&rest) > 0
    }

    /// Mints another token for bot `login` with its fixture scopes, through
    /// the setup surface: a credential of its own that a scenario can hand
    /// to a bot or native client and later delete (exact replay, spec §10).
    pub async fn mint_bot_token(&self, login: &str) -> Step<BotToken> {
        let scopes = self
            .ctx
            .applied
            .scopes
            .get(login)
            .cloned()
            .ok_or_else(|| Abort::errored(format!("no bot `{login}` in the fixture")))?;
        self.ctx.mint_token_with_id(login, &scopes).await
    }

    /// Deletes a token minted with [`mint_bot_token`](Self::mint_bot_token)
    /// (the `token-delete` setup extension).
    pub async fn delete_bot_token(&self, token: &BotToken) -> Step<()> {
        self.ctx.setup.delete_token(&token.login, token.id).await
    }

    /// Mints a token for human `login` with `scopes` through the setup
    /// surface: the token a person would paste into a client instead of
    /// consenting (spec §9 compares the two). Its owner is `login`.
    pub async fn mint_human_token(&self, login: &str, scopes: &[&str]) -> Step<BotToken> {
        let scopes: Vec<String> = scopes.iter().map(|s| s.to_string()).collect();
        self.ctx.mint_token_with_id(login, &scopes).await
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
