//! A gate that survives any Core: against script Cores (`--core-bin`) that
//! never listen, die after listening, or leave a process outside their group,
//! and against a trial that never ends, every run ends in bounded time with
//! its verdict, a valid report and nothing left running.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn binaries() -> &'static grantgate_engine::binaries::Binaries {
    static BINARIES: std::sync::OnceLock<grantgate_engine::binaries::Binaries> =
        std::sync::OnceLock::new();
    BINARIES.get_or_init(|| {
        grantgate_engine::binaries::locate(None, None).unwrap_or_else(|e| panic!("{e}"))
    })
}

/// A script Core in `tmp`.
fn script_core(tmp: &Path, script: &str) -> PathBuf {
    let path = tmp.join("script-core");
    std::fs::write(&path, format!("#!/bin/sh\n{script}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// Runs `grantgate run --backend sqlite` against `core` with `extra`
/// arguments; returns the output and the wall time.
fn run(tmp: &Path, core: &Path, extra: &[&str]) -> (Output, Duration) {
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_grantgate"))
        .args(["run", "--backend", "sqlite", "--report-dir"])
        .arg(tmp.join("reports"))
        .arg("--core-bin")
        .arg(core)
        .arg("--adapter-bin")
        .arg(&binaries().adapter)
        .args(extra)
        .env("TMPDIR", tmp)
        .env("GRANTGATE_NO_BUILD", "1")
        .env("GRANTGATE_ENGINE_SCENARIOS", "1")
        .output()
        .unwrap();
    (out, started.elapsed())
}

/// The run's report.json, parsed (which proves it whole).
fn report(tmp: &Path) -> serde_json::Value {
    let dir = tmp.join("reports").join("latest");
    serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap()
}

/// No process mentions `tmp` (command line, environment or working
/// directory) once the run has exited; the kernel gets a moment to reap.
fn assert_nothing_running(tmp: &Path) {
    let needle = tmp.to_string_lossy().into_owned();
    let me = std::process::id().to_string();
    let mentioning = || {
        let mut found = Vec::new();
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let pid = entry.file_name().to_string_lossy().into_owned();
            if !pid.chars().all(|c| c.is_ascii_digit()) || pid == me {
                continue;
            }
            let text = |name: &str| {
                String::from_utf8_lossy(&std::fs::read(entry.path().join(name)).unwrap_or_default())
                    .replace('\0', " ")
            };
            let cwd = std::fs::read_link(entry.path().join("cwd")).unwrap_or_default();
            if text("cmdline").contains(&needle)
                || text("environ").contains(&needle)
                || cwd.to_string_lossy().contains(&needle)
            {
                found.push(format!("{pid}: {}", text("cmdline")));
            }
        }
        found
    };
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut left = mentioning();
    while !left.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
        left = mentioning();
    }
    assert!(left.is_empty(), "processes left running: {left:#?}");
}

/// A Core that never prints its listening line: the whole catalogue stops
/// as "Core unusable" after five stacks in a row, exit 1. Each stack is
/// given 2 s (`--launch-step-timeout`) instead of the production 20 s: the
/// verdict is the same, the wait a tenth.
#[test]
fn a_core_that_never_listens_stops_the_run_as_unusable() {
    let tmp = tempfile::tempdir().unwrap();
    let core = script_core(tmp.path(), "echo 'waiting for nothing'\nexec sleep 3600");
    let (out, took) = run(tmp.path(), &core, &["--launch-step-timeout", "2"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(took < Duration::from_secs(60), "took {took:?}");
    assert!(
        stdout.contains("Core unusable: 5 trials in a row"),
        "{stdout}"
    );
    assert!(
        stdout.contains("did not print `core listening on` within 2s"),
        "{stdout}"
    );
    assert!(stdout.contains("GATE FAILED"), "{stdout}");
    let report = report(tmp.path());
    let stopped = report["stopped"].as_str().unwrap_or_default();
    assert!(stopped.starts_with("Core unusable"), "{stopped}");
    assert!(stopped.contains("trial(s) not run"), "{stopped}");
    // The trials the stop did not start are in the report as not run.
    let results = report["results"].as_array().unwrap();
    let ran = results
        .iter()
        .filter(|r| r["verdict"]["verdict"] != "not_run")
        .count();
    assert!((5..=7).contains(&ran), "{ran} trials ran");
    assert!(
        results.len() > ran,
        "the trials not started are listed as not run"
    );
    assert_nothing_running(tmp.path());
}

/// The production launch limit, once: without `--launch-step-timeout` a
/// Core that never listens is given 20 s. This Core is refcore the first
/// time (the fixture snapshot's stack) and never listens after, so the run
/// waits the limit out once, in the first trials' stacks, and stops as
/// unusable (`--unusable-after 1`).
#[test]
fn the_production_launch_limit_is_twenty_seconds() {
    let tmp = tempfile::tempdir().unwrap();
    let once = tmp.path().join("started-once");
    let core = script_core(
        tmp.path(),
        &format!(
            "[ -e '{once}' ] && exec sleep 3600\ntouch '{once}'\nexec '{refcore}'",
            once = once.display(),
            refcore = binaries().core.display()
        ),
    );
    let (out, took) = run(tmp.path(), &core, &["--unusable-after", "1"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(took >= Duration::from_secs(20), "took {took:?}");
    assert!(took < Duration::from_secs(60), "took {took:?}");
    assert!(stdout.contains("Core unusable"), "{stdout}");
    assert!(
        stdout.contains("did not print `core listening on` within 20s"),
        "{stdout}"
    );
    assert_nothing_running(tmp.path());
}

/// A Core that exits right after printing its listening line is reported
/// with its exit status and its last words, not as refused connections, and
/// the run stops at once as unusable.
#[test]
fn a_core_that_exits_after_listening_is_reported_with_its_status() {
    let tmp = tempfile::tempdir().unwrap();
    let core = script_core(
        tmp.path(),
        "echo 'core listening on http://127.0.0.1:9'\necho 'out of file handles' >&2\nexit 7",
    );
    let (out, took) = run(tmp.path(), &core, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(took < Duration::from_secs(60), "took {took:?}");
    assert!(stdout.contains("exited (exit status: 7)"), "{stdout}");
    assert!(stdout.contains("out of file handles"), "{stdout}");
    assert!(stdout.contains("Core unusable"), "{stdout}");
    assert_nothing_running(tmp.path());
}

/// A Core that starts a helper in a session of its own (out of reach of
/// its process group) leaves nothing running after the run: the harness
/// adopted the orphan and ends it.
#[test]
fn a_process_a_core_starts_outside_its_group_ends_with_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let refcore = binaries().core.display().to_string();
    let core = script_core(
        tmp.path(),
        &format!("setsid sleep 3600 &\nexec '{refcore}'"),
    );
    let (out, _) = run(tmp.path(), &core, &["--exact", "sqlite::full_lifecycle"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert_nothing_running(tmp.path());
}

/// A trial that never ends fails at its deadline with the step it was in,
/// and the run goes on to its report.
#[test]
fn a_trial_past_its_deadline_fails_with_the_step_it_was_in() {
    let tmp = tempfile::tempdir().unwrap();
    let (out, took) = run(
        tmp.path(),
        &binaries().core,
        &["--filter", "engine_hangs", "--trial-timeout", "3"],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(took < Duration::from_secs(30), "took {took:?}");
    let report = report(tmp.path());
    let verdict = &report["results"][0]["verdict"];
    assert_eq!(verdict["verdict"], "failed", "{verdict}");
    let message = verdict["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("the trial deadline (3 s, --trial-timeout) passed in step `"),
        "{message}"
    );
    assert_nothing_running(tmp.path());
}
