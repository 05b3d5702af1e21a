//! A Core that stops answering mid-trial fails that trial in bounded time and
//! never hangs the run: it never answers, answers one byte a second, or dies
//! (then the failure names its exit).
//!
//! The Core here is a fake (`--core-bin`): a small Python server that keeps
//! the launch contract (prints `core listening on`, answers `/api/healthz`)
//! and then misbehaves on every other request, as `FAKE_CORE_MODE` says.
//!
//! Each exchange is given [`LIMIT`] (`--exchange-timeout`) instead of the
//! production [`EXCHANGE_TIMEOUT`] (30 s, whose value `grantgate`'s own unit
//! tests pin): the verdicts are the same, the waits a tenth.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use grantgate_engine::limits::EXCHANGE_TIMEOUT;

/// The fake Core. `silent`: reads each request and never answers. `trickle`:
/// answers one byte a second, forever. `dies`: exits at the first request
/// that is not a health check, leaving it unanswered.
const FAKE_CORE: &str = r#"#!/usr/bin/env python3
import os, sys, time, socket
from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler

MODE = os.environ.get("FAKE_CORE_MODE", "silent")

class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def misbehave(self):
        if self.path == "/api/healthz":
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")
            return
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        if MODE == "dies":
            os._exit(1)
        if MODE == "trickle":
            for byte in b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + b"x" * 100000:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(1)
        time.sleep(3600)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = misbehave

host, port = os.environ["CORE_LISTEN"].rsplit(":", 1)
server = ThreadingHTTPServer((host, int(port)), Handler)
server.daemon_threads = True
print("core listening on http://%s:%d" % server.server_address, flush=True)
server.serve_forever()
"#;

/// The exchange limit these runs set.
const LIMIT: Duration = Duration::from_secs(3);

fn fake_core(dir: &Path) -> PathBuf {
    let path = dir.join("fake-core");
    std::fs::write(&path, FAKE_CORE).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// Runs one engine probe trial on SQLite against the fake Core in `mode`;
/// returns the exit code, the wall time and the trial's verdict.
fn run_against(mode: &str) -> (Option<i32>, Duration, serde_json::Value) {
    let tmp = tempfile::tempdir().unwrap();
    let core = fake_core(tmp.path());
    let adapter = grantgate_engine::binaries::locate(None, None)
        .unwrap_or_else(|e| panic!("{e}"))
        .adapter;
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_grantgate"))
        .args(["run", "--filter", "engine_fails", "--backend", "sqlite"])
        .arg("--core-bin")
        .arg(&core)
        .arg("--adapter-bin")
        .arg(&adapter)
        .args(["--core-env", &format!("FAKE_CORE_MODE={mode}")])
        .args(["--exchange-timeout", &LIMIT.as_secs().to_string()])
        .arg("--report-dir")
        .arg(tmp.path().join("reports"))
        .env("GRANTGATE_NO_BUILD", "1")
        .env("GRANTGATE_ENGINE_SCENARIOS", "1")
        .env("TMPDIR", tmp.path())
        .output()
        .unwrap();
    let took = started.elapsed();
    let run = std::fs::read_dir(tmp.path().join("reports"))
        .unwrap()
        .flatten()
        .next()
        .unwrap_or_else(|| panic!("no report: {out:?}"));
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.path().join("report.json")).unwrap()).unwrap();
    (
        out.status.code(),
        took,
        report["results"][0]["verdict"].clone(),
    )
}

/// The bound: the fixture snapshot and the trial each wait for one
/// exchange at most, plus start-up and teardown.
fn bound() -> Duration {
    LIMIT * 2 + Duration::from_secs(45)
}

fn check(mode: &'static str) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let (code, took, verdict) = run_against(mode);
        assert_eq!(code, Some(1), "{mode}: a Core that hangs fails: {verdict}");
        assert_eq!(verdict["verdict"], "failed", "{mode}: {verdict}");
        assert!(took < bound(), "{mode}: the run took {took:?}");
        let message = verdict["message"].as_str().unwrap_or_default();
        // A Core that dies is reported by its exit, with its status.
        let expected = match mode {
            "dies" => "exited (exit status: 1)",
            _ => "no answer from the Core: no complete answer within 3s",
        };
        assert!(message.contains(expected), "{mode}: {message}");
    })
}

#[test]
fn a_core_that_hangs_or_dies_mid_trial_fails_the_trial_in_bounded_time() {
    assert_eq!(
        EXCHANGE_TIMEOUT,
        Duration::from_secs(30),
        "the production limit"
    );
    // In parallel: each mode mostly waits on a timeout.
    let runs = [check("silent"), check("trickle"), check("dies")];
    for run in runs {
        if let Err(panic) = run.join() {
            std::panic::resume_unwind(panic);
        }
    }
}
