//! Shared fixture setup, shown once: the steps every trial opens with (the
//! Core names its contract and backend, the fixtures are set up) make the
//! same requests in every trial. Each distinct such step is shown once, and
//! a trial whose step made the same requests refers to it.

use std::fmt::Write;

use super::esc;
use super::exchange::{exchange, path};
use crate::report::model::{RunReport, StepRecord};

/// The actor of the harness's own setup requests.
const SETUP: &str = "setup";

/// The distinct shared steps of a run, each with how many trials made it.
pub(super) struct SharedSteps<'a> {
    steps: Vec<(String, &'a StepRecord, usize)>,
}

impl<'a> SharedSteps<'a> {
    /// Finds the steps made only of setup requests that two or more trials
    /// made alike (same step name, same requests and answer statuses).
    pub(super) fn find(report: &'a RunReport) -> Self {
        let mut steps: Vec<(String, &StepRecord, usize)> = Vec::new();
        for step in report.results.iter().flat_map(|r| &r.steps) {
            let Some(sig) = signature(step) else { continue };
            match steps.iter_mut().find(|(s, _, _)| *s == sig) {
                Some(seen) => seen.2 += 1,
                None => steps.push((sig, step, 1)),
            }
        }
        steps.retain(|(_, _, n)| *n >= 2);
        SharedSteps { steps }
    }

    /// The anchor of the shared step this step repeats, if it does.
    pub(super) fn anchor_of(&self, step: &StepRecord) -> Option<String> {
        let sig = signature(step)?;
        let i = self.steps.iter().position(|(s, _, _)| *s == sig)?;
        Some(format!("shared-{}", i + 1))
    }

    /// The section showing each shared step once.
    pub(super) fn render(&self, h: &mut String) {
        if self.steps.is_empty() {
            return;
        }
        h.push_str(
            "<h2 id=\"shared\">Shared setup</h2><p>Steps that many trials open with, making the same \
             requests; each is shown once here, from the first trial that made it (ports, ids and \
             dates differ per trial; every trial's own transcript is in <code>report.json</code>).</p>",
        );
        for (i, (_, step, n)) in self.steps.iter().enumerate() {
            let _ = write!(
                h,
                "<h3 id=\"shared-{}\">{} <small>(in {n} trials)</small></h3>",
                i + 1,
                esc(&step.name)
            );
            for ex in &step.exchanges {
                exchange(h, ex, false);
            }
        }
    }
}

/// What makes two setup steps alike: the name, and each request's actor,
/// method, path and answer status. `None` for a step that is not setup.
fn signature(step: &StepRecord) -> Option<String> {
    if step.exchanges.is_empty() || step.exchanges.iter().any(|e| e.actor != SETUP) {
        return None;
    }
    let mut sig = step.name.clone();
    for e in &step.exchanges {
        let _ = write!(sig, "\n{} {} {}", e.method, path(&e.target), e.status);
    }
    Some(sig)
}
