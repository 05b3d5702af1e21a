//! `junit.xml`: one test suite per backend, one test case per scenario.
//! A failed scenario is a `failure`, an errored one an `error`: CI systems
//! show the difference between "the Core broke" and "the harness broke".

use std::time::Duration;

use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};

use super::model::RunReport;
use crate::secrets::SecretRegistry;
use crate::vocab::Verdict;

/// Renders the report as JUnit XML, redacted.
pub fn render(report: &RunReport, secrets: &SecretRegistry) -> String {
    let mut junit = Report::new(format!("grantgate {}", report.run_id));
    junit.set_time(Duration::from_millis(report.duration_ms));
    let mut backends: Vec<&str> = report.results.iter().map(|r| r.backend.as_str()).collect();
    backends.dedup();
    for backend in backends {
        let mut suite = TestSuite::new(backend);
        for r in report.results.iter().filter(|r| r.backend == backend) {
            let status = match &r.verdict {
                Verdict::Passed => TestCaseStatus::success(),
                Verdict::Failed { message } => {
                    let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                    s.set_message(secrets.redact(message));
                    s.set_type("contract failure");
                    s
                }
                Verdict::Errored { message } => {
                    let mut s = TestCaseStatus::non_success(NonSuccessKind::Error);
                    s.set_message(secrets.redact(message));
                    s.set_type("harness or environment error");
                    s
                }
                Verdict::NotApplicable { message } => {
                    let mut s = TestCaseStatus::skipped();
                    s.set_message(secrets.redact(message));
                    s.set_type("not applicable");
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
                r.reproduce_command(),
                steps.join("\n")
            )));
            suite.add_test_case(case);
        }
        junit.add_test_suite(suite);
    }
    let xml = junit.to_string().expect("junit serialises");
    secrets.redact(&xml)
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
}
