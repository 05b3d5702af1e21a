//! Backend parity (spec §7.11): a parity scenario must observe the same
//! results on every backend. Once all of its backend trials have run, a
//! `parity::<scenario>` result compares their observations, in order.
//!
//! A pure function of finished results, so `grantgate run` and the
//! `cargo test` catalogue share it.

use crate::report::model::{
    AssertionRecord, Comparison, ComparisonRow, ScenarioResult, StepRecord,
};
use crate::runner::catalogue::Scenario;
use crate::vocab::Verdict;

/// The pseudo-backend name of parity results.
pub use crate::vocab::PARITY;

/// The family of parity results (spec §7.11).
pub const FAMILY: &str = crate::family::Family::Parity.label();

/// Compares the observations of `results` (one per backend, in backend
/// order) and returns the parity result.
///
/// - A backend trial that did not pass leaves nothing to compare
///   ([`not_comparable`]): the check is not run, or not applicable.
/// - A passing trial that observed nothing means the scenario is marked for
///   parity but never calls `ctx.observe`: errored (a harness bug).
/// - Otherwise every backend is compared with the first, observation by
///   observation; the first difference fails the check.
pub fn compare(scenario: &Scenario, results: &[&ScenarioResult]) -> ScenarioResult {
    let mut out = ScenarioResult {
        name: scenario.parity_trial(),
        scenario: scenario.id.to_owned(),
        backend: PARITY.to_owned(),
        family: FAMILY.to_owned(),
        claim: scenario.parity_claim(),
        clauses: Vec::new(),
        verdict: Verdict::Passed,
        duration_ms: 0,
        stack_startup_ms: None,
        started_ms: None,
        core_version: None,
        database_version: None,
        steps: Vec::new(),
        core_log: String::new(),
        adapter_logs: Vec::new(),
        observations: Vec::new(),
        pictures: Vec::new(),
        comparison: None,
        phases: None,
        unanswered: false,
    };
    if results.len() < 2 {
        out.verdict = Verdict::Errored {
            message: format!("parity needs at least two backends; {} ran", results.len()),
        };
        return out;
    }
    if let Some(verdict) = not_comparable(results) {
        out.verdict = verdict;
        return out;
    }
    if let Some(r) = results.iter().find(|r| r.observations.is_empty()) {
        out.verdict = Verdict::Errored {
            message: format!("{} is marked for parity but observed nothing", r.name),
        };
        return out;
    }
    out.comparison = Some(side_by_side(results));
    let reference = results[0];
    for other in &results[1..] {
        let mut step = StepRecord {
            name: format!("{} against {}", other.backend, reference.backend),
            ..StepRecord::default()
        };
        let n = reference.observations.len().max(other.observations.len());
        for i in 0..n {
            let (a, b) = (reference.observations.get(i), other.observations.get(i));
            let what = a
                .or(b)
                .map(|o| format!("step `{}`: {}", o.step, o.key))
                .unwrap_or_default();
            let show = |o: Option<&crate::report::model::Observation>| {
                o.map(|o| o.value.clone())
                    .unwrap_or_else(|| "(nothing)".into())
            };
            let passed = a == b;
            step.assertions.push(AssertionRecord {
                what: what.clone(),
                expected: show(a),
                actual: show(b),
                passed,
            });
            if !passed && out.verdict == Verdict::Passed {
                out.verdict = Verdict::Failed {
                    message: format!(
                        "{what}: {} observed {}, {} observed {}",
                        reference.backend,
                        show(a),
                        other.backend,
                        show(b)
                    ),
                };
            }
        }
        out.steps.push(step);
    }
    out
}

/// Why `results` cannot be compared, if they cannot: a backend trial that
/// failed or errored is counted once, where it is, so the check is *not
/// run*, naming it; one that is not applicable (or not run) leaves the check
/// the same, with the same reason.
fn not_comparable(results: &[&ScenarioResult]) -> Option<Verdict> {
    if let Some(r) = (results.iter())
        .find(|r| matches!(r.verdict, Verdict::Failed { .. } | Verdict::Errored { .. }))
    {
        return Some(Verdict::NotRun {
            message: format!("not compared: {} {}", r.name, r.verdict.label()),
        });
    }
    let r = results.iter().find(|r| r.verdict != Verdict::Passed)?;
    Some(r.verdict.clone())
}

/// Every observation of `results` side by side, row `i` holding the `i`-th
/// observation of each backend (the order the parity check compares in).
fn side_by_side(results: &[&ScenarioResult]) -> Comparison {
    let n = results
        .iter()
        .map(|r| r.observations.len())
        .max()
        .unwrap_or(0);
    let rows = (0..n)
        .map(|i| {
            let seen: Vec<Option<&crate::report::model::Observation>> =
                results.iter().map(|r| r.observations.get(i)).collect();
            let observation = seen
                .iter()
                .flatten()
                .next()
                .map(|o| format!("{}: {}", o.step, o.key))
                .unwrap_or_default();
            let agree = seen.windows(2).all(|w| w[0] == w[1]);
            ComparisonRow {
                observation,
                values: seen.iter().map(|o| o.map(|o| o.value.clone())).collect(),
                agree,
            }
        })
        .collect();
    Comparison {
        backends: results.iter().map(|r| r.backend.clone()).collect(),
        rows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::Observation;

    fn scenario() -> Scenario {
        Scenario {
            id: "s",
            family: crate::family::Family::Lifecycle,
            claim: "c",
            fixture: "lab",
            core_env: &[],
            extensions: &[],
            clauses: &[],
            pristine: false,
            parity: true,
            run: |_| Box::pin(async { Ok(()) }),
        }
    }

    fn result(backend: &str, verdict: Verdict, values: &[&str]) -> ScenarioResult {
        let mut r = crate::report::model::tests::sample().results[0].clone();
        r.backend = backend.into();
        r.name = format!("{backend}::s");
        r.verdict = verdict;
        r.observations = values
            .iter()
            .map(|v| Observation {
                step: "x".into(),
                key: "state".into(),
                value: v.to_string(),
            })
            .collect();
        r
    }

    #[test]
    fn equal_observations_pass_and_are_listed_as_assertions() {
        let (a, b) = (
            result("sqlite", Verdict::Passed, &["\"active\""]),
            result("postgres", Verdict::Passed, &["\"active\""]),
        );
        let p = compare(&scenario(), &[&a, &b]);
        assert_eq!(p.verdict, Verdict::Passed);
        assert_eq!(p.name, "parity::s");
        assert_eq!(p.steps[0].assertions.len(), 1);
        let c = p.comparison.expect("a compared parity result has a table");
        assert_eq!(c.backends, vec!["sqlite", "postgres"]);
        assert_eq!(c.rows.len(), 1);
        assert_eq!(c.rows[0].observation, "x: state");
        assert_eq!(
            c.rows[0].values,
            vec![Some("\"active\"".to_owned()), Some("\"active\"".to_owned())]
        );
        assert!(c.rows[0].agree);
    }

    #[test]
    fn the_table_shows_each_backends_value_and_marks_disagreement() {
        let a = result("sqlite", Verdict::Passed, &["\"active\"", "1"]);
        let b = result("postgres", Verdict::Passed, &["\"revoked\""]);
        let c = compare(&scenario(), &[&a, &b]).comparison.unwrap();
        assert_eq!(c.rows.len(), 2);
        assert!(!c.rows[0].agree);
        assert_eq!(c.rows[1].values, vec![Some("1".to_owned()), None]);
        assert!(!c.rows[1].agree);
    }

    #[test]
    fn a_different_or_missing_observation_fails_naming_both_values() {
        let a = result("sqlite", Verdict::Passed, &["\"active\"", "1"]);
        let b = result("postgres", Verdict::Passed, &["\"revoked\""]);
        let p = compare(&scenario(), &[&a, &b]);
        match p.verdict {
            Verdict::Failed { message } => {
                assert!(message.contains("sqlite observed \"active\""), "{message}");
                assert!(
                    message.contains("postgres observed \"revoked\""),
                    "{message}"
                );
            }
            other => panic!("expected failure, got {other:?}"),
        }
        assert_eq!(
            p.steps[0].assertions.len(),
            2,
            "the missing one is listed too"
        );
    }

    #[test]
    fn a_backend_that_did_not_pass_or_an_empty_scenario_is_not_a_pass() {
        let a = result("sqlite", Verdict::Passed, &["1"]);
        let failed = result(
            "postgres",
            Verdict::Failed {
                message: "x".into(),
            },
            &["1"],
        );
        match compare(&scenario(), &[&a, &failed]).verdict {
            Verdict::NotRun { message } => {
                assert_eq!(message, "not compared: postgres::s failed")
            }
            other => panic!("a failed backend trial is counted once, got {other:?}"),
        }
        let na = |backend| {
            let message = "needs the optional extension `x`".to_owned();
            result(backend, Verdict::NotApplicable { message }, &[])
        };
        let (na_a, na_b) = (na("sqlite"), na("postgres"));
        match compare(&scenario(), &[&na_a, &na_b]).verdict {
            Verdict::NotApplicable { message } => assert_eq!(
                message, "needs the optional extension `x`",
                "the backend's reason"
            ),
            other => panic!("nothing to compare is not applicable, got {other:?}"),
        }
        let empty = result("postgres", Verdict::Passed, &[]);
        assert!(matches!(
            compare(&scenario(), &[&a, &empty]).verdict,
            Verdict::Errored { .. }
        ));
        assert!(matches!(
            compare(&scenario(), &[&a]).verdict,
            Verdict::Errored { .. }
        ));
    }
}
