//! What every trial of a run shares, in one struct: the run's configuration,
//! secrets, programs and runtime, its fixture snapshots and browser, and the
//! few facts one trial learns for the others (a kept PostgreSQL stack, a
//! Core that ignores SIGTERM). The engine owns it; a trial reads it.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use super::snapshot::Snapshots;
use crate::binaries::Binaries;
use crate::browser::Driver;
use crate::config::RunConfig;
use crate::secrets::SecretRegistry;
use crate::stack::Runtime;

/// The state a run's trials share.
pub struct RunState {
    /// The run's configuration.
    pub config: RunConfig,
    /// The run's secret registry (each trial redacts through a scoped one).
    pub secrets: SecretRegistry,
    /// The Core and adapter programs.
    pub binaries: Binaries,
    /// Where stacks start (processes or containers).
    pub runtime: Arc<dyn Runtime>,
    /// The fixture worlds, made once per backend and copied per trial.
    pub snapshots: Snapshots,
    /// Stack starts under way with their slot lent (`--runtime docker`).
    pub starts: tokio::sync::Semaphore,
    /// When the run started: trials record their start against it (the
    /// report's timeline). Set by the first of `run` or a trial.
    pub run_start: OnceLock<Instant>,
    /// The run's chromedriver (`--browser chromium`, or the real-browser
    /// scenarios of an HTTP-level run).
    pub browser: Option<Arc<Driver>>,
    /// Set when a failed trial kept its PostgreSQL stack: the cluster stays.
    pub kept_any_postgres: AtomicBool,
    /// Set when a stack's Core did not stop within its SIGTERM grace: that
    /// trial failed for it, and later stacks are killed at once.
    pub sigterm_ignored: AtomicBool,
}

impl RunState {
    /// Milliseconds from the run's start to `instant`.
    pub fn since_run_start(&self, instant: Instant) -> u64 {
        let start = *self.run_start.get_or_init(|| instant);
        instant.saturating_duration_since(start).as_millis() as u64
    }
}
