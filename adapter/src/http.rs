//! The Streamable HTTP transport at `/mcp` (and consent mode's callback), behind three guards.
//!
//! rmcp's `StreamableHttpService` is nested in an axum router. In front of it
//! a middleware refuses, before any MCP processing: a `Host` that is not a
//! loopback name (DNS rebinding) unless remote serving was asked for, an
//! `Origin` that is not allowed, and a declared body over 1 MiB. rmcp's own
//! streaming limit is set to the same 1 MiB for bodies without a length.

use std::{net::SocketAddr, sync::Arc};

use axum::{
    Router,
    body::Body,
    extract::{Request, State},
    http::{StatusCode, header},
    middleware::{self, Next},
    response::{IntoResponse, Response},
    serve::ListenerExt,
};
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

pub use crate::model::MAX_REQUEST_BODY;
use crate::{
    config::{has_loopback_host, is_loopback_name, normalize_origin},
    consent::{CALLBACK_PATH, Sessions, callback::oauth_callback},
    edges::{Edge, Edges},
    error::ConfigError,
    server::AdapterServer,
};

/// What the guard middleware lets through.
#[derive(Debug, Clone)]
pub struct Guard {
    /// Accept any `Host` (only with `--allow-remote`).
    pub any_host: bool,
    /// Explicitly allowed origins (normalised); empty means loopback origins only.
    pub allowed_origins: Vec<String>,
}

/// The router: `/mcp`, and in consent mode `/mcp/oauth/callback`, both guarded.
pub fn app(server: AdapterServer, guard: Guard, shutdown: CancellationToken) -> Router {
    let consent = server.consent().cloned();
    let config = StreamableHttpServerConfig::default()
        .disable_allowed_hosts()
        .disable_allowed_origins()
        .with_max_request_body_bytes(Edge::transport_body_limit())
        .with_cancellation_token(shutdown);
    let service = StreamableHttpService::new(
        move || Ok(server.for_session()),
        Arc::new(Sessions::new(consent.clone())),
        config,
    );
    let mut router = Router::new().route_service("/mcp", service);
    if let Some(consent) = consent {
        router = router.route(
            CALLBACK_PATH,
            axum::routing::get(oauth_callback).with_state(consent),
        );
    }
    router.layer(middleware::from_fn_with_state(
        Arc::new(guard),
        check_request,
    ))
}

/// Binds, reports the bound address through `on_bound`, and serves until `shutdown`.
pub async fn serve(
    server: AdapterServer,
    listen: SocketAddr,
    guard: Guard,
    shutdown: CancellationToken,
    on_bound: impl FnOnce(SocketAddr),
) -> Result<(), ConfigError> {
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|e| ConfigError::Client(format!("cannot listen on {listen}: {e}")))?;
    let bound = listener
        .local_addr()
        .map_err(|e| ConfigError::Client(format!("cannot read the bound address: {e}")))?;
    on_bound(bound);
    let router = app(server, guard, shutdown.clone());
    // Without TCP_NODELAY each SSE event after the first waits for the
    // client's delayed ACK (40 ms on Linux): a tool call took 42 ms, not 4.
    let listener = listener.tap_io(|stream| {
        let _ = stream.set_nodelay(true);
    });
    axum::serve(listener, router)
        .with_graceful_shutdown(async move { shutdown.cancelled().await })
        .await
        .map_err(|e| ConfigError::Client(format!("http server: {e}")))
}

async fn check_request(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    if !guard.any_host && !host_is_loopback(request.headers().get(header::HOST)) {
        tracing::warn!("refused a request whose Host is not a loopback name");
        return refuse(StatusCode::FORBIDDEN, "Forbidden: Host is not allowed");
    }
    if let Some(origin) = request
        .headers()
        .get(header::ORIGIN)
        .map(|o| o.to_str().unwrap_or(""))
        && Edge::refuses_origin(origin, origin_allowed(&guard, origin))
    {
        tracing::warn!("refused a request from a disallowed Origin");
        return refuse(StatusCode::FORBIDDEN, "Forbidden: Origin is not allowed");
    }
    if let Some(declared) = too_large(&request) {
        tracing::warn!(declared, "refused an MCP request body over 1 MiB");
        return refuse(
            StatusCode::PAYLOAD_TOO_LARGE,
            "Payload Too Large: MCP request bodies are limited to 1 MiB",
        );
    }
    next.run(request).await
}

/// The declared length of a body too large to read, if it is one.
fn too_large(request: &Request) -> Option<u64> {
    request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
        .filter(|&n| Edge::refuses_declared_body(n))
}

fn refuse(status: StatusCode, text: &'static str) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        Body::from(text),
    )
        .into_response()
}

/// The host part of a `Host` value names the loopback interface.
fn host_is_loopback(host: Option<&header::HeaderValue>) -> bool {
    let Some(host) = host.and_then(|h| h.to_str().ok()) else {
        return false;
    };
    let name = if let Some(rest) = host.strip_prefix('[') {
        rest.split(']').next().unwrap_or("")
    } else {
        host.rsplit_once(':').map_or(host, |(name, _)| name)
    };
    is_loopback_name(name)
}

/// Whether a present `Origin` may call: the configured list, else loopback http(s) origins.
pub(crate) fn origin_allowed(guard: &Guard, origin: &str) -> bool {
    let Ok(normalized) = normalize_origin(origin) else {
        return false;
    };
    if !guard.allowed_origins.is_empty() {
        return guard.allowed_origins.contains(&normalized);
    }
    url::Url::parse(&normalized).is_ok_and(|url| has_loopback_host(&url))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts() {
        for ok in [
            "127.0.0.1:8080",
            "localhost",
            "LOCALHOST:1",
            "[::1]:9",
            "127.1.2.3",
        ] {
            assert!(
                host_is_loopback(Some(&header::HeaderValue::from_static(ok))),
                "{ok}"
            );
        }
        for bad in [
            "evil.example",
            "evil.example:80",
            "10.0.0.1:80",
            "localhost.evil.example",
            "",
        ] {
            assert!(
                !host_is_loopback(Some(&header::HeaderValue::from_static(bad))),
                "{bad}"
            );
        }
        assert!(!host_is_loopback(None));
    }

    #[test]
    fn origins() {
        let default = Guard {
            any_host: false,
            allowed_origins: vec![],
        };
        assert!(origin_allowed(&default, "http://localhost:6274"));
        assert!(origin_allowed(&default, "http://[::1]:3000"));
        assert!(!origin_allowed(&default, "https://evil.example"));
        assert!(!origin_allowed(&default, "null"));
        let listed = Guard {
            any_host: false,
            allowed_origins: vec!["https://app.example:443".into()],
        };
        assert!(origin_allowed(&listed, "https://app.example"));
        assert!(!origin_allowed(&listed, "http://localhost:6274"));
    }
}
