//! `run --expected-failures` end to end, against a real faulty Core (the
//! faults build's `CORE_FAULT=replay-answers-201`, which one replay trial
//! catches): `grantgate baseline` writes the baseline from the failing run;
//! with it the failure is waived (exit 0, WAIVED everywhere, the signed
//! attestation WARNED with the waiver's reason); a failure in another step
//! than the one listed is a regression (1); the honest Core makes the entry
//! stale (1); an expired entry waives nothing (1); and an errored trial stays
//! errored (2) whatever the baseline says.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;
use common::{grantgate, text};

const TRIAL: &str = "sqlite::replay_same_payload_one_issue";
const FAULT: &str = "CORE_FAULT=replay-answers-201";

fn faulty_core() -> PathBuf {
    // Under `cargo test` this builds the faults binaries into target/faults.
    grantgate_engine::binaries::locate_faults(None, None)
        .unwrap_or_else(|e| panic!("{e}"))
        .core
}

/// Runs [`TRIAL`] (against the faulty Core when `core` is given) into
/// `tmp/<name>`, with `extra` arguments; returns the output and the report
/// directory.
fn run(tmp: &Path, name: &str, core: Option<&Path>, extra: &[&str]) -> (Output, PathBuf) {
    let reports = tmp.join(name);
    let mut args = vec![
        "run",
        "--backend",
        "sqlite",
        "--exact",
        TRIAL,
        "--color",
        "never",
        "--report-dir",
        reports.to_str().unwrap(),
    ];
    if let Some(core) = core {
        args.extend(["--core-bin", core.to_str().unwrap(), "--core-env", FAULT]);
    }
    args.extend(extra);
    (grantgate(&args, tmp), reports.join("latest"))
}

#[test]
fn waived_unlisted_stale_expired_and_errored_failures_end_as_the_table_says() {
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path();
    let core = faulty_core();

    // Without a baseline the fault fails the run.
    let (out, first) = run(tmp, "plain", Some(&core), &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));

    // `grantgate baseline` lists that failure at its step.
    let known = tmp.join("known.toml");
    let out = grantgate(
        &[
            "baseline",
            first.to_str().unwrap(),
            "-o",
            known.to_str().unwrap(),
        ],
        tmp,
    );
    assert!(out.status.success(), "{}", text(&out));
    let baseline = std::fs::read_to_string(&known).unwrap();
    let step = "lab-bot sends the identical submission again through the adapter";
    assert!(
        baseline.contains(&format!("trial = \"{TRIAL}\"\ncheck = \"{step}\"")),
        "{baseline}"
    );

    // Listed: waived, exit 0, apart in every format, the attestation WARNED
    // with the reason.
    let (keys, public) = common::keypair(tmp);
    let with = ["--expected-failures", known.to_str().unwrap()];
    let mut attest = with.to_vec();
    attest.extend(["--attest", "--sign-key", keys.to_str().unwrap()]);
    let (out, dir) = run(tmp, "waived", Some(&core), &attest);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(
        said.contains("1 known failure(s) waived by known.toml"),
        "{said}"
    );
    assert!(
        !said.contains("did not pass"),
        "a waived failure is apart: {said}"
    );
    let junit = std::fs::read_to_string(dir.join("junit.xml")).unwrap();
    assert!(junit.contains("type=\"known failure\""), "{junit}");
    assert!(!junit.contains("<failure"), "{junit}");
    let html = std::fs::read_to_string(dir.join("index.html")).unwrap();
    assert!(
        html.contains("<section id=\"waived\">"),
        "the HTML's own section"
    );
    assert!(
        !html.contains("<section id=\"failures\">"),
        "not among the failures"
    );
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["baseline"]["waived"][0]["trial"], TRIAL);
    assert_eq!(report["baseline"]["waived"][0]["check"], step);
    assert_eq!(report["results"][0]["verdict"]["verdict"], "failed");
    let out = grantgate(
        &[
            "verify",
            dir.join("attestation.intoto.json").to_str().unwrap(),
            "--key",
            public.to_str().unwrap(),
        ],
        tmp,
    );
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("verified: WARNED"), "{said}");
    assert!(
        said.contains(&format!("waived: {TRIAL} (step `{step}`)")),
        "{said}"
    );

    // Listed only for another step: a regression.
    let other = tmp.join("other.toml");
    std::fs::write(
        &other,
        format!("[[failure]]\ntrial = \"{TRIAL}\"\ncheck = \"another step\"\nreason = \"r\"\n"),
    )
    .unwrap();
    let (out, _) = run(
        tmp,
        "other-step",
        Some(&core),
        &["--expected-failures", other.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("did not pass"), "{}", text(&out));

    // The honest Core passes the listed trial: the entry is stale.
    let (out, _) = run(tmp, "stale", None, &with);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("remove the entry"), "{said}");

    // Expired: waives nothing, and is a failure itself.
    let expired = tmp.join("expired.toml");
    std::fs::write(&expired, format!("{baseline}expires = 2000-01-01\n")).unwrap();
    let (out, _) = run(
        tmp,
        "expired",
        Some(&core),
        &["--expected-failures", expired.to_str().unwrap()],
    );
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("expired on 2000-01-01"), "{said}");
    assert!(said.contains("did not pass"), "{said}");

    // An errored trial is the harness's: listed or not, it stays errored.
    let panics = tmp.join("panics.toml");
    std::fs::write(
        &panics,
        "[[failure]]\ntrial = \"sqlite::engine_panics\"\nreason = \"r\"\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_grantgate"))
        .args([
            "run",
            "--backend",
            "sqlite",
            "--exact",
            "sqlite::engine_panics",
        ])
        .arg("--expected-failures")
        .arg(&panics)
        .arg("--report-dir")
        .arg(tmp.join("panics"))
        .env("TMPDIR", tmp)
        .env("GRANTGATE_NO_BUILD", "1")
        .env("GRANTGATE_ENGINE_SCENARIOS", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));

    // A file naming no trial of the catalogue is refused before the run.
    std::fs::write(
        &other,
        "[[failure]]\ntrial = \"sqlite::gone\"\nreason = \"r\"\n",
    )
    .unwrap();
    let (out, _) = run(
        tmp,
        "refused",
        None,
        &["--expected-failures", other.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("names no trial"), "{}", text(&out));
}
