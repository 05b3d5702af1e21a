//! Writing a report directory: every format rendered, written, hashed into
//! the manifest, and the whole directory scanned for registered secrets.

use std::path::{Path, PathBuf};

use super::model::RunReport;
use super::{html, json, junit, manifest};
use crate::error::{HarnessError, Result};
use crate::secrets::SecretRegistry;

/// Writes every report file into `<root>/<run-id>/`, then the manifest, then
/// scans the directory: a registered secret anywhere fails with
/// [`HarnessError::SecretLeak`]. Returns the directory.
pub fn write_all(report: &RunReport, root: &Path, secrets: &SecretRegistry) -> Result<PathBuf> {
    let bounded = bounded_logs(report);
    let report = &bounded;
    let dir = root.join(&report.run_id);
    std::fs::create_dir_all(&dir).map_err(|e| HarnessError::io(&dir, e))?;
    let files: Vec<(String, Vec<u8>)> = vec![
        (
            "junit.xml".into(),
            junit::render(report, secrets).into_bytes(),
        ),
        (
            "report.json".into(),
            json::render(report, secrets).into_bytes(),
        ),
        (
            "index.html".into(),
            html::render(report, secrets).into_bytes(),
        ),
    ];
    write_files(&dir, &files)?;
    let manifest = manifest::render(&report.run_id, &files);
    write_files(&dir, &[("manifest.json".into(), manifest.into_bytes())])?;
    secrets.scan_dir(&dir)?;
    Ok(dir)
}

/// The report with each process log cut to [`crate::limits::REPORT_LOG_LIMIT`]
/// (head and tail): a Core that logs without pause must not make a report
/// of hundreds of megabytes.
fn bounded_logs(report: &RunReport) -> RunReport {
    let cut = |t: &str| crate::limits::head_and_tail(t, crate::limits::REPORT_LOG_LIMIT);
    let mut report = report.clone();
    for r in &mut report.results {
        r.core_log = cut(&r.core_log);
        for log in &mut r.adapter_logs {
            log.text = cut(&log.text);
        }
    }
    report
}

/// Writes files into `dir` (used by [`write_all`] and by tests that plant a
/// file before the scan).
pub fn write_files(dir: &Path, files: &[(String, Vec<u8>)]) -> Result<()> {
    for (name, bytes) in files {
        let path = dir.join(name);
        std::fs::write(&path, bytes).map_err(|e| HarnessError::io(&path, e))?;
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::report::model::tests::sample;
    use sha2::{Digest, Sha256};

    /// Compares a rendered document with its stored snapshot in
    /// `src/report/snapshots/`; `GRANTGATE_UPDATE_SNAPSHOTS=1` rewrites it
    /// (review the diff before committing).
    pub(crate) fn snapshot(name: &str, actual: &str) {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("src/report/snapshots")
            .join(name);
        if std::env::var("GRANTGATE_UPDATE_SNAPSHOTS").as_deref() == Ok("1") {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, actual).unwrap();
            return;
        }
        let expected = std::fs::read_to_string(&path).unwrap_or_else(|_| {
            panic!("no snapshot {path:?}; run with GRANTGATE_UPDATE_SNAPSHOTS=1 and review it")
        });
        assert!(
            expected == actual,
            "{name} differs from its snapshot {path:?}; if the change is intended, \
             rerun with GRANTGATE_UPDATE_SNAPSHOTS=1 and review the diff\n--- actual ---\n{actual}"
        );
    }

    #[test]
    fn the_pure_builders_match_their_snapshots() {
        let secrets = SecretRegistry::new();
        secrets.register("sekrit-value-1");
        let report = sample();
        snapshot("junit.xml", &junit::render(&report, &secrets));
        snapshot("report.json", &json::render(&report, &secrets));
        snapshot("index.html", &html::render(&report, &secrets));
        snapshot(
            "manifest.json",
            &manifest::render(&report.run_id, &[("a.txt".into(), b"abc".to_vec())]),
        );
    }

    #[test]
    fn a_clean_run_writes_four_files_and_a_manifest_that_matches_them() {
        let root = tempfile::tempdir().unwrap();
        let secrets = SecretRegistry::new();
        secrets.register("sekrit-value-1");
        let dir = write_all(&sample(), root.path(), &secrets).expect("a clean report passes");
        let manifest: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
        let files = manifest["files"].as_array().unwrap();
        assert_eq!(files.len(), 3);
        for f in files {
            let bytes = std::fs::read(dir.join(f["path"].as_str().unwrap())).unwrap();
            assert_eq!(f["sha256"], hex::encode(Sha256::digest(&bytes)));
        }
    }

    #[test]
    fn a_report_holding_a_registered_secret_fails_the_run() {
        // The manifest names the run id without redacting it; register the
        // run id as a secret and the post-write scan must catch the writer
        // that "forgot" to redact.
        let root = tempfile::tempdir().unwrap();
        let report = sample();
        let secrets = SecretRegistry::new();
        secrets.register(&report.run_id);
        match write_all(&report, root.path(), &secrets) {
            Err(HarnessError::SecretLeak { path, count }) => {
                assert!(path.ends_with("manifest.json"), "{path:?}");
                assert_eq!(count, 1);
            }
            other => panic!("expected a secret leak, got {other:?}"),
        }
    }
}
