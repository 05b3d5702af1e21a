//! A sharded run is attested: two shards of the replay scenarios on SQLite,
//! `grantgate merge --attest --sign-key` signs the joined verdict, and
//! `grantgate verify` accepts it with the Core's digest as the subject and
//! every trial of both shards counted; a shard of another Core is refused.

use std::path::Path;

mod common;
use common::{grantgate, text};

/// Runs shard `k` of 2 of the replay scenarios on SQLite into `tmp/<name>`,
/// against `core` when given; returns its report directory.
fn shard(tmp: &Path, name: &str, k: u8, core: Option<&Path>) -> std::path::PathBuf {
    let reports = tmp.join(name);
    let shard = format!("{k}/2");
    let mut args = vec![
        "run",
        "--backend",
        "sqlite",
        "--filter",
        "replay",
        "--shard",
        &shard,
        "--report-dir",
        reports.to_str().unwrap(),
    ];
    if let Some(core) = core {
        args.extend(["--core-bin", core.to_str().unwrap()]);
    }
    let out = grantgate(&args, tmp);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    reports.join("latest")
}

#[test]
fn a_merged_sharded_run_is_signed_and_verifies() {
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path();
    let (key, public) = common::keypair(tmp);
    let one = shard(tmp, "one", 1, None);
    let two = shard(tmp, "two", 2, None);
    let trials = |dir: &Path| {
        let report: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
        report["results"].as_array().unwrap().len()
    };
    let (n1, n2) = (trials(&one), trials(&two));
    assert!(n1 > 0 && n2 > 0, "both shards ran trials: {n1}, {n2}");

    let merged = tmp.join("merged");
    let out = grantgate(
        &[
            "merge",
            one.to_str().unwrap(),
            two.to_str().unwrap(),
            "--report-dir",
            merged.to_str().unwrap(),
            "--attest",
            "--sign-key",
            key.to_str().unwrap(),
        ],
        tmp,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let attestation = std::fs::read_dir(&merged)
        .unwrap()
        .flatten()
        .map(|e| e.path().join("attestation.intoto.json"))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("no attestation: {}", text(&out)));

    // The subject is the Core the shards gated, by the digest they recorded.
    let shard_report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(one.join("report.json")).unwrap()).unwrap();
    let core_digest = shard_report["invocation"]["core_digest"].as_str().unwrap();
    let out = grantgate(
        &[
            "verify",
            attestation.to_str().unwrap(),
            "--key",
            public.to_str().unwrap(),
            "--subject-digest",
            core_digest,
        ],
        tmp,
    );
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    // One backend of a filtered catalogue: WARNED, every trial of both
    // shards passed.
    assert!(
        said.contains(&format!(
            "verified: WARNED ({} passed, 0 warned, 0 failed)",
            n1 + n2
        )),
        "{said}"
    );

    // A shard run against another Core (a script that exits at once) is
    // not part of this run: the merge refuses it.
    let other = tmp.join("other-core");
    std::fs::write(&other, "#!/bin/sh\nexit 3\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&other, std::fs::Permissions::from_mode(0o755)).unwrap();
    let reports = tmp.join("three");
    let out = grantgate(
        &[
            "run",
            "--backend",
            "sqlite",
            "--filter",
            "replay",
            "--shard",
            "2/2",
            "--core-bin",
            other.to_str().unwrap(),
            "--report-dir",
            reports.to_str().unwrap(),
        ],
        tmp,
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let out = grantgate(
        &[
            "merge",
            one.to_str().unwrap(),
            reports.join("latest").to_str().unwrap(),
            "--report-dir",
            tmp.join("refused").to_str().unwrap(),
        ],
        tmp,
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("different Cores"), "{}", text(&out));
}
