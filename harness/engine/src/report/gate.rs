//! The gate's verdict on a run as a whole, and the command that reruns any
//! one of its trials: both read the report's
//! [`Invocation`](super::invocation::Invocation), what was gated and how.

use serde::{Deserialize, Serialize};

use super::model::{Counts, RunReport, ScenarioResult};
use crate::vocab::{PARITY, SEED_ENV, SEED_OBSERVATION};

/// The gate's verdict on the run as a whole.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "gate", rename_all = "snake_case")]
pub enum Gate {
    /// Every trial of the whole catalogue ran and passed.
    Passed,
    /// A trial failed or errored, or an entry of the baseline
    /// (`--expected-failures`) is stale or expired.
    Failed,
    /// The whole catalogue ran and every failure is a known one the
    /// baseline waives (named in the report, the attestation `WARNED`).
    Waived {
        /// How many, and the baseline's file, in words.
        why: String,
    },
    /// What ran passed, but not the whole catalogue ran (a selection, one
    /// backend, a shard) or some trials were not applicable.
    Partial {
        /// Why, in words.
        why: String,
    },
}

impl Gate {
    /// The banner: `GATE PASSED`, `GATE FAILED`, `PARTIAL: …`.
    pub fn banner(&self) -> String {
        match self {
            Gate::Passed => "GATE PASSED".into(),
            Gate::Failed => "GATE FAILED".into(),
            Gate::Partial { why } => format!("PARTIAL: {why}"),
            Gate::Waived { why } => format!("WAIVED: {why}"),
        }
    }
}

impl RunReport {
    /// The verdict on the whole run.
    pub fn gate(&self) -> Gate {
        let c: Counts = self.counts();
        let inv = &self.invocation;
        if c.failed > 0 || c.errored > 0 || !self.baseline_problems().is_empty() {
            return Gate::Failed;
        }
        let waived = (self.baseline.as_ref())
            .filter(|_| c.waived > 0)
            .map(|b| format!("{} known failure(s) waived by {}", c.waived, b.file));
        let mut why = Vec::new();
        if inv.catalogue_trials > 0 && self.results.len() < inv.catalogue_trials {
            let mut what = inv.selection.clone();
            if inv.backends.len() == 1 {
                what.push(format!("backend={}", inv.backends[0]));
            }
            why.push(format!(
                "{}{} of {} trials",
                if what.is_empty() {
                    String::new()
                } else {
                    format!("{}, ", what.join(", "))
                },
                self.results.len(),
                inv.catalogue_trials
            ));
        }
        if c.not_applicable > 0 {
            why.push(format!(
                "{} not applicable ({})",
                c.not_applicable,
                self.not_applicable_reasons()
            ));
        }
        if c.not_run > 0 {
            why.push(format!("{} not run", c.not_run));
        }
        if self.results.is_empty() {
            why.push("no trial ran".into());
        }
        match (why.is_empty(), waived) {
            (true, None) => Gate::Passed,
            (true, Some(why)) => Gate::Waived { why },
            (false, waived) => Gate::Partial {
                why: why.into_iter().chain(waived).collect::<Vec<_>>().join("; "),
            },
        }
    }

    /// Each distinct reason of the not-applicable trials, with how many
    /// trials it holds back.
    fn not_applicable_reasons(&self) -> String {
        let mut reasons: Vec<(&str, usize)> = Vec::new();
        for r in &self.results {
            if let crate::vocab::Verdict::NotApplicable { message } = &r.verdict {
                match reasons.iter_mut().find(|(m, _)| *m == message) {
                    Some((_, n)) => *n += 1,
                    None => reasons.push((message, 1)),
                }
            }
        }
        let words: Vec<String> = reasons.iter().map(|(m, n)| format!("{n} × {m}")).collect();
        words.join("; ")
    }

    /// The command that reruns exactly `result` against the same Core, with
    /// the same settings (both backends for a parity result).
    pub fn reproduce(&self, result: &ScenarioResult) -> String {
        let inv = &self.invocation;
        let seed = (result.observations.iter())
            .find(|o| o.key == SEED_OBSERVATION)
            .map(|o| format!("{SEED_ENV}={} ", shell_word(o.value.trim_matches('"'))));
        let mut cmd = vec![format!(
            "{}cargo run -p grantgate -- run",
            seed.unwrap_or_default()
        )];
        if !inv.runtime.is_empty() && inv.runtime != "process" {
            cmd.push(format!("--runtime {}", inv.runtime));
        }
        // A trial that ran in Chromium is reproduced in Chromium.
        if self.environment.browser.starts_with("Chromium") {
            cmd.push("--browser chromium".into());
        }
        if !inv.core_arg.is_empty() {
            let flag = if inv.runtime == "docker" {
                "--core-image"
            } else {
                "--core-bin"
            };
            cmd.push(format!("{flag} {}", shell_word(&inv.core_arg)));
        }
        if !inv.adapter_arg.is_empty() {
            cmd.push(format!("--adapter-bin {}", shell_word(&inv.adapter_arg)));
        }
        for pair in &inv.core_env {
            cmd.push(format!("--core-env {}", shell_word(pair)));
        }
        for pair in &inv.adapter_env {
            cmd.push(format!("--adapter-env {}", shell_word(pair)));
        }
        if inv.postgres_url_given {
            cmd.push("--postgres-url \"$GRANTGATE_POSTGRES_URL\"".into());
        }
        if result.backend == PARITY {
            for b in &inv.backends {
                cmd.push(format!("--backend {b}"));
            }
            for b in &inv.backends {
                cmd.push(format!("--exact {b}::{}", result.scenario));
            }
        } else {
            cmd.push(format!("--backend {}", result.backend));
            cmd.push(format!("--exact {}", result.name));
        }
        cmd.join(" ")
    }
}

/// Quotes a word for a POSIX shell when it needs it.
fn shell_word(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:@%+,".contains(c))
    {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::invocation::Invocation;
    use crate::report::model::tests::sample;

    #[test]
    fn reproduce_keeps_the_cores_settings_and_names_the_exact_trial() {
        let mut r = sample();
        r.invocation = Invocation {
            runtime: "process".into(),
            core_arg: "/opt/my core/core".into(),
            core_env: vec!["CORE_FAULT=replay-answers-201".into()],
            backends: vec!["sqlite".into(), "postgres".into()],
            ..Invocation::default()
        };
        let t = &r.results[0];
        assert_eq!(
            r.reproduce(t),
            format!(
                "cargo run -p grantgate -- run --core-bin '/opt/my core/core' \
                 --core-env CORE_FAULT=replay-answers-201 --backend {} --exact {}",
                t.backend, t.name
            )
        );
    }

    #[test]
    fn a_seeded_trial_is_reproduced_with_its_seed() {
        let mut r = sample();
        let t = &mut r.results[0];
        t.observations.push(crate::vocab::Observation {
            step: "seed 42: 8 sequences".into(),
            key: SEED_OBSERVATION.into(),
            value: "\"42\"".into(),
        });
        let t = &r.results[0];
        assert_eq!(
            r.reproduce(t),
            format!(
                "{SEED_ENV}=42 cargo run -p grantgate -- run --backend {} --exact {}",
                t.backend, t.name
            )
        );
    }

    #[test]
    fn the_gate_passes_only_a_whole_green_catalogue() {
        let mut r = sample();
        assert_eq!(r.gate(), Gate::Failed);
        for t in &mut r.results {
            t.verdict = crate::vocab::Verdict::Passed;
        }
        r.invocation.catalogue_trials = r.results.len();
        assert_eq!(r.gate(), Gate::Passed);
        r.invocation.catalogue_trials = r.results.len() + 5;
        r.invocation.selection = vec!["filter=replay".into()];
        assert!(matches!(r.gate(), Gate::Partial { why } if why.starts_with("filter=replay, ")));
    }

    #[test]
    fn trials_not_applicable_or_not_run_make_the_gate_partial_with_their_reasons() {
        use crate::vocab::Verdict;
        let mut r = sample();
        for t in &mut r.results {
            t.verdict = Verdict::Passed;
        }
        r.invocation.catalogue_trials = r.results.len();
        let na = Verdict::NotApplicable {
            message: "needs a real browser".into(),
        };
        r.results[0].verdict = na.clone();
        let mut parity = r.results[0].clone();
        parity.backend = PARITY.into();
        r.results.push(parity);
        r.invocation.catalogue_trials += 1;
        assert_eq!(
            r.gate(),
            Gate::Partial {
                why: "2 not applicable (2 × needs a real browser)".into()
            },
            "one reason, named once with how many trials it holds back"
        );
        r.results[1].verdict = Verdict::NotRun {
            message: "not compared".into(),
        };
        assert!(matches!(r.gate(), Gate::Partial { why } if why.ends_with("; 1 not run")));
        r.results[1].verdict = Verdict::Failed {
            message: "x".into(),
        };
        assert_eq!(
            r.gate(),
            Gate::Failed,
            "a failure outweighs what was not run"
        );
    }
}
