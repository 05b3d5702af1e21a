//! The built-in faults the self-test runs the catalogue against.
//!
//! Why the list comes from the binaries (`refcore --list-faults`,
//! `awg-mcp --list-faults`) and not from a list here: a fault added to a
//! program is then run by the next self-test without anyone remembering to
//! register it, and a fault removed cannot linger as a phantom row.
//!
//! Which backends a fault runs on is data too: each listed line says where
//! the fault is active (`any`, or one backend). A fault active everywhere
//! runs on one backend, the first selected (SQLite by default), because the
//! catalogue checks the same rules on both and a full second pass would only
//! double the cost. A fault active on one backend only runs on every selected
//! backend, with parity: the difference between backends is what gives it
//! away, and its per-backend check may not exist yet.

use std::path::Path;
use std::process::Command;

use serde::{Deserialize, Serialize};

use crate::error::{HarnessError, Result};
use crate::stack::Backend;

/// `docs/faults.md`, compiled in: its catalogue tables describe each fault
/// for the report.
const DOCS: &str = include_str!("../../../../docs/faults.md");

/// The flag both programs answer with their catalogue of faults.
pub const LIST_FLAG: &str = "--list-faults";

/// Which program reads a fault's variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Program {
    /// `refcore`, through `CORE_FAULT`.
    Core,
    /// `awg-mcp`, through `AWG_FAULT`.
    Adapter,
}

impl Program {
    /// The environment variable that selects a fault.
    pub fn env(self) -> &'static str {
        match self {
            Program::Core => "CORE_FAULT",
            Program::Adapter => "AWG_FAULT",
        }
    }

    /// The program's name.
    pub fn name(self) -> &'static str {
        match self {
            Program::Core => "refcore",
            Program::Adapter => "awg-mcp",
        }
    }
}

/// One fault as its program lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FaultSpec {
    /// The name (`replay-answers-201`).
    pub name: String,
    /// The program that reads it.
    pub program: Program,
    /// The one backend it is active on, or `None` for every backend.
    pub active_on: Option<Backend>,
    /// Whether only a real browser shows it (listed with a third field
    /// `browser`): its pass runs with `--browser chromium`.
    pub browser: bool,
    /// What it breaks, from `docs/faults.md` (or a note that the docs lack it).
    pub description: String,
    /// The spec §7 lines of the families `docs/faults.md` says catch it:
    /// their trials run first, so a pass that stops at its first kill stops
    /// early.
    pub catching: Vec<u8>,
    /// The scenarios that cell names (its `backticked` ids): they run
    /// before the rest of their families, so most passes end at their first
    /// trial. Order only: a named scenario that misses is followed by the
    /// others, and the matrix says who caught the fault.
    pub named: Vec<String>,
}

impl FaultSpec {
    /// Whether `family` is one `docs/faults.md` names as catching this fault.
    pub fn caught_by(&self, family: crate::family::Family) -> bool {
        self.catching.contains(&family.line())
    }

    /// Where a trial of `scenario` (its id and family) runs in this fault's
    /// pass: the named scenarios first, then the rest of the catching
    /// families, then the others (a stable sort keeps the catalogue's order
    /// within each).
    pub fn rank(&self, id: &str, family: crate::family::Family) -> u8 {
        if self.named.iter().any(|n| n == id) {
            0
        } else if self.caught_by(family) {
            1
        } else {
            2
        }
    }
}

impl FaultSpec {
    /// The backends this fault's catalogue pass runs on, out of `selected`
    /// (never empty when `selected` is not): see the module doc.
    pub fn backends(&self, selected: &[Backend]) -> Vec<Backend> {
        match self.active_on {
            Some(_) => selected.to_vec(),
            None => selected.iter().take(1).copied().collect(),
        }
    }
}

/// Parses a `--list-faults` answer: one `name<TAB>active-on` per line.
pub fn parse_listing(program: Program, text: &str) -> std::result::Result<Vec<FaultSpec>, String> {
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let (name, on) = line
            .split_once('\t')
            .ok_or_else(|| format!("`{line}` is not `name<TAB>active-on`"))?;
        let (on, browser) = match on.split_once('\t') {
            Some((on, "browser")) => (on, true),
            Some((_, other)) => return Err(format!("fault `{name}`: unknown mark `{other}`")),
            None => (on, false),
        };
        let active_on = match on.trim() {
            "any" => None,
            other => Some(
                Backend::ALL
                    .into_iter()
                    .find(|b| b.name() == other)
                    .ok_or_else(|| format!("fault `{name}`: unknown backend `{other}`"))?,
            ),
        };
        out.push(FaultSpec {
            name: name.trim().to_owned(),
            program,
            active_on,
            browser,
            description: describe(name.trim()),
            catching: catching(name.trim()),
            named: named(name.trim()),
        });
    }
    Ok(out)
}

/// Asks a faults build of `program` at `bin` for its faults.
pub fn list(program: Program, bin: &Path) -> Result<Vec<FaultSpec>> {
    let out = Command::new(bin)
        .arg(LIST_FLAG)
        .env_remove(program.env())
        .output()
        .map_err(|e| HarnessError::io(bin, e))?;
    if !out.status.success() {
        return Err(HarnessError::Config(format!(
            "`{} {LIST_FLAG}` failed ({}): {}; the self-test needs a build with the `faults` \
             feature: `{}`",
            bin.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim(),
            crate::binaries::FAULTS_BUILD_COMMAND
        )));
    }
    parse_listing(program, &String::from_utf8_lossy(&out.stdout))
        .map_err(|e| HarnessError::Config(format!("`{} {LIST_FLAG}`: {e}", bin.display())))
}

/// The "catches" column of `docs/faults.md` for `name`.
fn catches(name: &str) -> &'static str {
    let cell = format!("| `{name}` |");
    DOCS.lines()
        .find_map(|l| l.strip_prefix(&cell))
        .and_then(|rest| rest.split(" | ").nth(1))
        .unwrap_or_default()
}

/// The family lines at the start of the "catches" column of
/// `docs/faults.md` for `name` (`2: …`, `4, 5: …`, `1 and 13: …`).
pub fn catching(name: &str) -> Vec<u8> {
    let head = catches(name).split(':').next().unwrap_or_default();
    head.split(|c: char| !c.is_ascii_digit())
        .filter_map(|n| n.parse().ok())
        .collect()
}

/// The identifiers in backticks in the "catches" column for `name` (the
/// scenarios it names, and any other code word: those match no trial).
pub fn named(name: &str) -> Vec<String> {
    catches(name)
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|w| {
            !w.is_empty()
                && w.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        })
        .map(str::to_owned)
        .collect()
}

/// The "what it breaks" column of `docs/faults.md` for `name`.
pub fn describe(name: &str) -> String {
    let cell = format!("| `{name}` |");
    DOCS.lines()
        .find_map(|l| l.strip_prefix(&cell))
        .and_then(|rest| rest.split(" | ").next())
        .map(|d| d.trim().to_owned())
        .unwrap_or_else(|| "(not described in docs/faults.md)".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listing_parses_with_where_each_fault_is_active() {
        let faults = parse_listing(
            Program::Core,
            "replay-answers-201\tany\nnul-accepted-on-sqlite\tsqlite\n",
        )
        .unwrap();
        assert_eq!(faults.len(), 2);
        assert_eq!(faults[0].active_on, None);
        assert_eq!(faults[1].active_on, Some(Backend::Sqlite));
        assert!(faults[0].description.contains("201"), "{faults:?}");
        assert!(parse_listing(Program::Core, "no-tab").is_err());
        assert!(parse_listing(Program::Core, "x\tmysql").is_err());
        let marked = parse_listing(Program::Core, "x\tany\tbrowser\ny\tany\n").unwrap();
        assert_eq!((marked[0].browser, marked[1].browser), (true, false));
        assert!(parse_listing(Program::Core, "x\tany\tfirefox").is_err());
    }

    #[test]
    fn a_backend_specific_fault_runs_on_every_selected_backend_others_on_the_first() {
        let mut f = parse_listing(Program::Core, "x\tany").unwrap().remove(0);
        assert_eq!(f.backends(&Backend::ALL), vec![Backend::Sqlite]);
        assert_eq!(f.backends(&[Backend::Postgres]), vec![Backend::Postgres]);
        f.active_on = Some(Backend::Sqlite);
        assert_eq!(f.backends(&Backend::ALL), Backend::ALL.to_vec());
    }

    #[test]
    fn descriptions_come_from_the_docs_tables() {
        assert!(describe("adapter-retries-post").contains("sent a second time"));
        assert_eq!(
            describe("no-such-fault"),
            "(not described in docs/faults.md)"
        );
    }

    #[test]
    fn the_catching_families_come_from_the_docs_table() {
        assert_eq!(catching("pagination-off-by-one"), vec![2]);
        assert_eq!(catching("replay-answers-201"), vec![4]);
        assert!(catching("no-such-fault").is_empty());
        let spec = parse_listing(Program::Core, "replay-answers-201\tany")
            .unwrap()
            .remove(0);
        assert!(spec.caught_by(crate::family::Family::Replay));
        assert!(!spec.caught_by(crate::family::Family::Browser));
    }

    #[test]
    fn the_named_scenarios_run_first_then_the_catching_families() {
        // Every code word in backticks, scenario or not (`code`, `state`).
        assert_eq!(
            named("redirect-query-ignored"),
            ["consent_decision_grammar", "code", "state"]
        );
        let spec = parse_listing(Program::Core, "redirect-query-ignored\tany")
            .unwrap()
            .remove(0);
        use crate::family::Family;
        let family = Family::Grammars;
        assert_eq!(family.line(), 19);
        let other = Family::Replay;
        assert_eq!(spec.rank("consent_decision_grammar", family), 0);
        assert_eq!(spec.rank("consent_decision_grammar", other), 0);
        assert_eq!(spec.rank("scope_grammar", family), 1);
        assert_eq!(spec.rank("scope_grammar", other), 2);
    }
}
