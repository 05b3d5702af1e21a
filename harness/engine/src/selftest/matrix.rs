//! The kill matrix: which trials each built-in fault made fail.
//!
//! A fault is *killed* when at least one trial failed under it that passed
//! in the clean pass. Only a failure counts: an errored trial says the
//! harness could not run it, nothing about whether the catalogue noticed the
//! fault, so it is listed apart and never counts as a kill. A trial that
//! fails under the fault but did not pass cleanly is listed apart too: it
//! would have failed anyway, so it proves nothing about the fault.
//!
//! [`build`] is pure: it only reads the clean run report and one run report
//! per fault, so the rule is tested without running anything.

use serde::{Deserialize, Serialize};

use super::faults::{FaultSpec, Program};
use crate::report::model::{Counts, RunReport, ScenarioResult};
use crate::vocab::Verdict;

/// Failure messages in the matrix are cut to this many characters: the full
/// text is one rerun away (each fault row says how).
const MESSAGE_CHARS: usize = 300;

/// The whole self-test result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KillMatrix {
    /// The self-test's id (the clean pass's run id); its report directory.
    pub run_id: String,
    /// When the self-test started (RFC 3339, UTC).
    pub started_at: String,
    /// Whole self-test wall time (build excluded), in milliseconds.
    pub duration_ms: u64,
    /// The catalogue on the default build, no fault set.
    pub clean: CleanPass,
    /// One row per fault, in the programs' listing order (Core first).
    pub faults: Vec<FaultRow>,
    /// One row per honest variant of the Core: each must pass every trial.
    #[serde(default)]
    pub variants: Vec<VariantRow>,
    /// The Core passes of several variants together that did not pass,
    /// each with whose change its refusing trials read.
    #[serde(default)]
    pub compositions: Vec<CompositionRow>,
}

/// One honest variant's catalogue pass (`CORE_VARIANT`): a Core that differs
/// from refcore only where the contract leaves room, so a correct gate lets
/// it through.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct VariantRow {
    /// The variant's name (`markup`).
    pub name: String,
    /// How many trials ran.
    pub trials_run: usize,
    /// Trials that did not pass: each is the gate refusing an honest Core.
    pub not_passed: Vec<Cell>,
    /// Wall time of the pass in milliseconds.
    pub duration_ms: u64,
    /// The variants of the Core pass that judged this one, itself included
    /// (only itself when it ran alone).
    #[serde(default)]
    pub pass: Vec<String>,
    /// The command that reruns this variant's pass.
    pub reproduce: String,
}

impl VariantRow {
    /// Builds the row of `name` from the run report of a Core with the
    /// variants `pass` set (`name` among them).
    pub fn of(name: &str, pass: &[String], report: &RunReport) -> VariantRow {
        VariantRow {
            name: name.to_owned(),
            trials_run: report.results.len(),
            not_passed: refusals(report),
            duration_ms: report.duration_ms,
            pass: pass.to_vec(),
            reproduce: reproduce_variants(pass),
        }
    }

    /// Whether the gate let this honest Core through.
    pub fn passed(&self) -> bool {
        self.trials_run > 0 && self.not_passed.is_empty()
    }
}

/// The trials of an honest Core's pass that did not let it through. A Core
/// that declares no extension is honest (spec §5): the trials that need one
/// are not applicable to it, never a refusal.
pub fn refusals(report: &RunReport) -> Vec<Cell> {
    report
        .results
        .iter()
        .filter(|r| match &r.verdict {
            Verdict::Passed => false,
            Verdict::NotApplicable { message } => {
                !message.starts_with(crate::runner::identity::UNDECLARED)
            }
            _ => true,
        })
        .map(cell)
        .collect()
}

/// The command that reruns a Core pass with `variants` set.
fn reproduce_variants(variants: &[String]) -> String {
    format!(
        "cargo run -p grantgate -- run --core-bin target/faults/debug/refcore --core-env CORE_VARIANT={}",
        variants.join(",")
    )
}

/// A Core pass of several variants together that refused the Core. Its
/// members were then rerun one by one; each refusing trial names the members
/// that refused it alone too, whose change it read (none: the trial refused
/// only their combination, which is still an honest Core).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CompositionRow {
    /// The variants set together.
    pub variants: Vec<String>,
    /// How many trials ran.
    pub trials_run: usize,
    /// Trials that did not pass, each with the members it read.
    pub not_passed: Vec<Blamed>,
    /// Wall time of the composed pass in milliseconds.
    pub duration_ms: u64,
    /// The command that reruns the composed pass.
    pub reproduce: String,
}

/// A trial that refused a composed Core, and the members that refused it
/// alone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Blamed {
    /// The trial and why.
    #[serde(flatten)]
    pub cell: Cell,
    /// The members whose pass alone this trial refused too.
    pub read: Vec<String>,
}

impl CompositionRow {
    /// The row of the composed pass `report` of `variants`, blamed with the
    /// members' rows `alone` (each from its pass alone).
    pub fn of(variants: &[String], report: &RunReport, alone: &[VariantRow]) -> CompositionRow {
        let not_passed = refusals(report)
            .into_iter()
            .map(|cell| Blamed {
                read: (alone.iter())
                    .filter(|v| v.not_passed.iter().any(|c| c.trial == cell.trial))
                    .map(|v| v.name.clone())
                    .collect(),
                cell,
            })
            .collect();
        CompositionRow {
            variants: variants.to_vec(),
            trials_run: report.results.len(),
            not_passed,
            duration_ms: report.duration_ms,
            reproduce: reproduce_variants(variants),
        }
    }
}

/// The clean pass, summarised.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CleanPass {
    /// Verdict tally.
    pub counts: Counts,
    /// Trials that did not pass, with why.
    pub not_passed: Vec<Cell>,
    /// Wall time in milliseconds.
    pub duration_ms: u64,
}

/// One fault's catalogue pass.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FaultRow {
    /// The fault's name.
    pub name: String,
    /// Which program it was set on.
    pub program: Program,
    /// What it breaks.
    pub description: String,
    /// The backends its pass ran on.
    pub backends: Vec<String>,
    /// How many trials ran (parity included).
    pub trials_run: usize,
    /// How many trials the pass would have run in full (parity excluded):
    /// more than ran when the pass stopped at its first kill.
    pub trials_selected: usize,
    /// Trials that failed under the fault and passed cleanly: the kills.
    pub killed_by: Vec<Cell>,
    /// Trials that errored: the harness could not run them.
    pub errored: Vec<Cell>,
    /// Trials that failed under the fault but did not pass cleanly either.
    pub failed_without_clean_pass: Vec<Cell>,
    /// Wall time of the pass in milliseconds.
    pub duration_ms: u64,
    /// The command that reruns this fault's pass.
    pub reproduce: String,
}

impl FaultRow {
    /// Whether the catalogue caught the fault.
    pub fn killed(&self) -> bool {
        !self.killed_by.is_empty()
    }

    /// Whether the pass stopped at its first kill, before every selected
    /// trial ran: its row then lists the first catcher, not every one.
    pub fn cut_short(&self) -> bool {
        self.trials_run < self.trials_selected
    }
}

/// One trial and why it did not pass.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cell {
    /// `backend::scenario`.
    pub trial: String,
    /// The verdict's message, cut to a few hundred characters.
    pub message: String,
}

/// One fault's pass, as run.
#[derive(Debug, Clone)]
pub struct FaultPass {
    /// The fault.
    pub fault: FaultSpec,
    /// Its catalogue run.
    pub report: RunReport,
    /// How many trials it selected (fewer ran when it stopped at a kill).
    pub trials_selected: usize,
}

impl KillMatrix {
    /// The faults no trial caught.
    pub fn survivors(&self) -> Vec<&FaultRow> {
        self.faults.iter().filter(|f| !f.killed()).collect()
    }

    /// The honest variants the gate refused.
    pub fn refused_variants(&self) -> Vec<&VariantRow> {
        self.variants.iter().filter(|v| !v.passed()).collect()
    }

    /// How many Core passes judged the honest variants: one per distinct
    /// set of variants among the rows, and one per composed pass that
    /// refused (its members were then judged alone).
    pub fn variant_passes(&self) -> usize {
        let mut sets: Vec<&Vec<String>> = self.variants.iter().map(|v| &v.pass).collect();
        sets.sort();
        sets.dedup();
        sets.len() + self.compositions.len()
    }

    /// Whether every clean trial passed.
    pub fn clean_is_green(&self) -> bool {
        self.clean.not_passed.is_empty()
    }

    /// 0 when the clean pass is green, every fault is killed and every
    /// honest variant passed, alone or composed; 2 when the clean pass only errored (the
    /// environment, not the catalogue); 1 otherwise.
    pub fn exit_code(&self) -> u8 {
        let c = self.clean.counts;
        if c.failed == 0 && c.errored > 0 {
            2
        } else if self.clean_is_green()
            && self.survivors().is_empty()
            && self.refused_variants().is_empty()
            && self.compositions.is_empty()
        {
            0
        } else {
            1
        }
    }
}

/// Builds the matrix from the clean report and one report per fault.
pub fn build(
    started_at: &str,
    duration_ms: u64,
    clean: &RunReport,
    passes: &[FaultPass],
) -> KillMatrix {
    let passed_clean = |trial: &str| {
        clean
            .results
            .iter()
            .any(|r| r.name == trial && r.verdict == Verdict::Passed)
    };
    let faults = passes
        .iter()
        .map(|pass| {
            let mut row = FaultRow {
                name: pass.fault.name.clone(),
                program: pass.fault.program,
                description: pass.fault.description.clone(),
                backends: backends_of(&pass.report),
                trials_run: pass.report.results.len(),
                trials_selected: pass.trials_selected,
                killed_by: Vec::new(),
                errored: Vec::new(),
                failed_without_clean_pass: Vec::new(),
                duration_ms: pass.report.duration_ms,
                reproduce: reproduce(&pass.fault),
            };
            for r in &pass.report.results {
                match &r.verdict {
                    Verdict::Passed => {}
                    Verdict::Failed { .. } if passed_clean(&r.name) => {
                        row.killed_by.push(cell(r));
                    }
                    Verdict::Failed { .. } => row.failed_without_clean_pass.push(cell(r)),
                    Verdict::Errored { .. } => row.errored.push(cell(r)),
                    // Not applicable to this Core, or not run: says nothing about the fault.
                    Verdict::NotApplicable { .. } | Verdict::NotRun { .. } => {}
                }
            }
            row
        })
        .collect();
    KillMatrix {
        run_id: clean.run_id.clone(),
        started_at: started_at.to_owned(),
        duration_ms,
        clean: CleanPass {
            counts: clean.counts(),
            not_passed: clean
                .results
                .iter()
                .filter(|r| r.verdict != Verdict::Passed)
                .map(cell)
                .collect(),
            duration_ms: clean.duration_ms,
        },
        faults,
        variants: Vec::new(),
        compositions: Vec::new(),
    }
}

/// The command that reruns one fault's pass with `grantgate run`.
fn reproduce(fault: &FaultSpec) -> String {
    let (bin, flag) = match fault.program {
        Program::Core => ("--core-bin target/faults/debug/refcore", "--core-env"),
        Program::Adapter => ("--adapter-bin target/faults/debug/awg-mcp", "--adapter-env"),
    };
    format!(
        "cargo run -p grantgate -- run {bin} {flag} {}={}",
        fault.program.env(),
        fault.name
    )
}

fn backends_of(report: &RunReport) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in &report.results {
        if !out.contains(&r.backend) {
            out.push(r.backend.clone());
        }
    }
    out
}

fn cell(r: &ScenarioResult) -> Cell {
    let message = r.verdict.message().unwrap_or_default();
    let mut cut: String = message.chars().take(MESSAGE_CHARS).collect();
    if cut.len() < message.len() {
        cut.push('…');
    }
    Cell {
        trial: r.name.clone(),
        message: cut,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::report::model::tests::sample;

    fn result(name: &str, verdict: Verdict) -> ScenarioResult {
        let mut r = sample().results[0].clone();
        r.name = name.into();
        r.backend = name.split("::").next().unwrap().into();
        r.scenario = name.split("::").nth(1).unwrap().into();
        r.verdict = verdict;
        r
    }

    fn report(results: Vec<ScenarioResult>) -> RunReport {
        let mut r = sample();
        r.results = results;
        r
    }

    fn fault(name: &str) -> FaultSpec {
        FaultSpec {
            name: name.into(),
            program: Program::Core,
            active_on: None,
            browser: false,
            description: format!("{name} breaks a rule"),
            catching: Vec::new(),
            named: Vec::new(),
        }
    }

    fn failed(m: &str) -> Verdict {
        Verdict::Failed { message: m.into() }
    }

    fn errored(m: &str) -> Verdict {
        Verdict::Errored { message: m.into() }
    }

    /// A clean pass of three green trials and one that failed cleanly, and
    /// three faults: one killed, one that only errored, one whose only
    /// failure also failed cleanly.
    pub(crate) fn example() -> KillMatrix {
        let clean = report(vec![
            result("sqlite::a", Verdict::Passed),
            result("sqlite::b", Verdict::Passed),
            result("sqlite::c", Verdict::Passed),
            result("sqlite::d", failed("broken before any fault")),
        ]);
        let pass = |name: &str, verdicts: [Verdict; 4]| {
            let names = ["sqlite::a", "sqlite::b", "sqlite::c", "sqlite::d"];
            FaultPass {
                fault: fault(name),
                trials_selected: 4,
                report: report(
                    names
                        .iter()
                        .zip(verdicts)
                        .map(|(n, v)| result(n, v))
                        .collect(),
                ),
            }
        };
        let passes = [
            pass(
                "killed-twice",
                [
                    failed("expected 200, got 201"),
                    Verdict::Passed,
                    failed("expected 1 issue, got 2"),
                    Verdict::Passed,
                ],
            ),
            pass(
                "only-errored",
                [
                    errored("stack did not start"),
                    Verdict::Passed,
                    Verdict::Passed,
                    Verdict::Passed,
                ],
            ),
            pass(
                "fails-where-clean-failed",
                [
                    Verdict::Passed,
                    Verdict::Passed,
                    Verdict::Passed,
                    failed("still broken"),
                ],
            ),
        ];
        let mut m = build("2026-01-01T00:00:00Z", 1234, &clean, &passes);
        let honest = report(vec![result("sqlite::a", Verdict::Passed)]);
        let refused = report(vec![
            result("sqlite::a", Verdict::Passed),
            result("sqlite::b", failed("reads a CSS class")),
        ]);
        let names = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
        // markup and extra-members passed together; pretty-json and
        // cookie-name refused together, then alone: pretty-json's change is
        // what the refusing trial read.
        let both = names(&["markup", "extra-members"]);
        let refused_pair = names(&["pretty-json", "cookie-name"]);
        let alone = [
            VariantRow::of("pretty-json", &names(&["pretty-json"]), &refused),
            VariantRow::of("cookie-name", &names(&["cookie-name"]), &honest),
        ];
        m.compositions = vec![CompositionRow::of(&refused_pair, &refused, &alone)];
        m.variants = vec![
            VariantRow::of("markup", &both, &honest),
            VariantRow::of("extra-members", &both, &honest),
        ];
        m.variants.extend(alone);
        m
    }

    #[test]
    fn a_refused_composition_names_the_members_whose_change_its_trials_read() {
        let m = example();
        assert_eq!(
            m.variant_passes(),
            4,
            "3 sets judged the rows, 1 composition refused"
        );
        let c = &m.compositions[0];
        assert_eq!(c.variants, ["pretty-json", "cookie-name"]);
        assert_eq!(c.not_passed[0].cell.trial, "sqlite::b");
        assert_eq!(c.not_passed[0].read, ["pretty-json"]);
        assert!(
            c.reproduce
                .ends_with("CORE_VARIANT=pretty-json,cookie-name")
        );
        assert_eq!(m.exit_code(), 1);
        // Members that each pass alone: the refusal read their combination.
        let honest = [m.variants[0].clone(), m.variants[1].clone()];
        let both = CompositionRow::of(
            &c.variants,
            &report(vec![result("sqlite::b", failed("x"))]),
            &honest,
        );
        assert!(both.not_passed[0].read.is_empty());
    }

    #[test]
    fn an_honest_variant_passes_only_when_every_trial_passed() {
        let m = example();
        assert!(m.variants[0].passed());
        assert!(!m.variants[2].passed());
        assert_eq!(m.refused_variants().len(), 1);
        assert_eq!(m.variants[2].not_passed[0].trial, "sqlite::b");
        assert!(!VariantRow::of("empty", &["empty".into()], &report(Vec::new())).passed());
    }

    #[test]
    fn a_fault_is_killed_only_by_a_failure_of_a_cleanly_passing_trial() {
        let m = example();
        let killed = &m.faults[0];
        assert!(killed.killed());
        let trials: Vec<&str> = killed.killed_by.iter().map(|c| c.trial.as_str()).collect();
        assert_eq!(trials, ["sqlite::a", "sqlite::c"]);
        assert_eq!(killed.trials_run, 4);
        assert_eq!(killed.backends, ["sqlite"]);
        // Errored is not a kill.
        assert!(!m.faults[1].killed());
        assert_eq!(m.faults[1].errored[0].trial, "sqlite::a");
        // A failure that also failed cleanly is not a kill.
        assert!(!m.faults[2].killed());
        assert_eq!(m.faults[2].failed_without_clean_pass[0].trial, "sqlite::d");
        let survivors: Vec<&str> = m.survivors().iter().map(|f| f.name.as_str()).collect();
        assert_eq!(survivors, ["only-errored", "fails-where-clean-failed"]);
    }

    #[test]
    fn the_exit_code_needs_a_green_clean_pass_no_survivor_and_no_refused_variant() {
        let mut m = example();
        assert!(!m.clean_is_green());
        assert_eq!(m.exit_code(), 1);
        m.clean.not_passed.clear();
        m.clean.counts = Counts {
            passed: 4,
            failed: 0,
            errored: 0,
            ..Counts::default()
        };
        assert_eq!(m.exit_code(), 1, "two survivors");
        m.faults.truncate(1);
        assert_eq!(m.exit_code(), 1, "a refused honest variant");
        m.variants.truncate(2);
        assert_eq!(m.exit_code(), 1, "a refused composition");
        m.compositions.clear();
        assert_eq!(m.exit_code(), 0);
        m.clean.counts.errored = 1;
        m.clean.not_passed.push(Cell {
            trial: "sqlite::a".into(),
            message: "no postgres".into(),
        });
        assert_eq!(m.exit_code(), 2, "an errored clean pass is the environment");
    }

    #[test]
    fn rows_say_how_to_rerun_the_fault_and_cut_long_messages() {
        let m = example();
        assert_eq!(
            m.faults[0].reproduce,
            "cargo run -p grantgate -- run --core-bin target/faults/debug/refcore \
             --core-env CORE_FAULT=killed-twice"
        );
        let long = result("sqlite::a", failed(&"x".repeat(1000)));
        assert_eq!(cell(&long).message.chars().count(), MESSAGE_CHARS + 1);
    }
}
