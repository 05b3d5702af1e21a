//! Stable paths for CI after a run: `<report-dir>/latest` points at the
//! newest run, `--junit PATH` copies its JUnit file where the CI system looks,
//! and `--keep-reports N` prunes older runs so a report directory does not
//! grow without bound.

use std::path::Path;

use crate::error::{HarnessError, Result};

/// The link to the newest run, inside the report directory.
pub const LATEST: &str = "latest";

/// Updates `latest`, copies `junit.xml` to `junit` and keeps only the newest
/// `keep` runs (directories holding a `report.json`; run ids sort by time).
pub fn after_run(
    root: &Path,
    run_dir: &Path,
    junit: Option<&Path>,
    keep: Option<usize>,
) -> Result<()> {
    let latest = root.join(LATEST);
    let _ = std::fs::remove_file(&latest);
    if let Some(name) = run_dir.file_name() {
        std::os::unix::fs::symlink(name, &latest).map_err(|e| HarnessError::io(&latest, e))?;
    }
    if let Some(target) = junit {
        if let Some(parent) = target.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| HarnessError::io(parent, e))?;
        }
        let source = run_dir.join("junit.xml");
        std::fs::copy(&source, target).map_err(|e| HarnessError::io(target, e))?;
    }
    if let Some(keep) = keep {
        let mut runs: Vec<_> = std::fs::read_dir(root)
            .map_err(|e| HarnessError::io(root, e))?
            .flatten()
            .map(|e| e.path())
            .filter(|p| !p.is_symlink() && p.join("report.json").is_file())
            .collect();
        runs.sort();
        let excess = runs.len().saturating_sub(keep.max(1));
        for old in &runs[..excess] {
            std::fs::remove_dir_all(old).map_err(|e| HarnessError::io(old, e))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latest_points_at_the_newest_run_and_old_runs_are_pruned() {
        let root = tempfile::tempdir().unwrap();
        for id in [
            "20260101T000000Z-a",
            "20260102T000000Z-b",
            "20260103T000000Z-c",
        ] {
            let dir = root.path().join(id);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("report.json"), "{}").unwrap();
            std::fs::write(dir.join("junit.xml"), id).unwrap();
        }
        let newest = root.path().join("20260103T000000Z-c");
        let junit = root.path().join("ci/junit.xml");
        after_run(root.path(), &newest, Some(&junit), Some(2)).unwrap();
        assert_eq!(
            std::fs::read_to_string(&junit).unwrap(),
            "20260103T000000Z-c"
        );
        assert!(root.path().join(LATEST).join("report.json").is_file());
        assert!(!root.path().join("20260101T000000Z-a").exists());
        assert!(root.path().join("20260102T000000Z-b").exists());
    }
}
