//! The `refcore` binary: configuration from the environment, logs on
//! stderr, one `core listening on …` line on stdout, clean exit on SIGTERM.

use anyhow::Context;
use tokio::signal::unix::{SignalKind, signal};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    if std::env::args().nth(1).as_deref() == Some(refcore::faults::LIST_FLAG) {
        let listing = refcore::faults::listing()
            .context("--list-faults: this refcore was built without the `faults` feature")?;
        print!("{listing}");
        return Ok(());
    }
    if std::env::args().nth(1).as_deref() == Some(refcore::variants::LIST_FLAG) {
        let listing = refcore::variants::listing()
            .context("--list-variants: this refcore was built without the `faults` feature")?;
        print!("{listing}");
        return Ok(());
    }
    if std::env::args().nth(1).as_deref() == Some(refcore::hostile::LIST_FLAG) {
        let listing = refcore::hostile::listing()
            .context("--list-hostile: this refcore was built without the `faults` feature")?;
        print!("{listing}");
        return Ok(());
    }
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("CORE_LOG")
                .or_else(|_| tracing_subscriber::EnvFilter::try_from_default_env())
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
    let mut config = refcore::Config::from_env().context("refcore configuration")?;
    let fault = std::env::var_os(refcore::faults::ENV).map(|v| v.to_string_lossy().into_owned());
    let variant =
        std::env::var_os(refcore::variants::ENV).map(|v| v.to_string_lossy().into_owned());
    let fault_set = fault.as_deref().is_some_and(|f| !f.is_empty());
    refcore::variants::init(variant.as_deref(), fault_set).context("refcore variants")?;
    refcore::faults::init(fault.as_deref(), config.backend).context("refcore faults")?;
    let hostile = std::env::var_os(refcore::hostile::ENV).map(|v| v.to_string_lossy().into_owned());
    refcore::hostile::init(hostile.as_deref()).context("refcore hostile mode")?;
    let mut term = signal(SignalKind::terminate()).context("installing the SIGTERM handler")?;
    let mut int = signal(SignalKind::interrupt()).context("installing the SIGINT handler")?;
    let heed_term = !refcore::hostile::ignores_sigterm();
    let stop = async move {
        tokio::select! {
            _ = term.recv(), if heed_term => {}
            _ = int.recv() => {}
        }
    };
    if let Some(instead) = refcore::hostile::run_instead(&mut config) {
        tokio::select! {
            _ = instead => {}
            _ = stop => {}
        }
        return Ok(());
    }
    refcore::run(config, stop).await.context("refcore")?;
    Ok(())
}
