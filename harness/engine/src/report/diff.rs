//! `grantgate report --diff OLD NEW`: which trials changed verdict or took
//! much longer or shorter between two runs — what a release manager asks
//! first. A pure function of two reports.

use super::model::RunReport;

/// A timing change counts when it is both this many times and this many
/// milliseconds away from the old time: small trials jitter.
const RATIO: f64 = 1.5;
const MIN_MS: u64 = 200;

/// The differences between `old` and `new`, one line each, verdict changes
/// first; empty when nothing changed.
pub fn diff(old: &RunReport, new: &RunReport) -> Vec<String> {
    let mut verdicts = Vec::new();
    let mut timings = Vec::new();
    for n in &new.results {
        match old.results.iter().find(|o| o.name == n.name) {
            None => verdicts.push(format!("new      {}: {}", n.name, n.verdict.label())),
            Some(o) if o.verdict.label() != n.verdict.label() => verdicts.push(format!(
                "verdict  {}: {} -> {}{}",
                n.name,
                o.verdict.label(),
                n.verdict.label(),
                n.verdict
                    .message()
                    .map(|m| format!(" ({m})"))
                    .unwrap_or_default()
            )),
            Some(o) => {
                let (a, b) = (o.duration_ms, n.duration_ms);
                let far = a.abs_diff(b) >= MIN_MS
                    && (b as f64 > a as f64 * RATIO || (b as f64) * RATIO < a as f64);
                if far {
                    timings.push(format!("time     {}: {a} ms -> {b} ms", n.name));
                }
            }
        }
    }
    for o in &old.results {
        if !new.results.iter().any(|n| n.name == o.name) {
            verdicts.push(format!("gone     {}: was {}", o.name, o.verdict.label()));
        }
    }
    verdicts.push(format!(
        "run      {} -> {}: {} ms -> {} ms; {} -> {}",
        old.run_id,
        new.run_id,
        old.duration_ms,
        new.duration_ms,
        old.gate().banner(),
        new.gate().banner()
    ));
    verdicts.extend(timings);
    verdicts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::tests::sample;
    use crate::vocab::Verdict;

    #[test]
    fn verdict_changes_slow_trials_and_gone_trials_are_named() {
        let old = sample();
        let mut new = sample();
        new.results[0].verdict = Verdict::Passed;
        new.results[1].duration_ms = old.results[1].duration_ms * 3 + 1000;
        new.results.pop();
        let lines = diff(&old, &new);
        assert!(
            lines[0].starts_with("verdict  sqlite::full_lifecycle: failed -> passed"),
            "{lines:?}"
        );
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("gone     parity::full_lifecycle")),
            "{lines:?}"
        );
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("time     postgres::full_lifecycle")),
            "{lines:?}"
        );
    }
}
