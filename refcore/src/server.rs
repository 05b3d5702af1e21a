//! Start-up and shutdown: database and migrations, the first site admin,
//! the listener, the `core listening on …` line, and a graceful stop.

use std::future::Future;
use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;

use crate::api::edges::{Edge, Edges};
use crate::config::Config;
use crate::db::{self, Db};
use crate::error::{StartError, set_docs_url};
use crate::service::setup;
use crate::state::AppState;

/// How long in-flight requests get after the stop signal.
const DRAIN: Duration = Duration::from_secs(5);

/// Runs the Core until `shutdown` completes.
pub async fn run(
    config: Config,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), StartError> {
    let db = Db::connect(&config).await?;
    ensure_admin(&db, &config).await?;
    let listener = TcpListener::bind(config.listen)
        .await
        .map_err(|source| StartError::Bind {
            addr: config.listen,
            source,
        })?;
    let addr = listener.local_addr().map_err(|source| StartError::Bind {
        addr: config.listen,
        source,
    })?;
    let bound = || Edge::bound_url(&config, addr);
    let public_url = Edge::public_url(config.public_url.clone().unwrap_or_else(bound));
    set_docs_url(format!("{public_url}/api/v1/openapi.json"));
    let state = AppState {
        db: db.clone(),
        public_url: Arc::from(public_url.as_str()),
        secret_key: Arc::from(config.secret_key.as_slice()),
        csrf_ttl: config.csrf_ttl,
        oauth_code_ttl: config.oauth_code_ttl,
        oauth_token_ttl: config.oauth_token_ttl,
    };
    tracing::info!(backend = config.backend.name(), %addr, "migrations done, serving");
    {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "core listening on http://{addr}");
        let _ = out.flush();
    }
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(async move {
        axum::serve(listener, crate::app::app(state))
            .with_graceful_shutdown(async {
                let _ = stop_rx.await;
            })
            .await
    });
    shutdown.await;
    tracing::info!("stop signal received, draining");
    let _ = stop_tx.send(());
    if tokio::time::timeout(DRAIN, server).await.is_err() {
        tracing::warn!("requests still running after the drain period; stopping anyway");
    }
    db.close().await;
    tracing::info!("stopped");
    Ok(())
}

/// Creates the site admin named by `CORE_ADMIN_USER` if it does not exist.
/// An existing user keeps its password: the environment seeds, never resets.
async fn ensure_admin(db: &Db, config: &Config) -> Result<(), StartError> {
    let Some((login, password)) = &config.admin else {
        return Ok(());
    };
    let existing = {
        let mut conn = db
            .conn()
            .await
            .map_err(|e| StartError::Admin(e.to_string()))?;
        db::users::by_login(&mut conn, login)
            .await
            .map_err(|e| StartError::Admin(e.to_string()))?
    };
    if existing.is_some() {
        return Ok(());
    }
    setup::create_user(
        db,
        login,
        &format!("{login}@refcore.invalid"),
        Some(password),
        "individual",
        true,
    )
    .await
    .map_err(|e| StartError::Admin(e.to_string()))?;
    tracing::info!(login = %login, "created the site admin");
    Ok(())
}
