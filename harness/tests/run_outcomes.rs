//! What a run reports when a trial fails, and what `--keep` leaves running:
//! the real `grantgate` binary with the engine's hidden self-test scenario
//! `engine_fails`, which breaks one expectation on purpose.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn binaries() -> &'static grantgate_engine::binaries::Binaries {
    static BINARIES: std::sync::OnceLock<grantgate_engine::binaries::Binaries> =
        std::sync::OnceLock::new();
    BINARIES.get_or_init(|| {
        grantgate_engine::binaries::locate(None, None).unwrap_or_else(|e| panic!("{e}"))
    })
}

fn run_failing(tmp: &Path, extra: &[&str]) -> Output {
    let bins = binaries();
    Command::new(env!("CARGO_BIN_EXE_grantgate"))
        .args([
            "run",
            "--backend",
            "sqlite",
            "--filter",
            "engine_fails",
            "--report-dir",
        ])
        .arg(tmp.join("reports"))
        .arg("--core-bin")
        .arg(&bins.core)
        .arg("--adapter-bin")
        .arg(&bins.adapter)
        .args(extra)
        .env("TMPDIR", tmp)
        .env("GRANTGATE_NO_BUILD", "1")
        .env("GRANTGATE_ENGINE_SCENARIOS", "1")
        .output()
        .unwrap()
}

fn report_dir(tmp: &Path) -> std::path::PathBuf {
    std::fs::read_dir(tmp.join("reports"))
        .unwrap()
        .flatten()
        .next()
        .expect("a report directory")
        .path()
}

#[test]
fn a_failed_expectation_exits_1_with_a_junit_failure_and_the_step_named() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run_failing(tmp.path(), &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("FAIL    sqlite::engine_fails"),
        "one line per result: {stdout}"
    );
    let dir = report_dir(tmp.path());
    let junit = std::fs::read_to_string(dir.join("junit.xml")).unwrap();
    assert!(
        junit.contains(
            "<failure message=\"step `expect something false`: one equals two: expected 2, got 1\""
        ),
        "{junit}"
    );
    assert!(!junit.contains("<error"), "{junit}");
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
    let result = &report["results"][0];
    assert_eq!(result["verdict"]["verdict"], "failed");
    let step = result["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "expect something false")
        .expect("the step is recorded");
    assert_eq!(step["assertions"][0]["passed"], false);
    assert_eq!(step["assertions"][0]["expected"], "2");
    assert_eq!(step["assertions"][0]["actual"], "1");
    // Where the time went: each phase once, inside the trial's duration.
    let phases = &result["phases"];
    let ms = |k: &str| {
        phases[k]
            .as_u64()
            .unwrap_or_else(|| panic!("{k}: {phases}"))
    };
    assert!(ms("waited_ms") >= 50, "{phases}");
    assert!(ms("scenario_ms") >= ms("waited_ms"), "{phases}");
    assert!(ms("stack_ms") > 0, "{phases}");
    let summed: u64 = [
        "fixtures_ms",
        "stack_ms",
        "scenario_ms",
        "checks_ms",
        "teardown_ms",
    ]
    .iter()
    .map(|k| ms(k))
    .sum();
    assert!(
        summed <= result["duration_ms"].as_u64().unwrap(),
        "{phases}"
    );
    for f in ["index.html", "junit.xml", "report.json", "manifest.json"] {
        assert!(dir.join(f).is_file(), "{f} written");
    }
}

#[test]
fn keep_leaves_the_failed_stack_reachable_and_says_how_without_secrets() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run_failing(tmp.path(), &["--keep"]);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    let line = stdout
        .lines()
        .find(|l| l.starts_with("KEPT    sqlite::engine_fails"))
        .unwrap_or_else(|| panic!("no KEPT line: {stdout}"));
    let core_url = line
        .split("core ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .unwrap()
        .to_owned();
    let pgid: i32 = line
        .rsplit("kill -TERM -")
        .next()
        .and_then(|r| r.trim_end_matches('`').parse().ok())
        .unwrap();
    let dir = line
        .split("dir ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .unwrap()
        .to_owned();
    // Stop the kept Core whatever the assertions below say.
    struct Stop(i32, String);
    impl Drop for Stop {
        fn drop(&mut self) {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(self.0),
                nix::sys::signal::Signal::SIGKILL,
            );
            let _ = std::fs::remove_dir_all(&self.1);
        }
    }
    let _stop = Stop(pgid, dir.clone());
    let health = reqwest::blocking_get(&format!("{core_url}/api/healthz"));
    assert_eq!(health, Some(200), "the kept Core answers at {core_url}");
    let creds_path = Path::new(&dir).join("admin-credentials");
    let creds = std::fs::read_to_string(&creds_path).expect("admin credentials file");
    let mode = std::fs::metadata(&creds_path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let password = creds
        .lines()
        .find_map(|l| l.strip_prefix("password="))
        .unwrap();
    assert!(!stdout.contains(password) && !stderr.contains(password));
    let started = Instant::now();
    nix::sys::signal::killpg(
        nix::unistd::Pid::from_raw(pgid),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    while Path::new(&format!("/proc/{pgid}/status")).exists()
        && !std::fs::read_to_string(format!("/proc/{pgid}/status"))
            .unwrap_or_default()
            .contains("zombie")
        && started.elapsed() < Duration::from_secs(10)
    {
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A tiny blocking GET, so this test needs no runtime of its own.
mod reqwest {
    pub fn blocking_get(url: &str) -> Option<u16> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .ok()?;
        rt.block_on(async { ::reqwest::get(url).await.ok().map(|r| r.status().as_u16()) })
    }
}

#[test]
fn a_core_that_breaks_the_launch_contract_fails_the_trial_and_leaves_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let core = tmp.path().join("broken-core");
    std::fs::write(&core, "#!/bin/sh\necho 'migration 3 failed' >&2\nexit 3\n").unwrap();
    std::fs::set_permissions(&core, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_grantgate"))
        .args(["run", "--exact", "sqlite::full_lifecycle", "--report-dir"])
        .arg(tmp.path().join("reports"))
        .arg("--core-bin")
        .arg(&core)
        .arg("--adapter-bin")
        .arg(&binaries().adapter)
        .env("TMPDIR", tmp.path())
        .env("GRANTGATE_NO_BUILD", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(1),
        "a Core failure exits 1: {stdout}"
    );
    assert!(
        stdout.contains("FAIL    sqlite::full_lifecycle"),
        "{stdout}"
    );
    let junit = std::fs::read_to_string(report_dir(tmp.path()).join("junit.xml")).unwrap();
    assert!(junit.contains("launch contract"), "{junit}");
    assert!(
        junit.contains("migration 3 failed"),
        "the Core's own words: {junit}"
    );
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "reports" && n != "broken-core")
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}
