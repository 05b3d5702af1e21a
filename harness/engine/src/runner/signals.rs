//! Ctrl-C and SIGTERM become a cancellation token. Once the handlers are
//! installed the process no longer dies on those signals: the runner aborts
//! its trials, tears every stack down and stops the cluster, then exits 130.

use tokio_util::sync::CancellationToken;

/// Installs SIGINT and SIGTERM handlers on the current tokio runtime and
/// returns the token they cancel.
pub fn cancel_on_signals() -> CancellationToken {
    let cancel = CancellationToken::new();
    let token = cancel.clone();
    tokio::spawn(async move {
        let mut term =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
        let terminated = async {
            match term.as_mut() {
                Some(t) => {
                    t.recv().await;
                }
                None => std::future::pending::<()>().await,
            }
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = terminated => {}
        }
        token.cancel();
    });
    cancel
}
