//! One trial, in the phases [`Phases`] names — fixtures (a copy of the run's
//! snapshot), stack, scenario, checks, teardown — each a function of its
//! own that reports what it found; the verdict is then decided once
//! ([`verdict::decide`]) and the result recorded.
//!
//! The scenario runs in its own task so that a panic ends that task only (the
//! trial is reported as errored, with the step it was in), and so that Ctrl-C,
//! the trial's deadline (`--trial-timeout`) or the Core process's exit can
//! abort it: dropping the task drops its adapters, then the stack is torn
//! down as on any other path.

use std::sync::Arc;
use std::sync::atomic::Ordering::SeqCst;
use std::time::{Duration, Instant};

use tokio::time::Instant as Deadline;
use tokio_util::sync::CancellationToken;

use super::catalogue::Trial;
use super::events::{Event, EventSink};
use super::identity;
use super::play::{self, Stage};
use super::slots::Slot;
use super::snapshot::Snapshot;
use super::state::RunState;
use super::verdict::{self, Ending, Facts};
use crate::error::HarnessError;
use crate::journal::Journal;
use crate::limits::SIGTERM_GRACE;
use crate::report::model::{Phases, ScenarioResult};
use crate::stack::{Backend, RuntimeKind, Stack, StackSpec};
use crate::vocab::{Abort, NamedLog, Verdict};

/// Runs one trial on a fresh stack and always tears the stack down (or
/// keeps it, with `--keep`, when the trial did not pass). `slot` is the
/// run's `--jobs` slot the trial holds to the end of teardown; the scenario
/// lends it out while it waits for a clock ([`Ctx::wait_out`]).
pub(super) async fn run(
    state: &RunState,
    trial: &Trial,
    slot: Option<Slot>,
    events: &EventSink,
    cancel: &CancellationToken,
) -> ScenarioResult {
    let mut t = TrialRun::begin(state, trial, events, cancel);
    let snapshot = t.fixtures().await;
    // The trial's own clock starts after the run's shared snapshot.
    let deadline = Deadline::now() + state.config.trial_timeout;
    let mut stack = match t.stack(snapshot.as_deref(), slot.as_ref(), deadline).await {
        Ok(stack) => stack,
        Err(ending) => return t.finish(Facts::ended(ending)),
    };
    let ending = t
        .scenario(&mut stack, snapshot, slot.clone(), deadline)
        .await;
    let mut facts = Facts::ended(ending);
    facts.data = t.checks(&stack, facts.passing()).await;
    facts.sigterm = t.teardown(stack, facts.passing()).await;
    t.finish(facts)
}

/// One trial under way: what its phases share, and what they record
/// besides the verdict.
struct TrialRun<'a> {
    state: &'a RunState,
    trial: &'a Trial,
    events: &'a EventSink,
    cancel: &'a CancellationToken,
    journal: Journal,
    started: Instant,
    /// The phases' clock: each phase ends a lap.
    lap: Lap,
    record: Record,
}

/// What a trial records besides its verdict and its journal.
#[derive(Default)]
struct Record {
    started_ms: Option<u64>,
    stack_startup_ms: Option<u64>,
    database_version: Option<String>,
    core_version: Option<String>,
    adapter_logs: Vec<NamedLog>,
    core_log: String,
    phases: Phases,
}

impl<'a> TrialRun<'a> {
    fn begin(
        state: &'a RunState,
        trial: &'a Trial,
        events: &'a EventSink,
        cancel: &'a CancellationToken,
    ) -> TrialRun<'a> {
        events(Event::TrialStarted { name: trial.name() });
        let started = Instant::now();
        TrialRun {
            state,
            trial,
            events,
            cancel,
            journal: Journal::new(state.secrets.scoped()),
            started,
            lap: Lap(started),
            record: Record {
                started_ms: Some(state.since_run_start(started)),
                ..Record::default()
            },
        }
    }

    /// Fixtures: a fixture snapshot spares the trial making its fixtures; a
    /// scenario that needs a pristine Core makes them itself (`None`).
    async fn fixtures(&mut self) -> Option<Arc<Snapshot>> {
        let scenario = &self.trial.scenario;
        let snapshot = match scenario.pristine {
            true => None,
            false => {
                (self.state.snapshots)
                    .get(self.trial.backend, scenario.fixture)
                    .await
            }
        };
        self.record.phases.fixtures_ms = self.lap.next();
        snapshot
    }

    /// Stack: the trial's Core, on a copy of `snapshot`'s database when
    /// there is one, up before `deadline` (else a broken launch contract).
    async fn stack(
        &mut self,
        snapshot: Option<&Snapshot>,
        slot: Option<&Slot>,
        deadline: Deadline,
    ) -> Result<Stack, Ending> {
        let spec = StackSpec {
            name: self.trial.name(),
            backend: self.trial.backend,
            extra_env: merged_env(self.trial.scenario.core_env, &self.state.config.core_env),
            seed: snapshot.map(|s| s.seed.clone()),
        };
        let stack = tokio::select! {
            _ = self.cancel.cancelled() => Err(HarnessError::Interrupted),
            _ = tokio::time::sleep_until(deadline) => Err(HarnessError::LaunchContract(format!(
                "not up within the trial deadline ({} s, --trial-timeout)",
                self.state.config.trial_timeout.as_secs()
            ))),
            s = start_stack(self.state, spec, slot) => s,
        };
        self.record.phases.stack_ms = self.lap.next();
        let stack = stack.map_err(|e| Ending::NoStack {
            contract: matches!(e, HarnessError::LaunchContract(_)),
            error: e.to_string(),
        })?;
        self.record.stack_startup_ms = Some(stack.startup.as_millis() as u64);
        (self.events)(Event::StackReady {
            name: self.trial.name(),
            startup: stack.startup,
        });
        let version = self.state.runtime.database_version(self.trial.backend);
        self.record.database_version = Some(version.await);
        Ok(stack)
    }

    /// Scenario: the scenario on `stack`, in a task of its own
    /// ([`play::scenario`]), until it ends or is ended.
    async fn scenario(
        &mut self,
        stack: &mut Stack,
        snapshot: Option<Arc<Snapshot>>,
        slot: Option<Slot>,
        deadline: Deadline,
    ) -> Ending {
        let journal = self.journal.clone();
        let stage = Stage::new(self.state, self.trial, stack, snapshot, slot, journal);
        let timeout = self.state.config.trial_timeout;
        let played =
            play::scenario(stage, stack, deadline, timeout, self.cancel, self.events).await;
        self.record.phases.scenario_ms = self.lap.next();
        self.record.phases.waited_ms = self.journal.waited_ms();
        self.record.core_version = played.core_version;
        self.record.adapter_logs = played.logs;
        played.ending
    }

    /// Checks: after a passing scenario, the Core's data is in the database
    /// the harness handed it (its breach, else `None`).
    async fn checks(&mut self, stack: &Stack, passing: bool) -> Option<Abort> {
        let breach = match stack.database_url().filter(|_| passing) {
            Some(url) => identity::expect_data_in(&self.journal, url).await.err(),
            None => None,
        };
        self.record.phases.checks_ms = self.lap.next();
        self.record.core_log = stack.core_log().text();
        breach
    }

    /// Teardown: keeps the stack with `--keep` when the trial did not pass,
    /// else stops it, checking once per run that its Core stops on SIGTERM
    /// (spec §5). The first stack that is not gone within [`SIGTERM_GRACE`]
    /// fails its trial (the grace it outlived); later stacks of the run are
    /// killed at once rather than each waiting the grace out.
    async fn teardown(&mut self, stack: Stack, passing: bool) -> Option<Duration> {
        let (state, cancel) = (self.state, self.cancel);
        let outlived = if state.config.keep && !passing && !cancel.is_cancelled() {
            if self.trial.backend == Backend::Postgres {
                state.kept_any_postgres.store(true, SeqCst);
            }
            let kept = stack.keep();
            (self.events)(Event::StackKept {
                name: self.trial.name(),
                how: kept.to_string(),
            });
            None
        } else {
            let grace = match state.sigterm_ignored.load(SeqCst) {
                true => Duration::ZERO,
                false => SIGTERM_GRACE,
            };
            let clean = stack.teardown(grace).await;
            let first = !(clean
                || grace.is_zero()
                || cancel.is_cancelled()
                || state.sigterm_ignored.swap(true, SeqCst));
            first.then_some(grace)
        };
        self.record.phases.teardown_ms = self.lap.next();
        outlived
    }

    /// The trial's result: its verdict, decided from `facts`, with what it
    /// recorded, redacted (or, after a refused secret, left out).
    fn finish(self, mut facts: Facts) -> ScenarioResult {
        let (journal, record) = (self.journal, self.record);
        let secrets = journal.secrets();
        facts.refused = secrets.refused().map(|refused| refused.to_string());
        let refused = facts.refused.is_some();
        let verdict = verdict::decide(facts, |text| secrets.redact(text));
        let mut result = ScenarioResult {
            verdict,
            duration_ms: self.started.elapsed().as_millis() as u64,
            stack_startup_ms: record.stack_startup_ms,
            started_ms: record.started_ms,
            core_version: record.core_version,
            database_version: record.database_version,
            steps: journal.steps(),
            core_log: secrets.redact(&record.core_log),
            adapter_logs: record.adapter_logs,
            observations: journal.observations(),
            pictures: journal.pictures(),
            phases: Some(record.phases),
            unanswered: journal.was_unanswered(),
            ..self.trial.blank_result(Verdict::Passed)
        };
        if refused {
            left_out(&mut result);
        }
        (self.events)(Event::TrialFinished {
            result: Box::new(result.clone()),
        });
        result
    }
}

/// Leaves out of a trial's result everything it recorded: the Core handed
/// out a secret the registry refused, which any of it may hold unredacted.
fn left_out(result: &mut ScenarioResult) {
    result.steps.clear();
    result.observations.clear();
    result.pictures.clear();
    result.core_log.clear();
    result.adapter_logs.clear();
}

/// Starts a trial's stack. A container start is mostly the Docker engine's
/// work, so the trial lends its slot meanwhile (another trial works instead
/// of waiting with it), as long as fewer than `--jobs` starts are lent
/// already; otherwise it starts holding its slot (never waiting for a lent
/// start while holding a slot, which could deadlock).
async fn start_stack(
    state: &RunState,
    spec: StackSpec,
    slot: Option<&Slot>,
) -> crate::error::Result<Stack> {
    let lend = match slot {
        Some(slot) if state.config.runtime == RuntimeKind::Docker => {
            state.starts.try_acquire().ok().map(|permit| (slot, permit))
        }
        _ => None,
    };
    match lend {
        Some((slot, permit)) => {
            let start = async {
                let stack = state.runtime.start(spec).await;
                drop(permit);
                stack
            };
            slot.lend_while(start).await
        }
        None => state.runtime.start(spec).await,
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
