//! Configuration: command line and environment, checked once at start.
//!
//! Everything that decides where requests go (the Core origin) and who they
//! act as (the credential) is fixed here and never changes while serving.
//! Credentials come only from the environment so that they never show up in
//! a process listing.

use std::{net::SocketAddr, time::Duration};

use clap::{Parser, ValueEnum};
use url::Url;

use crate::edges::{Edge, Edges};
use crate::error::ConfigError;
pub use crate::model::Credential;

/// Which MCP transport to serve.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Transport {
    /// JSON-RPC over the process's stdin/stdout (the default).
    Stdio,
    /// Streamable HTTP at `/mcp`.
    Http,
}

/// The command line; every flag also reads an `AWG_*` environment variable.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "awg-mcp",
    version,
    about = "MCP adapter for agent work grants on one fixed Core origin"
)]
pub struct Cli {
    /// The Core's origin, `http(s)://host[:port]` with no path, query, userinfo or fragment.
    #[arg(long, env = "AWG_CORE_URL")]
    pub core_url: String,
    /// MCP transport to serve.
    #[arg(long, env = "AWG_TRANSPORT", value_enum, default_value = "stdio")]
    pub transport: Transport,
    /// Address for the HTTP transport; port 0 picks a free one.
    #[arg(long, env = "AWG_LISTEN", default_value = "127.0.0.1:0")]
    pub listen: SocketAddr,
    /// Allow `--listen` on a non-loopback address, a non-loopback `--public-url`, and any `Host` header.
    #[arg(long, env = "AWG_ALLOW_REMOTE")]
    pub allow_remote: bool,
    /// Timeout of each upstream request in milliseconds (connect to last body byte).
    #[arg(long, env = "AWG_UPSTREAM_TIMEOUT_MS", default_value_t = 30_000,
          value_parser = clap::value_parser!(u64).range(1..=3_600_000))]
    pub upstream_timeout_ms: u64,
    /// Browser origin allowed to call the HTTP transport (repeatable). Default: loopback origins only.
    #[arg(
        long = "allowed-origin",
        env = "AWG_ALLOWED_ORIGINS",
        value_delimiter = ','
    )]
    pub allowed_origins: Vec<String>,
    /// OAuth client id registered at the Core: turns on consent mode (HTTP only, no process credential).
    #[arg(long, env = "AWG_OAUTH_CLIENT_ID")]
    pub oauth_client_id: Option<String>,
    /// The adapter's externally visible origin; the OAuth redirect is `<public-url>/mcp/oauth/callback`.
    #[arg(long, env = "AWG_PUBLIC_URL")]
    pub public_url: Option<String>,
    /// How long a consent state stays valid and a parked call waits, in seconds.
    #[arg(long, env = "AWG_CONSENT_TIMEOUT_SECS", default_value_t = 300,
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub consent_timeout_secs: u64,
}

/// The Core's origin: scheme, host and port, nothing else.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoreOrigin(Url);

impl CoreOrigin {
    /// Parses and checks a bare http(s) origin; a trailing `/` is tolerated.
    pub fn parse(raw: &str) -> Result<Self, ConfigError> {
        Self::parse_as("--core-url", raw)
    }

    /// Like [`CoreOrigin::parse`], naming `flag` in the error.
    pub fn parse_as(flag: &'static str, raw: &str) -> Result<Self, ConfigError> {
        // A URL with userinfo may carry a secret: it is never echoed.
        let shown = if raw.contains('@') {
            "<with userinfo, not shown>".to_owned()
        } else {
            raw.to_owned()
        };
        let fail = |reason: &str| ConfigError::CoreUrl {
            flag,
            url: shown.clone(),
            reason: reason.to_owned(),
        };
        let url = Url::parse(raw).map_err(|e| fail(&e.to_string()))?;
        if url.scheme() != "http" && url.scheme() != "https" {
            return Err(fail("the scheme must be http or https"));
        }
        if url.host_str().is_none_or(str::is_empty) {
            return Err(fail("a host is required"));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(fail(
                "userinfo is not allowed (credentials come from AWG_TOKEN or AWG_BASIC_*)",
            ));
        }
        if url.path() != "/" {
            return Err(fail("a path is not allowed"));
        }
        if url.query().is_some() {
            return Err(fail("a query is not allowed"));
        }
        if url.fragment().is_some() {
            return Err(fail("a fragment is not allowed"));
        }
        Ok(Self(url))
    }

    /// The origin as a base URL (`scheme://host[:port]/`).
    pub fn url(&self) -> &Url {
        &self.0
    }
}

/// Whether `name` (a host without port or brackets) is a loopback name:
/// `localhost`, 127.0.0.0/8 or `::1`. The one rule for `Host`, `Origin` and
/// `--public-url`.
pub fn is_loopback_name(name: &str) -> bool {
    Edge::is_loopback_host_name(name)
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Whether `url`'s host is a loopback name.
pub fn has_loopback_host(url: &Url) -> bool {
    url.host_str()
        .is_some_and(|host| is_loopback_name(host.trim_matches(['[', ']'])))
}

/// The complete, checked configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// The one Core every request goes to.
    pub core: CoreOrigin,
    /// Transport to serve.
    pub transport: Transport,
    /// HTTP listen address.
    pub listen: SocketAddr,
    /// Whether non-loopback listening, a non-loopback public URL and any Host are allowed.
    pub allow_remote: bool,
    /// Upstream request timeout.
    pub upstream_timeout: Duration,
    /// Extra allowed browser origins, normalised (`scheme://host:port`).
    pub allowed_origins: Vec<String>,
    /// The process credential, if any.
    pub credential: Option<Credential>,
    /// Consent mode (spec §9), when `--oauth-client-id` is given.
    pub consent: Option<ConsentConfig>,
}

/// Consent mode's settings: who the adapter is at the Core, and where the browser comes back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsentConfig {
    /// The OAuth client id registered at the Core.
    pub client_id: String,
    /// The adapter's externally visible origin (`scheme://host[:port]`, no path).
    pub public_url: CoreOrigin,
    /// Lifetime of a state, and how long a parked call waits.
    pub timeout: Duration,
}

impl ConsentConfig {
    /// The fixed `redirect_uri`: `<public-url>/mcp/oauth/callback`.
    pub fn redirect_uri(&self) -> String {
        let mut url = self.public_url.url().clone();
        url.set_path(crate::consent::CALLBACK_PATH);
        url.to_string()
    }
}

impl Config {
    /// Checks the command line and reads the credential from `env`.
    pub fn from_cli(cli: Cli, env: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let core = CoreOrigin::parse(&cli.core_url)?;
        let credential = credential_from_env(env)?;
        let consent = consent_from_cli(&cli, credential.is_some())?;
        if !cli.listen.ip().is_loopback() && !cli.allow_remote {
            return Err(ConfigError::RemoteListen { addr: cli.listen });
        }
        let allowed_origins = cli
            .allowed_origins
            .iter()
            .filter(|o| !o.is_empty())
            .map(|o| normalize_origin(o))
            .collect::<Result<_, _>>()?;
        Ok(Self {
            core,
            transport: cli.transport,
            listen: cli.listen,
            allow_remote: cli.allow_remote,
            upstream_timeout: Duration::from_millis(cli.upstream_timeout_ms),
            allowed_origins,
            credential,
            consent,
        })
    }
}

/// Longest accepted `--oauth-client-id`, so the authorize URL stays bounded.
const MAX_CLIENT_ID: usize = 255;

/// Longest accepted `--public-url`, for the same reason.
const MAX_PUBLIC_URL: usize = 512;

/// Checks the consent flags: both or neither, HTTP only, never beside a process credential.
fn consent_from_cli(cli: &Cli, has_credential: bool) -> Result<Option<ConsentConfig>, ConfigError> {
    let client_id = cli.oauth_client_id.as_deref().filter(|c| !c.is_empty());
    let public_url = cli.public_url.as_deref().filter(|u| !u.is_empty());
    let fail = |why: &str| Err(ConfigError::Consent(why.to_owned()));
    let (client_id, public_url) = match (client_id, public_url) {
        (None, None) => return Ok(None),
        (Some(_), None) => return fail("--oauth-client-id needs --public-url (AWG_PUBLIC_URL)"),
        (None, Some(_)) => return fail("--public-url is only used with --oauth-client-id"),
        (Some(id), Some(url)) => (id, url),
    };
    if cli.transport != Transport::Http {
        return fail("consent mode (--oauth-client-id) needs --transport http");
    }
    if has_credential {
        return fail(
            "consent mode (--oauth-client-id) cannot be combined with a process credential (AWG_TOKEN or AWG_BASIC_*)",
        );
    }
    if client_id.len() > MAX_CLIENT_ID || !client_id.bytes().all(|b| b.is_ascii_graphic()) {
        return fail("--oauth-client-id must be 1 to 255 visible ASCII characters");
    }
    if public_url.len() > MAX_PUBLIC_URL {
        return fail("--public-url is longer than 512 characters");
    }
    let public_url = CoreOrigin::parse_as("--public-url", public_url)?;
    // Without --allow-remote the Host guard refuses every non-loopback Host,
    // so a browser sent to a remote public URL could never reach the callback.
    if !has_loopback_host(public_url.url()) && !cli.allow_remote {
        return Err(ConfigError::RemotePublicUrl {
            url: public_url.url().to_string(),
        });
    }
    Ok(Some(ConsentConfig {
        client_id: client_id.to_owned(),
        public_url,
        timeout: Duration::from_secs(cli.consent_timeout_secs),
    }))
}

/// Normalises an origin to `scheme://host:port` with an explicit port.
pub fn normalize_origin(raw: &str) -> Result<String, ConfigError> {
    let fail = |reason: &str| ConfigError::AllowedOrigin {
        origin: raw.to_owned(),
        reason: reason.to_owned(),
    };
    let url = Url::parse(raw).map_err(|e| fail(&e.to_string()))?;
    let (Some(host), Some(port)) = (url.host_str(), url.port_or_known_default()) else {
        return Err(fail("host and port are required"));
    };
    if !matches!(url.scheme(), "http" | "https") || url.path() != "/" || url.query().is_some() {
        return Err(fail("expected scheme://host[:port]"));
    }
    Ok(format!("{}://{}:{}", url.scheme(), host, port))
}

/// Reads `AWG_TOKEN` or `AWG_BASIC_USER` + `AWG_BASIC_PASSWORD`.
fn credential_from_env(
    env: impl Fn(&str) -> Option<String>,
) -> Result<Option<Credential>, ConfigError> {
    let token = env("AWG_TOKEN").filter(|t| !t.is_empty());
    let user = env("AWG_BASIC_USER").filter(|u| !u.is_empty());
    let password = env("AWG_BASIC_PASSWORD").filter(|p| !p.is_empty());
    match (token, user, password) {
        (Some(_), Some(_), _) | (Some(_), _, Some(_)) => Err(ConfigError::Credentials(
            "set either AWG_TOKEN or AWG_BASIC_USER with AWG_BASIC_PASSWORD, not both".into(),
        )),
        (Some(token), None, None) => {
            if !is_header_token(&token) {
                return Err(ConfigError::Credentials(
                    "AWG_TOKEN must be visible ASCII without spaces".into(),
                ));
            }
            Ok(Some(Credential::Token(token)))
        }
        (None, Some(user), Some(password)) => {
            if user.contains(':') {
                return Err(ConfigError::Credentials(
                    "AWG_BASIC_USER must not contain ':'".into(),
                ));
            }
            Ok(Some(Credential::Basic { user, password }))
        }
        (None, Some(_), None) | (None, None, Some(_)) => Err(ConfigError::Credentials(
            "AWG_BASIC_USER and AWG_BASIC_PASSWORD must be set together".into(),
        )),
        (None, None, None) => Ok(None),
    }
}

/// Whether `s` can travel as a token in an `Authorization` header unchanged.
pub fn is_header_token(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_graphic())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_are_bare() {
        assert!(CoreOrigin::parse("http://127.0.0.1:3000").is_ok());
        assert!(CoreOrigin::parse("https://core.example/").is_ok());
        for bad in [
            "ftp://h",
            "http://h/api",
            "http://h?x=1",
            "http://h#f",
            "http://u:p@h",
            "http://u@h",
            "h:3000",
            "",
            "http://h:3000/?",
        ] {
            assert!(CoreOrigin::parse(bad).is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn a_remote_public_url_needs_allow_remote() {
        let config = |public_url: &str, allow_remote: bool| {
            let mut args = vec![
                "awg-mcp",
                "--core-url",
                "http://127.0.0.1:3000",
                "--transport",
                "http",
                "--oauth-client-id",
                "client",
                "--public-url",
                public_url,
            ];
            if allow_remote {
                args.push("--allow-remote");
            }
            Config::from_cli(Cli::try_parse_from(args).unwrap(), |_| None)
        };
        for loopback in [
            "http://127.0.0.1:8848",
            "http://localhost:8848",
            "http://[::1]:8848",
        ] {
            assert!(config(loopback, false).is_ok(), "{loopback}");
        }
        for remote in ["https://mcp.example", "http://10.0.0.1:8848"] {
            let error = config(remote, false).unwrap_err().to_string();
            assert!(
                error.contains("--public-url") && error.contains("--allow-remote"),
                "{error}"
            );
            let consent = config(remote, true).unwrap().consent.unwrap();
            assert_eq!(
                consent.redirect_uri(),
                format!("{remote}/mcp/oauth/callback")
            );
        }
    }

    #[test]
    fn credentials_need_a_complete_pair() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert_eq!(credential_from_env(env(&[])).unwrap(), None);
        assert_eq!(
            credential_from_env(env(&[("AWG_TOKEN", "t1")])).unwrap(),
            Some(Credential::Token("t1".into()))
        );
        assert!(credential_from_env(env(&[("AWG_BASIC_USER", "bot")])).is_err());
        assert!(credential_from_env(env(&[("AWG_TOKEN", "t"), ("AWG_BASIC_USER", "b")])).is_err());
        let basic = credential_from_env(env(&[
            ("AWG_BASIC_USER", "bot"),
            ("AWG_BASIC_PASSWORD", "pw"),
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(format!("{basic:?}"), "Basic(<redacted>)");
    }
}
