//! `grantgate`: run the acceptance catalogue against a Core, or list it.
//!
//! Exit codes: 0 every trial passed (or what ran passed: PARTIAL; or every
//! failure is a known one `--expected-failures` waives: WAIVED); 1 a trial
//! failed (the Core broke the contract), a baseline entry is stale or
//! expired, or the report leaked a secret; 2 configuration or environment
//! error (with what to install or start), including trials that errored;
//! 3 PARTIAL under `--require-full`; 130 interrupted.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, Subcommand};
use grantgate_engine::config::{
    DEFAULT_CORE_IMAGE, DEFAULT_POSTGRES_IMAGE, DEFAULT_TRIAL_TIMEOUT, DEFAULT_UNANSWERED_AFTER,
    DEFAULT_UNUSABLE_AFTER, RunConfig, RunConfigBuilder, default_jobs, default_jobs_for,
    parse_env_pair,
};
use grantgate_engine::error::HarnessError;
use grantgate_engine::limits::EXCHANGE_TIMEOUT;
use grantgate_engine::limits::LAUNCH_STEP_TIMEOUT;
use grantgate_engine::report::gate::Gate;
use grantgate_engine::runner::Engine;
use grantgate_engine::runner::catalogue::trials;
use grantgate_engine::runner::events::EventSink;
use grantgate_engine::stack::{Backend, RuntimeKind};

#[derive(Parser)]
#[command(
    name = "grantgate",
    version,
    about = "End-to-end acceptance gate for agent-work-grant Cores"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
#[allow(clippy::large_enum_variant, reason = "parsed once per process")]
enum Command {
    /// Run the catalogue: every selected scenario on every selected backend.
    Run(RunArgs),
    /// Explore: seeded random sequences of operations (family 20) against
    /// the model of the contract, on every selected backend, a difference
    /// shrunk to its shortest sequence.
    Explore(ExploreArgs),
    /// List the scenarios by catalogue family, with their trials
    /// (`backend::scenario`) and claims.
    List(ListArgs),
    /// Run the catalogue cleanly, then against every built-in fault of a
    /// `faults` build, and write the kill matrix (docs/faults.md).
    Selftest(SelftestArgs),
    /// Join the reports of a sharded run (`run --shard K/N` on several
    /// machines) into one report, JUnit and manifest, parity compared.
    Merge(MergeArgs),
    /// Compare two runs: which trials changed verdict or timing.
    Report(ReportArgs),
    /// Check a signed attestation (`run --attest`): its signature, its
    /// predicate and, if given, its subject; print its verdict.
    Verify(VerifyArgs),
    /// Write a baseline of known failures (for `run --expected-failures`)
    /// from a run's failed trials, each at the step it failed in.
    Baseline(BaselineArgs),
}

#[derive(clap::Args)]
struct BaselineArgs {
    /// The run's report directory (`reports/<run-id>/`) or its report.json.
    report: PathBuf,
    /// Write the baseline here instead of stdout (refused if it exists).
    #[arg(long, short, value_name = "FILE")]
    output: Option<PathBuf>,
}

#[derive(clap::Args)]
struct VerifyArgs {
    /// The attestation (`attestation.intoto.json`, a DSSE envelope).
    file: PathBuf,
    /// The signer's Ed25519 public key, SPKI PEM (`-----BEGIN PUBLIC KEY-----`).
    #[arg(long, value_name = "PUB")]
    key: PathBuf,
    /// Require a subject with this digest (`sha256:<hex>` or hex): the Core
    /// or adapter the pipeline is about to release.
    #[arg(long, value_name = "D")]
    subject_digest: Option<String>,
    /// Require this result (e.g. `PASSED`): exit 1 for any other.
    #[arg(long, value_name = "RESULT")]
    expect_result: Option<String>,
}

/// `--attest` and its key.
#[derive(clap::Args)]
struct AttestArgs {
    /// Also write attestation.intoto.json: the verdict as an in-toto
    /// test-result Statement in a DSSE envelope signed with the key of
    /// --sign-key or GRANTGATE_SIGN_KEY.
    #[arg(long)]
    attest: bool,
    /// The Ed25519 signing key, PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`).
    #[arg(long, value_name = "FILE", requires = "attest")]
    sign_key: Option<PathBuf>,
}

impl AttestArgs {
    /// The signer, read before the run starts so a missing or bad key is a
    /// configuration error, not a lost run. `GRANTGATE_SIGN_KEY` holds the
    /// PEM itself (a CI secret) and is read only when no file is given.
    fn signer(&self) -> anyhow::Result<Option<grantgate_engine::attest::Signer>> {
        if !self.attest {
            return Ok(None);
        }
        let pem = match &self.sign_key {
            Some(path) => std::fs::read_to_string(path)
                .with_context(|| format!("reading the signing key {}", path.display()))?,
            None => std::env::var("GRANTGATE_SIGN_KEY").map_err(|_| {
                anyhow::anyhow!(
                    "--attest needs a signing key: --sign-key FILE or GRANTGATE_SIGN_KEY"
                )
            })?,
        };
        Ok(Some(grantgate_engine::attest::Signer::from_pem(&pem)?))
    }
}

#[derive(clap::Args)]
struct ListArgs {
    #[command(flatten)]
    selection: Selection,
    /// `text` (by family, with claims) or `json` (one object per scenario).
    #[arg(long, value_enum, default_value = "text")]
    format: ListFormat,
    /// Instead: every clause of `docs/spec.md` with the scenarios that
    /// verify it (or why none does).
    #[arg(long)]
    clauses: bool,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum ListFormat {
    Text,
    Json,
}

#[derive(clap::Args)]
struct ReportArgs {
    /// Two report directories (or report.json files): OLD then NEW.
    #[arg(long, num_args = 2, value_names = ["OLD", "NEW"], required = true)]
    diff: Vec<PathBuf>,
}

#[derive(clap::Args)]
struct MergeArgs {
    /// The shards' report directories (`reports/<run-id>/`) or report.json files.
    #[arg(required = true)]
    shards: Vec<PathBuf>,
    /// Where the merged reports/<run-id>/ is written.
    #[arg(long, default_value = "reports")]
    report_dir: PathBuf,
    /// Sign the merged run's verdict, as `run --attest` does.
    #[command(flatten)]
    attest: AttestArgs,
}

#[derive(clap::Args)]
struct SelftestArgs {
    /// Backend(s) of the clean pass (default both). A fault runs on the
    /// first of them, or on all of them when it is backend-specific.
    #[arg(long = "backend", value_enum)]
    backends: Vec<Backend>,
    /// Keep only trials whose name contains this text (every pass).
    #[arg(long)]
    filter: Option<String>,
    /// Stacks running at once across all passes (default: the number of cores).
    #[arg(long)]
    jobs: Option<usize>,
    /// Only these faults (repeatable; default: every fault the binaries list).
    #[arg(long = "fault", value_name = "NAME")]
    faults: Vec<String>,
    /// Only these honest variants (repeatable; default: every variant the
    /// Core lists). Without --fault, no fault runs: the clean pass and these
    /// variants only.
    #[arg(long = "variant", value_name = "NAME")]
    variants: Vec<String>,
    /// refcore built with the `faults` feature (default: built by cargo into
    /// target/faults when under cargo).
    #[arg(long)]
    core_bin: Option<PathBuf>,
    /// awg-mcp built with the `faults` feature (default as for --core-bin).
    #[arg(long)]
    adapter_bin: Option<PathBuf>,
    /// Where reports/<run-id>/ (with selftest/ inside) is written.
    #[arg(long, default_value = "reports")]
    report_dir: PathBuf,
    /// Use this PostgreSQL server instead of ephemeral clusters.
    #[arg(long, env = "GRANTGATE_POSTGRES_URL")]
    postgres_url: Option<String>,
    /// Run every trial under every fault (the full matrix: every catcher of
    /// each fault, not just the first; slower). By default each fault's pass
    /// stops at its first kill, its catching scenarios and families
    /// (docs/faults.md) first.
    #[arg(long)]
    full: bool,
    /// Instead of the faults: run the gate (as a child `grantgate run`)
    /// against every hostile Core of the faults build (`CORE_HOSTILE`,
    /// docs/faults.md) and check its bounds: exit 1, wall time, peak RSS,
    /// report size, nothing left behind.
    #[arg(long)]
    hostile: bool,
    /// Only this hostile Core (repeatable; implies --hostile).
    #[arg(long = "hostile-core", value_name = "NAME")]
    hostile_cores: Vec<String>,
    #[command(flatten)]
    bounds: Bounds,
}

/// How long a trial may take and when a run stops early.
#[derive(clap::Args)]
struct Bounds {
    /// Fail a trial that has not ended after SECS seconds, naming the step
    /// it was in.
    #[arg(long, value_name = "SECS", default_value_t = DEFAULT_TRIAL_TIMEOUT.as_secs())]
    trial_timeout: u64,
    /// Stop starting trials after N failed or errored ones (the trials
    /// running finish; the rest are not run).
    #[arg(long, value_name = "N")]
    max_fail: Option<usize>,
    /// Stop the run as "Core unusable" after K trials in a row whose stack
    /// did not start or become healthy.
    #[arg(long, value_name = "K", default_value_t = DEFAULT_UNUSABLE_AFTER)]
    unusable_after: usize,
    /// Fail an exchange with the Core that has not ended after SECS seconds
    /// (for the harness's own tests of silent Cores; keep the default).
    #[arg(long, value_name = "SECS", default_value_t = EXCHANGE_TIMEOUT.as_secs())]
    exchange_timeout: u64,
    /// Give a Core process SECS seconds to print its listening line, and
    /// again to become healthy (for the harness's own tests of Cores that
    /// never start; keep the default).
    #[arg(long, value_name = "SECS", default_value_t = LAUNCH_STEP_TIMEOUT.as_secs())]
    launch_step_timeout: u64,
    /// Stop the run as "Core stopped answering" after K trials failed
    /// because a request got no complete answer (none, a timeout, or not
    /// HTTP); the trials not started are not run.
    #[arg(long, value_name = "K", default_value_t = DEFAULT_UNANSWERED_AFTER)]
    unanswered_after: usize,
}

impl Bounds {
    /// The run's bounds on `builder`; the two per-exchange and per-launch
    /// limits are process-wide (read deep in the actors and stacks), so they
    /// are set here, once at start, as `--max-body` is.
    fn apply(&self, builder: RunConfigBuilder) -> RunConfigBuilder {
        use std::time::Duration;
        grantgate_engine::limits::set_exchange_timeout(Duration::from_secs(self.exchange_timeout));
        grantgate_engine::limits::set_launch_step_timeout(Duration::from_secs(
            self.launch_step_timeout,
        ));
        builder
            .trial_timeout(std::time::Duration::from_secs(self.trial_timeout))
            .max_fail(self.max_fail)
            .unusable_after(self.unusable_after)
            .unanswered_after(self.unanswered_after)
    }
}

#[derive(clap::Args)]
struct Selection {
    /// Backend(s) to run on; default both.
    #[arg(long = "backend", value_enum)]
    backends: Vec<Backend>,
    /// Keep only trials whose name contains this text.
    #[arg(long)]
    filter: Option<String>,
    /// Keep only the trial with exactly this name (repeatable), e.g.
    /// `--exact sqlite::full_lifecycle`.
    #[arg(long)]
    exact: Vec<String>,
    /// Leave out trials whose name contains this text (repeatable).
    #[arg(long)]
    skip: Vec<String>,
    /// Keep only the scenarios of this catalogue family, by its line of
    /// spec §7 (repeatable), e.g. `--family 1 --family 13`.
    #[arg(long = "family", value_name = "LINE")]
    families: Vec<u8>,
}

#[derive(clap::Args)]
struct RunArgs {
    #[command(flatten)]
    selection: Selection,
    /// How many stacks run at once (default: the number of cores; one more
    /// with `--browser chromium`).
    #[arg(short = 'j', long)]
    jobs: Option<usize>,
    /// Also write the JUnit file here (a stable path for CI).
    #[arg(long, value_name = "PATH")]
    junit: Option<PathBuf>,
    /// Keep only the newest N run directories under --report-dir.
    #[arg(long, value_name = "N")]
    keep_reports: Option<usize>,
    /// Colour the terminal: auto (a terminal, and NO_COLOR unset), always, never.
    #[arg(long, value_enum, default_value = "auto")]
    color: grantgate_engine::progress::ColorChoice,
    /// Run only shard K of N (stable: a scenario stays in its shard as the
    /// catalogue grows; its backend and parity trials stay together). Join
    /// the shards' reports with `grantgate merge`.
    #[arg(long, value_name = "K/N")]
    shard: Option<grantgate_engine::runner::schedule::Shard>,
    /// The Core binary to gate (default: refcore next to grantgate).
    #[arg(long, env = "GRANTGATE_CORE_BIN")]
    core_bin: Option<PathBuf>,
    /// The adapter binary (default: awg-mcp next to grantgate).
    #[arg(long, env = "GRANTGATE_ADAPTER_BIN")]
    adapter_bin: Option<PathBuf>,
    /// Where reports/<run-id>/ is written.
    #[arg(long, default_value = "reports")]
    report_dir: PathBuf,
    /// Use this PostgreSQL server (a URL with CREATEDB rights) instead of an
    /// ephemeral cluster.
    #[arg(long, env = "GRANTGATE_POSTGRES_URL")]
    postgres_url: Option<String>,
    /// Keep the stack of a failed trial running and print how to reach it.
    #[arg(long)]
    keep: bool,
    /// Extra environment for every Core stack (repeatable), merged over each
    /// scenario's own, e.g. `--core-env CORE_FAULT=replay-answers-201`.
    #[arg(long = "core-env", value_name = "KEY=VALUE", value_parser = parse_env_pair)]
    core_env: Vec<(String, String)>,
    /// Extra environment for every adapter child (repeatable), e.g.
    /// `--adapter-env AWG_FAULT=adapter-retries-post`.
    #[arg(long = "adapter-env", value_name = "KEY=VALUE", value_parser = parse_env_pair)]
    adapter_env: Vec<(String, String)>,
    /// How Cores are launched: `process` (a Core binary per stack) or
    /// `docker` (a Core container per stack, PostgreSQL in a container
    /// beside it).
    #[arg(long, value_enum, default_value = "process", env = "GRANTGATE_RUNTIME")]
    runtime: RuntimeKind,
    /// What the humans use: `http` (HTTP-level: forms posted as a browser
    /// posts them) or `chromium` (headless Chromium through chromedriver;
    /// `apt-get install chromium chromium-driver chromium-headless-shell`), which also runs the
    /// scenarios only a real browser can (HttpOnly, SameSite, clicks).
    #[arg(long, value_enum, default_value = "http", env = "GRANTGATE_BROWSER")]
    browser: grantgate_engine::browser::BrowserKind,
    /// The Core image `--runtime docker` runs (must be in the local engine).
    #[arg(long, default_value = DEFAULT_CORE_IMAGE, env = "GRANTGATE_CORE_IMAGE")]
    core_image: String,
    /// The PostgreSQL image `--runtime docker` runs beside the Core.
    #[arg(long, default_value = DEFAULT_POSTGRES_IMAGE, env = "GRANTGATE_POSTGRES_IMAGE")]
    postgres_image: String,
    /// The largest body read from one answer of the Core, in bytes; a larger
    /// one fails its trial by name.
    #[arg(long, value_name = "BYTES", default_value_t = grantgate_engine::limits::DEFAULT_BODY_LIMIT)]
    max_body: usize,
    /// Known failures (TOML, docs/harness.md "Known failures"): a listed
    /// failure is waived (the verdict WAIVED, exit 0 when nothing else
    /// broke); an unlisted one, an entry whose trial now passes, or one past
    /// its `expires` date fails the run (exit 1). Errored trials are never
    /// waived.
    #[arg(long, value_name = "FILE", env = "GRANTGATE_EXPECTED_FAILURES")]
    expected_failures: Option<PathBuf>,
    /// Refuse a PARTIAL verdict (trials not applicable or not run, a
    /// selection, one backend): exit 3 instead of 0, so a release pipeline
    /// ships only a Core the whole gate was run against.
    #[arg(long)]
    require_full: bool,
    #[command(flatten)]
    bounds: Bounds,
    #[command(flatten)]
    attest: AttestArgs,
}

#[derive(clap::Args)]
struct ExploreArgs {
    /// The seed; the same seed gives the same sequences on every backend
    /// and Core (default: drawn, and named in the report).
    #[arg(long)]
    seed: Option<u64>,
    /// Sequences per backend.
    #[arg(long, default_value_t = grantgate_scenarios::explore::CASES)]
    cases: usize,
    /// Moves per sequence, at most.
    #[arg(long, default_value_t = grantgate_scenarios::explore::STEPS)]
    steps: usize,
    /// Every option of `run` (the Core, backends, runtime, reports); the
    /// selection is the explorer's trials.
    #[command(flatten)]
    run: RunArgs,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let rt = match cli.command {
        Command::List(args) => return list(args),
        Command::Report(args) => return report_diff(args),
        Command::Verify(args) => return verify(args),
        Command::Baseline(args) => return baseline(args),
        _ => match tokio::runtime::Runtime::new() {
            Ok(rt) => rt,
            Err(e) => {
                eprintln!("error: cannot start the async runtime: {e}");
                return ExitCode::from(2);
            }
        },
    };
    let result = match cli.command {
        Command::List(_) | Command::Report(_) | Command::Verify(_) | Command::Baseline(_) => {
            unreachable!("answered above")
        }
        Command::Run(args) => rt.block_on(run(args)),
        Command::Explore(args) => explore(args).and_then(|args| rt.block_on(run(args))),
        Command::Selftest(args) => rt.block_on(selftest(args)),
        Command::Merge(args) => merge(args),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {}", render(&e));
            ExitCode::from(2)
        }
    }
}

/// The error and its causes, each cause shown once: library errors already
/// include their source in their own message.
fn render(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in e.chain() {
        let line = cause.to_string();
        if !text.contains(&line) {
            if !text.is_empty() {
                text.push_str(": ");
            }
            text.push_str(&line);
        }
    }
    text
}

/// The acceptance catalogue, and the engine's own probes when its tests ask
/// for them (`GRANTGATE_ENGINE_SCENARIOS=1`): probes are never part of the
/// catalogue an auditor reads.
fn catalogue() -> Vec<grantgate_engine::runner::Scenario> {
    let mut all = grantgate_scenarios::catalogue();
    all.extend(grantgate_engine::runner::probes::scenarios());
    all
}

fn report_diff(args: ReportArgs) -> ExitCode {
    use grantgate_engine::report::{diff, merge};
    match (merge::read(&args.diff[0]), merge::read(&args.diff[1])) {
        (Ok(old), Ok(new)) => {
            for line in diff::diff(&old, &new) {
                println!("{line}");
            }
            ExitCode::SUCCESS
        }
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn list(args: ListArgs) -> ExitCode {
    let sel = args.selection;
    let backends = if sel.backends.is_empty() {
        Backend::ALL.to_vec()
    } else {
        sel.backends
    };
    let catalogue = catalogue();
    let mut selected = trials(&catalogue, &backends, sel.filter.as_deref());
    selected.retain(|t| {
        let name = t.name();
        (sel.exact.is_empty() || sel.exact.contains(&name))
            && (sel.families.is_empty() || sel.families.contains(&t.scenario.family.line()))
            && !sel.skip.iter().any(|s| name.contains(s.as_str()))
    });
    // A parity trial follows when its scenario runs on every selected
    // backend, two or more, as `run` judges it.
    let parity: Vec<&grantgate_engine::runner::catalogue::Scenario> = catalogue
        .iter()
        .filter(|s| {
            s.parity
                && backends.len() >= 2
                && selected.iter().filter(|t| t.scenario.id == s.id).count() == backends.len()
        })
        .collect();
    if args.clauses {
        print!("{}", grantgate_engine::clauses::listing(&catalogue));
        return ExitCode::SUCCESS;
    }
    if let ListFormat::Json = args.format {
        let items: Vec<serde_json::Value> = catalogue
            .iter()
            .filter_map(|s| {
                let mut names: Vec<String> = selected
                    .iter()
                    .filter(|t| t.scenario.id == s.id)
                    .map(|t| t.name())
                    .collect();
                if names.is_empty() {
                    return None;
                }
                if parity.iter().any(|p| p.id == s.id) {
                    names.push(s.parity_trial());
                }
                Some(serde_json::json!({
                    "id": s.id,
                    "family": s.family.label(),
                    "claim": s.claim,
                    "trials": names,
                    "parity": s.parity,
                    "core_env": s.core_env.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>(),
                    "extensions": s.extensions,
                    "clauses": s.clauses,
                }))
            })
            .collect();
        println!("{}", serde_json::Value::Array(items));
        return ExitCode::SUCCESS;
    }
    print!(
        "{}",
        grantgate_engine::runner::catalogue::listing(&catalogue, &selected, &parity)
    );
    ExitCode::SUCCESS
}

/// `explore` is `run` of the explorer's trials with the seed and budget
/// set: the same report, exit codes and parity.
fn explore(args: ExploreArgs) -> anyhow::Result<RunArgs> {
    let mut run = args.run;
    let sel = &run.selection;
    if sel.filter.is_some() || !sel.exact.is_empty() || !sel.skip.is_empty() || run.shard.is_some()
    {
        anyhow::bail!(
            "explore runs the explorer's trials only: --filter, --exact, --skip and --shard belong to `run`"
        );
    }
    grantgate_scenarios::explore::configure(grantgate_scenarios::explore::Budget {
        seed: args.seed,
        cases: args.cases,
        steps: args.steps,
    });
    run.selection.filter = Some("explored_sequences_match_the_model".to_owned());
    Ok(run)
}

/// The baseline of `--expected-failures`, read and checked against the
/// catalogue before the run starts: a bad file is a configuration error,
/// not a lost run.
fn read_baseline(
    path: Option<&std::path::Path>,
) -> anyhow::Result<Option<grantgate_engine::baseline::Baseline>> {
    let Some(path) = path else {
        return Ok(None);
    };
    let baseline = grantgate_engine::baseline::Baseline::read(path)?;
    let catalogue = catalogue();
    let ids: Vec<&str> = catalogue.iter().map(|s| s.id).collect();
    let backends: Vec<&str> = Backend::ALL
        .iter()
        .map(|b| b.name())
        .chain([grantgate_engine::vocab::PARITY])
        .collect();
    baseline.check_names(&ids, &backends)?;
    Ok(Some(baseline))
}

/// `grantgate baseline`: a baseline file from a run's failures.
fn baseline(args: BaselineArgs) -> ExitCode {
    let report = match grantgate_engine::report::merge::read(&args.report) {
        Ok(report) => report,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let text = grantgate_engine::baseline::from_failures(&report);
    match &args.output {
        None => print!("{text}"),
        Some(path) => {
            let written = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)
                .and_then(|mut f| std::io::Write::write_all(&mut f, text.as_bytes()));
            if let Err(e) = written {
                eprintln!("error: writing {}: {e}", path.display());
                return ExitCode::from(2);
            }
            eprintln!(
                "wrote {} ({} failed trial(s); errored ones are never baselined): edit each reason",
                path.display(),
                report.counts().failed + report.counts().waived
            );
        }
    }
    ExitCode::SUCCESS
}

async fn run(args: RunArgs) -> anyhow::Result<u8> {
    let signer = args.attest.signer()?;
    let baseline = read_baseline(args.expected_failures.as_deref())?;
    grantgate_engine::limits::set_body_limit(args.max_body);
    let config = RunConfig::builder()
        .backends(args.selection.backends)
        .filter(args.selection.filter)
        .exact_and_skip(args.selection.exact, args.selection.skip)
        .families(args.selection.families)
        .shard(args.shard)
        .jobs(args.jobs.unwrap_or_else(|| default_jobs_for(args.browser)))
        .core_bin(args.core_bin)
        .adapter_bin(args.adapter_bin)
        .report_dir(args.report_dir)
        .postgres_url(args.postgres_url)
        .keep(args.keep)
        .core_env(args.core_env)
        .adapter_env(args.adapter_env)
        .runtime(args.runtime)
        .browser(args.browser)
        // Chromium when installed; else those scenarios are N/A (PARTIAL).
        .real_browser_scenarios(grantgate_engine::browser::installed())
        .core_image(args.core_image)
        .postgres_image(args.postgres_image)
        .baseline(baseline);
    let config = args.bounds.apply(config).build();
    let report_root = config.report_dir.clone();
    // Signals are caught before anything starts: from here on, Ctrl-C or a
    // CI's SIGTERM cancels the run, which then tears everything down.
    let cancel = grantgate_engine::runner::signals::cancel_on_signals();
    let engine = Engine::prepare(config).await.context("preparing the run")?;
    if cancel.is_cancelled() {
        engine.shutdown().await;
        return Ok(130);
    }
    let trials = engine.trials(&catalogue());
    if trials.is_empty() {
        engine.shutdown().await;
        anyhow::bail!("no trial matches the selection; see `grantgate list`");
    }
    if engine.config().backends.len() < 2 {
        println!("parity: not compared (this run gates one backend only)");
    }
    let color = args.color.enabled();
    let sink: EventSink = grantgate_engine::progress::sink(color);
    let report = engine.run(trials, &sink, &cancel).await;
    // Rendering is CPU-bound (a large report takes seconds): off the async
    // workers, so signals and teardown are still served meanwhile.
    let (report, written) = {
        let (root, secrets) = (report_root.clone(), engine.secrets().clone());
        tokio::task::spawn_blocking(move || {
            let written = grantgate_engine::report::write_all(&report, &root, &secrets);
            (report, written)
        })
        .await
        .context("writing the report")?
    };
    let secrets = engine.secrets().clone();
    let kept = engine.shutdown().await;
    end_orphans();
    if let Some(kept) = kept {
        println!("{kept}");
    }
    print!("{}", grantgate_engine::progress::summary(&report, color));
    grantgate_engine::progress::github(&report);
    match written {
        Ok(dir) => {
            println!("report: {}", dir.join("index.html").display());
            if let Some(signer) = &signer {
                let path = attest(&report, &dir, signer, &secrets)?;
                println!("attestation: {}", path.display());
            }
            let paths = grantgate_engine::report::paths::after_run(
                &report_root,
                &dir,
                args.junit.as_deref(),
                args.keep_reports,
            );
            if let Err(e) = paths {
                eprintln!("warning: {e}");
            }
        }
        Err(e @ HarnessError::SecretLeak { .. }) => {
            eprintln!("error: {e}");
            return Ok(1);
        }
        Err(e) => return Err(e).context("writing the report"),
    }
    let code = exit_code(&report, cancel.is_cancelled());
    let code = require_full(code, &report.gate(), args.require_full);
    if code == PARTIAL_REFUSED {
        eprintln!("refused: {} (--require-full)", report.gate().banner());
    }
    Ok(code)
}

/// The exit code of a PARTIAL verdict under `--require-full`.
const PARTIAL_REFUSED: u8 = 3;

/// `code`, or [`PARTIAL_REFUSED`] when nothing failed but the verdict is
/// not a full pass and the run was asked to require one.
fn require_full(code: u8, gate: &Gate, required: bool) -> u8 {
    match (code, gate) {
        (0, Gate::Partial { .. }) if required => PARTIAL_REFUSED,
        _ => code,
    }
}

/// Writes `dir/attestation.intoto.json`: the run's statement, redacted like
/// every report file, signed.
fn attest(
    report: &grantgate_engine::report::model::RunReport,
    dir: &std::path::Path,
    signer: &grantgate_engine::attest::Signer,
    secrets: &grantgate_engine::secrets::SecretRegistry,
) -> anyhow::Result<PathBuf> {
    use grantgate_engine::attest;
    let statement = attest::statement(report, &attest::Evidence::of(report, dir));
    let redacted = secrets.redact(&statement.to_string());
    let statement = serde_json::from_str(&redacted).context("redacting the attestation")?;
    let path = dir.join(attest::FILE_NAME);
    std::fs::write(&path, signer.sign(&statement)?)
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(path)
}

/// `grantgate verify`: 0 when the attestation is genuine (and has the
/// subject and result asked for), 1 with the reason when not, 2 when the
/// key cannot be read.
fn verify(args: VerifyArgs) -> ExitCode {
    let key = match std::fs::read_to_string(&args.key) {
        Ok(key) => key,
        Err(e) => {
            eprintln!("error: reading the key {}: {e}", args.key.display());
            return ExitCode::from(2);
        }
    };
    match grantgate_engine::attest::verify(&args.file, &key, args.subject_digest.as_deref()) {
        Ok(v) => {
            let (passed, warned, failed) = v.counts;
            println!(
                "verified: {} ({passed} passed, {warned} warned, {failed} failed)",
                v.result
            );
            for subject in &v.subjects {
                println!("subject: {subject}");
            }
            for waived in &v.waived {
                println!("waived: {waived}");
            }
            match args.expect_result {
                Some(want) if !want.eq_ignore_ascii_case(&v.result) => {
                    eprintln!("refused: the result is {}, not {want}", v.result);
                    ExitCode::from(1)
                }
                _ => ExitCode::SUCCESS,
            }
        }
        Err(e @ grantgate_engine::attest::AttestError::Key(_)) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("refused: {e}");
            ExitCode::from(1)
        }
    }
}

/// Kills what dead Cores left behind outside their process groups (the
/// harness adopted them, see `lifeline`), saying so.
fn end_orphans() {
    let ended = grantgate_engine::lifeline::end_orphans(&[]);
    if !ended.is_empty() {
        eprintln!(
            "grantgate: killed {} process(es) a Core left running outside its process group",
            ended.len()
        );
    }
}

fn merge(args: MergeArgs) -> anyhow::Result<u8> {
    use grantgate_engine::report::merge;
    let signer = args.attest.signer()?;
    let shards = args
        .shards
        .iter()
        .map(|p| merge::read(p))
        .collect::<Result<Vec<_>, _>>()?;
    let run_id = format!("{}-merged", grantgate_engine::runner::run::new_run_id());
    let report = merge::merge(&run_id, shards, &catalogue())?;
    // Shard reports are redacted already; nothing new to register.
    let secrets = grantgate_engine::secrets::SecretRegistry::new();
    let dir = grantgate_engine::report::write_all(&report, &args.report_dir, &secrets)
        .context("writing the merged report")?;
    let c = report.counts();
    println!(
        "merged {} shard(s): {} passed, {} failed, {} waived, {} errored, {} not applicable",
        args.shards.len(),
        c.passed,
        c.failed,
        c.waived,
        c.errored,
        c.not_applicable
    );
    println!("report: {}", dir.join("index.html").display());
    if let Some(signer) = &signer {
        let path = attest(&report, &dir, signer, &secrets)?;
        println!("attestation: {}", path.display());
    }
    print!("{}", grantgate_engine::progress::summary(&report, false));
    Ok(exit_code(&report, false))
}

/// 130 interrupted, 1 a contract failure (one no baseline entry waives) or
/// a stale or expired baseline entry, 2 only harness or environment errors,
/// 0 otherwise: PARTIAL and WAIVED too, since what ran passed or failed as
/// known (a machine without Chromium is no failure); `--require-full`
/// refuses PARTIAL (3).
fn exit_code(report: &grantgate_engine::report::model::RunReport, interrupted: bool) -> u8 {
    let c = report.counts();
    if interrupted {
        130
    } else if c.failed > 0 || !report.baseline_problems().is_empty() {
        1
    } else if c.errored > 0 {
        2
    } else {
        0
    }
}

/// `grantgate selftest --hostile`: the hostile pass, children run one at a
/// time off the async workers.
async fn selftest_hostile(args: SelftestArgs) -> anyhow::Result<u8> {
    use grantgate_engine::selftest::hostile;
    let bins = grantgate_engine::binaries::locate_faults(
        args.core_bin.as_deref(),
        args.adapter_bin.as_deref(),
    )
    .context("finding the faults build")?;
    let listed = std::process::Command::new(&bins.core)
        .arg("--list-hostile")
        .output()
        .context("refcore --list-hostile")?;
    let listed = String::from_utf8_lossy(&listed.stdout).into_owned();
    let known: Vec<&str> = hostile::CATALOGUE.iter().map(|h| h.name).collect();
    let (mut a, mut b) = (listed.lines().collect::<Vec<_>>(), known.clone());
    a.sort();
    b.sort();
    if a != b {
        anyhow::bail!(
            "{} --list-hostile lists {:?}, the pass knows {known:?}",
            bins.core.display(),
            listed.lines().collect::<Vec<_>>()
        );
    }
    if let Some(unknown) = args
        .hostile_cores
        .iter()
        .find(|n| !known.contains(&n.as_str()))
    {
        anyhow::bail!("--hostile-core {unknown}: valid: {}", known.join(", "));
    }
    let backend = match args.backends.first() {
        Some(Backend::Postgres) => "postgres",
        _ => "sqlite",
    };
    let jobs = args.jobs.unwrap_or_else(default_jobs);
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let dir = args.report_dir.join(format!("hostile-{stamp}"));
    let cancel = grantgate_engine::runner::signals::cancel_on_signals();
    let only = args.hostile_cores.clone();
    let out = dir.clone();
    let rows = tokio::task::spawn_blocking(move || {
        hostile::run_pass(
            &bins,
            &only,
            backend,
            jobs,
            &out,
            &|| cancel.is_cancelled(),
            &|row| {
                print!(
                    "{}",
                    hostile::table(std::slice::from_ref(row))
                        .lines()
                        .nth(1)
                        .unwrap_or_default()
                );
                println!();
            },
        )
    })
    .await
    .context("the hostile pass")?
    .context("the hostile pass")?;
    let Some(rows) = rows else {
        return Ok(130);
    };
    print!("{}", hostile::table(&rows));
    println!("hostile pass: {}", dir.join("hostile.json").display());
    Ok(if rows.iter().all(|r| r.crossed.is_empty()) {
        0
    } else {
        1
    })
}

async fn selftest(args: SelftestArgs) -> anyhow::Result<u8> {
    use grantgate_engine::selftest::faults::{Program, list as list_faults};
    if args.hostile || !args.hostile_cores.is_empty() {
        return selftest_hostile(args).await;
    }
    let config = RunConfig::builder()
        .backends(args.backends)
        .filter(args.filter)
        .jobs(args.jobs.unwrap_or_else(default_jobs))
        .report_dir(args.report_dir)
        .postgres_url(args.postgres_url)
        // As `run`: the real-browser scenarios in Chromium when installed.
        .real_browser_scenarios(grantgate_engine::browser::installed());
    let config = args.bounds.apply(config).build();
    let bins = grantgate_engine::binaries::locate_faults(
        args.core_bin.as_deref(),
        args.adapter_bin.as_deref(),
    )
    .context("finding the faults build")?;
    let mut faults = list_faults(Program::Core, &bins.core)?;
    faults.extend(list_faults(Program::Adapter, &bins.adapter)?);
    if !args.faults.is_empty() {
        if let Some(unknown) = args
            .faults
            .iter()
            .find(|n| !faults.iter().any(|f| &f.name == *n))
        {
            let valid: Vec<&str> = faults.iter().map(|f| f.name.as_str()).collect();
            anyhow::bail!(
                "--fault {unknown}: no such fault; valid: {}",
                valid.join(", ")
            );
        }
        faults.retain(|f| args.faults.contains(&f.name));
    } else if !args.variants.is_empty() {
        faults.clear();
    }
    let mut variants = grantgate_engine::selftest::variants::list(&bins.core)?;
    if !args.variants.is_empty() {
        if let Some(unknown) =
            (args.variants.iter()).find(|n| !variants.iter().any(|v| &v.name == *n))
        {
            let valid: Vec<&str> = variants.iter().map(|v| v.name.as_str()).collect();
            anyhow::bail!(
                "--variant {unknown}: no such honest variant; valid: {}",
                valid.join(", ")
            );
        }
        variants.retain(|v| args.variants.contains(&v.name));
    }
    if config.filter.is_some()
        && grantgate_engine::runner::catalogue::trials(
            &catalogue(),
            &config.backends,
            config.filter.as_deref(),
        )
        .is_empty()
    {
        anyhow::bail!("no trial matches the selection; see `grantgate list`");
    }
    let report_root = config.report_dir.clone();
    let cancel = grantgate_engine::runner::signals::cancel_on_signals();
    let sink: EventSink = grantgate_engine::progress::sink(false);
    let plan = grantgate_engine::selftest::run::Plan {
        faults,
        variants,
        full: args.full,
    };
    let outcome =
        grantgate_engine::selftest::run::run(config, &catalogue(), &bins, &plan, &sink, &cancel)
            .await?;
    end_orphans();
    let Some(outcome) = outcome else {
        return Ok(130);
    };
    let m = &outcome.matrix;
    for f in &m.faults {
        let by: Vec<&str> = f.killed_by.iter().map(|c| c.trial.as_str()).collect();
        if f.killed() {
            println!(
                "killed   {:<40} by {} ({} of {} trials ran)",
                f.name,
                by.join(", "),
                f.trials_run,
                f.trials_selected
            );
        } else {
            println!(
                "SURVIVED {:<40} ({} trials ran, {} errored)",
                f.name,
                f.trials_run,
                f.errored.len()
            );
        }
    }
    for v in &m.variants {
        let verdict = if v.passed() { "passed " } else { "REFUSED" };
        println!(
            "{verdict}  honest variant {:<26} {} trials, judged with: {}",
            v.name,
            v.trials_run,
            v.pass.join(",")
        );
    }
    println!(
        "selftest: {} of {} faults killed; honest variants passed {} of {} in {} Core passes{}; \
         clean pass {}; {} s in all",
        m.faults.len() - m.survivors().len(),
        m.faults.len(),
        m.variants.len() - m.refused_variants().len(),
        m.variants.len(),
        m.variant_passes(),
        match m.compositions.len() {
            0 => String::new(),
            n => format!(" ({n} refused together)"),
        },
        if m.clean_is_green() {
            "green"
        } else {
            "NOT green"
        },
        m.duration_ms / 1000
    );
    match grantgate_engine::selftest::run::write(&outcome, &report_root) {
        Ok(dir) => println!("kill matrix: {}", dir.join("index.html").display()),
        Err(e @ HarnessError::SecretLeak { .. }) => {
            eprintln!("error: {e}");
            return Ok(1);
        }
        Err(e) => return Err(e).context("writing the self-test report"),
    }
    Ok(m.exit_code())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The limits only the harness's own tests shorten keep their production
    /// defaults when not given: 30 s an exchange, 20 s a launch step.
    #[test]
    fn exchange_and_launch_limits_default_to_production() {
        let Command::Run(run) = Cli::parse_from(["grantgate", "run"]).command else {
            unreachable!()
        };
        assert_eq!(run.bounds.exchange_timeout, 30);
        assert_eq!(run.bounds.launch_step_timeout, 20);
        let Command::Run(run) = Cli::parse_from([
            "grantgate",
            "run",
            "--exchange-timeout",
            "3",
            "--launch-step-timeout",
            "2",
        ])
        .command
        else {
            unreachable!()
        };
        assert_eq!(
            (run.bounds.exchange_timeout, run.bounds.launch_step_timeout),
            (3, 2)
        );
    }

    #[test]
    fn require_full_refuses_partial_only() {
        let partial = Gate::Partial {
            why: "6 not applicable".into(),
        };
        assert_eq!(
            require_full(0, &partial, false),
            0,
            "PARTIAL passes by default"
        );
        assert_eq!(require_full(0, &partial, true), PARTIAL_REFUSED);
        assert_eq!(require_full(0, &Gate::Passed, true), 0);
        assert_eq!(require_full(1, &Gate::Failed, true), 1, "a failure stays 1");
        assert_eq!(
            require_full(130, &partial, true),
            130,
            "an interrupt stays 130"
        );
    }
}
