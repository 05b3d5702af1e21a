//! refcore's integration tests: every trial runs once per backend, as
//! `sqlite::name` and `postgres::name`, against a real refcore child over
//! loopback HTTP. One ephemeral PostgreSQL cluster serves the whole binary
//! and is stopped when the run ends (libtest-mimic, so that teardown runs).

mod cases;
mod support;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use grantgate_engine::postgres::PgCluster;
use libtest_mimic::{Arguments, Failed, Trial};

use support::TestResult;
use support::core::Backend;
use support::world::Env;

/// A test body: gets its backend's shared stack.
pub type TestFn = fn(Arc<Env>) -> Pin<Box<dyn Future<Output = TestResult>>>;

fn main() {
    let args = Arguments::from_args();
    let runtime = Arc::new(
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(4)
            .enable_all()
            .build()
            .expect("tokio runtime"),
    );
    let cluster = match PgCluster::start() {
        Ok(c) => Arc::new(c),
        Err(e) => {
            eprintln!(
                "refcore tests need PostgreSQL 15 server binaries to start an ephemeral cluster: {e}"
            );
            std::process::exit(101);
        }
    };
    let mut envs = Vec::new();
    for backend in [Backend::Sqlite, Backend::Postgres] {
        let pg = (backend == Backend::Postgres).then(|| cluster.clone());
        match runtime.block_on(Env::start(backend, pg)) {
            Ok(env) => envs.push(Arc::new(env)),
            Err(e) => {
                eprintln!("could not start refcore on {}: {e}", backend.name());
                std::process::exit(101);
            }
        }
    }
    let mut trials = Vec::new();
    for env in &envs {
        for (name, test) in cases::all() {
            let env = env.clone();
            let runtime = runtime.clone();
            let full = format!("{}::{name}", env.backend.name());
            trials.push(Trial::test(full, move || {
                runtime.block_on(test(env.clone())).map_err(|msg| {
                    Failed::from(format!(
                        "{msg}\n--- refcore stderr tail ---\n{}",
                        tail(&env.core.stderr())
                    ))
                })
            }));
        }
    }
    if trials.is_empty() {
        eprintln!("no refcore trials discovered");
        std::process::exit(101);
    }
    let conclusion = libtest_mimic::run(&args, trials);
    // Stop the Cores before the cluster they use, then the cluster.
    drop(envs);
    drop(cluster);
    drop(runtime);
    conclusion.exit();
}

fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(15)..].join("\n")
}
