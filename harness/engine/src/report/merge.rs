//! `grantgate merge`: the reports of a sharded run (`--shard K/N` on several
//! machines) joined into one, as if one machine had run it all: results in
//! catalogue order, parity compared again over the joined results, one
//! verdict, every format written anew.

use crate::error::{HarnessError, Result};
use crate::report::model::{BackendEnvironment, RunReport, ScenarioResult};
use crate::runner::catalogue::Scenario;
use crate::runner::parity;
use crate::vocab::PARITY;

/// Joins `shards` (each a run's `report.json`) under the id `run_id`. A
/// trial that appears in two shards means the shards overlap: an error, not
/// a guess. `catalogue` orders the results and names the parity scenarios.
pub fn merge(run_id: &str, shards: Vec<RunReport>, catalogue: &[Scenario]) -> Result<RunReport> {
    let first = shards
        .first()
        .ok_or_else(|| HarnessError::Config("merge needs at least one report".into()))?;
    let started_at = shards
        .iter()
        .map(|s| s.started_at.clone())
        .min()
        .unwrap_or_default();
    let mut environment = first.environment.clone();
    let mut results: Vec<ScenarioResult> = Vec::new();
    for shard in &shards {
        for backend in &shard.environment.backends {
            if !environment
                .backends
                .iter()
                .any(|b| b.backend == backend.backend)
            {
                environment
                    .backends
                    .push(BackendEnvironment::clone(backend));
            }
        }
        for r in shard.results.iter().filter(|r| r.backend != PARITY) {
            if results.iter().any(|seen| seen.name == r.name) {
                return Err(HarnessError::Config(format!(
                    "trial {} is in more than one report: the shards overlap",
                    r.name
                )));
            }
            results.push(r.clone());
        }
    }
    let position = |r: &ScenarioResult| {
        let scenario = catalogue.iter().position(|s| s.id == r.scenario);
        (scenario.unwrap_or(usize::MAX), r.backend.clone())
    };
    results.sort_by_key(position);
    let backends = environment.backends.len();
    for scenario in catalogue.iter().filter(|s| s.parity) {
        let ran: Vec<&ScenarioResult> = results
            .iter()
            .filter(|r| r.scenario == scenario.id)
            .collect();
        if backends >= 2 && ran.len() == backends {
            let judged = parity::compare(scenario, &ran);
            results.push(judged);
        }
    }
    let baseline = same_baseline(&shards)?;
    // One Core: shards that gated different ones (or with different
    // adapters) are not one run, and a signed merge would name only one.
    for shard in &shards[1..] {
        let (a, b) = (&first.invocation, &shard.invocation);
        if (&a.core_digest, &a.adapter_digest) != (&b.core_digest, &b.adapter_digest) {
            return Err(HarnessError::Config(format!(
                "the shards gated different Cores or adapters ({} and {}): merge the shards of one run",
                a.core_digest, b.core_digest
            )));
        }
    }
    let mut merged = RunReport {
        run_id: run_id.to_owned(),
        started_at,
        duration_ms: shards.iter().map(|s| s.duration_ms).max().unwrap_or(0),
        environment,
        invocation: super::invocation::Invocation {
            selected_trials: results.len(),
            // Each shard's own `shard=K/N` is no selection of the merged run.
            selection: (first.invocation.selection.iter())
                .filter(|s| !s.starts_with("shard="))
                .cloned()
                .collect(),
            ..first.invocation.clone()
        },
        results,
        // A shard that stopped early leaves the merged run short: say so.
        stopped: Some(
            shards
                .iter()
                .filter_map(|s| s.stopped.as_deref())
                .collect::<Vec<_>>()
                .join("; "),
        )
        .filter(|why| !why.is_empty()),
        baseline: None,
    };
    // Judged anew over the joined results: an entry one shard found unused
    // may waive a failure of another, and parity was compared again.
    merged.baseline =
        baseline.map(|b| crate::baseline::judge(&merged, &b, &crate::baseline::today()));
    Ok(merged)
}

/// The baseline the shards were judged against: none, or the same file in
/// every shard (by digest); shards run against different baselines (or
/// some with one, some without) are refused.
fn same_baseline(shards: &[RunReport]) -> Result<Option<crate::baseline::Baseline>> {
    let digests: Vec<Option<&str>> = (shards.iter())
        .map(|s| s.baseline.as_ref().map(|b| b.digest.as_str()))
        .collect();
    if digests.windows(2).any(|w| w[0] != w[1]) {
        return Err(HarnessError::Config(
            "the shards were run against different --expected-failures files (or only some with one)"
                .into(),
        ));
    }
    Ok(shards
        .first()
        .and_then(|s| s.baseline.as_ref())
        .map(|b| crate::baseline::Baseline {
            file: b.file.clone(),
            digest: b.digest.clone(),
            entries: b.entries.clone(),
        }))
}

/// Reads a run's `report.json` from its report directory (or the file).
pub fn read(path: &std::path::Path) -> Result<RunReport> {
    let file = if path.is_dir() {
        path.join("report.json")
    } else {
        path.to_owned()
    };
    let bytes = std::fs::read(&file).map_err(|e| HarnessError::io(&file, e))?;
    serde_json::from_slice(&bytes).map_err(|e| {
        HarnessError::Config(format!("{}: not a grantgate report: {e}", file.display()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::tests::sample;

    #[test]
    fn shards_join_in_catalogue_order_and_overlaps_are_refused() {
        let mut a = sample();
        let mut b = sample();
        a.results.retain(|r| r.backend == "sqlite");
        b.results.retain(|r| r.backend == "postgres");
        let merged = merge("m", vec![b.clone(), a.clone()], &[]).unwrap();
        assert_eq!(merged.results.len(), a.results.len() + b.results.len());
        assert!(merged.results.iter().all(|r| r.backend != PARITY));
        assert!(merge("m", vec![a.clone(), a.clone()], &[]).is_err());
        b.invocation.core_digest = "sha256:another-core".into();
        let e = merge("m", vec![a, b], &[]).unwrap_err();
        assert!(e.to_string().contains("different Cores"), "{e}");
    }

    #[test]
    fn shards_are_judged_again_against_their_common_baseline() {
        let entries = vec![crate::baseline::Entry {
            trial: Some("sqlite::full_lifecycle".into()),
            scenario: None,
            check: None,
            reason: "known".into(),
            expires: None,
        }];
        let judged = |entries: Vec<crate::baseline::Entry>, digest: &str| {
            Some(crate::baseline::Judged {
                file: "known.toml".into(),
                digest: digest.into(),
                entries,
                ..Default::default()
            })
        };
        let mut a = sample();
        let mut b = sample();
        a.results.retain(|r| r.backend == "sqlite");
        b.results.retain(|r| r.backend == "postgres");
        // The shard that held the failure did not say it was waived: the
        // merge judges it.
        a.baseline = judged(entries.clone(), "sha256:1");
        b.baseline = judged(entries.clone(), "sha256:1");
        let merged = merge("m", vec![a.clone(), b.clone()], &[]).unwrap();
        assert!(merged.waiver("sqlite::full_lifecycle").is_some());
        assert_eq!(merged.counts().waived, 1);
        b.baseline = judged(entries, "sha256:2");
        assert!(merge("m", vec![a.clone(), b.clone()], &[]).is_err());
        b.baseline = None;
        assert!(merge("m", vec![a, b], &[]).is_err());
    }
}
