//! `junit.xml`: one test suite per backend, one test case per scenario.
//! A failed scenario is a `failure`, an errored one an `error`: CI systems
//! show the difference between "the Core broke" and "the harness broke".
//! A failure the baseline waives is `skipped` of type `known failure` (as
//! pytest writes an expected failure), its reason the message and the
//! failure the text; each stale or expired baseline entry is a `failure`
//! in a suite of its own, `baseline`.

use std::time::Duration;

use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};

use super::model::{RunReport, ScenarioResult};
use crate::secrets::SecretRegistry;
use crate::vocab::Verdict;

/// Renders the report as JUnit XML, redacted.
pub fn render(report: &RunReport, secrets: &SecretRegistry) -> String {
    let mut junit = Report::new(format!("grantgate {}", report.run_id));
    junit.set_time(Duration::from_millis(report.duration_ms));
    let started = chrono::DateTime::parse_from_rfc3339(&report.started_at).ok();
    if let Some(t) = started {
        junit.set_timestamp(t);
    }
    let mut backends: Vec<&str> = Vec::new();
    for r in &report.results {
        if !backends.contains(&r.backend.as_str()) {
            backends.push(&r.backend);
        }
    }
    for backend in backends {
        let mut suite = TestSuite::new(backend);
        if let Some(t) = started {
            suite.set_timestamp(t);
        }
        suite.add_property(("gate", report.gate().banner().as_str()));
        suite.add_property(("core", report.invocation.core_digest.as_str()));
        suite.add_property(("browser", report.environment.browser.as_str()));
        let time: u64 = report
            .results
            .iter()
            .filter(|r| r.backend == backend)
            .map(|r| r.duration_ms)
            .sum();
        suite.set_time(Duration::from_millis(time));
        for r in report.results.iter().filter(|r| r.backend == backend) {
            let status = match &r.verdict {
                Verdict::Passed => TestCaseStatus::success(),
                Verdict::Failed { message } if report.waiver(&r.name).is_some() => {
                    let reason = report.waiver(&r.name).map(|w| w.reason.as_str());
                    let mut s = TestCaseStatus::skipped();
                    s.set_message(secrets.redact(&format!(
                        "known failure, waived: {}",
                        reason.unwrap_or_default()
                    )));
                    s.set_type("known failure");
                    s.set_description(secrets.redact(&failure_text(report, r, message)));
                    s
                }
                Verdict::Failed { message } => {
                    let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                    s.set_message(secrets.redact(message));
                    s.set_type("contract failure");
                    s.set_description(secrets.redact(&failure_text(report, r, message)));
                    s
                }
                Verdict::Errored { message } => {
                    let mut s = TestCaseStatus::non_success(NonSuccessKind::Error);
                    s.set_message(secrets.redact(message));
                    s.set_type("harness or environment error");
                    s.set_description(secrets.redact(&failure_text(report, r, message)));
                    s
                }
                Verdict::NotApplicable { message } => {
                    let mut s = TestCaseStatus::skipped();
                    s.set_message(secrets.redact(message));
                    s.set_type("not applicable");
                    s
                }
                Verdict::NotRun { message } => {
                    let mut s = TestCaseStatus::skipped();
                    s.set_message(secrets.redact(message));
                    s.set_type("not run");
                    s
                }
            };
            let mut case = TestCase::new(r.name.clone(), status);
            case.set_classname(format!("grantgate.{}", r.family));
            case.set_time(Duration::from_millis(r.duration_ms));
            case.set_assertions(r.steps.iter().map(|s| s.assertions.len()).sum());
            let steps: Vec<String> = r
                .steps
                .iter()
                .map(|s| format!("step: {}", s.name))
                .collect();
            case.set_system_out(secrets.redact(&format!(
                "{}\nreproduce: {}\n{}",
                r.claim,
                report.reproduce(r),
                steps.join("\n")
            )));
            suite.add_test_case(case);
        }
        junit.add_test_suite(suite);
    }
    if let Some(b) = &report.baseline {
        let mut suite = TestSuite::new("baseline");
        suite.add_property(("file", b.file.as_str()));
        for p in b.problems() {
            let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
            s.set_message(secrets.redact(&p.why));
            s.set_type("baseline entry");
            let mut case = TestCase::new(b.entries[p.entry].label(), s);
            case.set_classname("grantgate.baseline");
            suite.add_test_case(case);
        }
        if b.problems().next().is_some() {
            junit.add_test_suite(suite);
        }
    }
    let xml = junit.to_string().expect("junit serialises");
    secrets.redact(&xml)
}

/// The body of a `failure`/`error` element, which GitLab and Jenkins show:
/// the message, the failed check's expected and actual values, the command
/// that reproduces the trial and where the report shows it.
fn failure_text(report: &RunReport, r: &ScenarioResult, message: &str) -> String {
    let mut text = format!("{message}\n");
    let failed = r
        .steps
        .iter()
        .flat_map(|s| s.assertions.iter().map(move |a| (s, a)))
        .rfind(|(_, a)| !a.passed);
    if let Some((step, a)) = failed {
        text.push_str(&format!(
            "\nstep:     {}\ncheck:    {}\nexpected: {}\nactual:   {}\n",
            step.name, a.what, a.expected, a.actual
        ));
    }
    text.push_str(&format!(
        "\nreproduce: {}\nreport:    {}/index.html#{}\n",
        report.reproduce(r),
        report.run_id,
        super::html::anchor(&r.name)
    ));
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::tests::sample;

    #[test]
    fn failures_and_errors_are_kept_apart() {
        let xml = render(&sample(), &SecretRegistry::new());
        assert!(xml.contains("<testsuite name=\"sqlite\""), "{xml}");
        assert!(
            xml.contains("<failure message=\"step `x`: expected 201, got 500\""),
            "{xml}"
        );
        assert!(
            xml.contains("<error message=\"stack did not start\""),
            "{xml}"
        );
        assert!(xml.contains("tests=\"3\""), "{xml}");
    }

    #[test]
    fn a_waived_failure_is_a_known_failure_and_a_stale_entry_a_failure_of_its_own() {
        use crate::baseline::{Baseline, Entry, judge};
        let entry = |trial: &str| Entry {
            trial: Some(trial.into()),
            scenario: None,
            check: None,
            reason: format!("known {trial}"),
            expires: None,
        };
        let mut report = sample();
        report.results[2].verdict = Verdict::Passed;
        let baseline = Baseline {
            file: "known.toml".into(),
            digest: String::new(),
            entries: vec![
                entry("sqlite::full_lifecycle"),
                entry("parity::full_lifecycle"),
            ],
        };
        report.baseline = Some(judge(&report, &baseline, "2026-01-01"));
        let xml = render(&report, &SecretRegistry::new());
        assert!(
            xml.contains(
                "<skipped message=\"known failure, waived: known sqlite::full_lifecycle\" type=\"known failure\">"
            ),
            "{xml}"
        );
        assert!(xml.contains("<testsuite name=\"baseline\""), "{xml}");
        assert!(
            xml.contains("<testcase name=\"trial parity::full_lifecycle\""),
            "{xml}"
        );
        assert!(xml.contains("type=\"baseline entry\""), "{xml}");
    }
}
