//! The page in a real browser: a failing report is written as a run writes
//! it, loaded in headless Chromium, and the rendered DOM must hold the
//! verdict banner, the failure section and the failing exchange, open.
//!
//! Chromium is a test dependency from Debian's packages (`.ci/run` installs
//! it). Without it this test fails, naming the install command: a browser
//! check that silently skips is no check.

use std::path::PathBuf;
use std::process::Command;

use crate::report::model::tests::sample;
use crate::report::write_all;
use crate::secrets::SecretRegistry;

/// Chromium's binary: `$GRANTGATE_CHROMIUM`, else `chromium` or
/// `chromium-browser` on `PATH`.
fn chromium() -> PathBuf {
    if let Some(p) = std::env::var_os("GRANTGATE_CHROMIUM") {
        return PathBuf::from(p);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        for name in ["chromium", "chromium-browser"] {
            if dir.join(name).is_file() {
                return dir.join(name);
            }
        }
    }
    panic!(
        "Chromium is needed to check the HTML report in a real browser and is not installed: \
         run `apt-get install -y chromium` (Debian), or set GRANTGATE_CHROMIUM to its binary"
    );
}

#[test]
fn a_failing_report_shows_its_banner_failures_and_open_failing_exchange_in_chromium() {
    let browser = chromium();
    let root = tempfile::tempdir().unwrap();
    let dir = write_all(&sample(), root.path(), &SecretRegistry::new()).unwrap();
    let page = dir.join("index.html");
    let profile = root.path().join("chromium-profile");
    let out = Command::new(&browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-dev-shm-usage",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap_or_else(|e| panic!("could not start {browser:?}: {e}"));
    let dom = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && dom.contains("</html>"),
        "{browser:?} did not render {page:?} ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    // What the browser built, not the bytes written: the parser has run.
    assert!(
        dom.contains("<div class=\"banner failed\" id=\"verdict\">GATE FAILED"),
        "no verdict banner in the rendered DOM:\n{dom}"
    );
    assert!(
        dom.contains("<section id=\"failures\"><h2>Failures (3)</h2>"),
        "no failure section in the rendered DOM:\n{dom}"
    );
    assert!(
        dom.contains("<details class=\"ex failing\" open=\"\">"),
        "the failing exchange is not open in the rendered DOM:\n{dom}"
    );
    assert!(!dom.contains("<script"), "the page runs no scripts");
}
