//! Configuration from the `CORE_*` environment (spec §5, launch contract).
//!
//! Parsing is a pure function of a lookup closure so that it is testable
//! without touching the process environment.

use std::net::SocketAddr;
use std::time::Duration;

use crate::error::ConfigError;

/// Which database the Core talks to; decided by the URL scheme.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// `sqlite://PATH`
    Sqlite,
    /// `postgres://…` or `postgresql://…`
    Postgres,
}

impl Backend {
    /// The name `/api/v1/version` reports.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
        }
    }
}

/// Everything the process needs to start. `Debug` is written by hand so the
/// secret key and admin password never reach a log line.
#[derive(Clone)]
pub struct Config {
    /// Address to bind; port 0 picks a free one.
    pub listen: SocketAddr,
    /// Database URL as given (with `mode=rwc` added for SQLite).
    pub database_url: String,
    /// Backend chosen by the URL scheme.
    pub backend: Backend,
    /// Base for `html_url` and `Link`; `None` means the bound address.
    pub public_url: Option<String>,
    /// Key for CSRF token signatures.
    pub secret_key: Vec<u8>,
    /// Site admin created on first start, with its password.
    pub admin: Option<(String, String)>,
    /// How long a `_csrf` token stays valid (refcore extension).
    pub csrf_ttl: Duration,
    /// How long an OAuth authorization code stays redeemable (spec §9).
    pub oauth_code_ttl: Duration,
    /// How long an access token from the OAuth token endpoint authenticates
    /// (refcore extension).
    pub oauth_token_ttl: Duration,
}

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("listen", &self.listen)
            .field("backend", &self.backend)
            .field("public_url", &self.public_url)
            .field("admin_user", &self.admin.as_ref().map(|(u, _)| u))
            .field("csrf_ttl", &self.csrf_ttl)
            .field("oauth_code_ttl", &self.oauth_code_ttl)
            .field("oauth_token_ttl", &self.oauth_token_ttl)
            .finish_non_exhaustive()
    }
}

impl Config {
    /// Reads the process environment.
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Builds the configuration from any variable lookup.
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let listen_raw = get("CORE_LISTEN").unwrap_or_else(|| "127.0.0.1:3000".to_string());
        let listen = listen_raw
            .parse()
            .map_err(|_| ConfigError::invalid("CORE_LISTEN", "expected HOST:PORT"))?;
        let raw_url = get("CORE_DATABASE_URL").ok_or(ConfigError::Missing("CORE_DATABASE_URL"))?;
        let (backend, database_url) = database_url(&raw_url)?;
        let public_url = match get("CORE_PUBLIC_URL").filter(|s| !s.is_empty()) {
            Some(raw) => {
                let parsed = url::Url::parse(&raw)
                    .map_err(|_| ConfigError::invalid("CORE_PUBLIC_URL", "not an absolute URL"))?;
                if !matches!(parsed.scheme(), "http" | "https") || parsed.query().is_some() {
                    return Err(ConfigError::invalid(
                        "CORE_PUBLIC_URL",
                        "expected an http(s) URL without a query",
                    ));
                }
                Some(raw.trim_end_matches('/').to_string())
            }
            None => None,
        };
        let secret_key = get("CORE_SECRET_KEY")
            .filter(|s| !s.is_empty())
            .ok_or(ConfigError::Missing("CORE_SECRET_KEY"))?
            .into_bytes();
        if secret_key.len() < 16 {
            return Err(ConfigError::invalid(
                "CORE_SECRET_KEY",
                "must be at least 16 bytes long",
            ));
        }
        let admin = match (get("CORE_ADMIN_USER"), get("CORE_ADMIN_PASSWORD")) {
            (Some(user), Some(password)) if !user.is_empty() && !password.is_empty() => {
                Some((user, password))
            }
            (None, None) => None,
            _ => {
                return Err(ConfigError::invalid(
                    "CORE_ADMIN_USER",
                    "CORE_ADMIN_USER and CORE_ADMIN_PASSWORD must be set together and non-empty",
                ));
            }
        };
        let csrf_ttl = seconds(&get, "CORE_CSRF_TTL_SECS", 3600)?;
        let oauth_code_ttl = seconds(&get, "CORE_OAUTH_CODE_TTL_SECS", 600)?;
        let oauth_token_ttl = seconds(&get, "CORE_OAUTH_TOKEN_TTL_SECS", 3600)?;
        Ok(Config {
            listen,
            database_url,
            backend,
            public_url,
            secret_key,
            admin,
            csrf_ttl,
            oauth_code_ttl,
            oauth_token_ttl,
        })
    }
}

/// A lifetime variable: a positive whole number of seconds, `default` when unset.
fn seconds(
    get: &impl Fn(&str) -> Option<String>,
    name: &'static str,
    default: u64,
) -> Result<Duration, ConfigError> {
    match get(name) {
        Some(raw) => match raw.parse::<u64>() {
            // Bounded so that adding it to the Unix time cannot overflow.
            Ok(secs) if secs > 0 && secs <= u64::from(u32::MAX) => Ok(Duration::from_secs(secs)),
            _ => Err(ConfigError::invalid(
                name,
                "expected a positive number of seconds",
            )),
        },
        None => Ok(Duration::from_secs(default)),
    }
}

/// Picks the backend and normalises the URL: SQLite files are created when
/// missing (`mode=rwc`) unless the caller chose a mode.
fn database_url(raw: &str) -> Result<(Backend, String), ConfigError> {
    if raw.starts_with("postgres://") || raw.starts_with("postgresql://") {
        return Ok((Backend::Postgres, raw.to_string()));
    }
    if let Some(rest) = raw
        .strip_prefix("sqlite://")
        .or(raw.strip_prefix("sqlite:"))
    {
        if rest.is_empty() {
            return Err(ConfigError::invalid(
                "CORE_DATABASE_URL",
                "sqlite URL without a path",
            ));
        }
        let url = if rest.contains("mode=") {
            format!("sqlite://{rest}")
        } else if rest.contains('?') {
            format!("sqlite://{rest}&mode=rwc")
        } else {
            format!("sqlite://{rest}?mode=rwc")
        };
        return Ok((Backend::Sqlite, url));
    }
    Err(ConfigError::invalid(
        "CORE_DATABASE_URL",
        "expected sqlite://PATH or postgres://…",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lookup(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let owned: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| {
            owned
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        }
    }

    #[test]
    fn secret_key_is_required() {
        let err = Config::from_lookup(lookup(&[("CORE_DATABASE_URL", "sqlite:///tmp/x.db")]))
            .unwrap_err();
        assert!(err.to_string().contains("CORE_SECRET_KEY"));
    }

    #[test]
    fn sqlite_url_gets_create_mode_and_defaults_apply() {
        let config = Config::from_lookup(lookup(&[
            ("CORE_DATABASE_URL", "sqlite:///tmp/x.db"),
            ("CORE_SECRET_KEY", "0123456789abcdef0123"),
        ]))
        .unwrap();
        assert_eq!(config.backend, Backend::Sqlite);
        assert_eq!(config.database_url, "sqlite:///tmp/x.db?mode=rwc");
        assert_eq!(config.listen.to_string(), "127.0.0.1:3000");
        assert_eq!(config.csrf_ttl, Duration::from_secs(3600));
        assert_eq!(config.oauth_code_ttl, Duration::from_secs(600));
        assert_eq!(config.oauth_token_ttl, Duration::from_secs(3600));
        assert!(config.admin.is_none());
    }

    #[test]
    fn debug_never_shows_secrets() {
        let config = Config::from_lookup(lookup(&[
            ("CORE_DATABASE_URL", "postgres://u@h/db"),
            ("CORE_SECRET_KEY", "very-secret-key-material"),
            ("CORE_ADMIN_USER", "root"),
            ("CORE_ADMIN_PASSWORD", "hunter2hunter2"),
        ]))
        .unwrap();
        let shown = format!("{config:?}");
        assert!(!shown.contains("very-secret"));
        assert!(!shown.contains("hunter2"));
    }

    #[test]
    fn bad_values_are_refused() {
        for (name, value) in [
            ("CORE_LISTEN", "nope"),
            ("CORE_DATABASE_URL", "mysql://x"),
            ("CORE_CSRF_TTL_SECS", "0"),
            ("CORE_OAUTH_CODE_TTL_SECS", "-1"),
            ("CORE_OAUTH_TOKEN_TTL_SECS", "soon"),
            ("CORE_PUBLIC_URL", "ftp://x"),
        ] {
            let mut pairs = vec![
                ("CORE_DATABASE_URL", "sqlite:///tmp/x.db"),
                ("CORE_SECRET_KEY", "0123456789abcdef0123"),
            ];
            pairs.retain(|(k, _)| *k != name);
            pairs.push((name, value));
            assert!(
                Config::from_lookup(lookup(&pairs)).is_err(),
                "{name}={value}"
            );
        }
    }
}
