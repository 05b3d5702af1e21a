//! The container side of a stack handle: the Core container, the database
//! container of a PostgreSQL stack, the network private to the stack, and
//! one log both containers write into.
//!
//! Teardown removes the containers (with their anonymous volumes, which is
//! where a SQLite Core keeps its file) and then everything still carrying
//! the stack's label, the network included. `--keep` leaves all of it
//! running and tells the runtime, whose exit sweep then spares the stack.

use std::sync::{Arc, Mutex};

use testcontainers::core::logs::LogFrame;
use testcontainers::{ContainerAsync, GenericImage};

use super::Backend;
use super::docker_api::{DockerApi, STACK_LABEL};
use crate::child::SharedLog;

/// The stacks a run keeps (`--keep`): the runtime's exit sweep spares them.
pub(crate) type KeptStacks = Arc<Mutex<Vec<String>>>;

/// The containers and network of one stack.
pub(crate) struct ContainerStack {
    pub(crate) api: DockerApi,
    /// The value of the stack's `grantgate.stack` label.
    pub(crate) stack_id: String,
    pub(crate) network: String,
    pub(crate) backend: Backend,
    pub(crate) core_name: String,
    pub(crate) core: Option<ContainerAsync<GenericImage>>,
    pub(crate) database_name: Option<String>,
    pub(crate) database: Option<ContainerAsync<GenericImage>>,
    pub(crate) log: SharedLog,
    pub(crate) kept: KeptStacks,
}

impl ContainerStack {
    /// What the Core and database containers printed, interleaved as it came.
    pub(crate) fn log(&self) -> SharedLog {
        self.log.clone()
    }

    /// Removes the Core container, then the database container, then
    /// anything else labelled with this stack (the network).
    pub(crate) async fn teardown(&mut self) {
        if let Some(core) = self.core.take() {
            let _ = core.rm().await;
        }
        if let Some(database) = self.database.take() {
            let _ = database.rm().await;
        }
        let left = self
            .api
            .remove_labelled(STACK_LABEL, &self.stack_id, &[])
            .await;
        for what in left {
            self.log
                .push_line("grantgate", &format!("teardown could not remove {what}"));
        }
    }

    /// Leaves the stack running and returns the command that removes it.
    pub(crate) fn keep(&mut self) -> String {
        self.kept
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(self.stack_id.clone());
        // Forgetting the handles skips their remove-on-drop; what is lost is
        // a little memory until the harness exits.
        if let Some(core) = self.core.take() {
            std::mem::forget(core);
        }
        if let Some(database) = self.database.take() {
            std::mem::forget(database);
        }
        let mut containers = self.core_name.clone();
        if let Some(db) = &self.database_name {
            containers.push(' ');
            containers.push_str(db);
        }
        format!(
            "docker rm -f -v {containers} && docker network rm {}",
            self.network
        )
    }

    /// Where the stack's data lives, without credentials.
    pub(crate) fn database(&self) -> String {
        match (&self.backend, &self.database_name) {
            (Backend::Postgres, Some(db)) => format!(
                "postgres://core@{db}:5432/core on network {} (password in the container's env)",
                self.network
            ),
            _ => format!(
                "sqlite:///data/core.db in the volume of container {}",
                self.core_name
            ),
        }
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
