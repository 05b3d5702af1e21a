//! The runner's typed event stream. The progress display consumes it; the
//! run report is assembled from the same results. Consumers match every
//! variant by name, so a new event forces each to decide what to do.

use std::sync::Arc;
use std::time::Duration;

use crate::report::model::{Counts, ScenarioResult};

/// Something that happened during a run.
#[derive(Debug, Clone)]
pub enum Event {
    /// The run begins.
    RunStarted {
        /// The run's id.
        run_id: String,
        /// How many trials will run.
        total: usize,
        /// How many run at once.
        jobs: usize,
    },
    /// A trial begins: its stack is being started.
    TrialStarted {
        /// `backend::scenario`.
        name: String,
    },
    /// A trial's stack is healthy.
    StackReady {
        /// `backend::scenario`.
        name: String,
        /// Launch to healthy.
        startup: Duration,
    },
    /// A trial ended.
    TrialFinished {
        /// Its result.
        result: Box<ScenarioResult>,
    },
    /// A failed trial's stack was kept running (`--keep`).
    StackKept {
        /// `backend::scenario`.
        name: String,
        /// How to reach it.
        how: String,
    },
    /// Ctrl-C: stacks are being torn down.
    Interrupted,
    /// The run started no more trials: `--max-fail`, or an unusable Core.
    RunStopped {
        /// Why, and how many trials were left unrun.
        why: String,
    },
    /// The run ended.
    RunFinished {
        /// Tally of verdicts.
        counts: Counts,
        /// Whole-run wall time.
        duration: Duration,
    },
}

/// Where events go.
pub type EventSink = Arc<dyn Fn(Event) + Send + Sync>;

/// A sink that drops every event (for callers that only want the report).
pub fn discard() -> EventSink {
    Arc::new(|_| {})
}
