//! The engine: prepares what a run shares (binaries, the PostgreSQL cluster,
//! the secret registry), runs trials with bounded concurrency, each on its own
//! fresh stack, and assembles the run report.
//!
//! Every trial ends with its stack torn down: on success, on failure, on a
//! panic inside the scenario (caught at the task boundary), and on Ctrl-C (the
//! cancel token aborts the scenario, then teardown runs as usual).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use futures::StreamExt;
use tokio_util::sync::CancellationToken;

use super::catalogue::{Scenario, Trial, trials};
use super::events::{Event, EventSink};
use super::slots::Slot;
use super::snapshot::Snapshots;
use super::state::RunState;
use crate::binaries::locate;
use crate::config::RunConfig;
use crate::error::{HarnessError, Result};
use crate::postgres::PgCluster;
use crate::report::invocation::{Invocation, file_digest};
use crate::report::model::{BackendEnvironment, Environment, RunReport, ScenarioResult};
use crate::secrets::SecretRegistry;
use crate::stack::{
    Backend, DatabaseProvider, DockerRuntime, ProcessRuntime, Runtime, RuntimeKind,
};
use crate::vocab::Verdict;

/// A run: what its trials share ([`RunState`]), and what only the run
/// itself holds (its id, its databases, the size of the catalogue).
pub struct Engine {
    state: RunState,
    run_id: String,
    /// Trials of the whole catalogue, counted when trials are selected.
    catalogue_trials: std::sync::atomic::AtomicUsize,
    providers: HashMap<Backend, Arc<DatabaseProvider>>,
    cluster: Option<Arc<PgCluster>>,
}

impl Engine {
    /// Prepares a run: finds the binaries and, when PostgreSQL is among the
    /// backends, starts the run's ephemeral cluster (or checks the server of
    /// `--postgres-url`). Any failure here is an environment error.
    pub async fn prepare(config: RunConfig) -> Result<Engine> {
        // Children are tied to the harness and their orphans adopted unless
        // `--keep`; then what dead runs left is swept.
        crate::lifeline::let_children_outlive(config.keep);
        crate::lifeline::adopt_orphans();
        crate::sweep::before_run();
        let binaries = locate(config.core_bin.as_deref(), config.adapter_bin.as_deref())?;
        let browser = match config.browser {
            crate::browser::BrowserKind::Chromium => {
                let driver = crate::browser::Driver::start().await?;
                // Every human is in a browser: the first find theirs ready.
                driver.start_ahead().await;
                Some(driver)
            }
            _ if config.real_browser_scenarios => Some(crate::browser::Driver::start().await?),
            crate::browser::BrowserKind::Http => None,
        };
        let run_id = new_run_id();
        let secrets = SecretRegistry::new();
        let mut providers = HashMap::new();
        let mut cluster = None;
        // The Docker runtime brings its own databases: no cluster, no server.
        let host_backends: &[Backend] = match config.runtime {
            RuntimeKind::Process => &config.backends,
            RuntimeKind::Docker => &[],
        };
        for backend in host_backends {
            let provider = match backend {
                Backend::Sqlite => DatabaseProvider::Sqlite,
                Backend::Postgres => match &config.postgres_url {
                    Some(url) => {
                        register_url_password(&secrets, url);
                        DatabaseProvider::server(url, &run_id).await?
                    }
                    None => {
                        let c = Arc::new(
                            tokio::task::spawn_blocking(PgCluster::start)
                                .await
                                .map_err(|e| {
                                    HarnessError::Config(format!("cluster start: {e}"))
                                })??,
                        );
                        cluster = Some(c.clone());
                        DatabaseProvider::cluster(c, &run_id).await?
                    }
                },
            };
            providers.insert(*backend, Arc::new(provider));
        }
        let runtime: Arc<dyn Runtime> = match config.runtime {
            RuntimeKind::Process => Arc::new(ProcessRuntime::new(
                binaries.core.clone(),
                providers.clone(),
                secrets.clone(),
            )),
            RuntimeKind::Docker => {
                if config.postgres_url.is_some() {
                    return Err(HarnessError::Config(
                        "--postgres-url is for --runtime process; --runtime docker runs \
                         PostgreSQL as a container of its own (--postgres-image)"
                            .into(),
                    ));
                }
                let postgres = config
                    .backends
                    .contains(&Backend::Postgres)
                    .then_some(config.postgres_image.as_str());
                Arc::new(
                    DockerRuntime::connect(&config.core_image, postgres, &run_id, secrets.clone())
                        .await?,
                )
            }
        };
        let snapshots = Snapshots::new(
            runtime.clone(),
            secrets.clone(),
            config.core_env.clone(),
            config.trial_timeout,
        );
        let starts = tokio::sync::Semaphore::new(config.jobs.max(1));
        let state = RunState {
            config,
            secrets,
            binaries,
            runtime,
            snapshots,
            starts,
            run_start: Default::default(),
            browser,
            kept_any_postgres: Default::default(),
            sigterm_ignored: Default::default(),
        };
        Ok(Engine {
            state,
            run_id,
            catalogue_trials: Default::default(),
            providers,
            cluster,
        })
    }

    /// The run's id.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// The run's secret registry.
    pub fn secrets(&self) -> &SecretRegistry {
        &self.state.secrets
    }

    /// The configuration.
    pub fn config(&self) -> &RunConfig {
        &self.state.config
    }

    /// The trials of `scenarios` this configuration selects.
    pub fn trials(&self, scenarios: &[Scenario]) -> Vec<Trial> {
        let mut selected = trials(
            scenarios,
            &self.state.config.backends,
            self.state.config.filter.as_deref(),
        );
        if let Some(shard) = self.state.config.shard {
            selected.retain(|t| shard.holds(t.scenario.id));
        }
        let c = &self.state.config;
        selected.retain(|t| {
            let name = t.name();
            (c.exact.is_empty() || c.exact.contains(&name))
                && (c.families.is_empty() || c.families.contains(&t.scenario.family.line()))
                && !c.skip.iter().any(|s| name.contains(s.as_str()))
        });
        // The whole catalogue on every backend, parity included: what a
        // full gate runs, against which a selection is partial.
        let parity = scenarios.iter().filter(|s| s.parity).count();
        self.catalogue_trials.store(
            scenarios.len() * Backend::ALL.len() + parity,
            std::sync::atomic::Ordering::SeqCst,
        );
        selected
    }

    /// How the run was asked for, for the report (`results` ran).
    pub fn invocation(&self, results: &[ScenarioResult]) -> Invocation {
        let c = &self.state.config;
        let docker = c.runtime == RuntimeKind::Docker;
        let pairs =
            |env: &[(String, String)]| env.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let mut selection = Vec::new();
        if let Some(f) = &c.filter {
            selection.push(format!("filter={f}"));
        }
        for e in &c.exact {
            selection.push(format!("exact={e}"));
        }
        for f in &c.families {
            selection.push(format!("family={f}"));
        }
        for s in &c.skip {
            selection.push(format!("skip={s}"));
        }
        if let Some(s) = c.shard {
            selection.push(format!("shard={s}"));
        }
        Invocation {
            runtime: if docker { "docker" } else { "process" }.into(),
            core_arg: match (&c.core_bin, docker) {
                (_, true) => c.core_image.clone(),
                (Some(p), false) => p.display().to_string(),
                (None, false) => String::new(),
            },
            core_digest: if docker {
                self.state.runtime.describe()
            } else {
                file_digest(&self.state.binaries.core)
            },
            adapter_arg: c
                .adapter_bin
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
            adapter_digest: file_digest(&self.state.binaries.adapter),
            core_env: pairs(&c.core_env),
            adapter_env: pairs(&c.adapter_env),
            postgres_url_given: c.postgres_url.is_some(),
            backends: c.backends.iter().map(|b| b.name().to_owned()).collect(),
            selection,
            selected_trials: results.len(),
            catalogue_trials: self
                .catalogue_trials
                .load(std::sync::atomic::Ordering::SeqCst),
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
        super::trial::run(&self.state, trial, None, events, cancel).await
    }

    /// Runs every trial, at most `jobs` at once, the slowest known first
    /// (durations from the newest report), and returns the report in the
    /// given order. When `cancel` fires, running trials are aborted and torn
    /// down, and trials not yet started are left out.
    pub async fn run(
        &self,
        trials: Vec<Trial>,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> RunReport {
        self.run_with(trials, events, cancel, true).await
    }

    /// [`Engine::run`], starting the trials in the given order: the
    /// self-test's fault passes put the families that catch the fault first
    /// and stop at the first kill, which a longest-first order would undo.
    pub async fn run_in_order(
        &self,
        trials: Vec<Trial>,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> RunReport {
        self.run_with(trials, events, cancel, false).await
    }

    async fn run_with(
        &self,
        trials: Vec<Trial>,
        events: &EventSink,
        cancel: &CancellationToken,
        longest_first: bool,
    ) -> RunReport {
        let started_at = now_rfc3339();
        let started = *self.state.run_start.get_or_init(Instant::now);
        let order: Vec<String> = trials.iter().map(Trial::name).collect();
        let mut parity_scenarios: Vec<super::catalogue::Scenario> = Vec::new();
        for t in &trials {
            if t.scenario.parity && !parity_scenarios.iter().any(|s| s.id == t.scenario.id) {
                parity_scenarios.push(t.scenario.clone());
            }
        }
        // Only scenarios selected on every backend (two or more) get judged.
        let backends = self.state.config.backends.len();
        parity_scenarios.retain(|s| {
            backends >= 2 && trials.iter().filter(|t| t.scenario.id == s.id).count() == backends
        });
        let parity_count = parity_scenarios.len();
        events(Event::RunStarted {
            run_id: self.run_id.clone(),
            total: trials.len() + parity_count,
            jobs: self.state.config.jobs,
        });
        let trials = if longest_first {
            let history = super::schedule::history(&self.state.config.report_dir);
            super::schedule::longest_first(trials, &history)
        } else {
            trials
        };
        // A trial starts when a slot is free; a trial waiting out an expiry
        // lends its slot (`slots`). Taking a slot is re-asked after every
        // finish (the select drops it), so a waking trial queues first.
        let pool: super::slots::Pool =
            Arc::new(tokio::sync::Semaphore::new(self.state.config.jobs));
        let mut queue = trials.into_iter();
        let mut running = futures::stream::FuturesUnordered::new();
        let mut results: Vec<ScenarioResult> = Vec::new();
        let mut stop = Stop::new(&self.state.config);
        loop {
            tokio::select! {
                biased;
                Some(result) = running.next() => {
                    stop.record(&result);
                    results.push(result);
                }
                slot = Slot::take(&pool), if queue.len() > 0 && !cancel.is_cancelled() && stop.reason.is_none() => {
                    let t = queue.next().expect("guarded by len");
                    running.push(async move { super::trial::run(&self.state, &t, Some(slot), events, cancel).await });
                }
                else => break,
            }
        }
        results.sort_by_key(|r| order.iter().position(|n| *n == r.name));
        let interrupted = cancel
            .is_cancelled()
            .then(|| "interrupted by SIGINT or SIGTERM".to_owned());
        let stopped = stop.reason.clone().or(interrupted).map(|why| {
            let text = format!("{why}; {} trial(s) not run", queue.len());
            events(Event::RunStopped { why: text.clone() });
            text
        });
        // Parity is judged once every backend of a scenario has run; an
        // interrupted run judges nothing.
        if !cancel.is_cancelled() {
            for scenario in &parity_scenarios {
                let ran: Vec<&ScenarioResult> = results
                    .iter()
                    .filter(|r| r.scenario == scenario.id)
                    .collect();
                if ran.len() == self.state.config.backends.len() {
                    let parity = super::parity::compare(scenario, &ran);
                    events(Event::TrialFinished {
                        result: Box::new(parity.clone()),
                    });
                    results.push(parity);
                }
            }
        }
        // A run stopped early names each trial it did not start, and why
        // (an interrupted run leaves them out: nothing decided them).
        // After parity, which judges only what ran.
        if let Some(why) = &stop.reason {
            results.extend(queue.map(|t| not_run(&t, why)));
            results.sort_by_key(|r| order.iter().position(|n| *n == r.name));
        }
        let mut report = RunReport {
            run_id: self.run_id.clone(),
            started_at,
            duration_ms: started.elapsed().as_millis() as u64,
            environment: self.environment(&results).await,
            invocation: self.invocation(&results),
            results,
            stopped,
            baseline: None,
        };
        if let Some(b) = &self.state.config.baseline {
            let today = crate::baseline::today();
            report.baseline = Some(crate::baseline::judge(&report, b, &today));
        }
        events(Event::RunFinished {
            counts: report.counts(),
            duration: started.elapsed(),
        });
        report
    }

    /// What ran, for the report.
    pub async fn environment(&self, results: &[ScenarioResult]) -> Environment {
        let mut backends = Vec::new();
        for backend in &self.state.config.backends {
            let core_version = results
                .iter()
                .filter(|r| r.backend == backend.name())
                .find_map(|r| r.core_version.clone())
                .unwrap_or_else(|| "unknown (no stack reported it)".into());
            let database_version = self.state.runtime.database_version(*backend).await;
            backends.push(BackendEnvironment {
                backend: backend.name().to_owned(),
                core_version,
                database_version,
            });
        }
        Environment {
            harness_version: env!("CARGO_PKG_VERSION").to_owned(),
            git_revision: git_revision(),
            core_binary: self.state.runtime.describe(),
            adapter_binary: self.state.binaries.adapter.display().to_string(),
            browser: match (&self.state.browser, self.state.config.browser) {
                (Some(driver), crate::browser::BrowserKind::Chromium) => driver.version.clone(),
                (Some(driver), _) => {
                    format!("http ({} for the real-browser scenarios)", driver.version)
                }
                (None, _) => "http".into(),
            },
            backends,
        }
    }

    /// Ends the run: waits for the databases still being dropped, then
    /// stops the cluster, unless a kept stack still needs it.
    pub async fn shutdown(self) -> Option<String> {
        let keep_cluster = self
            .state
            .kept_any_postgres
            .load(std::sync::atomic::Ordering::SeqCst);
        // Clones of the snapshots may still be under way: they finish first.
        // Then the snapshots, which hold databases on the cluster, go.
        for provider in self.providers.values() {
            provider.settle().await;
        }
        if let Some(driver) = &self.state.browser {
            driver.stop().await;
        }
        drop(self.state.snapshots);
        self.state.runtime.settle().await;
        drop(self.state.runtime);
        drop(self.providers);
        let cluster = self.cluster?;
        match Arc::try_unwrap(cluster) {
            Ok(mut c) if keep_cluster => {
                let port = c.port();
                let dir = c.keep();
                Some(format!(
                    "kept postgres cluster on port {port} in {d}; stop it with \
                     `pg_ctl -D {d}/data -m immediate stop` (as user postgres when root)",
                    d = dir.display()
                ))
            }
            Ok(c) => {
                drop(c);
                None
            }
            Err(_) => None,
        }
    }
}

/// How the message of a trial not started because the run stopped early
/// begins (the terminal counts these rather than listing each).
pub const NOT_STARTED: &str = "not started: the run stopped early";

/// The result of a trial the run did not start because it stopped early.
fn not_run(trial: &Trial, why: &str) -> ScenarioResult {
    // The reason's name only: the whole of it is the run's, once.
    let message = format!("{NOT_STARTED} ({})", why.split(':').next().unwrap_or(why));
    trial.blank_result(Verdict::NotRun { message })
}

/// Whether the run stops starting trials early, and why: `--max-fail`, a
/// Core whose stacks do not start (`--unusable-after` in a row), or a Core
/// that stopped answering (`--unanswered-after` trials without an answer).
struct Stop {
    max_fail: Option<usize>,
    unusable_after: usize,
    unanswered_after: usize,
    /// Trials that failed because a request got no complete answer, and
    /// the first one's cause.
    unanswered: usize,
    first_unanswered: Option<String>,
    failed: usize,
    /// Trials in a row whose stack did not start, and the first one's cause.
    unstarted: usize,
    first_cause: Option<String>,
    reason: Option<String>,
}

impl Stop {
    fn new(config: &RunConfig) -> Self {
        Stop {
            max_fail: config.max_fail,
            unusable_after: config.unusable_after,
            unanswered_after: config.unanswered_after,
            unanswered: 0,
            first_unanswered: None,
            failed: 0,
            unstarted: 0,
            first_cause: None,
            reason: None,
        }
    }

    fn record(&mut self, result: &ScenarioResult) {
        let message = match &result.verdict {
            Verdict::Failed { message } | Verdict::Errored { message } => message,
            Verdict::Passed | Verdict::NotApplicable { .. } | Verdict::NotRun { .. } => {
                self.unstarted = 0;
                self.first_cause = None;
                return;
            }
        };
        self.failed += 1;
        if result.unanswered {
            self.unanswered += 1;
            self.first_unanswered
                .get_or_insert_with(|| format!("{}: {message}", result.name));
        }
        // A stack that started reports its startup; one that did not, none.
        if result.stack_startup_ms.is_none() && message != super::verdict::INTERRUPTED {
            self.unstarted += 1;
            self.first_cause.get_or_insert_with(|| message.clone());
        } else {
            self.unstarted = 0;
            self.first_cause = None;
        }
        if self.reason.is_some() {
            return;
        }
        if self.unstarted >= self.unusable_after {
            self.reason = Some(format!(
                "Core unusable: {} trials in a row had no stack; the first: {}",
                self.unstarted,
                self.first_cause.as_deref().unwrap_or_default()
            ));
        } else if self.unanswered >= self.unanswered_after {
            self.reason = Some(format!(
                "Core stopped answering: {} trials failed with a request left without a \
                 complete answer (none, none in time, or not HTTP); the first: {}",
                self.unanswered,
                self.first_unanswered.as_deref().unwrap_or_default()
            ));
        } else if self.max_fail.is_some_and(|n| self.failed >= n) {
            self.reason = Some(format!(
                "stopped after {} failed trial(s) (--max-fail)",
                self.failed
            ));
        }
    }
}

/// A run id that sorts by time: `20260101T120000Z-1a2b3c4d`.
pub fn new_run_id() -> String {
    let now = time::OffsetDateTime::now_utc();
    let stamp = now
        .format(time::macros::format_description!(
            "[year][month][day]T[hour][minute][second]Z"
        ))
        .unwrap_or_else(|_| "run".into());
    let rand = uuid::Uuid::new_v4().simple().to_string();
    format!("{stamp}-{}", &rand[..8])
}

/// The current time in RFC 3339 (UTC), for report timestamps.
pub fn now_rfc3339() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

/// The git revision of the harness's checkout (its source directory when it
/// still exists, else the working directory), `unknown` outside one; `-dirty`
/// when tracked files have uncommitted changes.
pub fn git_revision() -> String {
    let source = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = if source.is_dir() {
        source.to_owned()
    } else {
        std::path::PathBuf::from(".")
    };
    let run = |args: &[&str]| {
        std::process::Command::new("git")
            .arg("-C")
            .arg(&dir)
            .args(args)
            .stderr(std::process::Stdio::null())
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
    };
    match run(&["rev-parse", "HEAD"]) {
        Some(rev) if !rev.is_empty() => {
            let dirty = run(&["status", "--porcelain", "--untracked-files=no"])
                .is_some_and(|s| !s.is_empty());
            if dirty { format!("{rev}-dirty") } else { rev }
        }
        _ => "unknown".into(),
    }
}

/// Decodes a percent-encoded URL component (a password in a database URL).
fn percent_decode(text: &str) -> String {
    url::form_urlencoded::parse(format!("x={}", text.replace('+', "%2B")).as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .unwrap_or_else(|| text.to_owned())
}

/// The server's password travels to every Core in its database URL; it must
/// never reach a report. A password that is an everyday word of the report
/// itself (`postgres`, the user name) is left alone: redacting it would
/// shred every trial name, and it protects nothing.
fn register_url_password(secrets: &SecretRegistry, url: &str) {
    let Ok(parsed) = url::Url::parse(url) else {
        return;
    };
    let Some(password) = parsed.password().map(percent_decode) else {
        return;
    };
    if password != parsed.username() && !["postgres", "password"].contains(&password.as_str()) {
        secrets.register(&password);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_run_stops_after_k_trials_left_without_an_answer_and_not_before() {
        let config = RunConfig::builder().unanswered_after(3).build();
        let mut stop = Stop::new(&config);
        let failed = |name: &str, unanswered: bool| {
            let mut r = crate::report::model::tests::sample().results[0].clone();
            r.name = name.into();
            r.verdict = Verdict::Failed {
                message: "no answer from the Core: it timed out".into(),
            };
            r.unanswered = unanswered;
            r
        };
        // A failure with an answer (a wrong status) does not count.
        stop.record(&failed("sqlite::wrong", false));
        stop.record(&failed("sqlite::a", true));
        stop.record(&failed("sqlite::b", true));
        assert!(stop.reason.is_none());
        stop.record(&failed("sqlite::c", true));
        let why = stop.reason.expect("stopped");
        assert!(why.starts_with("Core stopped answering: 3 trials"), "{why}");
        assert!(why.contains("the first: sqlite::a: no answer"), "{why}");
    }

    #[test]
    fn a_database_url_password_is_registered_unless_it_is_an_everyday_word() {
        let secrets = SecretRegistry::new();
        register_url_password(&secrets, "postgres://gg:s%2Fecret-pass@db:5432/postgres");
        assert_eq!(secrets.redact("pw s/ecret-pass"), "pw [redacted]");
        let plain = SecretRegistry::new();
        register_url_password(&plain, "postgres://postgres:postgres@db/postgres");
        assert!(plain.is_empty());
    }
}
