//! `awg-mcp` binary: parse configuration, then serve stdio or Streamable HTTP.

use std::{io::Write, process::ExitCode};

use anyhow::Context;
use awg_mcp::{AdapterServer, Cli, Config, Transport, http, upstream::Upstream};
use clap::Parser;
use tokio_util::sync::CancellationToken;
use tracing_subscriber::EnvFilter;

fn main() -> ExitCode {
    if std::env::args().nth(1).as_deref() == Some(awg_mcp::faults::LIST_FLAG) {
        return match awg_mcp::faults::listing() {
            Some(listing) => {
                print!("{listing}");
                ExitCode::SUCCESS
            }
            None => {
                eprintln!(
                    "awg-mcp: error: --list-faults: this awg-mcp was built without the `faults` feature"
                );
                ExitCode::from(2)
            }
        };
    }
    let cli = Cli::parse();
    // Logs go to stderr: stdout is the MCP channel (stdio) or the one address line (http).
    // AWG_LOG wins, then the conventional RUST_LOG, then a quiet default.
    let directives = ["AWG_LOG", "RUST_LOG"]
        .iter()
        .find_map(|name| std::env::var(name).ok().filter(|v| !v.trim().is_empty()));
    let filter = directives
        .and_then(|d| EnvFilter::try_new(d).ok())
        .unwrap_or_else(|| EnvFilter::new("awg_mcp=info,rmcp=warn"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();
    let fault = std::env::var_os(awg_mcp::faults::ENV).map(|v| v.to_string_lossy().into_owned());
    let config = match Config::from_cli(cli, |name| std::env::var(name).ok())
        .and_then(|config| awg_mcp::faults::init(fault.as_deref()).map(|()| config))
    {
        Ok(config) => config,
        Err(error) => {
            eprintln!("awg-mcp: error: {error}");
            return ExitCode::from(2);
        }
    };
    match run(config) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("awg-mcp: error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(config: Config) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async move {
        let upstream = Upstream::new(config.core.clone(), config.upstream_timeout)?;
        let mut server = AdapterServer::new(upstream.clone(), config.credential.clone());
        if let Some(consent) = config.consent.clone() {
            server = server.with_consent(awg_mcp::consent::Consent::new(consent, upstream));
        }
        tracing::info!(core = %config.core.url(), transport = ?config.transport, "awg-mcp starting");
        match config.transport {
            Transport::Stdio => server.serve_stdio().await?,
            Transport::Http => {
                let shutdown = CancellationToken::new();
                tokio::spawn(stop_on_signal(shutdown.clone()));
                let guard = http::Guard {
                    any_host: config.allow_remote,
                    allowed_origins: config.allowed_origins.clone(),
                };
                http::serve(server, config.listen, guard, shutdown, |bound| {
                    let mut stdout = std::io::stdout().lock();
                    let _ = writeln!(stdout, "awg-mcp listening on http://{bound}/mcp");
                    let _ = stdout.flush();
                })
                .await?;
            }
        }
        Ok(())
    })
}

/// Cancels `shutdown` on SIGTERM or Ctrl-C so the HTTP server stops cleanly.
async fn stop_on_signal(shutdown: CancellationToken) {
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(term) => term,
        Err(error) => {
            tracing::warn!(%error, "cannot watch SIGTERM");
            return;
        }
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
    shutdown.cancel();
}
