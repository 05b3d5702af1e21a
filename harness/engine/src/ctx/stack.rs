//! The stack a scenario runs on: the context itself, how the runner builds
//! it and takes it apart, the Core's origin and log, the setup client, the
//! backend, and the clock a scenario waits out.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use crate::actors::bot::Bot;
use crate::actors::human::Human;
use crate::actors::setup::SetupClient;
use crate::fixtures::Applied;
use crate::journal::Journal;
use crate::proxy::FaultProxy;
use crate::stack::Backend;
use crate::vocab::{NamedLog, StepRecord};

/// One scenario's view of its stack.
pub struct Ctx {
    pub(super) backend: Backend,
    pub(super) base_url: String,
    pub(super) journal: Journal,
    pub(super) setup: SetupClient,
    pub(super) applied: Applied,
    pub(super) humans: HashMap<String, Human>,
    pub(super) bots: Vec<Bot>,
    pub(super) proxy: Option<Arc<FaultProxy>>,
    pub(super) adapter_bin: PathBuf,
    pub(super) adapter_env: Vec<(String, String)>,
    pub(super) dir: PathBuf,
    pub(super) core_log: Option<crate::child::SharedLog>,
    pub(super) slot: Option<crate::runner::slots::Slot>,
    pub(super) browser: Option<Arc<crate::browser::Driver>>,
}

impl Ctx {
    /// Builds the context of a stack whose fixtures have been applied.
    pub(crate) fn new(
        backend: Backend,
        base_url: String,
        journal: Journal,
        setup: SetupClient,
        applied: Applied,
        adapter_bin: PathBuf,
        dir: PathBuf,
    ) -> Self {
        Ctx {
            backend,
            base_url,
            journal,
            setup,
            applied,
            humans: HashMap::new(),
            bots: Vec::new(),
            proxy: None,
            adapter_bin,
            adapter_env: Vec::new(),
            dir,
            core_log: None,
            slot: None,
            browser: None,
        }
    }

    /// Humans sit at real browsers of `driver`'s (`--browser chromium`).
    pub(crate) fn with_browser(mut self, driver: Option<Arc<crate::browser::Driver>>) -> Self {
        self.browser = driver;
        self
    }

    /// Whether humans sit at a real browser (`--browser chromium`).
    pub fn real_browser(&self) -> bool {
        self.browser.is_some()
    }

    /// The `--jobs` slot the trial holds, lent out by [`Ctx::wait_out`].
    pub(crate) fn with_slot(mut self, slot: Option<crate::runner::slots::Slot>) -> Self {
        self.slot = slot;
        self
    }

    /// Waits `d` for a clock the contract gives no way to hasten (a CSRF,
    /// code or state lifetime). Another trial uses the run's slot meanwhile.
    pub async fn wait_out(&self, d: std::time::Duration) {
        self.journal.waited(d);
        match &self.slot {
            Some(slot) => slot.idle(d).await,
            None => tokio::time::sleep(d).await,
        }
    }

    /// The Core's captured output, for [`Ctx::core_log`].
    pub(crate) fn with_core_log(mut self, log: crate::child::SharedLog) -> Self {
        self.core_log = Some(log);
        self
    }

    /// Extra environment for every adapter this context starts (the run's
    /// `--adapter-env`).
    pub(crate) fn with_adapter_env(mut self, env: Vec<(String, String)>) -> Self {
        self.adapter_env = env;
        self
    }

    /// The backend this scenario runs on.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// The Core's origin.
    pub fn core_url(&self) -> &str {
        &self.base_url
    }

    /// The setup client (site admin). Scenarios use it for administrative
    /// moves; it is never handed to a bot.
    pub fn setup(&self) -> &SetupClient {
        &self.setup
    }

    /// The Core's log so far (stdout and stderr as captured), unredacted:
    /// for a scenario that proves something never reaches the log (spec §8
    /// "the raw patterns never appear in … logs"). Empty when the runtime
    /// captures none.
    pub fn core_log(&self) -> String {
        self.core_log
            .as_ref()
            .map(crate::child::SharedLog::text)
            .unwrap_or_default()
    }

    /// Adds the page each human's real browser shows to the trail, with a
    /// screenshot, marked failed when the trial failed: where the trial left
    /// them.
    pub(crate) async fn picture_browsers(&self, failed: bool) {
        for human in self.humans.values() {
            human.picture(failed).await;
        }
    }

    /// Stops every adapter and returns what the report needs.
    pub(crate) async fn finish(self) -> (Vec<StepRecord>, Vec<NamedLog>) {
        let mut logs = Vec::new();
        for bot in &self.bots {
            bot.stop().await;
            logs.push(NamedLog {
                name: format!("awg-mcp of {}", bot.login()),
                text: self.journal.secrets().redact(&bot.adapter_log()),
            });
        }
        (self.journal.steps(), logs)
    }
}
