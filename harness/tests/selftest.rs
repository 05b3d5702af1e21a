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

/// A shared Core of honest variants that the gate refuses is run again as
/// each variant alone, and the report names the variant whose change the
/// refusing trials read. Here a wrapper Core makes `login-200` dishonest on
/// purpose (refcore's hostile `deep-json-error` whenever it is among the
/// variants): the pass of `extra-members,login-200` is refused, `login-200`
/// alone is refused on the same trials, `extra-members` alone passes.
#[test]
fn a_refused_composition_names_the_variant_its_trials_read() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let faults =
        grantgate_engine::binaries::locate_faults(None, None).unwrap_or_else(|e| panic!("{e}"));
    let wrapper = tmp.path().join("refcore-with-a-dishonest-variant");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\ncase \",$CORE_VARIANT,\" in *,login-200,*) export CORE_HOSTILE=deep-json-error;; esac\nexec '{}' \"$@\"\n",
            faults.core.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let reports = tmp.path().join("reports");
    let out = Command::new(env!("CARGO_BIN_EXE_grantgate"))
        .args(["selftest", "--backend", "sqlite", "--filter", "replay"])
        .args(["--variant", "extra-members", "--variant", "login-200"])
        .arg("--core-bin")
        .arg(&wrapper)
        .arg("--adapter-bin")
        .arg(&faults.adapter)
        .arg("--report-dir")
        .arg(&reports)
        .env("TMPDIR", tmp.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("honest variants passed 1 of 2 in 3 Core passes (1 refused together)"),
        "{stdout}"
    );
    let matrix: serde_json::Value = serde_json::from_slice(
        &std::fs::read(selftest_dir(&reports).join("killmatrix.json")).unwrap(),
    )
    .unwrap();
    assert!(
        matrix["faults"].as_array().unwrap().is_empty(),
        "no fault ran"
    );
    let composed = &matrix["compositions"][0];
    assert_eq!(
        composed["variants"],
        serde_json::json!(["extra-members", "login-200"])
    );
    let refusing = composed["not_passed"].as_array().unwrap();
    assert!(!refusing.is_empty(), "{composed:#}");
    for trial in refusing {
        assert_eq!(
            trial["read"],
            serde_json::json!(["login-200"]),
            "{composed:#}"
        );
    }
    let rows = matrix["variants"].as_array().unwrap();
    let row = |name: &str| rows.iter().find(|r| r["name"] == name).unwrap().clone();
    assert_eq!(row("extra-members")["not_passed"], serde_json::json!([]));
    assert_eq!(
        row("extra-members")["pass"],
        serde_json::json!(["extra-members"])
    );
    assert!(
        !row("login-200")["not_passed"]
            .as_array()
            .unwrap()
            .is_empty()
    );
}
