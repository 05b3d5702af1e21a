//! The acceptance catalogue under `cargo test`: one libtest-mimic trial per
//! scenario and backend, named `backend::scenario`, plus `parity::scenario`
//! for scenarios whose observations must agree across backends (filterable,
//! and compatible with nextest). The run's report is written to
//! `target/grantgate-reports/` (or `$GRANTGATE_REPORT_DIR`).

use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use grantgate_engine::config::RunConfig;
use grantgate_engine::report::model::{RunReport, ScenarioResult};
use grantgate_engine::runner::catalogue::{Scenario, trials};
use grantgate_engine::runner::events::discard;
use grantgate_engine::runner::{Engine, Verdict, parity};
use grantgate_engine::stack::Backend;
use libtest_mimic::{Arguments, Failed, Trial};

/// Results of finished trials, and a signal for parity trials waiting on them.
type Shared = Arc<(Mutex<Vec<ScenarioResult>>, Condvar)>;

fn verdict_to_trial(verdict: Verdict) -> Result<(), Failed> {
    match verdict {
        Verdict::Passed => Ok(()),
        Verdict::Failed { message } => Err(Failed::from(message)),
        Verdict::Errored { message } => Err(Failed::from(format!(
            "ERRORED (harness or environment, not the Core): {message}"
        ))),
        // refcore declares every extension the catalogue uses: a scenario
        // that is not applicable to it is a gap, never a pass.
        Verdict::NotApplicable { message } => Err(Failed::from(format!(
            "NOT APPLICABLE to refcore: {message}"
        ))),
        // Only a parity check whose backend trial did not pass: that one
        // fails already; this says why the check was not run.
        Verdict::NotRun { message } => Err(Failed::from(format!("NOT RUN: {message}"))),
    }
}

fn main() {
    let args = Arguments::from_args();
    let mut catalogue = grantgate_scenarios::catalogue();
    catalogue.extend(grantgate_engine::runner::probes::scenarios());
    let all = trials(&catalogue, &Backend::ALL, None);
    let parity_scenarios: Vec<Scenario> = catalogue.iter().filter(|s| s.parity).cloned().collect();
    let probe = |name: String| Trial::test(name, || Ok(()));
    let selected = |name: String| !args.list && !args.is_filtered_out(&probe(name));
    let chosen: Vec<_> = all.iter().filter(|t| selected(t.name())).cloned().collect();
    let parity_chosen = parity_scenarios.iter().any(|s| selected(s.parity_trial()));
    if chosen.is_empty() && !parity_chosen {
        // Listing, or no scenario selected: no stack, no cluster.
        let mut listed: Vec<Trial> = all.iter().map(|t| probe(t.name())).collect();
        listed.extend(parity_scenarios.iter().map(|s| probe(s.parity_trial())));
        libtest_mimic::run(&args, listed).exit();
    }
    // A parity trial needs every backend, whatever else is selected.
    let backends: Vec<Backend> = if parity_chosen {
        Backend::ALL.to_vec()
    } else {
        let mut b: Vec<Backend> = chosen.iter().map(|t| t.backend).collect();
        b.dedup();
        b
    };
    let rt = Arc::new(tokio::runtime::Runtime::new().expect("tokio runtime"));
    let config = RunConfig::builder()
        .backends(backends)
        .jobs(chosen.len())
        // The real-browser scenarios run in headless Chromium (the others
        // at the HTTP level): never not applicable here.
        .real_browser_scenarios(true)
        .build();
    let engine = match rt.block_on(Engine::prepare(config)) {
        Ok(e) => Arc::new(e),
        Err(e) => {
            eprintln!("error: cannot prepare the catalogue run: {e}");
            std::process::exit(2);
        }
    };
    let shared: Shared = Arc::default();
    // Ctrl-C aborts the running trials, which tear their stacks down; the
    // trials not yet started end at once as errored.
    let cancel = {
        let _guard = rt.enter();
        grantgate_engine::runner::signals::cancel_on_signals()
    };
    let mut runnable: Vec<Trial> = all
        .iter()
        .cloned()
        .map(|t| {
            let (rt, engine, shared, cancel) =
                (rt.clone(), engine.clone(), shared.clone(), cancel.clone());
            Trial::test(t.name(), move || {
                let result = rt.block_on(engine.run_trial(&t, &discard(), &cancel));
                let verdict = result.verdict.clone();
                shared.0.lock().unwrap().push(result);
                shared.1.notify_all();
                verdict_to_trial(verdict)
            })
        })
        .collect();
    // Parity trials come last: libtest-mimic starts trials in list order, so
    // every selected backend trial has started before a parity trial waits
    // for it. Backend trials not selected in this process (a filter, or
    // nextest running each trial alone) are run by the parity trial itself.
    for scenario in parity_scenarios {
        let name = scenario.parity_trial();
        let missing: Vec<_> = all
            .iter()
            .filter(|t| t.scenario.id == scenario.id && !selected(t.name()))
            .cloned()
            .collect();
        let (rt, engine, shared, cancel) =
            (rt.clone(), engine.clone(), shared.clone(), cancel.clone());
        runnable.push(Trial::test(name, move || {
            let sink = discard();
            let own = rt.block_on(futures::future::join_all(
                missing.iter().map(|t| engine.run_trial(t, &sink, &cancel)),
            ));
            let (lock, signal) = &*shared;
            let mut done = lock.lock().unwrap();
            done.extend(own);
            loop {
                let ran: Vec<&ScenarioResult> =
                    done.iter().filter(|r| r.scenario == scenario.id).collect();
                if ran.len() >= Backend::ALL.len() {
                    let result = parity::compare(&scenario, &ran);
                    let verdict = result.verdict.clone();
                    done.push(result);
                    return verdict_to_trial(verdict);
                }
                if cancel.is_cancelled() {
                    return Err(Failed::from("interrupted before every backend ran"));
                }
                done = signal
                    .wait_timeout(done, Duration::from_millis(500))
                    .unwrap()
                    .0;
            }
        }));
    }
    let started = std::time::Instant::now();
    let started_at = grantgate_engine::runner::run::now_rfc3339();
    let conclusion = libtest_mimic::run(&args, runnable);
    let interrupted = cancel.is_cancelled();
    let results = std::mem::take(&mut *shared.0.lock().unwrap());
    let report = RunReport {
        run_id: engine.run_id().to_owned(),
        started_at,
        duration_ms: started.elapsed().as_millis() as u64,
        environment: rt.block_on(engine.environment(&results)),
        invocation: engine.invocation(&results),
        results,
        stopped: None,
        baseline: None,
    };
    let root = std::env::var_os("GRANTGATE_REPORT_DIR")
        .map(PathBuf::from)
        .or_else(|| {
            grantgate_engine::binaries::target_profile_dir()
                .and_then(|d| d.parent().map(|p| p.join("grantgate-reports")))
        })
        .unwrap_or_else(|| PathBuf::from("reports"));
    // Values in the contract's words: a report holding Rust `Debug` text
    // fails the run, naming where.
    let debug = grantgate_engine::report::words::rust_debug_text(&report);
    for line in debug.iter().take(20) {
        eprintln!("error: Rust Debug text in the report: {line}");
    }
    let leak = match grantgate_engine::report::write_all(&report, &root, engine.secrets()) {
        Ok(dir) => {
            eprintln!("report: {}", dir.join("index.html").display());
            false
        }
        Err(e) => {
            eprintln!("error: {e}");
            true
        }
    };
    // The last handle: stopping the engine stops the PostgreSQL cluster.
    if let Ok(engine) = Arc::try_unwrap(engine) {
        rt.block_on(engine.shutdown());
    }
    if interrupted {
        std::process::exit(130);
    }
    if leak || !debug.is_empty() {
        std::process::exit(1);
    }
    conclusion.exit();
}
