//! One trial: a fresh stack, fixtures, the scenario in a task of its own,
//! then teardown (or `--keep`), whatever happened in between.
//!
//! The scenario runs in its own task so that a panic ends that task only (the
//! trial is reported as errored, with the step it was in), and so that Ctrl-C,
//! the trial's deadline (`--trial-timeout`) or the Core process's exit can
//! abort it: dropping the task drops its adapters, then the stack is torn
//! down as on any other path.

use std::time::Instant;

use super::catalogue::Trial;
use super::events::{Event, EventSink};
use super::identity;
use super::run::Engine;
use super::slots::Slot;
use crate::actors::setup::SetupClient;
use crate::ctx::Ctx;
use crate::error::HarnessError;
use crate::fixtures::Fixture;
use crate::journal::Journal;
use crate::limits::SIGTERM_GRACE;
use crate::report::model::{Phases, ScenarioResult};
use crate::stack::{Backend, StackSpec};
use crate::vocab::{Abort, Verdict};
use tokio_util::sync::CancellationToken;

impl Engine {
    /// Starts a trial's stack. A container start is mostly the Docker
    /// engine's work, so the trial lends its slot meanwhile (another trial
    /// works instead of waiting with it), as long as fewer than `--jobs`
    /// starts are lent already; otherwise it starts holding its slot (never
    /// waiting for a lent start while holding a slot, which could deadlock).
    async fn start_stack(
        &self,
        spec: StackSpec,
        slot: Option<&Slot>,
    ) -> crate::error::Result<crate::stack::Stack> {
        let lend = match slot {
            Some(slot) if self.config.runtime == crate::stack::RuntimeKind::Docker => {
                self.starts.try_acquire().ok().map(|permit| (slot, permit))
            }
            _ => None,
        };
        match lend {
            Some((slot, permit)) => {
                let start = async {
                    let stack = self.runtime.start(spec).await;
                    drop(permit);
                    stack
                };
                slot.lend_while(start).await
            }
            None => self.runtime.start(spec).await,
        }
    }

    /// Runs one trial on a fresh stack and always tears the stack down
    /// (or keeps it, with `--keep`, when the trial did not pass).
    pub async fn run_trial(
        &self,
        trial: &Trial,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> ScenarioResult {
        self.trial_in(trial, None, events, cancel).await
    }

    /// [`Engine::run_trial`] holding one of the run's `--jobs` slots, which
    /// the scenario lends out while it waits for a clock ([`Ctx::wait_out`]).
    pub(super) async fn trial_in(
        &self,
        trial: &Trial,
        slot: Option<Slot>,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> ScenarioResult {
        let name = trial.name();
        events(Event::TrialStarted { name: name.clone() });
        let started = Instant::now();
        let journal = Journal::new(self.secrets.scoped());
        let mut result = trial.blank_result(Verdict::Passed);
        result.started_ms = Some(self.since_run_start(started));
        // A fixture snapshot spares the trial making its fixtures; a
        // scenario that needs a pristine Core makes them itself.
        let snapshot = match trial.scenario.pristine {
            true => None,
            false => self.snapshot(trial.backend, trial.scenario.fixture).await,
        };
        let mut lap = Lap(started);
        let mut phases = Phases {
            fixtures_ms: lap.next(),
            ..Phases::default()
        };
        // The trial's own clock starts after the run's shared snapshot.
        let timeout = self.config.trial_timeout;
        let deadline = tokio::time::Instant::now() + timeout;
        let spec = StackSpec {
            name: name.clone(),
            backend: trial.backend,
            extra_env: merged_env(trial.scenario.core_env, &self.config.core_env),
            seed: snapshot.as_ref().map(|s| s.seed.clone()),
        };
        let stack = tokio::select! {
            _ = cancel.cancelled() => Err(HarnessError::Interrupted),
            _ = tokio::time::sleep_until(deadline) => Err(HarnessError::LaunchContract(format!(
                "not up within the trial deadline ({} s, --trial-timeout)",
                timeout.as_secs()
            ))),
            s = self.start_stack(spec, slot.as_ref()) => s,
        };
        phases.stack_ms = lap.next();
        let mut stack = match stack {
            Ok(s) => s,
            Err(e) => {
                let message = journal
                    .secrets()
                    .redact(&format!("stack did not start: {e}"));
                result.verdict = match e {
                    HarnessError::LaunchContract(_) => Verdict::Failed { message },
                    _ => Verdict::Errored { message },
                };
                result.phases = Some(phases);
                return self.finish(result, journal, started, events);
            }
        };
        result.stack_startup_ms = Some(stack.startup.as_millis() as u64);
        events(Event::StackReady {
            name: name.clone(),
            startup: stack.startup,
        });
        result.database_version = Some(self.runtime.database_version(trial.backend).await);
        let dir = stack
            .dir
            .as_ref()
            .map(|d| d.path().to_owned())
            .unwrap_or_else(std::env::temp_dir);
        let scenario = trial.scenario.run;
        let fixture = trial.scenario.fixture;
        let base_url = stack.base_url.clone();
        let admin = stack.admin.clone();
        let adapter_bin = self.binaries.adapter.clone();
        let adapter_env = self.config.adapter_env.clone();
        let browser = self.browser.clone().filter(|_| {
            self.config.browser == crate::browser::BrowserKind::Chromium
                || trial.scenario.extensions.contains(&identity::REAL_BROWSER)
        });
        let backend = trial.backend;
        let needs = identity::needs(&trial.scenario);
        let task_journal = journal.clone();
        let core_log = stack.core_log();
        // The scenario lends the slot; this function holds it to the end of
        // teardown.
        let lent = slot.clone();
        // The scenario runs in a task of its own: a panic inside it ends that
        // task only, and cancelling aborts it (dropping its adapters).
        let mut task = tokio::spawn(async move {
            let journal = task_journal;
            let prepared = async {
                let setup = match &snapshot {
                    Some(s) => {
                        SetupClient::with_token(&base_url, &admin, &s.admin_token, journal.clone())?
                    }
                    None => SetupClient::connect(&base_url, &admin, journal.clone()).await?,
                };
                let version = setup.version().await?;
                identity::expect_contract_and_backend(&journal, &version, backend)?;
                if browser.is_none() && needs.iter().any(|n| n == identity::REAL_BROWSER) {
                    return Ok(Err((identity::needs_real_browser(), version)));
                }
                if let Some(missing) = identity::missing_extension(&version, &needs) {
                    return Ok(Err((missing, version)));
                }
                let applied = match &snapshot {
                    Some(s) => {
                        journal.step("fixtures: a copy of the run's snapshot");
                        s.applied.clone()
                    }
                    None => {
                        journal.step("set up fixtures");
                        Fixture::named(fixture)?.apply(&setup).await?
                    }
                };
                Ok::<_, Abort>(Ok((setup, applied, version)))
            }
            .await;
            let (setup, applied, version) = match prepared {
                Ok(Ok(p)) => p,
                Ok(Err((missing, version))) => {
                    let core_version = version["version"].as_str().map(str::to_owned);
                    return (Ok(Some(missing)), core_version, Vec::new());
                }
                Err(abort) => return (Err(abort), None, Vec::new()),
            };
            let core_version = version["version"].as_str().map(str::to_owned);
            let mut ctx = Ctx::new(backend, base_url, journal, setup, applied, adapter_bin, dir)
                .with_adapter_env(adapter_env)
                .with_browser(browser)
                .with_core_log(core_log)
                .with_slot(lent);
            let outcome = scenario(&mut ctx).await.map(|()| None);
            ctx.picture_browsers(outcome.is_err()).await;
            let (_, logs) = ctx.finish().await;
            (outcome, core_version, logs)
        });
        let exited = stack.core_exited();
        let ended = tokio::select! {
            _ = cancel.cancelled() => {
                abort(&mut task).await;
                events(Event::Interrupted);
                Ended::Interrupted
            }
            _ = tokio::time::sleep_until(deadline) => {
                abort(&mut task).await;
                Ended::Deadline
            }
            status = exited => {
                abort(&mut task).await;
                Ended::CoreExited(stack.core_exit_report(&status).await)
            }
            j = &mut task => Ended::Joined(j),
        };
        // A scenario that failed because its Core died (a reset, a refused
        // connection) is reported by the death: its status and last words
        // say more. The exit may reach us a moment after the failure.
        let ended = match ended {
            Ended::Joined(Ok((Err(abort), version, logs))) => {
                let exited = tokio::time::timeout(
                    std::time::Duration::from_millis(200),
                    stack.core_exited(),
                )
                .await;
                match exited {
                    Ok(status) => Ended::CoreExited(stack.core_exit_report(&status).await),
                    Err(_) => Ended::Joined(Ok((Err(abort), version, logs))),
                }
            }
            other => other,
        };
        phases.scenario_ms = lap.next();
        phases.waited_ms = journal.waited_ms();
        let joined = match ended {
            Ended::Joined(joined) => Some(joined),
            Ended::Interrupted => None,
            Ended::Deadline => {
                // Whatever it waited for never came.
                journal.unanswered();
                result.verdict = Verdict::Failed {
                    message: format!(
                        "the trial deadline ({} s, --trial-timeout) passed in step `{}`; {}",
                        timeout.as_secs(),
                        journal.current_step(),
                        last_request(&journal)
                    ),
                };
                None
            }
            Ended::CoreExited(report) => {
                result.verdict = Verdict::Failed {
                    message: format!("step `{}`: the {report}", journal.current_step()),
                };
                None
            }
        };
        result.verdict = match joined {
            None if result.verdict != Verdict::Passed => result.verdict,
            None => Verdict::Errored {
                message: INTERRUPTED.into(),
            },
            Some(Err(join)) if join.is_panic() => Verdict::Errored {
                message: format!(
                    "scenario panicked in step `{}`: {}",
                    journal.current_step(),
                    panic_message(join.into_panic())
                ),
            },
            Some(Err(join)) => Verdict::Errored {
                message: format!("scenario task ended abnormally: {join}"),
            },
            Some(Ok((outcome, core_version, logs))) => {
                result.core_version = core_version;
                result.adapter_logs = logs;
                match outcome {
                    Ok(None) => Verdict::Passed,
                    Ok(Some(missing)) => Verdict::NotApplicable { message: missing },
                    Err(abort) => {
                        let step = journal.current_step();
                        match abort.into_verdict() {
                            Verdict::Failed { message } => Verdict::Failed {
                                message: format!("step `{step}`: {message}"),
                            },
                            Verdict::Errored { message } => Verdict::Errored {
                                message: format!("step `{step}`: {message}"),
                            },
                            other => other,
                        }
                    }
                }
            }
        };
        if result.verdict == Verdict::Passed
            && let Some(url) = stack.database_url()
            && let Err(abort) = identity::expect_data_in(&journal, url).await
        {
            result.verdict = abort.into_verdict();
        }
        phases.checks_ms = lap.next();
        result.core_log = stack.core_log().text();
        if self.config.keep && result.verdict != Verdict::Passed && !cancel.is_cancelled() {
            if trial.backend == Backend::Postgres {
                self.kept_any_postgres
                    .store(true, std::sync::atomic::Ordering::SeqCst);
            }
            let kept = stack.keep();
            events(Event::StackKept {
                name: name.clone(),
                how: kept.to_string(),
            });
        } else {
            self.stop_stack(stack, &mut result, cancel).await;
        }
        phases.teardown_ms = lap.next();
        result.phases = Some(phases);
        self.finish(result, journal, started, events)
    }

    /// Tears `stack` down, checking once per run that its Core stops on
    /// SIGTERM (spec §5): the first stack that is not gone within
    /// [`SIGTERM_GRACE`] fails its trial with the time; later stacks of the
    /// run are killed at once rather than each waiting the grace out.
    async fn stop_stack(
        &self,
        stack: crate::stack::Stack,
        result: &mut ScenarioResult,
        cancel: &CancellationToken,
    ) {
        use std::sync::atomic::Ordering::SeqCst;
        let grace = match self.sigterm_ignored.load(SeqCst) {
            true => std::time::Duration::ZERO,
            false => SIGTERM_GRACE,
        };
        let clean = stack.teardown(grace).await;
        if clean
            || grace.is_zero()
            || cancel.is_cancelled()
            || self.sigterm_ignored.swap(true, SeqCst)
        {
            return;
        }
        let broken = format!(
            "the Core did not stop within {} s of SIGTERM and was killed (spec §5: a Core \
             stops cleanly on SIGTERM); later stacks of this run are killed at once",
            grace.as_secs()
        );
        result.verdict = match std::mem::replace(&mut result.verdict, Verdict::Passed) {
            Verdict::Failed { message } => Verdict::Failed {
                message: format!("{message}; and {broken}"),
            },
            Verdict::Errored { message } => Verdict::Errored {
                message: format!("{message}; and {broken}"),
            },
            _ => Verdict::Failed { message: broken },
        };
    }

    /// Milliseconds from the run's start to `instant`.
    fn since_run_start(&self, instant: Instant) -> u64 {
        let start = *self.run_start.get_or_init(|| instant);
        instant.saturating_duration_since(start).as_millis() as u64
    }

    fn finish(
        &self,
        mut result: ScenarioResult,
        journal: Journal,
        started: Instant,
        events: &EventSink,
    ) -> ScenarioResult {
        result.steps = journal.steps();
        result.observations = journal.observations();
        result.pictures = journal.pictures();
        result.core_log = journal.secrets().redact(&result.core_log);
        result.verdict = match result.verdict {
            Verdict::Passed => Verdict::Passed,
            Verdict::Failed { message } => Verdict::Failed {
                message: journal.secrets().redact(&message),
            },
            Verdict::Errored { message } => Verdict::Errored {
                message: journal.secrets().redact(&message),
            },
            v @ (Verdict::NotApplicable { .. } | Verdict::NotRun { .. }) => v,
        };
        result.unanswered = journal.was_unanswered();
        if let Some(refused) = journal.secrets().refused() {
            left_out(&mut result, &refused);
        }
        result.duration_ms = started.elapsed().as_millis() as u64;
        events(Event::TrialFinished {
            result: Box::new(result.clone()),
        });
        result
    }
}

/// A trial whose Core handed out a secret the registry refused: it fails
/// with the refusal, and everything recorded in it (which may hold that
/// value, unredacted) is left out of the report, its first failure's
/// message included.
fn left_out(result: &mut ScenarioResult, refused: &crate::error::SecretRefused) {
    result.verdict = Verdict::Failed {
        message: format!(
            "{refused}; this trial's transcript, logs and observations are left out of the \
             report, which must hold no secret the harness could not redact"
        ),
    };
    result.steps.clear();
    result.observations.clear();
    result.pictures.clear();
    result.core_log.clear();
    result.adapter_logs.clear();
}

/// The verdict's message of a trial ended by SIGINT or SIGTERM.
pub const INTERRUPTED: &str = "interrupted (SIGINT or SIGTERM) before it ended";

/// How the scenario's task ended, or why it was ended.
enum Ended<T> {
    /// It returned (or panicked).
    Joined(std::result::Result<T, tokio::task::JoinError>),
    /// Ctrl-C or SIGTERM.
    Interrupted,
    /// `--trial-timeout` passed.
    Deadline,
    /// The Core process exited; why, with its last output.
    CoreExited(String),
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

/// A clock read in laps: each `next` gives the milliseconds since the last.
struct Lap(Instant);

impl Lap {
    fn next(&mut self) -> u64 {
        let now = Instant::now();
        let ms = now.duration_since(self.0).as_millis() as u64;
        self.0 = now;
        ms
    }
}

/// A scenario's `core_env` with the run's `--core-env` over it: a key set in
/// both keeps the run's value, once.
fn merged_env(scenario: &[(&str, &str)], run: &[(String, String)]) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = scenario
        .iter()
        .filter(|(k, _)| !run.iter().any(|(rk, _)| rk == k))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    env.extend(run.iter().cloned());
    env
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_runs_core_env_is_added_to_the_scenarios_and_wins_on_a_shared_key() {
        let run = vec![
            ("CORE_FAULT".to_owned(), "link-missing".to_owned()),
            ("B".to_owned(), "run".to_owned()),
        ];
        assert_eq!(
            merged_env(&[("A", "1"), ("B", "scenario")], &run),
            vec![
                ("A".to_owned(), "1".to_owned()),
                ("CORE_FAULT".to_owned(), "link-missing".to_owned()),
                ("B".to_owned(), "run".to_owned()),
            ]
        );
        assert_eq!(
            merged_env(&[("A", "1")], &[]),
            vec![("A".into(), "1".into())]
        );
    }
}
