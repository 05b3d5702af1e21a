//! Run configuration: what to run, where, and how. The command line and the
//! catalogue test both build a [`RunConfig`] through its builder; the runner
//! only reads it.

use std::path::PathBuf;

use crate::stack::{Backend, RuntimeKind};

/// The Core image `--runtime docker` runs by default (`scripts/build-images`
/// builds it).
pub const DEFAULT_CORE_IMAGE: &str = "grantgate/refcore:latest";
/// The PostgreSQL image `--runtime docker` runs by default.
pub const DEFAULT_POSTGRES_IMAGE: &str = "grantgate/postgres:15";

/// Everything a run needs to know.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// Backends to run every scenario on.
    pub backends: Vec<Backend>,
    /// Keep only trials whose name contains this.
    pub filter: Option<String>,
    /// Keep only trials whose name is one of these (`--exact`, repeatable).
    pub exact: Vec<String>,
    /// Keep only the scenarios of these catalogue families, by their line of
    /// spec §7 (`--family`, repeatable; empty: every family).
    pub families: Vec<u8>,
    /// Leave out trials whose name contains any of these (`--skip`).
    pub skip: Vec<String>,
    /// Keep only the scenarios of this shard (`--shard K/N`).
    pub shard: Option<crate::runner::schedule::Shard>,
    /// How many stacks run at once.
    pub jobs: usize,
    /// The Core binary to gate; default: `refcore` next to the harness.
    pub core_bin: Option<PathBuf>,
    /// The adapter binary; default: `awg-mcp` next to the harness.
    pub adapter_bin: Option<PathBuf>,
    /// Where `reports/<run-id>/` goes.
    pub report_dir: PathBuf,
    /// An existing PostgreSQL server to create per-stack databases on,
    /// instead of the run's own ephemeral cluster.
    pub postgres_url: Option<String>,
    /// Keep the stack of a failed trial running and say how to reach it.
    pub keep: bool,
    /// Extra environment for every Core stack of the run, after each
    /// scenario's own `core_env` (a key set in both takes this value).
    pub core_env: Vec<(String, String)>,
    /// Extra environment for every adapter child, added to the cleared
    /// environment (`PATH`, `AWG_TOKEN`, `RUST_LOG`); nothing else reaches it.
    pub adapter_env: Vec<(String, String)>,
    /// How Cores are launched: local processes or containers.
    pub runtime: RuntimeKind,
    /// What humans use: HTTP-level browsers or headless Chromium.
    pub browser: crate::browser::BrowserKind,
    /// Whether the real-browser scenarios get headless Chromium even when
    /// the other humans are HTTP-level (the catalogue under `cargo test`).
    pub real_browser_scenarios: bool,
    /// The Core image of the Docker runtime.
    pub core_image: String,
    /// The PostgreSQL image of the Docker runtime.
    pub postgres_image: String,
    /// How long one trial may take, stack start to teardown's start
    /// (`--trial-timeout`); then it fails with the step it was in.
    pub trial_timeout: std::time::Duration,
    /// Stop the run after this many trials failed or errored (`--max-fail`),
    /// as nextest does; the trials not started are not run.
    pub max_fail: Option<usize>,
    /// Stop the run with "Core unusable" after this many trials in a row
    /// whose stack did not start (`--unusable-after`).
    pub unusable_after: usize,
    /// Known failures (`--expected-failures`): the finished run is judged
    /// against them before its report is handed out.
    pub baseline: Option<crate::baseline::Baseline>,
    /// Stop the run with "Core stopped answering" after this many trials
    /// failed because a request got no complete answer
    /// (`--unanswered-after`).
    pub unanswered_after: usize,
}

/// The default `--trial-timeout`: far above any honest trial (the slowest
/// takes a few seconds), far below a hung Core's forever.
pub const DEFAULT_TRIAL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

/// The default `--unusable-after`: enough stacks in a row that one unlucky
/// start is not taken for a broken Core.
pub const DEFAULT_UNUSABLE_AFTER: usize = 5;

/// The default `--unanswered-after`: an honest Core answers every request,
/// so a few trials without an answer say the Core has stopped answering;
/// each costs up to an exchange timeout (30 s), so more would take a run
/// past minutes for nothing.
pub const DEFAULT_UNANSWERED_AFTER: usize = 5;

impl RunConfig {
    /// A builder starting from the defaults: both backends, no filter, one
    /// job per core, binaries next to the harness, reports in `reports/`.
    pub fn builder() -> RunConfigBuilder {
        RunConfigBuilder {
            config: RunConfig {
                backends: Backend::ALL.to_vec(),
                filter: None,
                exact: Vec::new(),
                skip: Vec::new(),
                shard: None,
                jobs: default_jobs(),
                core_bin: None,
                adapter_bin: None,
                report_dir: PathBuf::from("reports"),
                postgres_url: None,
                keep: false,
                core_env: Vec::new(),
                adapter_env: Vec::new(),
                runtime: RuntimeKind::Process,
                browser: Default::default(),
                families: Vec::new(),
                real_browser_scenarios: false,
                core_image: DEFAULT_CORE_IMAGE.to_owned(),
                postgres_image: DEFAULT_POSTGRES_IMAGE.to_owned(),
                trial_timeout: DEFAULT_TRIAL_TIMEOUT,
                max_fail: None,
                unusable_after: DEFAULT_UNUSABLE_AFTER,
                baseline: None,
                unanswered_after: DEFAULT_UNANSWERED_AFTER,
            },
        }
    }
}

/// The number of cores, the default for `--jobs`.
pub fn default_jobs() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

/// `--jobs` unless given: the cores, and one more with humans in Chromium,
/// whose trials spend part of their time waiting on the browser's round
/// trips (one more trial keeps the cores busy: docs/performance.md).
pub fn default_jobs_for(browser: crate::browser::BrowserKind) -> usize {
    default_jobs() + usize::from(browser == crate::browser::BrowserKind::Chromium)
}

/// Parses one `KEY=VALUE` of `--core-env` / `--adapter-env`. The key must be
/// a non-empty name without `=` or NUL; the value may be empty.
pub fn parse_env_pair(text: &str) -> std::result::Result<(String, String), String> {
    let (key, value) = text
        .split_once('=')
        .ok_or_else(|| format!("`{text}` is not KEY=VALUE"))?;
    if key.is_empty() || key.contains('\0') || value.contains('\0') {
        return Err(format!("`{text}` is not KEY=VALUE with a non-empty key"));
    }
    Ok((key.to_owned(), value.to_owned()))
}

/// Builds a [`RunConfig`].
#[derive(Debug, Clone)]
pub struct RunConfigBuilder {
    config: RunConfig,
}

impl RunConfigBuilder {
    /// Backends to run on (empty means both).
    pub fn backends(mut self, backends: Vec<Backend>) -> Self {
        if !backends.is_empty() {
            self.config.backends = backends;
        }
        self
    }

    /// Trial-name filter.
    pub fn filter(mut self, filter: Option<String>) -> Self {
        self.config.filter = filter;
        self
    }

    /// Exact trial names to keep, and name parts to leave out.
    pub fn exact_and_skip(mut self, exact: Vec<String>, skip: Vec<String>) -> Self {
        self.config.exact = exact;
        self.config.skip = skip;
        self
    }

    /// One shard of the catalogue (`--shard K/N`), or all of it.
    pub fn shard(mut self, shard: Option<crate::runner::schedule::Shard>) -> Self {
        self.config.shard = shard;
        self
    }

    /// Concurrency (at least one).
    pub fn jobs(mut self, jobs: usize) -> Self {
        self.config.jobs = jobs.max(1);
        self
    }

    /// The Core binary. A relative path is taken from the current
    /// directory now: each Core runs in its own stack directory.
    pub fn core_bin(mut self, path: Option<PathBuf>) -> Self {
        self.config.core_bin = path.as_deref().map(crate::binaries::absolute);
        self
    }

    /// The adapter binary (a relative path as for [`core_bin`](Self::core_bin)).
    pub fn adapter_bin(mut self, path: Option<PathBuf>) -> Self {
        self.config.adapter_bin = path.as_deref().map(crate::binaries::absolute);
        self
    }

    /// The reports directory.
    pub fn report_dir(mut self, dir: PathBuf) -> Self {
        self.config.report_dir = dir;
        self
    }

    /// An existing PostgreSQL server.
    pub fn postgres_url(mut self, url: Option<String>) -> Self {
        self.config.postgres_url = url;
        self
    }

    /// `--keep`.
    pub fn keep(mut self, keep: bool) -> Self {
        self.config.keep = keep;
        self
    }

    /// `--core-env KEY=VALUE`, repeated.
    pub fn core_env(mut self, env: Vec<(String, String)>) -> Self {
        self.config.core_env = env;
        self
    }

    /// `--adapter-env KEY=VALUE`, repeated.
    pub fn adapter_env(mut self, env: Vec<(String, String)>) -> Self {
        self.config.adapter_env = env;
        self
    }

    /// `--browser`.
    pub fn browser(mut self, browser: crate::browser::BrowserKind) -> Self {
        self.config.browser = browser;
        self
    }

    /// `--family`: the catalogue families to keep (spec §7 lines).
    pub fn families(mut self, families: Vec<u8>) -> Self {
        self.config.families = families;
        self
    }

    /// Headless Chromium for the real-browser scenarios of an HTTP-level run.
    pub fn real_browser_scenarios(mut self, on: bool) -> Self {
        self.config.real_browser_scenarios = on;
        self
    }

    /// `--runtime`.
    pub fn runtime(mut self, runtime: RuntimeKind) -> Self {
        self.config.runtime = runtime;
        self
    }

    /// `--core-image`.
    pub fn core_image(mut self, image: impl Into<String>) -> Self {
        self.config.core_image = image.into();
        self
    }

    /// `--postgres-image`.
    pub fn postgres_image(mut self, image: impl Into<String>) -> Self {
        self.config.postgres_image = image.into();
        self
    }

    /// `--trial-timeout` (at least a second).
    pub fn trial_timeout(mut self, timeout: std::time::Duration) -> Self {
        self.config.trial_timeout = timeout.max(std::time::Duration::from_secs(1));
        self
    }

    /// `--max-fail N` (at least one), or no limit.
    pub fn max_fail(mut self, max_fail: Option<usize>) -> Self {
        self.config.max_fail = max_fail.map(|n| n.max(1));
        self
    }

    /// `--unusable-after K` (at least one).
    pub fn unusable_after(mut self, k: usize) -> Self {
        self.config.unusable_after = k.max(1);
        self
    }

    /// `--unanswered-after K` (at least one).
    pub fn unanswered_after(mut self, k: usize) -> Self {
        self.config.unanswered_after = k.max(1);
        self
    }

    /// The finished configuration.
    /// `--expected-failures`: the baseline the run is judged against.
    pub fn baseline(mut self, baseline: Option<crate::baseline::Baseline>) -> Self {
        self.config.baseline = baseline;
        self
    }

    /// The configuration.
    pub fn build(self) -> RunConfig {
        self.config
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_pairs_split_at_the_first_equals_sign() {
        assert_eq!(
            parse_env_pair("CORE_FAULT=replay-answers-201"),
            Ok(("CORE_FAULT".into(), "replay-answers-201".into()))
        );
        assert_eq!(parse_env_pair("A=b=c"), Ok(("A".into(), "b=c".into())));
        assert_eq!(
            parse_env_pair("EMPTY="),
            Ok(("EMPTY".into(), String::new()))
        );
        assert!(parse_env_pair("NOVALUE").is_err());
        assert!(parse_env_pair("=x").is_err());
    }

    #[test]
    fn relative_binaries_are_taken_from_the_current_directory() {
        let config = RunConfig::builder()
            .core_bin(Some(PathBuf::from("target/faults/debug/refcore")))
            .adapter_bin(Some(PathBuf::from("/abs/awg-mcp")))
            .build();
        let core = config.core_bin.unwrap();
        assert!(core.is_absolute(), "{core:?}");
        assert!(core.ends_with("target/faults/debug/refcore"));
        assert_eq!(config.adapter_bin.unwrap(), PathBuf::from("/abs/awg-mcp"));
    }
}
