//! The JUnit files grantgate writes are valid against the format Jenkins and
//! GitLab read (`tests/data/junit.xsd`), checked with `xmllint`. The files
//! checked are the writers' snapshots, which the report tests keep equal to
//! what the pure builders produce: a run with a failure, an error and a
//! parity result, and a self-test with kills, survivors and honest variants.

use std::path::Path;
use std::process::Command;

fn validate(file: &str) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let schema = root.join("tests/data/junit.xsd");
    let xml = root.join("src/report/snapshots").join(file);
    let out = Command::new("xmllint")
        .arg("--noout")
        .arg("--schema")
        .arg(&schema)
        .arg(&xml)
        .output()
        .unwrap_or_else(|e| {
            panic!("xmllint did not run ({e}); install it: apt-get install libxml2-utils")
        });
    assert!(
        out.status.success(),
        "{file} is not valid JUnit:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_run_junit_is_valid() {
    validate("junit.xml");
}

#[test]
fn the_selftest_junit_is_valid() {
    validate("selftest-junit.xml");
}
