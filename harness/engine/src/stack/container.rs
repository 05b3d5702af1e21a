//! The container side of a stack handle: the Core container on the run's
//! network, and its log. The database (a file in the stack's directory, or
//! a database on the run's PostgreSQL container) is the stack's
//! [`super::DatabaseLease`], released by the stack handle.
//!
//! Teardown removes the Core container (with its anonymous volumes) and then
//! anything else still carrying the stack's label. `--keep` leaves it
//! running and tells the runtime, whose exit sweep then spares the stack and
//! what the run shares (network, database container).

use std::sync::{Arc, Mutex};

use testcontainers::core::logs::LogFrame;
use testcontainers::{ContainerAsync, GenericImage};

use super::docker_api::{DockerApi, STACK_LABEL};
use crate::child::SharedLog;

/// The stacks a run keeps (`--keep`): the runtime's exit sweep spares them.
pub(crate) type KeptStacks = Arc<Mutex<Vec<String>>>;

/// The Core container of one stack.
pub(crate) struct ContainerStack {
    pub(crate) api: DockerApi,
    /// The value of the stack's `grantgate.stack` label.
    pub(crate) stack_id: String,
    /// The `grantgate.stack` label of what the run shares.
    pub(crate) shared_id: String,
    /// The run's network.
    pub(crate) network: String,
    /// The run's database container (PostgreSQL stacks).
    pub(crate) database_container: Option<String>,
    pub(crate) core_name: String,
    pub(crate) core: Option<ContainerAsync<GenericImage>>,
    /// Where the stack's data lives, without credentials.
    pub(crate) database: String,
    pub(crate) log: SharedLog,
    pub(crate) kept: KeptStacks,
    pub(crate) removals: Removals,
}

/// Removals of torn-down stacks still under way.
pub(crate) type Removals = Arc<Mutex<tokio::task::JoinSet<()>>>;

impl ContainerStack {
    /// What the Core container printed, interleaved as it came.
    pub(crate) fn log(&self) -> SharedLog {
        self.log.clone()
    }

    /// Stops the Core as `docker stop` does (its stop signal, then SIGKILL
    /// after 5 s), so that it closes its database as a stopped process
    /// would, then tears the stack down: what a fixture snapshot is made of.
    pub(crate) async fn stop(&mut self) {
        if let Some(core) = &self.core {
            let _ = core.stop_with_timeout(Some(5)).await;
        }
        self.teardown().await;
    }

    /// Removes the Core container, then anything else labelled with this
    /// stack (a container whose start was interrupted), in the background:
    /// the engine's work, which the trial need not wait for. The runtime
    /// waits for it at the end of the run, then sweeps the run's label.
    pub(crate) async fn teardown(&mut self) {
        let core = self.core.take();
        let (api, stack_id) = (self.api.clone(), self.stack_id.clone());
        let removal = async move {
            if let Some(core) = core {
                let _ = core.rm().await;
            }
            for what in api.remove_labelled(STACK_LABEL, &stack_id, &[]).await {
                eprintln!("warning: teardown could not remove {what}");
            }
        };
        let mut removals = self.removals.lock().unwrap_or_else(|e| e.into_inner());
        while removals.try_join_next().is_some() {}
        removals.spawn(removal);
    }

    /// Leaves the stack running and returns the command that removes it.
    pub(crate) fn keep(&mut self) -> String {
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        kept.push(self.stack_id.clone());
        kept.push(self.shared_id.clone());
        // Forgetting the handle skips its remove-on-drop; what is lost is a
        // little memory until the harness exits.
        if let Some(core) = self.core.take() {
            std::mem::forget(core);
        }
        let mut shared = self.database_container.clone().unwrap_or_default();
        if !shared.is_empty() {
            shared = format!("docker rm -f -v {shared} && ");
        }
        format!(
            "docker rm -f -v {}; then, once no other kept stack of the run needs them: \
             {shared}docker network rm {}",
            self.core_name, self.network
        )
    }

    /// Where the stack's data lives, without credentials.
    pub(crate) fn database(&self) -> String {
        self.database.clone()
    }
}

/// A log consumer for testcontainers: every line a container prints goes
/// into `log`, tagged with `who` and the stream.
pub(crate) fn log_into(log: SharedLog, who: &'static str) -> impl Fn(&LogFrame) + Send + Sync {
    move |frame: &LogFrame| {
        let stream = match frame {
            LogFrame::StdOut(_) => format!("{who} stdout"),
            LogFrame::StdErr(_) => format!("{who} stderr"),
        };
        let text = String::from_utf8_lossy(frame.bytes());
        for line in text.lines() {
            log.push_line(&stream, line);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn container_output_is_logged_line_by_line_with_its_source() {
        let log = SharedLog::default();
        let consume = log_into(log.clone(), "core");
        consume(&LogFrame::StdOut(
            "core listening on http://0.0.0.0:3000\n".into(),
        ));
        consume(&LogFrame::StdErr("one\ntwo\n".into()));
        assert_eq!(
            log.text(),
            "core stdout: core listening on http://0.0.0.0:3000\n\
             core stderr: one\ncore stderr: two\n"
        );
    }
}
