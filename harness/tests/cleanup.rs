//! Cleanup of the engine itself: after a scenario panics and after Ctrl-C
//! (SIGINT) mid-run, no process, directory or database of the run remains.
//!
//! Each test runs the real `grantgate` binary with the engine's hidden
//! self-test scenarios (`GRANTGATE_ENGINE_SCENARIOS=1`) and a private TMPDIR,
//! so that everything the run creates lives under one path we can look for:
//! in the filesystem, and in every process's command line, environment and
//! working directory. Databases on an existing server are checked by name.

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use grantgate::postgres::PgCluster;
use sqlx::Connection;

/// A private TMPDIR that the `postgres` user can traverse (the ephemeral
/// cluster's server runs as that user).
fn private_tmp() -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("gg-cleanup-test-")
        .tempdir()
        .unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

/// The Core and adapter, built once for all tests (the runs below then skip
/// their own build step).
fn binaries() -> &'static grantgate::binaries::Binaries {
    static BINARIES: std::sync::OnceLock<grantgate::binaries::Binaries> =
        std::sync::OnceLock::new();
    BINARIES
        .get_or_init(|| grantgate::binaries::locate(None, None).unwrap_or_else(|e| panic!("{e}")))
}

fn grantgate(tmp: &Path, filter: &str, postgres_url: Option<&str>) -> Command {
    let bins = binaries();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_grantgate"));
    cmd.args(["run", "--filter", filter, "--jobs", "2", "--report-dir"])
        .arg(tmp.join("reports"))
        .arg("--core-bin")
        .arg(&bins.core)
        .arg("--adapter-bin")
        .arg(&bins.adapter)
        .env("GRANTGATE_NO_BUILD", "1")
        .env("TMPDIR", tmp)
        .env("GRANTGATE_ENGINE_SCENARIOS", "1")
        .env_remove("GRANTGATE_POSTGRES_URL");
    if let Some(url) = postgres_url {
        cmd.args(["--postgres-url", url]);
    }
    cmd
}

/// Processes whose command line, environment or working directory mention
/// `needle`, other than ourselves.
fn processes_mentioning(needle: &str) -> Vec<String> {
    let me = std::process::id().to_string();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let pid = entry.file_name().to_string_lossy().into_owned();
        if !pid.chars().all(|c| c.is_ascii_digit()) || pid == me {
            continue;
        }
        let base = entry.path();
        let cmdline = std::fs::read(base.join("cmdline")).unwrap_or_default();
        let environ = std::fs::read(base.join("environ")).unwrap_or_default();
        let cwd = std::fs::read_link(base.join("cwd")).unwrap_or_default();
        let text = |b: &[u8]| String::from_utf8_lossy(b).replace('\0', " ");
        if text(&cmdline).contains(needle)
            || text(&environ).contains(needle)
            || cwd.to_string_lossy().contains(needle)
        {
            found.push(format!("{pid}: {}", text(&cmdline)));
        }
    }
    found
}

/// Asserts nothing of the run remains: no process mentions the TMPDIR and
/// nothing but the reports is left in it.
fn assert_nothing_left(tmp: &Path) {
    let needle = tmp.to_string_lossy().into_owned();
    // Teardown is synchronous before exit, but the kernel may take a moment
    // to reap killed processes; poll briefly rather than sleep blindly.
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut procs = processes_mentioning(&needle);
    while !procs.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
        procs = processes_mentioning(&needle);
    }
    assert!(procs.is_empty(), "processes left behind: {procs:#?}");
    let left: Vec<String> = std::fs::read_dir(tmp)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "reports")
        .collect();
    assert!(left.is_empty(), "left in TMPDIR: {left:?}");
}

async fn run_databases(cluster: &PgCluster) -> Vec<String> {
    let mut conn = sqlx::PgConnection::connect(&cluster.url("postgres"))
        .await
        .unwrap();
    let rows: Vec<(String,)> =
        sqlx::query_as("SELECT datname FROM pg_database WHERE datname LIKE 'gg\\_%'")
            .fetch_all(&mut conn)
            .await
            .unwrap();
    rows.into_iter().map(|(n,)| n).collect()
}

fn report_json(tmp: &Path) -> serde_json::Value {
    let reports = tmp.join("reports");
    let run = std::fs::read_dir(&reports)
        .unwrap()
        .flatten()
        .next()
        .expect("a report directory");
    serde_json::from_slice(&std::fs::read(run.path().join("report.json")).unwrap()).unwrap()
}

fn check_panic_run(tmp: &Path, postgres_url: Option<&str>) {
    let out = grantgate(tmp, "engine_panics", postgres_url)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(2),
        "errored trials exit 2\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    let report = report_json(tmp);
    let results = report["results"].as_array().unwrap();
    assert_eq!(results.len(), 2, "both backends ran: {stdout}");
    for r in results {
        assert_eq!(r["verdict"]["verdict"], "errored", "{r}");
        let message = r["verdict"]["message"].as_str().unwrap();
        assert!(message.contains("panicked"), "{message}");
        assert!(message.contains("deliberate panic"), "{message}");
    }
    assert_nothing_left(tmp);
}

#[test]
fn a_panicking_scenario_leaves_nothing_behind_with_the_ephemeral_cluster() {
    let tmp = private_tmp();
    check_panic_run(tmp.path(), None);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_panicking_scenario_drops_its_database_on_an_existing_server() {
    let server = PgCluster::start().unwrap();
    let tmp = private_tmp();
    let url = server.url("postgres");
    let path = tmp.path().to_owned();
    tokio::task::spawn_blocking(move || check_panic_run(&path, Some(&url)))
        .await
        .unwrap();
    assert_eq!(run_databases(&server).await, Vec::<String>::new());
}

/// Starts a hanging run, waits until both trials hang inside their
/// scenario (stack, fixtures and an adapter up), sends SIGINT, and expects
/// exit code 130.
fn check_sigint_run(tmp: &Path, postgres_url: Option<&str>) {
    let mut child = grantgate(tmp, "engine_hangs", postgres_url)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut hanging = 0;
    let mut seen = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(120);
    while hanging < 2 {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) => {
                if line.contains("grantgate-selftest: hanging") {
                    hanging += 1;
                }
                seen.push(line);
            }
            Err(_) => {
                let _ = child.kill();
                panic!("the run never reached its hanging scenarios: {seen:#?}");
            }
        }
    }
    // Mid-run, the stacks exist: the check below would fail if teardown did
    // nothing.
    assert!(
        !processes_mentioning(&tmp.to_string_lossy()).is_empty(),
        "expected running stacks before SIGINT"
    );
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if started.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            panic!("grantgate did not exit within 30 s of SIGINT");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(130), "interrupted runs exit 130");
    let report = report_json(tmp);
    for r in report["results"].as_array().unwrap() {
        assert_eq!(r["verdict"]["verdict"], "errored", "{r}");
    }
    assert_nothing_left(tmp);
}

#[test]
fn sigint_mid_run_leaves_nothing_behind_with_the_ephemeral_cluster() {
    let tmp = private_tmp();
    check_sigint_run(tmp.path(), None);
}

#[tokio::test(flavor = "multi_thread")]
async fn sigint_mid_run_drops_the_databases_on_an_existing_server() {
    let server = PgCluster::start().unwrap();
    let tmp = private_tmp();
    let url = server.url("postgres");
    let path = tmp.path().to_owned();
    tokio::task::spawn_blocking(move || check_sigint_run(&path, Some(&url)))
        .await
        .unwrap();
    assert_eq!(run_databases(&server).await, Vec::<String>::new());
}
