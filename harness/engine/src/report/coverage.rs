//! Contract coverage: per clause of `docs/spec.md`, the trials of the run
//! that verify it and their verdicts, so an auditor reads which rules a
//! release passed. A pure function of the results and the clause list.

use serde::Serialize;

use super::model::RunReport;
use crate::clauses::{self, Cover};

/// One clause and what the run says of it.
#[derive(Debug, Clone, Serialize)]
pub struct ClauseCoverage {
    /// The clause id, e.g. `S3.list.order`.
    pub id: String,
    /// How the clause is covered.
    pub cover: Cover,
    /// `passed` (every trial of it passed), `failed` (one failed or
    /// errored), `not run` (none of its trials ran), or `n/a` (covered
    /// otherwise than by scenarios, see `cover`).
    pub verdict: &'static str,
    /// Its trials and their verdicts.
    pub trials: Vec<(String, &'static str)>,
}

/// The coverage of every clause by `report`'s backend trials.
pub fn coverage(report: &RunReport) -> Vec<ClauseCoverage> {
    clauses::all()
        .iter()
        .map(|clause| {
            let trials: Vec<(String, &'static str)> = (report.results.iter())
                .filter(|r| r.clauses.contains(&clause.id))
                .map(|r| (r.name.clone(), r.verdict.label()))
                .collect();
            let verdict = match (&clause.cover, trials.is_empty()) {
                (Cover::Scenarios, true) => "not run",
                (Cover::Scenarios, false) => {
                    if trials
                        .iter()
                        .all(|(_, v)| matches!(*v, "passed" | "not applicable"))
                    {
                        "passed"
                    } else {
                        "failed"
                    }
                }
                _ => "n/a",
            };
            ClauseCoverage {
                id: clause.id.clone(),
                cover: clause.cover.clone(),
                verdict,
                trials,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::tests::sample;

    #[test]
    fn a_clause_reads_the_verdicts_of_the_trials_that_name_it() {
        // The sample's failing trials name S3.route.submit.
        let report = sample();
        let all = coverage(&report);
        let submit = all.iter().find(|c| c.id == "S3.route.submit").unwrap();
        assert_eq!(submit.verdict, "failed");
        assert!(!submit.trials.is_empty());
        let order = all.iter().find(|c| c.id == "S3.list.order").unwrap();
        assert_eq!((order.verdict, order.trials.len()), ("not run", 0));
        let version = all.iter().find(|c| c.id == "S5.version").unwrap();
        assert_eq!(version.verdict, "n/a");
    }
}
