//! The composite GitHub Action's shell part, `scripts/action-run`, run as
//! the action runs it (inputs as `INPUT_*`, outputs to `$GITHUB_OUTPUT`)
//! against refcore: a passing selection gives `verdict=partial`, its report
//! directory and the JUnit copy, exit 0; a signing key gives a verifiable
//! attestation; a Core that breaks the launch contract gives
//! `verdict=failed`, exit 1; a bad input gives `verdict=error`, exit 2.

use std::path::Path;
use std::process::{Command, Output};

mod common;
use common::text;

const TRIAL: &str = "sqlite::replay_same_payload_one_issue";

fn script() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/action-run")
}

/// Runs the script in `tmp` with `inputs` (`("CORE_BINARY", …)` sets
/// `INPUT_CORE_BINARY`); returns its output and what it wrote to
/// `$GITHUB_OUTPUT`.
fn action(tmp: &Path, inputs: &[(&str, &str)]) -> (Output, String) {
    let outputs = tmp.join("github-output");
    let _ = std::fs::remove_file(&outputs);
    let mut cmd = Command::new(script());
    cmd.current_dir(tmp)
        .env("GRANTGATE_BIN", env!("CARGO_BIN_EXE_grantgate"))
        .env("GRANTGATE_NO_BUILD", "1")
        .env("GITHUB_OUTPUT", &outputs)
        .env("TMPDIR", tmp)
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GRANTGATE_SIGN_KEY")
        .env_remove("GRANTGATE_EXPECTED_FAILURES");
    for (key, value) in inputs {
        cmd.env(format!("INPUT_{key}"), value);
    }
    let out = cmd.output().unwrap();
    let written = std::fs::read_to_string(&outputs).unwrap_or_default();
    (out, written)
}

/// The value of `key=` in `$GITHUB_OUTPUT`'s text.
fn value<'a>(outputs: &'a str, key: &str) -> Option<&'a str> {
    outputs
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{key}=")))
}

#[test]
fn the_actions_script_gates_refcore_and_sets_its_outputs() {
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path();
    let (key, public) = common::keypair(tmp);
    let pem = std::fs::read_to_string(&key).unwrap();

    let exact = format!("--exact {TRIAL}");
    let (out, outputs) = action(
        tmp,
        &[
            ("BACKENDS", "sqlite"),
            ("JUNIT", "ci/junit.xml"),
            ("REPORT_DIR", "gate-reports"),
            ("SIGN_KEY", &pem),
            ("ARGS", &exact),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(value(&outputs, "verdict"), Some("partial"), "{outputs}");
    let dir = Path::new(value(&outputs, "report-dir").expect("a report dir"));
    assert!(
        dir.is_absolute() && dir.starts_with(tmp.join("gate-reports")),
        "{outputs}"
    );
    assert!(dir.join("index.html").is_file());
    assert!(tmp.join("ci/junit.xml").is_file(), "the JUnit copy");
    assert!(
        !text(&out).contains(pem.lines().nth(1).unwrap()),
        "the key leaked"
    );
    let verified = Command::new(env!("CARGO_BIN_EXE_grantgate"))
        .arg("verify")
        .arg(dir.join("attestation.intoto.json"))
        .arg("--key")
        .arg(&public)
        .output()
        .unwrap();
    assert!(verified.status.success(), "{}", text(&verified));
    assert!(
        text(&verified).contains("verified: WARNED"),
        "{}",
        text(&verified)
    );

    // A Core that exits at once breaks the launch contract: failed, 1.
    let broken = tmp.join("broken-core");
    std::fs::write(&broken, "#!/bin/sh\nexit 3\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&broken, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (out, outputs) = action(
        tmp,
        &[
            ("CORE_BINARY", broken.to_str().unwrap()),
            ("BACKENDS", "sqlite"),
            ("ARGS", &exact),
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert_eq!(value(&outputs, "verdict"), Some("failed"), "{outputs}");

    // Both a binary and an image: refused before anything runs.
    let (out, outputs) = action(tmp, &[("CORE_BINARY", "core"), ("CORE_IMAGE", "image:1")]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert_eq!(value(&outputs, "verdict"), Some("error"), "{outputs}");
    assert_eq!(value(&outputs, "report-dir"), None, "{outputs}");
}
