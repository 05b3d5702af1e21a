//! What a scenario is to the engine: an id, its catalogue family, the claim
//! it proves, the fixture it starts from, and the async function that proves
//! it.

use crate::ctx::Ctx;
use crate::runner::outcome::Outcome;
use crate::stack::{Backend, BoxFuture};

/// The function type of a scenario: borrows the context for its run.
pub type ScenarioFn = for<'a> fn(&'a mut Ctx) -> BoxFuture<'a, Outcome>;

/// One catalogue entry.
#[derive(Clone)]
pub struct Scenario {
    /// Stable id, the second half of the trial name (`sqlite::<id>`).
    pub id: &'static str,
    /// The catalogue family: the spec §7 section it belongs to.
    pub family: &'static str,
    /// The one-sentence claim the scenario proves.
    pub claim: &'static str,
    /// The fixture world it starts from (`fixtures/<name>.toml`).
    pub fixture: &'static str,
    /// Extra `CORE_*` variables its stack needs (e.g. a short CSRF TTL).
    pub core_env: &'static [(&'static str, &'static str)],
    /// Whether its observations (`ctx.observe`) must agree across backends:
    /// a `parity::<id>` trial compares them once every backend has run.
    pub parity: bool,
    /// The scenario itself.
    pub run: ScenarioFn,
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
