//! The page in a real browser: a failing report is written as a run writes
//! it, loaded in headless Chromium, and the rendered DOM must hold the
//! verdict banner, the failure section and the failing exchange, open.
//! (Chromium as [`crate::chromium`] finds it.)

use crate::chromium::dump_dom;
use crate::report::model::tests::sample;
use crate::report::write_all;
use crate::secrets::SecretRegistry;

#[test]
fn a_failing_report_shows_its_banner_failures_and_open_failing_exchange_in_chromium() {
    let root = tempfile::tempdir().unwrap();
    let dir = write_all(&sample(), root.path(), &SecretRegistry::new()).unwrap();
    let dom = dump_dom(
        &dir.join("index.html"),
        &root.path().join("chromium-profile"),
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
