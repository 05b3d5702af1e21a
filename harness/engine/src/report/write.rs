//! Writing a report directory: every format rendered, written, hashed into
//! the manifest, and the whole directory scanned for registered secrets.

use std::path::{Path, PathBuf};

use super::model::RunReport;
use super::{html, json, junit, manifest};
use crate::error::{HarnessError, Result};
use crate::secrets::SecretRegistry;
use crate::vocab::{Exchange, Verdict};

/// Writes every report file into `<root>/<run-id>/`, then the manifest, then
/// scans the directory: a registered secret anywhere fails with
/// [`HarnessError::SecretLeak`]. Returns the directory.
pub fn write_all(report: &RunReport, root: &Path, secrets: &SecretRegistry) -> Result<PathBuf> {
    let mut bounded = bounded_logs(report);
    fit_exchanges(&mut bounded, crate::limits::REPORT_EXCHANGE_BUDGET);
    let pictures = picture_files(&mut bounded);
    let report = &bounded;
    let dir = root.join(&report.run_id);
    std::fs::create_dir_all(&dir).map_err(|e| HarnessError::io(&dir, e))?;
    let mut files: Vec<(String, Vec<u8>)> = vec![
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
    files.extend(pictures);
    write_files(&dir, &files)?;
    let manifest = manifest::render(&report.run_id, &files);
    write_files(&dir, &[("manifest.json".into(), manifest.into_bytes())])?;
    secrets.scan_dir(&dir)?;
    Ok(dir)
}

/// The screenshots of the browser trails, as files `pictures/<trial>/NN.png`
/// that each picture then names (the report links them, never inlines them).
fn picture_files(report: &mut RunReport) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    for r in &mut report.results {
        let dir: String = (r.name.chars())
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' {
                    c
                } else {
                    '-'
                }
            })
            .collect();
        for (i, p) in r.pictures.iter_mut().enumerate() {
            if let Some(png) = p.png.take() {
                let name = format!("pictures/{dir}/{i:02}.png");
                p.file = Some(name.clone());
                files.push((name, png));
            }
        }
    }
    files
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

/// Cuts the trials' transcripts so that their exchanges take at most
/// `budget` bytes in all: the largest common size per trial that fits is
/// found, and a trial over it keeps the exchanges of its first three
/// quarters and of its last quarter, with a marker counting those left out
/// in the step where they were. Trials within that size stay whole, and so
/// do the trials that did not pass while they take at most half the
/// budget: the transcript of a failure is what a reader needs whole.
fn fit_exchanges(report: &mut RunReport, budget: usize) {
    let size = |e: &Exchange| {
        let headers: usize = (e.request_headers.iter().chain(&e.response_headers))
            .map(|(n, v)| n.len() + v.len() + 8)
            .sum();
        e.target.len() + e.request_body.len() + e.response_body.len() + headers + 160
    };
    let sizes: Vec<Vec<usize>> = report
        .results
        .iter()
        .map(|r| {
            r.steps
                .iter()
                .flat_map(|s| &s.exchanges)
                .map(size)
                .collect()
        })
        .collect();
    let sum = |t: &Vec<usize>| t.iter().sum::<usize>();
    let failing = |r: &super::model::ScenarioResult| {
        !matches!(
            r.verdict,
            Verdict::Passed | Verdict::NotApplicable { .. } | Verdict::NotRun { .. }
        )
    };
    let failing_bytes: usize = (report.results.iter().zip(&sizes))
        .filter(|(r, _)| failing(r))
        .map(|(_, t)| sum(t))
        .sum();
    let exempt: Vec<bool> = (report.results.iter())
        .map(|r| failing(r) && failing_bytes <= budget / 2)
        .collect();
    let budget = match failing_bytes <= budget / 2 {
        true => budget - failing_bytes,
        false => budget,
    };
    let total = |cap: usize| -> usize {
        (sizes.iter().zip(&exempt))
            .filter(|(_, e)| !**e)
            .map(|(t, _)| sum(t).min(cap))
            .sum()
    };
    let largest: usize = sizes.iter().map(sum).max().unwrap_or(0);
    if total(largest) <= budget {
        return;
    }
    // The largest per-trial cap whose total fits: total() grows with cap.
    let (mut lo, mut hi) = (0, largest);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if total(mid) <= budget {
            lo = mid
        } else {
            hi = mid - 1
        }
    }
    for ((result, sizes), exempt) in report.results.iter_mut().zip(&sizes).zip(exempt) {
        if !exempt && sum(sizes) > lo {
            keep_ends(&mut result.steps, sizes, lo / 4 * 3, lo / 4);
        }
    }
}

/// Keeps the exchanges of `steps` that fit in the first `head` and the last
/// `tail` bytes (by `sizes`, in order), and a marker for the rest.
fn keep_ends(steps: &mut [crate::vocab::StepRecord], sizes: &[usize], head: usize, tail: usize) {
    let n = sizes.len();
    let mut first = 0; // exchanges [0, first) are kept
    let mut spent = 0;
    while first < n && spent + sizes[first] <= head {
        spent += sizes[first];
        first += 1;
    }
    let mut last = n; // exchanges [last, n) are kept
    spent = 0;
    while last > first && spent + sizes[last - 1] <= tail {
        spent += sizes[last - 1];
        last -= 1;
    }
    let left_out = last - first;
    let mut index = 0;
    for step in steps {
        let exchanges = std::mem::take(&mut step.exchanges);
        for ex in exchanges {
            if index < first || index >= last {
                step.exchanges.push(ex);
            } else if index == first {
                step.exchanges.push(Exchange {
                    actor: "report".into(),
                    kind: "omitted".into(),
                    target: format!(
                        "{left_out} exchanges left out here to keep the report within its budget"
                    ),
                    ..Exchange::default()
                });
            }
            index += 1;
        }
    }
}

/// Writes files into `dir` (used by [`write_all`] and by tests that plant a
/// file before the scan).
pub fn write_files(dir: &Path, files: &[(String, Vec<u8>)]) -> Result<()> {
    for (name, bytes) in files {
        let path = dir.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| HarnessError::io(parent, e))?;
        }
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

    #[test]
    fn transcripts_over_the_budget_are_cut_to_one_size_keeping_their_ends() {
        let exchange = |i: usize| Exchange {
            target: format!("/x/{i}"),
            response_body: "b".repeat(1000),
            ..Exchange::default()
        };
        let mut report = sample();
        let small = report.results[0].clone();
        let mut big = small.clone();
        big.name = "big".into();
        big.steps = vec![
            crate::vocab::StepRecord {
                name: "one".into(),
                exchanges: (0..600).map(exchange).collect(),
                ..Default::default()
            },
            crate::vocab::StepRecord {
                name: "two".into(),
                exchanges: (600..1000).map(exchange).collect(),
                ..Default::default()
            },
        ];
        big.verdict = Verdict::Passed;
        let mut failed = big.clone();
        failed.verdict = Verdict::Failed {
            message: "x".into(),
        };
        failed.steps[1].exchanges.clear();
        report.results = vec![small.clone(), big.clone(), big, failed];
        let before = serde_json::to_string(&report.results[0]).unwrap();
        let failed_before = serde_json::to_string(&report.results[3]).unwrap();

        fit_exchanges(&mut report, 1_600_000);

        // The small trial and the failed one (600 KB, within half the
        // budget) are whole; each big passing one kept a share of the rest in
        // all, its first and last exchanges, and says how many it left out.
        assert_eq!(serde_json::to_string(&report.results[0]).unwrap(), before);
        assert_eq!(
            serde_json::to_string(&report.results[3]).unwrap(),
            failed_before
        );
        for big in &report.results[1..3] {
            let kept: Vec<&Exchange> = big.steps.iter().flat_map(|s| &s.exchanges).collect();
            let bytes: usize = kept.iter().map(|e| e.response_body.len()).sum();
            assert!(bytes < 500_000 && bytes > 300_000, "{bytes}");
            assert_eq!(kept[0].target, "/x/0");
            assert_eq!(kept.last().unwrap().target, "/x/999");
            let marker = kept.iter().find(|e| e.kind == "omitted").unwrap();
            let left_out = 1000 - (kept.len() - 1);
            assert!(
                marker
                    .target
                    .starts_with(&format!("{left_out} exchanges left out"))
            );
        }
        // Within the budget nothing changes.
        let again = report.clone();
        fit_exchanges(&mut report, 1_600_000);
        assert_eq!(
            serde_json::to_string(&report).unwrap(),
            serde_json::to_string(&again).unwrap()
        );
    }
}
