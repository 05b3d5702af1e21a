//! What a scenario is to the engine: an id, its catalogue family, the claim
//! it proves, the fixture it starts from, and the async function that proves
//! it.

use crate::ctx::Ctx;
use crate::family::Family;
use crate::report::model::ScenarioResult;
use crate::stack::{Backend, BoxFuture};
use crate::vocab::{Outcome, PARITY, Verdict};

/// The function type of a scenario: borrows the context for its run.
pub type ScenarioFn = for<'a> fn(&'a mut Ctx) -> BoxFuture<'a, Outcome>;

/// One catalogue entry.
#[derive(Clone)]
pub struct Scenario {
    /// Stable id, the second half of the trial name (`sqlite::<id>`).
    pub id: &'static str,
    /// The catalogue family: the spec §7 line it belongs to.
    pub family: Family,
    /// The one-sentence claim the scenario proves.
    pub claim: &'static str,
    /// The fixture world it starts from (`fixtures/<name>.toml`).
    pub fixture: &'static str,
    /// Extra `CORE_*` variables its stack needs (e.g. a short CSRF TTL):
    /// launch extensions, so the Core must declare each one.
    pub core_env: &'static [(&'static str, &'static str)],
    /// Setup-surface extensions it needs beyond the contract (e.g.
    /// `repo-visibility`); a Core that does not declare one gets *not
    /// applicable*.
    pub extensions: &'static [&'static str],
    /// The clauses of `docs/spec.md` it verifies, by id (`S3.list.order`).
    pub clauses: &'static [&'static str],
    /// Whether it needs a pristine Core (first start, fixtures made through
    /// the setup API in the trial) instead of a copy of the fixture snapshot.
    pub pristine: bool,
    /// Whether its observations (`ctx.observe`) must agree across backends:
    /// a `parity::<id>` trial compares them once every backend has run.
    pub parity: bool,
    /// The scenario itself.
    pub run: ScenarioFn,
}

impl Scenario {
    /// The trial name of its parity check (`parity::<id>`).
    pub fn parity_trial(&self) -> String {
        format!("{PARITY}::{}", self.id)
    }

    /// The claim its parity check proves.
    pub fn parity_claim(&self) -> String {
        format!(
            "`{}` gives the same observable results on every backend.",
            self.id
        )
    }
}

impl std::fmt::Debug for Scenario {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scenario")
            .field("id", &self.id)
            .field("family", &self.family)
            .finish()
    }
}

/// One scenario on one backend: the unit of scheduling and reporting.
#[derive(Debug, Clone)]
pub struct Trial {
    /// The backend.
    pub backend: Backend,
    /// The scenario.
    pub scenario: Scenario,
}

impl Trial {
    /// The trial's stable name, `backend::scenario`.
    pub fn name(&self) -> String {
        format!("{}::{}", self.backend, self.scenario.id)
    }

    /// The trial's result as it starts: who it is and `verdict`, nothing
    /// recorded yet.
    pub(crate) fn blank_result(&self, verdict: Verdict) -> ScenarioResult {
        let s = &self.scenario;
        ScenarioResult {
            name: self.name(),
            scenario: s.id.to_owned(),
            backend: self.backend.name().to_owned(),
            family: s.family.label().to_owned(),
            claim: s.claim.to_owned(),
            clauses: s.clauses.iter().map(|c| c.to_string()).collect(),
            verdict,
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
        }
    }
}

/// Every trial of `scenarios` on `backends`, backend-major, keeping the
/// catalogue's order; `filter` keeps names containing it.
pub fn trials(scenarios: &[Scenario], backends: &[Backend], filter: Option<&str>) -> Vec<Trial> {
    let mut out = Vec::new();
    for &backend in backends {
        for s in scenarios {
            let t = Trial {
                backend,
                scenario: s.clone(),
            };
            if filter.is_none_or(|f| t.name().contains(f)) {
                out.push(t);
            }
        }
    }
    out
}

/// The text of `grantgate list`: the selected scenarios grouped by family,
/// families and scenarios in catalogue order, each with the trials that run
/// it and its claim; then the parity checks (`parity` are the scenarios
/// whose parity trial is selected), as family 11.
pub fn listing(catalogue: &[Scenario], selected: &[Trial], parity: &[&Scenario]) -> String {
    let mut out = String::new();
    let mut families: Vec<Family> = catalogue.iter().map(|s| s.family).collect();
    families.sort();
    families.dedup();
    for family in families {
        let mut lines = String::new();
        for s in catalogue.iter().filter(|s| s.family == family) {
            let runs: Vec<String> = selected
                .iter()
                .filter(|t| t.scenario.id == s.id)
                .map(Trial::name)
                .collect();
            if !runs.is_empty() {
                lines.push_str(&format!(
                    "  {}  ({})\n      {}\n",
                    s.id,
                    runs.join(", "),
                    one_line(s.claim)
                ));
            }
        }
        if !lines.is_empty() {
            out.push_str(family.label());
            out.push('\n');
            out.push_str(&lines);
        }
    }
    if !parity.is_empty() {
        out.push_str(Family::Parity.label());
        out.push('\n');
        for s in parity {
            out.push_str(&format!(
                "  {}\n      {}\n",
                s.parity_trial(),
                s.parity_claim()
            ));
        }
    }
    out
}

/// A claim on one line: Rust string continuations leave runs of spaces.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(id: &'static str, family: Family) -> Scenario {
        Scenario {
            id,
            family,
            claim: "Claim of   the\n   scenario.",
            fixture: "lab",
            core_env: &[],
            extensions: &[],
            clauses: &[],
            pristine: false,
            parity: true,
            run: |_| Box::pin(async { Ok(()) }),
        }
    }

    #[test]
    fn the_listing_groups_scenarios_by_family_in_catalogue_order() {
        let catalogue = vec![
            scenario("a", Family::Browser),
            scenario("b", Family::Pagination),
            scenario("c", Family::Browser),
        ];
        let selected = trials(&catalogue, &Backend::ALL, None);
        let parity: Vec<&Scenario> = catalogue.iter().take(1).collect();
        assert_eq!(
            listing(&catalogue, &selected, &parity),
            "01 browser\n  a  (sqlite::a, postgres::a)\n      Claim of the scenario.\n  \
             c  (sqlite::c, postgres::c)\n      Claim of the scenario.\n\
             02 pagination\n  b  (sqlite::b, postgres::b)\n      Claim of the scenario.\n\
             11 backend parity\n  parity::a\n      `a` gives the same observable results on every backend.\n"
        );
        let only_b = trials(&catalogue, &Backend::ALL, Some("b"));
        assert_eq!(
            listing(&catalogue, &only_b, &[]),
            "02 pagination\n  b  (sqlite::b, postgres::b)\n      Claim of the scenario.\n"
        );
    }
}
