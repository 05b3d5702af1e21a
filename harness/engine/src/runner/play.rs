//! A trial's scenario phase: the scenario in a task of its own on the
//! trial's stack, ended by its return, a panic, Ctrl-C, the trial's
//! deadline or the Core process's exit — whichever comes first, reported as
//! an [`Ending`].

use std::path::PathBuf;
use std::sync::Arc;

use tokio::time::Instant as Deadline;
use tokio_util::sync::CancellationToken;

use super::catalogue::{ScenarioFn, Trial};
use super::events::{Event, EventSink};
use super::identity;
use super::slots::Slot;
use super::snapshot::Snapshot;
use super::state::RunState;
use super::verdict::Ending;
use crate::actors::setup::SetupClient;
use crate::browser::{BrowserKind, Driver};
use crate::child::SharedLog;
use crate::ctx::Ctx;
use crate::fixtures::{Applied, Fixture};
use crate::journal::Journal;
use crate::stack::{AdminCredential, Backend, Stack};
use crate::vocab::{NamedLog, Step};

/// Everything the scenario's task takes along: it owns all of it, so that
/// aborting the task drops what the scenario started (its adapters).
pub(super) struct Stage {
    scenario: ScenarioFn,
    fixture: &'static str,
    backend: Backend,
    /// What the scenario needs of the Core beyond the contract.
    needs: Vec<String>,
    base_url: String,
    admin: AdminCredential,
    snapshot: Option<Arc<Snapshot>>,
    browser: Option<Arc<Driver>>,
    adapter_bin: PathBuf,
    adapter_env: Vec<(String, String)>,
    dir: PathBuf,
    core_log: SharedLog,
    /// The trial's `--jobs` slot, which the scenario lends while it waits.
    slot: Option<Slot>,
    journal: Journal,
}

impl Stage {
    /// The stage of `trial` on `stack`.
    pub(super) fn new(
        state: &RunState,
        trial: &Trial,
        stack: &Stack,
        snapshot: Option<Arc<Snapshot>>,
        slot: Option<Slot>,
        journal: Journal,
    ) -> Stage {
        let browser = state.browser.clone().filter(|_| {
            state.config.browser == BrowserKind::Chromium
                || trial.scenario.extensions.contains(&identity::REAL_BROWSER)
        });
        Stage {
            scenario: trial.scenario.run,
            fixture: trial.scenario.fixture,
            backend: trial.backend,
            needs: identity::needs(&trial.scenario),
            base_url: stack.base_url.clone(),
            admin: stack.admin.clone(),
            snapshot,
            browser,
            adapter_bin: state.binaries.adapter.clone(),
            adapter_env: state.config.adapter_env.clone(),
            dir: (stack.dir.as_ref())
                .map(|d| d.path().to_owned())
                .unwrap_or_else(std::env::temp_dir),
            core_log: stack.core_log(),
            slot,
            journal,
        }
    }
}

/// How the scenario phase ended, and what the report keeps of it.
pub(super) struct Played {
    /// How the scenario ended.
    pub ending: Ending,
    /// The Core's version, as it said it.
    pub core_version: Option<String>,
    /// Each adapter's log, by bot name.
    pub logs: Vec<NamedLog>,
}

impl Played {
    fn ended(ending: Ending) -> Played {
        Played {
            ending,
            core_version: None,
            logs: Vec::new(),
        }
    }
}

/// Runs the scenario of `stage` on `stack` until it ends or is ended.
pub(super) async fn scenario(
    stage: Stage,
    stack: &mut Stack,
    deadline: Deadline,
    timeout: std::time::Duration,
    cancel: &CancellationToken,
    events: &EventSink,
) -> Played {
    let journal = stage.journal.clone();
    // A panic inside the task ends that task only, and cancelling aborts it
    // (dropping its adapters).
    let mut task = tokio::spawn(play(stage));
    let exited = stack.core_exited();
    let step = || journal.current_step();
    let played = tokio::select! {
        _ = cancel.cancelled() => {
            abort(&mut task).await;
            events(Event::Interrupted);
            Played::ended(Ending::Interrupted)
        }
        _ = tokio::time::sleep_until(deadline) => {
            abort(&mut task).await;
            // Whatever it waited for never came.
            journal.unanswered();
            Played::ended(Ending::Deadline { timeout, step: step(), last: last_request(&journal) })
        }
        status = exited => {
            abort(&mut task).await;
            let report = stack.core_exit_report(&status).await;
            Played::ended(Ending::CoreExited { step: step(), report })
        }
        joined = &mut task => match joined {
            Ok(played) => played,
            Err(join) if join.is_panic() => Played::ended(Ending::Panicked {
                step: step(),
                message: panic_message(join.into_panic()),
            }),
            Err(join) => Played::ended(Ending::Abnormal(join.to_string())),
        },
    };
    // A scenario that failed because its Core died (a reset, a refused
    // connection) is reported by the death: its status and last words say
    // more. The exit may reach us a moment after the failure.
    if let Ending::Aborted { .. } = played.ending {
        let exited =
            tokio::time::timeout(std::time::Duration::from_millis(200), stack.core_exited()).await;
        if let Ok(status) = exited {
            let report = stack.core_exit_report(&status).await;
            return Played::ended(Ending::CoreExited {
                step: step(),
                report,
            });
        }
    }
    played
}

/// The scenario's task: prepares the Core ([`prepare`]), runs the scenario
/// and stops its adapters.
async fn play(stage: Stage) -> Played {
    let journal = stage.journal.clone();
    let core_version = |version: &serde_json::Value| version["version"].as_str().map(str::to_owned);
    let Ready {
        setup,
        applied,
        version,
    } = match prepare(&stage).await {
        Ok(Ok(ready)) => ready,
        Ok(Err(Lacks { missing, version })) => {
            return Played {
                core_version: core_version(&version),
                ..Played::ended(Ending::NotApplicable(missing))
            };
        }
        Err(abort) => {
            let step = journal.current_step();
            return Played::ended(Ending::Aborted { step, abort });
        }
    };
    let mut ctx = Ctx::new(
        stage.backend,
        stage.base_url,
        journal.clone(),
        setup,
        applied,
        stage.adapter_bin,
        stage.dir,
    )
    .with_adapter_env(stage.adapter_env)
    .with_browser(stage.browser)
    .with_core_log(stage.core_log)
    .with_slot(stage.slot);
    let outcome = (stage.scenario)(&mut ctx).await;
    ctx.picture_browsers(outcome.is_err()).await;
    let (_, logs) = ctx.finish().await;
    let ending = match outcome {
        Ok(()) => Ending::Passed,
        Err(abort) => Ending::Aborted {
            step: journal.current_step(),
            abort,
        },
    };
    Played {
        ending,
        core_version: core_version(&version),
        logs,
    }
}

/// A Core ready for the scenario.
struct Ready {
    setup: SetupClient,
    /// The fixtures' credentials.
    applied: Applied,
    /// Its `/api/v1/version` answer.
    version: serde_json::Value,
}

/// A Core (or a run) that lacks what the scenario needs.
struct Lacks {
    /// What it lacks, and how to declare it.
    missing: String,
    /// Its `/api/v1/version` answer.
    version: serde_json::Value,
}

/// Connects the setup client, checks the Core's identity and extensions,
/// and sets up the fixtures (or takes the snapshot's).
async fn prepare(stage: &Stage) -> Step<Result<Ready, Lacks>> {
    let journal = &stage.journal;
    let setup = match &stage.snapshot {
        Some(s) => SetupClient::with_token(
            &stage.base_url,
            &stage.admin,
            &s.admin_token,
            journal.clone(),
        )?,
        None => SetupClient::connect(&stage.base_url, &stage.admin, journal.clone()).await?,
    };
    let version = setup.version().await?;
    identity::expect_contract_and_backend(journal, &version, stage.backend)?;
    if stage.browser.is_none() && stage.needs.iter().any(|n| n == identity::REAL_BROWSER) {
        let missing = identity::needs_real_browser();
        return Ok(Err(Lacks { missing, version }));
    }
    if let Some(missing) = identity::missing_extension(&version, &stage.needs) {
        return Ok(Err(Lacks { missing, version }));
    }
    let applied = match &stage.snapshot {
        Some(s) => {
            journal.step("fixtures: a copy of the run's snapshot");
            s.applied.clone()
        }
        None => {
            journal.step("set up fixtures");
            Fixture::named(stage.fixture)?.apply(&setup).await?
        }
    };
    Ok(Ok(Ready {
        setup,
        applied,
        version,
    }))
}

/// Aborts the scenario's task and gives it a second to go: a task stuck in
/// synchronous work ends at its next await, and the trial must not wait for
/// that.
async fn abort<T>(task: &mut tokio::task::JoinHandle<T>) {
    task.abort();
    let _ = tokio::time::timeout(std::time::Duration::from_secs(1), task).await;
}

/// The last request the Core answered (the one after it is what hung), for
/// a deadline's failure.
fn last_request(journal: &Journal) -> String {
    let steps = journal.steps();
    match steps.iter().rev().find_map(|s| s.exchanges.last()) {
        Some(e) => format!(
            "the last answered request: {} {} ({}, {} ms)",
            e.method, e.target, e.status, e.elapsed_ms
        ),
        None => "no request was answered".into(),
    }
}

fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-text panic payload".into()
    }
}
