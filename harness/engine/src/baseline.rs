//! Known failures: a baseline file (`run --expected-failures FILE`) that
//! lets a Core which does not yet pass everything run the gate in CI, as the
//! MCP conformance suite's `--expected-failures` does.
//!
//! The file is TOML, one `[[failure]]` table per known failure:
//!
//! ```toml
//! [[failure]]
//! trial = "sqlite::full_lifecycle"     # one trial; or `scenario = "full_lifecycle"`: every backend and parity
//! check = "lab-bot submits the Issue"  # optional: only a failure in this step (its name in the report)
//! reason = "tracked in core#12"
//! expires = 2026-09-30                 # optional: from this day on the entry waives nothing
//! ```
//!
//! Judging a run against it ([`judge`]) gives the outcomes of the table
//! below; the run's report keeps the entries and the outcome
//! ([`Judged`]), so every report format and the exit code read them from
//! the [`RunReport`] alone.
//!
//! | the trial | listed | outcome |
//! |---|---|---|
//! | failed | yes, entry in force | waived (exit 0 when nothing else broke) |
//! | failed | no, or only for another step | a failure: a regression (exit 1) |
//! | passed | yes, and no failure it lists remains | stale entry: a failure (exit 1), remove it |
//! | errored | either | errored (exit 2): a baseline never waives the harness |
//! | any | entry past `expires` | expired entry: a failure (exit 1), waives nothing |
//!
//! A trial a run did not select (another shard, a filter) leaves its entry
//! unused, neither stale nor waived.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{HarnessError, Result};
use crate::report::model::{RunReport, ScenarioResult};
use crate::vocab::Verdict;

pub use crate::report::judged::{Entry, Judged, Problem, Waiver};

/// A baseline file as read: its entries and what identifies it.
#[derive(Debug, Clone)]
pub struct Baseline {
    /// The file's name.
    pub file: String,
    /// SHA-256 of its bytes, `sha256:<hex>`.
    pub digest: String,
    /// Its entries, in order.
    pub entries: Vec<Entry>,
}

/// The file's shape: unknown keys are refused, so a typo (`trail = …`) is
/// an error, not an entry that silently matches nothing.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    failure: Vec<RawEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEntry {
    trial: Option<String>,
    scenario: Option<String>,
    check: Option<String>,
    reason: String,
    expires: Option<toml::value::Datetime>,
}

impl Baseline {
    /// Reads and checks `path`: each entry names exactly one of `trial` and
    /// `scenario`, has a reason, and an `expires` that is a date.
    pub fn read(path: &Path) -> Result<Baseline> {
        let bytes = std::fs::read(path).map_err(|e| HarnessError::io(path, e))?;
        let text = String::from_utf8(bytes.clone()).map_err(|_| bad(path, "not UTF-8 text"))?;
        let entries = parse(&text).map_err(|m| bad(path, &m))?;
        use sha2::{Digest, Sha256};
        Ok(Baseline {
            file: (path.file_name()).map_or_else(
                || path.display().to_string(),
                |n| n.to_string_lossy().into(),
            ),
            digest: format!("sha256:{}", hex::encode(Sha256::digest(&bytes))),
            entries,
        })
    }

    /// Checks every entry against the catalogue's scenario ids and backends:
    /// an entry naming nothing that exists is an error (a renamed scenario
    /// must not leave an entry that never matches).
    pub fn check_names(&self, scenarios: &[&str], backends: &[&str]) -> Result<()> {
        for e in &self.entries {
            let known = match (&e.trial, &e.scenario) {
                (Some(t), _) => t
                    .split_once("::")
                    .is_some_and(|(b, s)| backends.contains(&b) && scenarios.contains(&s)),
                (None, Some(s)) => scenarios.contains(&s.as_str()),
                (None, None) => false,
            };
            if !known {
                return Err(HarnessError::Baseline {
                    file: self.file.clone(),
                    message: format!(
                        "{} names no trial of the catalogue (see `grantgate list`)",
                        e.label()
                    ),
                });
            }
        }
        Ok(())
    }
}

fn bad(path: &Path, message: &str) -> HarnessError {
    HarnessError::Baseline {
        file: path.display().to_string(),
        message: message.to_owned(),
    }
}

/// The entries of a baseline's text, or what is wrong with it.
fn parse(text: &str) -> std::result::Result<Vec<Entry>, String> {
    let file: File = toml::from_str(text).map_err(|e| e.message().to_owned())?;
    file.failure
        .into_iter()
        .enumerate()
        .map(|(i, raw)| {
            let at = format!("failure {}", i + 1);
            if raw.trial.is_some() == raw.scenario.is_some() {
                return Err(format!("{at}: name exactly one of `trial` and `scenario`"));
            }
            if raw.reason.trim().is_empty() {
                return Err(format!("{at}: the reason is empty"));
            }
            let expires = match raw.expires {
                None => None,
                Some(d) => match (d.date, d.time, d.offset) {
                    (Some(date), None, None) => Some(date.to_string()),
                    _ => {
                        return Err(format!(
                            "{at}: `expires` must be a date like 2026-09-30, not {d}"
                        ));
                    }
                },
            };
            Ok(Entry {
                trial: raw.trial,
                scenario: raw.scenario,
                check: raw.check,
                reason: raw.reason,
                expires,
            })
        })
        .collect()
}

/// Today's date in UTC, `YYYY-MM-DD`.
pub fn today() -> String {
    let d = time::OffsetDateTime::now_utc().date();
    format!("{:04}-{:02}-{:02}", d.year(), u8::from(d.month()), d.day())
}

/// Whether `entry` names `result`'s trial (by trial or by scenario).
fn names(entry: &Entry, result: &ScenarioResult) -> bool {
    entry.trial.as_deref() == Some(result.name.as_str())
        || entry.scenario.as_deref() == Some(result.scenario.as_str())
}

/// Whether `entry` covers `result`'s failure: the trial is named and, when
/// the entry names a check, the trial failed in that step.
fn covers(entry: &Entry, result: &ScenarioResult) -> bool {
    names(entry, result)
        && match &entry.check {
            None => true,
            Some(step) => result.failing_step().map(|s| s.name.as_str()) == Some(step),
        }
}

/// Judges `report`'s results against `baseline` on `today` (`YYYY-MM-DD`):
/// the outcome table of this module's documentation.
pub fn judge(report: &RunReport, baseline: &Baseline, today: &str) -> Judged {
    let entries = &baseline.entries;
    let in_force = |i: usize| !entries[i].expired_on(today);
    let mut judged = Judged {
        file: baseline.file.clone(),
        digest: baseline.digest.clone(),
        today: today.to_owned(),
        entries: entries.clone(),
        ..Judged::default()
    };
    for r in &report.results {
        if !matches!(r.verdict, Verdict::Failed { .. }) {
            continue;
        }
        if let Some(i) = (0..entries.len()).find(|&i| in_force(i) && covers(&entries[i], r)) {
            judged.waived.push(Waiver {
                trial: r.name.clone(),
                check: r.failing_step().map(|s| s.name.clone()),
                entry: i,
                reason: entries[i].reason.clone(),
            });
        }
    }
    for (i, e) in entries.iter().enumerate() {
        if !in_force(i) {
            judged.expired.push(Problem {
                entry: i,
                why: format!(
                    "{} expired on {} ({}): fix the failure or renew the entry",
                    e.label(),
                    e.expires.as_deref().unwrap_or_default(),
                    e.reason
                ),
            });
            continue;
        }
        let named: Vec<&ScenarioResult> = report.results.iter().filter(|r| names(e, r)).collect();
        let used = judged.waived.iter().any(|w| w.entry == i);
        let passed: Vec<&str> = (named.iter())
            .filter(|r| r.verdict == Verdict::Passed)
            .map(|r| r.name.as_str())
            .collect();
        // Stale: it waives nothing here, and what it names ran and passed.
        if !used && !passed.is_empty() {
            judged.stale.push(Problem {
                entry: i,
                why: format!(
                    "{} is listed as failing but {} passed: remove the entry",
                    e.label(),
                    passed.join(", ")
                ),
            });
        }
    }
    judged
}

/// A baseline file listing every failed trial of `report` (errored ones
/// are the harness's, never baselined), each at its trial and the step it
/// failed in, its reason the failure message's first line (to be edited).
pub fn from_failures(report: &RunReport) -> String {
    #[derive(Serialize)]
    struct Out<'a> {
        failure: Vec<&'a Entry>,
    }
    let entries: Vec<Entry> = (report.results.iter())
        .filter_map(|r| match &r.verdict {
            Verdict::Failed { message } => Some(Entry {
                trial: Some(r.name.clone()),
                scenario: None,
                check: r.failing_step().map(|s| s.name.clone()),
                reason: message.lines().next().unwrap_or_default().to_owned(),
                expires: None,
            }),
            _ => None,
        })
        .collect();
    let body = toml::to_string(&Out {
        failure: entries.iter().collect(),
    })
    .expect("entries serialise");
    format!(
        "# Known failures of run {} (`grantgate baseline`), for `grantgate run --expected-failures`.\n\
         # Each reason is the failure's first line: write why it is accepted instead.\n\
         # `expires = YYYY-MM-DD` (a bare TOML date) ends an entry; `scenario = \"id\"` instead of\n\
         # `trial` covers every backend; leaving out `check` covers a failure in any step.\n\n{body}",
        report.run_id
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::tests::sample;

    const TODAY: &str = "2026-05-01";

    fn baseline(text: &str) -> Baseline {
        Baseline {
            file: "known.toml".into(),
            digest: "sha256:00".into(),
            entries: parse(text).unwrap(),
        }
    }

    /// The sample with `sqlite::full_lifecycle` failed in step `x`,
    /// `postgres::full_lifecycle` as given, the parity trial passed.
    fn report(sqlite: Verdict, postgres: Verdict) -> RunReport {
        let mut r = sample();
        r.results[0].verdict = sqlite;
        r.results[1].verdict = postgres;
        r.results[2].verdict = Verdict::Passed;
        r
    }

    fn failed() -> Verdict {
        Verdict::Failed {
            message: "step `x`: expected 201, got 500\nmore".into(),
        }
    }

    #[test]
    fn a_listed_failure_is_waived_with_its_reason_and_step() {
        let b = baseline("[[failure]]\ntrial = \"sqlite::full_lifecycle\"\nreason = \"core#12\"\n");
        let j = judge(&report(failed(), Verdict::Passed), &b, TODAY);
        assert_eq!(
            j.waived,
            vec![Waiver {
                trial: "sqlite::full_lifecycle".into(),
                check: Some("x".into()),
                entry: 0,
                reason: "core#12".into()
            }]
        );
        assert_eq!(j.problems().count(), 0);
    }

    #[test]
    fn an_unlisted_failure_or_one_in_another_step_is_not_waived() {
        let other = baseline(
            "[[failure]]\ntrial = \"postgres::full_lifecycle\"\nreason = \"r\"\n\
             [[failure]]\ntrial = \"sqlite::full_lifecycle\"\ncheck = \"y\"\nreason = \"r\"\n",
        );
        let j = judge(&report(failed(), Verdict::Passed), &other, TODAY);
        assert!(j.waived.is_empty(), "{j:?}");
        // postgres passed: its entry is stale; the step entry's trial failed
        // (elsewhere), so it is not.
        assert_eq!(j.stale.len(), 1);
        assert_eq!(j.stale[0].entry, 0);
    }

    #[test]
    fn a_listed_trial_that_passes_is_a_stale_entry() {
        let b = baseline("[[failure]]\nscenario = \"full_lifecycle\"\nreason = \"r\"\n");
        let j = judge(&report(Verdict::Passed, Verdict::Passed), &b, TODAY);
        assert!(j.waived.is_empty());
        assert_eq!(j.stale.len(), 1);
        assert!(j.stale[0].why.contains("remove the entry"), "{:?}", j.stale);
        // A scenario entry still waiving one backend is not stale.
        let j = judge(&report(failed(), Verdict::Passed), &b, TODAY);
        assert_eq!(j.waived.len(), 1);
        assert!(j.stale.is_empty());
    }

    #[test]
    fn an_errored_trial_is_never_waived_nor_makes_its_entry_stale() {
        let b = baseline("[[failure]]\nscenario = \"full_lifecycle\"\nreason = \"r\"\n");
        let errored = Verdict::Errored {
            message: "stack did not start".into(),
        };
        let mut r = report(errored.clone(), errored);
        r.results[2].verdict = Verdict::NotRun {
            message: "x".into(),
        };
        let j = judge(&r, &b, TODAY);
        assert!(j.waived.is_empty());
        assert_eq!(j.problems().count(), 0);
    }

    #[test]
    fn an_expired_entry_waives_nothing_and_is_a_problem() {
        let b = baseline(
            "[[failure]]\ntrial = \"sqlite::full_lifecycle\"\nreason = \"r\"\nexpires = 2026-05-01\n",
        );
        let j = judge(&report(failed(), Verdict::Passed), &b, TODAY);
        assert!(j.waived.is_empty());
        assert_eq!(j.expired.len(), 1);
        assert!(j.expired[0].why.contains("expired on 2026-05-01"));
        // The day before, it is in force.
        let j = judge(&report(failed(), Verdict::Passed), &b, "2026-04-30");
        assert_eq!(j.waived.len(), 1);
        assert!(j.expired.is_empty());
    }

    #[test]
    fn an_entry_whose_trials_did_not_run_is_neither_waived_nor_stale() {
        let b = baseline("[[failure]]\ntrial = \"sqlite::other\"\nreason = \"r\"\n");
        let j = judge(&report(failed(), Verdict::Passed), &b, TODAY);
        assert!(j.waived.is_empty());
        assert_eq!(j.problems().count(), 0);
    }

    #[test]
    fn the_file_is_checked_strictly() {
        for (text, why) in [
            ("[[failure]]\nreason = \"r\"\n", "exactly one"),
            (
                "[[failure]]\ntrial = \"a::b\"\nscenario = \"b\"\nreason = \"r\"\n",
                "exactly one",
            ),
            (
                "[[failure]]\ntrial = \"a::b\"\nreason = \" \"\n",
                "reason is empty",
            ),
            (
                "[[failure]]\ntrail = \"a::b\"\nreason = \"r\"\n",
                "unknown field",
            ),
            (
                "[[failure]]\ntrial = \"a::b\"\nreason = \"r\"\nexpires = 2026-05-01T10:00:00Z\n",
                "must be a date",
            ),
            ("[[failure]]\ntrial = \"a::b\"\n", "missing field `reason`"),
        ] {
            let e = parse(text).unwrap_err();
            assert!(e.contains(why), "{text:?}: {e}");
        }
        let b = baseline("[[failure]]\ntrial = \"sqlite::gone\"\nreason = \"r\"\n");
        let e = b.check_names(&["full_lifecycle"], &["sqlite"]).unwrap_err();
        assert!(e.to_string().contains("names no trial"), "{e}");
    }

    #[test]
    fn a_baseline_written_from_a_run_waives_exactly_its_failures() {
        let r = report(failed(), Verdict::Passed);
        let text = from_failures(&r);
        let entries = parse(&text).unwrap();
        assert_eq!(entries.len(), 1, "{text}");
        assert_eq!(entries[0].reason, "step `x`: expected 201, got 500");
        assert_eq!(entries[0].check.as_deref(), Some("x"));
        let b = Baseline {
            file: "b.toml".into(),
            digest: String::new(),
            entries,
        };
        let j = judge(&r, &b, TODAY);
        assert_eq!(j.waived.len(), 1);
        assert_eq!(j.problems().count(), 0);
    }
}
