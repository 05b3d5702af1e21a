//! The acceptance catalogue: every claim grantgate proves about a Core, one
//! async function each, written with `#[scenario(Family, ...)]` next to the
//! doc comment that is its claim. Every scenario runs on every backend, on a
//! fresh stack. Scenarios see only [`grantgate_engine::prelude`].
//!
//! One file per family of spec §7 (a family too large for one file is split
//! into several). To add a scenario: write it in the family's file and add
//! its name to that file's `scenarios()`; to add a family, see
//! `docs/harness.md`.

// PORTING: each module is uncommented (here and in `catalogue()`) once its
// file compiles against the prelude.
pub mod access_loss;
pub mod adapter_errors;
pub mod adapter_faults;
pub mod adapter_inputs;
pub mod adapter_responses;
pub mod adapter_tools;
pub mod authority;
pub mod authority_browser;
pub mod authority_browser_csrf;
pub mod authority_callers;
pub mod authority_matrix;
pub mod authority_matrix_setup;
pub mod authority_repository;
pub mod bodies;
pub mod boundaries;
pub mod browser;
pub mod concurrency;
pub mod consent_authority;
pub mod consent_callbacks;
pub mod consent_core_rules;
pub mod consent_flow;
pub mod envelope;
pub mod envelope_refusals;
pub mod exact_replay;
pub mod exact_replay_access;
pub mod explore;
pub mod explore_model;
pub mod explore_reads;
pub mod explore_run;
pub mod grammars;
pub mod grammars_credentials;
pub mod grammars_envelope;
pub mod grammars_json;
pub mod grammars_oauth;
pub mod grammars_segments;
pub mod grammars_text;
pub mod grammars_token;
pub mod lifecycle;
pub mod pagination;
pub mod privilege;
pub mod real_browser;
pub mod refusals;
pub mod replay;
pub mod separation;
pub mod sessions;
pub mod tombstones;
pub mod validation;
pub mod withdrawal;

mod support;

use grantgate_engine::prelude::Scenario;

/// Every scenario, in the order of spec §7 (backend parity, line 11, is the
/// engine's `parity::` trial over every scenario marked `parity`).
pub fn catalogue() -> Vec<Scenario> {
    let families: Vec<Vec<Scenario>> = vec![
        browser::scenarios(),
        refusals::scenarios(),
        authority_browser_csrf::scenarios(),
        real_browser::scenarios(),
        pagination::scenarios(),
        lifecycle::scenarios(),
        bodies::scenarios(),
        replay::scenarios(),
        tombstones::scenarios(),
        withdrawal::scenarios(),
        boundaries::scenarios(),
        separation::scenarios(),
        access_loss::scenarios(),
        adapter_faults::scenarios(),
        adapter_responses::scenarios(),
        adapter_errors::scenarios(),
        privilege::scenarios(),
        authority::scenarios(),
        authority_matrix::scenarios(),
        authority_matrix_setup::scenarios(),
        authority_browser::scenarios(),
        authority_repository::scenarios(),
        sessions::scenarios(),
        validation::scenarios(),
        adapter_inputs::scenarios(),
        adapter_tools::scenarios(),
        concurrency::scenarios(),
        exact_replay::scenarios(),
        exact_replay_access::scenarios(),
        envelope::scenarios(),
        envelope_refusals::scenarios(),
        consent_flow::scenarios(),
        consent_callbacks::scenarios(),
        consent_core_rules::scenarios(),
        consent_authority::scenarios(),
        grammars::scenarios(),
        grammars_text::scenarios(),
        grammars_credentials::scenarios(),
        grammars_oauth::scenarios(),
        grammars_token::scenarios(),
        grammars_envelope::scenarios(),
        grammars_segments::scenarios(),
        grammars_json::scenarios(),
        explore::scenarios(),
    ];
    families.concat()
}

#[cfg(test)]
mod tests {
    use grantgate_engine::clauses::{self, Cover};

    /// Every clause a scenario names is a clause of the spec, and every
    /// clause of the spec covered by scenarios has at least one: a rule
    /// without a scenario must say in the spec why (`— not observable by a
    /// gate: …`, `— every trial: …`, `— a freedom of the Core: …`).
    #[test]
    fn every_clause_of_the_spec_has_a_scenario_or_a_reason() {
        let catalogue = super::catalogue();
        let mut unknown = Vec::new();
        for s in &catalogue {
            assert!(
                !s.clauses.is_empty(),
                "{} names no clause of docs/spec.md",
                s.id
            );
            unknown.extend(
                (s.clauses.iter())
                    .filter(|c| clauses::find(c).is_none())
                    .map(|c| format!("{} names {c}", s.id)),
            );
        }
        assert!(
            unknown.is_empty(),
            "clauses not in docs/spec.md: {unknown:#?}"
        );
        let uncovered: Vec<&str> = (clauses::all().iter())
            .filter(|c| c.cover == Cover::Scenarios)
            .filter(|c| !catalogue.iter().any(|s| s.clauses.contains(&c.id.as_str())))
            .map(|c| c.id.as_str())
            .collect();
        assert!(
            uncovered.is_empty(),
            "clauses of docs/spec.md no scenario verifies (add one, or say in the spec why none can): {uncovered:?}"
        );
    }
}
