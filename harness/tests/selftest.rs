//! `grantgate selftest` for real, kept small: one cheap fault
//! (`replay-answers-201`) against the replay scenarios on SQLite. The clean
//! pass must be green, the fault must be killed by a replay trial, and the
//! report directory must hold the matrix in every format.

use std::path::Path;
use std::process::Command;

/// The self-test's directory inside the single report of `reports`.
fn selftest_dir(reports: &Path) -> std::path::PathBuf {
    std::fs::read_dir(reports)
        .unwrap()
        .flatten()
        .next()
        .expect("a report directory")
        .path()
        .join("selftest")
}

#[test]
fn a_core_fault_is_killed_by_a_replay_scenario_and_the_matrix_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let reports = tmp.path().join("reports");
    // Under `cargo test`, CARGO is set: the self-test builds the default and
    // the faults binaries itself (into target/ and target/faults/).
    let out = Command::new(env!("CARGO_BIN_EXE_grantgate"))
        .args([
            "selftest",
            "--backend",
            "sqlite",
            "--filter",
            "replay",
            "--fault",
            "replay-answers-201",
            "--report-dir",
        ])
        .arg(&reports)
        .env("TMPDIR", tmp.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("killed   replay-answers-201"), "{stdout}");
    let dir = selftest_dir(&reports);
    let matrix: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("killmatrix.json")).unwrap()).unwrap();
    assert_eq!(matrix["clean"]["counts"]["failed"], 0, "{matrix:#}");
    let faults = matrix["faults"].as_array().unwrap();
    assert_eq!(faults.len(), 1, "only the selected fault ran: {matrix:#}");
    let row = &faults[0];
    assert_eq!(row["name"], "replay-answers-201");
    assert_eq!(row["program"], "core");
    assert_eq!(row["backends"], serde_json::json!(["sqlite"]));
    let kills: Vec<&str> = row["killed_by"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["trial"].as_str().unwrap())
        .collect();
    assert!(
        kills
            .iter()
            .any(|t| t.starts_with("sqlite::") && t.contains("replay")),
        "{kills:?}"
    );
    assert!(
        row["description"].as_str().unwrap().contains("201"),
        "the description comes from docs/faults.md: {row:#}"
    );
    for name in ["index.html", "junit.xml", "manifest.json"] {
        assert!(dir.join(name).is_file(), "{name} missing in {dir:?}");
    }
    let junit = std::fs::read_to_string(dir.join("junit.xml")).unwrap();
    assert!(junit.contains("replay-answers-201"), "{junit}");
    assert!(!junit.contains("<failure"), "{junit}");
    // The clean pass's own report sits one level up.
    assert!(dir.parent().unwrap().join("report.json").is_file());
}

#[test]
fn an_unknown_fault_is_a_configuration_error_listing_the_valid_ones() {
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_grantgate"))
        .args(["selftest", "--fault", "no-such-fault", "--report-dir"])
        .arg(tmp.path().join("reports"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("no-such-fault") && stderr.contains("adapter-retries-post"),
        "{stderr}"
    );
}

#[test]
fn without_a_faults_build_the_error_gives_the_command_that_builds_one() {
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_grantgate"))
        .args(["selftest", "--core-bin"])
        .arg(tmp.path().join("refcore"))
        .arg("--adapter-bin")
        .arg(tmp.path().join("awg-mcp"))
        .env_remove("CARGO")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "cargo build -p refcore -p awg-mcp --features refcore/faults,awg-mcp/faults \
             --target-dir target/faults"
        ),
        "{stderr}"
    );
}
