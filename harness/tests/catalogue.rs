//! The acceptance catalogue under `cargo test`: one libtest-mimic trial per
//! scenario and backend, named `backend::scenario` (filterable, and
//! compatible with nextest). The report of the run is written to
//! `target/grantgate-reports/` (or `$GRANTGATE_REPORT_DIR`).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use grantgate::config::RunConfig;
use grantgate::report::model::{RunReport, ScenarioResult};
use grantgate::runner::catalogue::trials;
use grantgate::runner::events::discard;
use grantgate::runner::{Engine, Verdict};
use grantgate::stack::Backend;
use libtest_mimic::{Arguments, Failed, Trial};

fn main() {
    let args = Arguments::from_args();
    let catalogue = grantgate::scenarios::catalogue();
    let all = trials(&catalogue, &Backend::ALL, None);
    let listed: Vec<Trial> = all
        .iter()
        .map(|t| Trial::test(t.name(), || Ok(())))
        .collect();
    let selected: Vec<_> = all
        .iter()
        .zip(&listed)
        .filter(|(_, l)| !args.is_filtered_out(l) && !args.list)
        .map(|(t, _)| t.clone())
        .collect();
    if selected.is_empty() {
        // Listing, or nothing selected: no stack, no cluster.
        libtest_mimic::run(&args, listed).exit();
    }
    let mut backends: Vec<Backend> = selected.iter().map(|t| t.backend).collect();
    backends.dedup();
    let rt = Arc::new(tokio::runtime::Runtime::new().expect("tokio runtime"));
    let config = RunConfig::builder()
        .backends(backends)
        .jobs(selected.len())
        .build();
    let engine = match rt.block_on(Engine::prepare(config)) {
        Ok(e) => Arc::new(e),
        Err(e) => {
            eprintln!("error: cannot prepare the catalogue run: {e}");
            std::process::exit(2);
        }
    };
    let results: Arc<Mutex<Vec<ScenarioResult>>> = Arc::default();
    // Ctrl-C aborts the running trials, which tear their stacks down; the
    // trials not yet started end at once as errored.
    let cancel = {
        let _guard = rt.enter();
        grantgate::runner::signals::cancel_on_signals()
    };
    let runnable: Vec<Trial> = all
        .into_iter()
        .map(|t| {
            let (rt, engine, results, cancel) =
                (rt.clone(), engine.clone(), results.clone(), cancel.clone());
            Trial::test(t.name(), move || {
                let result = rt.block_on(engine.run_trial(&t, &discard(), &cancel));
                let verdict = result.verdict.clone();
                results.lock().unwrap().push(result);
                match verdict {
                    Verdict::Passed => Ok(()),
                    Verdict::Failed { message } => Err(Failed::from(message)),
                    Verdict::Errored { message } => Err(Failed::from(format!(
                        "ERRORED (harness or environment, not the Core): {message}"
                    ))),
                }
            })
        })
        .collect();
    let started = std::time::Instant::now();
    let started_at = grantgate::runner::run::now_rfc3339();
    let conclusion = libtest_mimic::run(&args, runnable);
    let interrupted = cancel.is_cancelled();
    let results = std::mem::take(&mut *results.lock().unwrap());
    let report = RunReport {
        run_id: engine.run_id().to_owned(),
        started_at,
        duration_ms: started.elapsed().as_millis() as u64,
        environment: rt.block_on(engine.environment(&results)),
        results,
    };
    let root = std::env::var_os("GRANTGATE_REPORT_DIR")
        .map(PathBuf::from)
        .or_else(|| {
            grantgate::binaries::target_profile_dir()
                .and_then(|d| d.parent().map(|p| p.join("grantgate-reports")))
        })
        .unwrap_or_else(|| PathBuf::from("reports"));
    let leak = match grantgate::report::write_all(&report, &root, engine.secrets()) {
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
        engine.shutdown();
    }
    if interrupted {
        std::process::exit(130);
    }
    if leak {
        std::process::exit(1);
    }
    conclusion.exit();
}
