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
use super::outcome::{Abort, Verdict};
use crate::actors::setup::SetupClient;
use crate::binaries::{Binaries, locate};
use crate::config::RunConfig;
use crate::ctx::Ctx;
use crate::error::{HarnessError, Result};
use crate::fixtures::Fixture;
use crate::journal::Journal;
use crate::postgres::PgCluster;
use crate::report::model::{BackendEnvironment, Environment, RunReport, ScenarioResult};
use crate::secrets::SecretRegistry;
use crate::stack::{Backend, DatabaseProvider, ProcessRuntime, Runtime, StackSpec};

/// Everything a run shares between its trials.
pub struct Engine {
    config: RunConfig,
    secrets: SecretRegistry,
    binaries: Binaries,
    runtime: Arc<dyn Runtime>,
    providers: HashMap<Backend, Arc<DatabaseProvider>>,
    cluster: Option<Arc<PgCluster>>,
    run_id: String,
    kept_any_postgres: std::sync::atomic::AtomicBool,
}

impl Engine {
    /// Prepares a run: finds the binaries and, when PostgreSQL is among the
    /// backends, starts the run's ephemeral cluster (or checks the server of
    /// `--postgres-url`). Any failure here is an environment error.
    pub async fn prepare(config: RunConfig) -> Result<Engine> {
        let binaries = locate(config.core_bin.as_deref(), config.adapter_bin.as_deref())?;
        let run_id = new_run_id();
        let secrets = SecretRegistry::new();
        let mut providers = HashMap::new();
        let mut cluster = None;
        for backend in &config.backends {
            let provider = match backend {
                Backend::Sqlite => DatabaseProvider::Sqlite,
                Backend::Postgres => match &config.postgres_url {
                    Some(url) => DatabaseProvider::server(url, &run_id).await?,
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
        let runtime = Arc::new(ProcessRuntime::new(
            binaries.core.clone(),
            providers.clone(),
            secrets.clone(),
        ));
        Ok(Engine {
            config,
            secrets,
            binaries,
            runtime,
            providers,
            cluster,
            run_id,
            kept_any_postgres: Default::default(),
        })
    }

    /// The run's id.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// The run's secret registry.
    pub fn secrets(&self) -> &SecretRegistry {
        &self.secrets
    }

    /// The configuration.
    pub fn config(&self) -> &RunConfig {
        &self.config
    }

    /// The trials of `scenarios` this configuration selects.
    pub fn trials(&self, scenarios: &[Scenario]) -> Vec<Trial> {
        trials(
            scenarios,
            &self.config.backends,
            self.config.filter.as_deref(),
        )
    }

    /// Runs every trial, at most `jobs` at once, and returns the report.
    /// When `cancel` fires, running trials are aborted and torn down, and
    /// trials not yet started are left out.
    pub async fn run(
        &self,
        trials: Vec<Trial>,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> RunReport {
        let started_at = now_rfc3339();
        let started = Instant::now();
        events(Event::RunStarted {
            run_id: self.run_id.clone(),
            total: trials.len(),
            jobs: self.config.jobs,
        });
        let order: Vec<String> = trials.iter().map(Trial::name).collect();
        let mut results: Vec<ScenarioResult> = futures::stream::iter(trials)
            .map(|t| async move {
                if cancel.is_cancelled() {
                    return None;
                }
                Some(self.run_trial(&t, events, cancel).await)
            })
            .buffer_unordered(self.config.jobs)
            .filter_map(|r| async move { r })
            .collect()
            .await;
        results.sort_by_key(|r| order.iter().position(|n| *n == r.name));
        let report = RunReport {
            run_id: self.run_id.clone(),
            started_at,
            duration_ms: started.elapsed().as_millis() as u64,
            environment: self.environment(&results).await,
            results,
        };
        events(Event::RunFinished {
            counts: report.counts(),
            duration: started.elapsed(),
        });
        report
    }

    /// Runs one trial on a fresh stack and always tears the stack down
    /// (or keeps it, with `--keep`, when the trial did not pass).
    pub async fn run_trial(
        &self,
        trial: &Trial,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> ScenarioResult {
        let name = trial.name();
        events(Event::TrialStarted { name: name.clone() });
        let started = Instant::now();
        let journal = Journal::new(self.secrets.clone());
        let mut result = ScenarioResult {
            name: name.clone(),
            scenario: trial.scenario.id.to_owned(),
            backend: trial.backend.name().to_owned(),
            family: trial.scenario.family.to_owned(),
            claim: trial.scenario.claim.to_owned(),
            verdict: Verdict::Passed,
            duration_ms: 0,
            stack_startup_ms: None,
            core_version: None,
            database_version: None,
            steps: Vec::new(),
            core_log: String::new(),
            adapter_logs: Vec::new(),
        };
        let spec = StackSpec {
            name: name.clone(),
            backend: trial.backend,
            extra_env: trial
                .scenario
                .core_env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        };
        let stack = tokio::select! {
            _ = cancel.cancelled() => Err(HarnessError::Interrupted),
            s = self.runtime.start(spec) => s,
        };
        let stack = match stack {
            Ok(s) => s,
            Err(e) => {
                result.verdict = Verdict::Errored {
                    message: self.secrets.redact(&format!("stack did not start: {e}")),
                };
                return self.finish(result, journal, started, events);
            }
        };
        result.stack_startup_ms = Some(stack.startup.as_millis() as u64);
        events(Event::StackReady {
            name: name.clone(),
            startup: stack.startup,
        });
        result.database_version = Some(self.providers[&trial.backend].version().await);
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
        let backend = trial.backend;
        let task_journal = journal.clone();
        // The scenario runs in a task of its own: a panic inside it ends that
        // task only, and cancelling aborts it (dropping its adapters).
        let mut task = tokio::spawn(async move {
            let journal = task_journal;
            let prepared = async {
                let setup = SetupClient::connect(&base_url, &admin, journal.clone()).await?;
                let version = setup.version().await?;
                let fixture = Fixture::named(fixture)?;
                let applied = fixture.apply(&setup).await?;
                Ok::<_, Abort>((setup, applied, version))
            }
            .await;
            let (setup, applied, version) = match prepared {
                Ok(p) => p,
                Err(abort) => return (Err(abort), None, Vec::new()),
            };
            let core_version = version["version"].as_str().map(str::to_owned);
            let mut ctx = Ctx::new(backend, base_url, journal, setup, applied, adapter_bin, dir);
            let outcome = scenario(&mut ctx).await;
            let (_, logs) = ctx.finish().await;
            (outcome, core_version, logs)
        });
        let joined = tokio::select! {
            _ = cancel.cancelled() => {
                task.abort();
                let _ = (&mut task).await;
                events(Event::Interrupted);
                None
            }
            j = &mut task => Some(j),
        };
        result.verdict = match joined {
            None => Verdict::Errored {
                message: "interrupted by Ctrl-C".into(),
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
                    Ok(()) => Verdict::Passed,
                    Err(abort) => {
                        let step = journal.current_step();
                        match abort.into_verdict() {
                            Verdict::Failed { message } => Verdict::Failed {
                                message: format!("step `{step}`: {message}"),
                            },
                            Verdict::Errored { message } => Verdict::Errored {
                                message: format!("step `{step}`: {message}"),
                            },
                            Verdict::Passed => Verdict::Passed,
                        }
                    }
                }
            }
        };
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
            stack.teardown().await;
        }
        self.finish(result, journal, started, events)
    }

    fn finish(
        &self,
        mut result: ScenarioResult,
        journal: Journal,
        started: Instant,
        events: &EventSink,
    ) -> ScenarioResult {
        result.steps = journal.steps();
        result.core_log = self.secrets.redact(&result.core_log);
        result.verdict = match result.verdict {
            Verdict::Passed => Verdict::Passed,
            Verdict::Failed { message } => Verdict::Failed {
                message: self.secrets.redact(&message),
            },
            Verdict::Errored { message } => Verdict::Errored {
                message: self.secrets.redact(&message),
            },
        };
        result.duration_ms = started.elapsed().as_millis() as u64;
        events(Event::TrialFinished {
            result: Box::new(result.clone()),
        });
        result
    }

    /// What ran, for the report.
    pub async fn environment(&self, results: &[ScenarioResult]) -> Environment {
        let mut backends = Vec::new();
        for backend in &self.config.backends {
            let core_version = results
                .iter()
                .filter(|r| r.backend == backend.name())
                .find_map(|r| r.core_version.clone())
                .unwrap_or_else(|| "unknown (no stack reported it)".into());
            let database_version = match self.providers.get(backend) {
                Some(p) => p.version().await,
                None => "unknown".into(),
            };
            backends.push(BackendEnvironment {
                backend: backend.name().to_owned(),
                core_version,
                database_version,
            });
        }
        Environment {
            harness_version: env!("CARGO_PKG_VERSION").to_owned(),
            git_revision: git_revision(),
            core_binary: self.binaries.core.display().to_string(),
            adapter_binary: self.binaries.adapter.display().to_string(),
            backends,
        }
    }

    /// Ends the run: stops the cluster, unless a kept stack still needs it.
    pub fn shutdown(self) -> Option<String> {
        let keep_cluster = self
            .kept_any_postgres
            .load(std::sync::atomic::Ordering::SeqCst);
        drop(self.runtime);
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

fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-text panic payload".into()
    }
}

/// A run id that sorts by time: `20260101T120000Z-1a2b3c4d`.
fn new_run_id() -> String {
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

/// The git revision of the working directory's checkout, `unknown` outside
/// one; `-dirty` when it has uncommitted changes.
pub fn git_revision() -> String {
    let run = |args: &[&str]| {
        std::process::Command::new("git")
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
