//! Running the self-test: the clean pass, then one catalogue pass per fault,
//! then the kill matrix written next to the clean pass's report.
//!
//! Cost: a fault pass is a whole catalogue run. The passes run concurrently,
//! each with one stack at a time, so that no more than `jobs` stacks ever run
//! at once across all of them (the clean pass uses all `jobs` itself, before
//! any fault starts). By default a fault's pass stops at its first kill (a
//! trial that failed and had passed cleanly), and the scenarios, then the
//! families, that `docs/faults.md` names as catching it run first, so most
//! passes end at their first trial: the self-test's cost grows with the number of faults, not
//! faults × trials. `full` runs every trial of every pass instead: the row
//! then shows every scenario that catches the fault, not just the first.
//!
//! The honest variants follow, packed into few Core passes (compatible ones
//! share a Core, [`variants::groups`]): a composed pass that refuses reruns
//! its members one by one, so the report still says whose change each
//! refusing trial read.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use futures::StreamExt;
use tokio_util::sync::CancellationToken;

use super::faults::{FaultSpec, Program};
use super::matrix::{CompositionRow, FaultPass, KillMatrix, VariantRow, build, refusals};
use super::render;
use super::variants::{self, VariantSpec};
use crate::binaries::Binaries;
use crate::config::RunConfig;
use crate::error::Result;
use crate::report::model::RunReport;
use crate::report::{manifest, write_files};
use crate::runner::Engine;
use crate::runner::Scenario;
use crate::runner::Verdict;
use crate::runner::events::{Event, EventSink, discard};
use crate::runner::run::now_rfc3339;
use crate::secrets::SecretRegistry;
use crate::stack::Backend;

/// The self-test's report files go here, under the clean pass's report.
pub const DIR: &str = "selftest";

/// What a finished self-test leaves behind.
pub struct Outcome {
    /// The matrix.
    pub matrix: KillMatrix,
    /// The clean pass's full report.
    pub clean: RunReport,
    /// Every secret of every pass, for the final scan.
    pub secrets: SecretRegistry,
}

/// What a self-test runs besides the clean pass.
pub struct Plan {
    /// The faults, one pass each.
    pub faults: Vec<FaultSpec>,
    /// The honest variants (`variants::list`), packed into passes.
    pub variants: Vec<VariantSpec>,
    /// Every trial of every fault's pass, not only up to its first kill.
    pub full: bool,
}

/// Runs the clean pass with `clean` (the default build, as `grantgate run`),
/// then every fault and honest variant of `plan` with the faults build, and
/// builds the matrix. `None` when interrupted.
pub async fn run(
    clean: RunConfig,
    catalogue: &[Scenario],
    faults_bins: &Binaries,
    plan: &Plan,
    progress: &EventSink,
    cancel: &CancellationToken,
) -> Result<Option<Outcome>> {
    let (faults, full) = (&plan.faults, plan.full);
    let started_at = now_rfc3339();
    let started = Instant::now();
    let secrets = SecretRegistry::new();
    let jobs = clean.jobs;
    let engine = Engine::prepare(clean.clone()).await?;
    let trials = engine.trials(catalogue);
    let clean_report = engine.run(trials, progress, cancel).await;
    secrets.absorb(engine.secrets());
    engine.shutdown().await;
    if cancel.is_cancelled() {
        return Ok(None);
    }
    println!(
        "selftest: clean pass {} ms; {} fault(s), {jobs} stack(s) at a time",
        clean_report.duration_ms,
        faults.len()
    );
    let passed_clean: Arc<HashSet<String>> = Arc::new(
        clean_report
            .results
            .iter()
            .filter(|r| r.verdict == Verdict::Passed)
            .map(|r| r.name.clone())
            .collect(),
    );
    let faults_started = Instant::now();
    let passes: Vec<Result<FaultPass>> = futures::stream::iter(faults)
        .map(|fault| {
            let config = fault_config(&clean, faults_bins, fault);
            let secrets = secrets.clone();
            let passed_clean = passed_clean.clone();
            async move {
                let engine = Engine::prepare(config).await?;
                let mut trials = engine.trials(catalogue);
                // Stable: within each rank the catalogue's order stands.
                trials.sort_by_key(|t| fault.rank(t.scenario.id, t.scenario.family));
                let selected = trials.len();
                // A child token: Ctrl-C still stops every pass, and the first
                // kill stops only this one (trials not started are left out).
                let stop = cancel.child_token();
                let events = if !full {
                    stop_at_first_kill(stop.clone(), passed_clean)
                } else {
                    discard()
                };
                // One stack at a time: the kill's trial has finished when
                // `stop` fires, and the trials after it never start.
                let report = engine.run_in_order(trials, &events, &stop).await;
                secrets.absorb(engine.secrets());
                engine.shutdown().await;
                let c = report.counts();
                let failed: Vec<&str> = report
                    .results
                    .iter()
                    .filter(|r| matches!(r.verdict, Verdict::Failed { .. }))
                    .map(|r| r.name.as_str())
                    .collect();
                println!(
                    "selftest: {:<40} {} failed, {} errored, {} passed ({} s) {}",
                    fault.name,
                    c.failed,
                    c.errored,
                    c.passed,
                    report.duration_ms / 1000,
                    failed.join(" ")
                );
                Ok(FaultPass {
                    fault: fault.clone(),
                    report,
                    trials_selected: selected,
                })
            }
        })
        .buffer_unordered(jobs)
        .collect()
        .await;
    if cancel.is_cancelled() {
        return Ok(None);
    }
    let mut passes = passes.into_iter().collect::<Result<Vec<_>>>()?;
    passes.sort_by_key(|p| faults.iter().position(|f| f.name == p.fault.name));
    let variants_started = Instant::now();
    let (variant_rows, compositions) = honest_variants(
        &clean,
        catalogue,
        faults_bins,
        &plan.variants,
        &secrets,
        cancel,
    )
    .await?;
    if cancel.is_cancelled() {
        return Ok(None);
    }
    println!(
        "selftest: faults {} s, honest variants {} s",
        (variants_started - faults_started).as_secs(),
        variants_started.elapsed().as_secs()
    );
    let mut matrix = build(
        &started_at,
        started.elapsed().as_millis() as u64,
        &clean_report,
        &passes,
    );
    matrix.variants = variant_rows;
    matrix.compositions = compositions;
    Ok(Some(Outcome {
        matrix,
        clean: clean_report,
        secrets,
    }))
}

/// Runs the whole catalogue against the honest variants of the faults
/// build's Core, compatible ones together, one pass at a time with `jobs`
/// stacks; every trial must pass. A composed pass that refuses is rerun
/// member by member; its row then names whose change each refusing trial
/// read. Returns one row per variant (listing order) and the composed
/// passes that refused.
async fn honest_variants(
    clean: &RunConfig,
    catalogue: &[Scenario],
    bins: &Binaries,
    specs: &[VariantSpec],
    secrets: &SecretRegistry,
    cancel: &CancellationToken,
) -> Result<(Vec<VariantRow>, Vec<CompositionRow>)> {
    let groups = variants::groups(specs);
    println!(
        "selftest: {} honest variant(s) in {} Core pass(es)",
        specs.len(),
        groups.len()
    );
    let pass = |names: Vec<String>| async move {
        let engine = Engine::prepare(variants::config(clean, bins, &names)).await?;
        let trials = engine.trials(catalogue);
        let report = engine.run(trials, &discard(), cancel).await;
        secrets.absorb(engine.secrets());
        engine.shutdown().await;
        let refused = refusals(&report);
        let trials: Vec<&str> = refused.iter().map(|c| c.trial.as_str()).collect();
        println!(
            "selftest: honest variant {:<26} {} of {} trials passed ({} s) {}",
            names.join(","),
            report.results.len() - refused.len(),
            report.results.len(),
            report.duration_ms / 1000,
            trials.join(" ")
        );
        Ok::<_, crate::error::HarnessError>(report)
    };
    let mut rows = Vec::new();
    let mut compositions = Vec::new();
    for group in groups {
        if cancel.is_cancelled() {
            break;
        }
        let report = pass(group.clone()).await?;
        if group.len() == 1 || refusals(&report).is_empty() {
            rows.extend(group.iter().map(|n| VariantRow::of(n, &group, &report)));
            continue;
        }
        println!(
            "selftest: the pass of {} refused the Core: each of them alone now, to name whose \
             change the refusing trials read",
            group.join(",")
        );
        let mut alone = Vec::new();
        for name in &group {
            let one = vec![name.clone()];
            let report = pass(one.clone()).await?;
            alone.push(VariantRow::of(name, &one, &report));
        }
        let composition = CompositionRow::of(&group, &report, &alone);
        for b in &composition.not_passed {
            println!(
                "selftest: composed {} refused by {}: read {}",
                group.join(","),
                b.cell.trial,
                if b.read.is_empty() {
                    "no member alone: only their combination".to_owned()
                } else {
                    b.read.join(", ")
                }
            );
        }
        compositions.push(composition);
        rows.extend(alone);
    }
    rows.sort_by_key(|r| specs.iter().position(|s| s.name == r.name));
    Ok((rows, compositions))
}

/// An event sink that cancels `stop` when a trial fails that passed in the
/// clean pass (a kill).
fn stop_at_first_kill(stop: CancellationToken, passed_clean: Arc<HashSet<String>>) -> EventSink {
    Arc::new(move |event| {
        if let Event::TrialFinished { result } = event
            && matches!(result.verdict, Verdict::Failed { .. })
            && passed_clean.contains(&result.name)
        {
            stop.cancel();
        }
    })
}

/// One fault's run: the faults build, the fault's variable set on its
/// program, its backends, one stack at a time (see the module doc).
fn fault_config(clean: &RunConfig, bins: &Binaries, fault: &FaultSpec) -> RunConfig {
    let env = vec![(fault.program.env().to_owned(), fault.name.clone())];
    let (core_env, adapter_env) = match fault.program {
        Program::Core => (env, Vec::new()),
        Program::Adapter => (Vec::new(), env),
    };
    let backends: Vec<Backend> = fault.backends(&clean.backends);
    RunConfig {
        backends,
        jobs: 1,
        core_bin: Some(bins.core.clone()),
        adapter_bin: Some(bins.adapter.clone()),
        keep: false,
        core_env: [clean.core_env.clone(), core_env].concat(),
        adapter_env: [clean.adapter_env.clone(), adapter_env].concat(),
        browser: if fault.browser {
            crate::browser::BrowserKind::Chromium
        } else {
            clean.browser
        },
        ..clean.clone()
    }
}

/// Writes the clean pass's report to `<root>/<run-id>/` and the matrix to
/// `<root>/<run-id>/selftest/` (`killmatrix.json`, `index.html`,
/// `junit.xml`, `manifest.json`), then scans the whole directory for every
/// pass's secrets. Returns the self-test directory.
pub fn write(outcome: &Outcome, root: &Path) -> Result<PathBuf> {
    let dir = crate::report::write_all(&outcome.clean, root, &outcome.secrets)?;
    let dir = dir.join(DIR);
    std::fs::create_dir_all(&dir).map_err(|e| crate::error::HarnessError::io(&dir, e))?;
    let files = files(&outcome.matrix, &outcome.secrets);
    write_files(&dir, &files)?;
    let manifest = manifest::render(&outcome.matrix.run_id, &files);
    write_files(&dir, &[("manifest.json".into(), manifest.into_bytes())])?;
    outcome.secrets.scan_dir(&dir)?;
    Ok(dir)
}

/// The rendered self-test files, by name.
pub fn files(matrix: &KillMatrix, secrets: &SecretRegistry) -> Vec<(String, Vec<u8>)> {
    vec![
        (
            "killmatrix.json".into(),
            render::json(matrix, secrets).into_bytes(),
        ),
        (
            "index.html".into(),
            render::html(matrix, secrets).into_bytes(),
        ),
        (
            "junit.xml".into(),
            render::junit(matrix, secrets).into_bytes(),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::selftest::matrix::tests::example;

    #[test]
    fn the_selftest_files_match_their_snapshots() {
        let secrets = SecretRegistry::new();
        for (name, bytes) in files(&example(), &secrets) {
            crate::report::write::tests::snapshot(
                &format!("selftest-{name}"),
                &String::from_utf8(bytes).unwrap(),
            );
        }
    }

    #[test]
    fn a_core_fault_sets_core_fault_on_the_faults_build_one_stack_at_a_time() {
        let clean = RunConfig::builder().jobs(4).build();
        let bins = Binaries {
            core: "/f/refcore".into(),
            adapter: "/f/awg-mcp".into(),
        };
        let mut fault =
            crate::selftest::faults::parse_listing(Program::Adapter, "adapter-retries-post\tany")
                .unwrap()
                .remove(0);
        let c = fault_config(&clean, &bins, &fault);
        assert_eq!(c.jobs, 1);
        assert_eq!(c.backends, [Backend::Sqlite]);
        assert_eq!(c.core_bin.as_deref(), Some(Path::new("/f/refcore")));
        assert!(c.core_env.is_empty());
        assert_eq!(
            c.adapter_env,
            [("AWG_FAULT".to_owned(), "adapter-retries-post".to_owned())]
        );
        fault.program = Program::Core;
        fault.active_on = Some(Backend::Sqlite);
        let c = fault_config(&clean, &bins, &fault);
        assert_eq!(c.backends, Backend::ALL);
        assert_eq!(c.core_env[0].0, "CORE_FAULT");
    }

    #[test]
    fn the_first_kill_stops_a_pass_but_an_error_or_a_clean_failure_does_not() {
        let stop = CancellationToken::new();
        let clean: HashSet<String> = ["sqlite::a".to_owned()].into();
        let sink = stop_at_first_kill(stop.clone(), Arc::new(clean));
        let finished = |name: &str, verdict: Verdict| {
            let mut r = crate::report::model::tests::sample().results[0].clone();
            r.name = name.into();
            r.verdict = verdict;
            Event::TrialFinished {
                result: Box::new(r),
            }
        };
        sink(finished(
            "sqlite::a",
            Verdict::Errored {
                message: "x".into(),
            },
        ));
        sink(finished(
            "sqlite::b",
            Verdict::Failed {
                message: "x".into(),
            },
        ));
        sink(finished("sqlite::a", Verdict::Passed));
        assert!(!stop.is_cancelled());
        sink(finished(
            "sqlite::a",
            Verdict::Failed {
                message: "x".into(),
            },
        ));
        assert!(stop.is_cancelled());
    }
}
