//! The run report: plain, serialisable data that every report format, the
//! progress display and the exit code are computed from.
//!
//! Everything in here is already redacted: the runner passes transcripts and
//! logs through the secret registry before they become part of the model, and
//! the writers redact once more on the way out.

use serde::{Deserialize, Serialize};

pub use crate::vocab::{
    AssertionRecord, Exchange, NamedLog, Observation, Picture, StepRecord, Verdict,
};

/// One whole run: where it ran, and every scenario result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunReport {
    /// Unique id of the run; also the report directory's name.
    pub run_id: String,
    /// When the run started (RFC 3339, UTC).
    pub started_at: String,
    /// Whole-run wall time in milliseconds.
    pub duration_ms: u64,
    /// What ran: harness, Core and database versions.
    pub environment: Environment,
    /// One result per scenario × backend, in catalogue order.
    pub results: Vec<ScenarioResult>,
    /// How the run was asked for and what it gated.
    #[serde(default)]
    pub invocation: super::invocation::Invocation,
    /// Why the run stopped starting trials before the end of its selection
    /// (`Core unusable: …`, `Core stopped answering: …`, `--max-fail`); the
    /// trials it did not start are in `results` as not run (an interrupted
    /// run leaves them out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// The run's failures judged against `--expected-failures`: which are
    /// waived, which entries are stale or expired.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<super::judged::Judged>,
}

impl RunReport {
    /// Counts of passed, failed, waived, errored, not-applicable and
    /// not-run results: a failure the baseline waives counts as waived, not
    /// failed.
    pub fn counts(&self) -> Counts {
        let mut c = Counts::default();
        for r in &self.results {
            match r.verdict {
                Verdict::Passed => c.passed += 1,
                Verdict::Failed { .. } if self.waiver(&r.name).is_some() => c.waived += 1,
                Verdict::Failed { .. } => c.failed += 1,
                Verdict::Errored { .. } => c.errored += 1,
                Verdict::NotApplicable { .. } => c.not_applicable += 1,
                Verdict::NotRun { .. } => c.not_run += 1,
            }
        }
        c
    }

    /// The waiver of a failed trial, when the baseline waives its failure.
    pub fn waiver(&self, trial: &str) -> Option<&super::judged::Waiver> {
        self.baseline.as_ref()?.waiver(trial)
    }

    /// The baseline's stale and expired entries, in words: each fails the
    /// gate.
    pub fn baseline_problems(&self) -> Vec<&str> {
        (self.baseline.iter())
            .flat_map(|b| b.problems())
            .map(|p| p.why.as_str())
            .collect()
    }
}

/// Tally of verdicts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// Scenarios whose every assertion held.
    pub passed: usize,
    /// Scenarios where the Core (or adapter) broke the contract, and no
    /// baseline entry waives it.
    pub failed: usize,
    /// Failures a baseline entry (`--expected-failures`) waives.
    #[serde(default)]
    pub waived: usize,
    /// Scenarios the harness or environment could not run.
    pub errored: usize,
    /// Scenarios that need an extension the Core does not declare.
    #[serde(default)]
    pub not_applicable: usize,
    /// Trials not run because of another result (named in each).
    #[serde(default)]
    pub not_run: usize,
}

/// The versions an auditor needs to reproduce the run.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Environment {
    /// The harness's own version.
    pub harness_version: String,
    /// The git revision of the checkout the harness ran from, or `unknown`.
    pub git_revision: String,
    /// The Core binary that was gated.
    pub core_binary: String,
    /// The adapter binary the bots ran.
    pub adapter_binary: String,
    /// What the humans used: `http` (HTTP-level), or the real browser and
    /// its version (`--browser chromium`: `Chromium 156.0.…`).
    #[serde(default)]
    pub browser: String,
    /// Core version and database version per backend, as the stacks reported.
    pub backends: Vec<BackendEnvironment>,
}

/// What one backend's stacks reported about themselves.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct BackendEnvironment {
    /// `sqlite` or `postgres`.
    pub backend: String,
    /// `version` from the Core's `/api/v1/version`.
    pub core_version: String,
    /// The database server or library version.
    pub database_version: String,
}

/// The result of one scenario on one backend.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ScenarioResult {
    /// Trial name, `backend::scenario`.
    pub name: String,
    /// The scenario id.
    pub scenario: String,
    /// The backend it ran on.
    pub backend: String,
    /// The catalogue family (spec §7 section).
    pub family: String,
    /// The one-sentence claim the scenario proves.
    pub claim: String,
    /// The ids of the clauses of `docs/spec.md` its scenario verifies.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clauses: Vec<String>,
    /// Passed, failed or errored, with the reason.
    pub verdict: Verdict,
    /// Wall time of the whole scenario, stack included, in milliseconds.
    pub duration_ms: u64,
    /// Time from launching the Core to a healthy `/api/healthz`, if it started.
    pub stack_startup_ms: Option<u64>,
    /// When the trial started, in milliseconds since the run started (the
    /// HTML timeline); `None` for a parity result and in older reports.
    #[serde(default)]
    pub started_ms: Option<u64>,
    /// Core version and database version as this stack reported them.
    pub core_version: Option<String>,
    /// The database version of this stack.
    pub database_version: Option<String>,
    /// Steps in order, each with its assertions and HTTP/MCP exchanges.
    pub steps: Vec<StepRecord>,
    /// The Core's stdout and stderr, redacted.
    pub core_log: String,
    /// Each adapter process's log, by bot name, redacted.
    pub adapter_logs: Vec<NamedLog>,
    /// What the scenario observed for the backend-parity comparison, in order.
    #[serde(default)]
    pub observations: Vec<Observation>,
    /// The real browser's page trail (`--browser chromium`), screenshots
    /// as files beside the report.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pictures: Vec<Picture>,
    /// For a parity result: the observations side by side, per backend.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comparison: Option<Comparison>,
    /// Where the trial's time went; `None` for a parity result and in older
    /// reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phases: Option<Phases>,
    /// Whether a request of the trial got no complete answer (none, none
    /// in time, or not HTTP): what the run's `--unanswered-after` counts.
    /// Not part of the report.
    #[serde(skip)]
    pub unanswered: bool,
}

impl ScenarioResult {
    /// The index of the step a failed or errored trial broke in: the first
    /// with a failed assertion, else the last (the step current when it
    /// ended). `None` for any other verdict.
    pub fn failing_step_index(&self) -> Option<usize> {
        if !matches!(
            self.verdict,
            Verdict::Failed { .. } | Verdict::Errored { .. }
        ) {
            return None;
        }
        (self.steps.iter())
            .position(|s| s.assertions.iter().any(|a| !a.passed))
            .or(self.steps.len().checked_sub(1))
    }

    /// The step a failed or errored trial broke in (the check a baseline
    /// entry names).
    pub fn failing_step(&self) -> Option<&StepRecord> {
        self.failing_step_index().map(|i| &self.steps[i])
    }
}

/// Where one trial's time went, in milliseconds, phase by phase.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Phases {
    /// Leasing a copy of the fixture snapshot (for the first trial that
    /// needs a snapshot, making it).
    pub fixtures_ms: u64,
    /// Starting the stack: its database, then its Core until healthy
    /// (`stack_startup_ms` is the Core's part).
    pub stack_ms: u64,
    /// The scenario, its adapters' start and stop included.
    pub scenario_ms: u64,
    /// Of `scenario_ms`, the time spent waiting out a clock with the
    /// `--jobs` slot lent to another trial.
    pub waited_ms: u64,
    /// The database check after a passing scenario.
    pub checks_ms: u64,
    /// Stopping the stack and handing back its database.
    pub teardown_ms: u64,
}

/// A parity result's table: each observation of a scenario, its value on
/// every backend, and whether they agree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Comparison {
    /// The backends compared, the reference first.
    pub backends: Vec<String>,
    /// One row per observation, in the order they were made.
    pub rows: Vec<ComparisonRow>,
}

/// One observation across backends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ComparisonRow {
    /// `step: key` of the observation (the reference backend's when they
    /// differ in name).
    pub observation: String,
    /// The value on each backend, in [`Comparison::backends`] order; `None`
    /// when that backend made no such observation.
    pub values: Vec<Option<String>>,
    /// Whether every backend observed the same.
    pub agree: bool,
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A small report with one passed and one failed result, plus an errored
    /// one on the other backend, for the writers' tests.
    pub fn sample() -> RunReport {
        let step = StepRecord {
            name: "x".into(),
            assertions: vec![AssertionRecord {
                what: "status".into(),
                expected: "201".into(),
                actual: "500".into(),
                passed: false,
            }],
            exchanges: vec![Exchange {
                actor: "lab-bot".into(),
                kind: "mcp".into(),
                method: "tools/call".into(),
                target: "submit_agent_work_proposal".into(),
                request_headers: vec![],
                request_body: "{\"title\": \"<b>t</b> sekrit-value-1\"}".into(),
                status: 0,
                response_headers: vec![],
                response_body: "{}".into(),
                elapsed_ms: 3,
            }],
        };
        let result = |backend: &str, verdict: Verdict| ScenarioResult {
            name: format!("{backend}::full_lifecycle"),
            scenario: "full_lifecycle".into(),
            backend: backend.into(),
            family: "lifecycle".into(),
            claim: "A grant goes the whole way.".into(),
            clauses: vec!["S3.route.submit".into()],
            verdict,
            duration_ms: 1200,
            stack_startup_ms: Some(300),
            started_ms: Some(0),
            core_version: Some("0.1.0".into()),
            database_version: Some("SQLite 3".into()),
            steps: vec![step.clone()],
            core_log: "stdout: core listening on http://127.0.0.1:1".into(),
            adapter_logs: vec![],
            observations: vec![],
            pictures: vec![],
            comparison: None,
            phases: None,
            unanswered: false,
        };
        RunReport {
            run_id: "20260101T000000Z-abcd1234".into(),
            started_at: "2026-01-01T00:00:00Z".into(),
            duration_ms: 2500,
            invocation: Default::default(),
            environment: Environment {
                harness_version: "0.1.0".into(),
                git_revision: "abc".into(),
                core_binary: "/x/refcore".into(),
                adapter_binary: "/x/awg-mcp".into(),
                browser: "http".into(),
                backends: vec![],
            },
            stopped: None,
            baseline: None,
            results: vec![
                result(
                    "sqlite",
                    Verdict::Failed {
                        message: "step `x`: expected 201, got 500".into(),
                    },
                ),
                result(
                    "postgres",
                    Verdict::Errored {
                        message: "stack did not start".into(),
                    },
                ),
                ScenarioResult {
                    name: "parity::full_lifecycle".into(),
                    backend: "parity".into(),
                    family: "11 backend parity".into(),
                    claim: "`full_lifecycle` gives the same observable results on every backend."
                        .into(),
                    verdict: Verdict::Failed {
                        message: "step `x`: state: sqlite observed \"active\", postgres observed \"revoked\"".into(),
                    },
                    duration_ms: 0,
                    stack_startup_ms: None,
                    started_ms: None,
                    core_version: None,
                    database_version: None,
                    steps: vec![],
                    core_log: String::new(),
                    comparison: Some(Comparison {
                        backends: vec!["sqlite".into(), "postgres".into()],
                        rows: vec![
                            ComparisonRow {
                                observation: "x: issue".into(),
                                values: vec![Some("{\"index\":1}".into()), Some("{\"index\":1}".into())],
                                agree: true,
                            },
                            ComparisonRow {
                                observation: "x: state".into(),
                                values: vec![Some("\"active\"".into()), Some("\"revoked\"".into())],
                                agree: false,
                            },
                            ComparisonRow {
                                observation: "y: <b>extra</b>".into(),
                                values: vec![Some("1".into()), None],
                                agree: false,
                            },
                        ],
                    }),
                    phases: None,
                    ..result("sqlite", Verdict::Passed)
                },
            ],
        }
    }
}
