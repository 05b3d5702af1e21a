//! The acceptance catalogue: every claim grantgate proves about a Core, one
//! async function each, written with `#[scenario(Family, ...)]` next to the
//! doc comment that is its claim. Every scenario runs on every backend, on a
//! fresh stack. Scenarios see only [`grantgate_engine::prelude`].
//!
//! One file per family of spec §7 (a family too large for one file is split
//! into several). To add a scenario: write it in the family's file and add
//! its name to that file's `scenarios()`; to add a family, see
//! `docs/harness.md`.

mod access_loss;
mod adapter_faults;
mod adapter_inputs;
mod authority;
mod boundaries;
mod browser;
mod concurrency;
mod consent;
mod envelope;
mod exact_replay;
pub mod explore;
mod grammars;
mod lifecycle;
mod pagination;
mod privilege;
mod replay;
mod sessions;
mod tombstones;
mod withdrawal;

mod support;

use grantgate_engine::prelude::Scenario;

/// Every scenario, in the order of spec §7 (backend parity, line 11, is the
/// engine's `parity::` trial over every scenario marked `parity`).
pub fn catalogue() -> Vec<Scenario> {
    let families: Vec<Vec<Scenario>> = vec![
        browser::forms::scenarios(),
        browser::refusals::scenarios(),
        browser::csrf_matrix::scenarios(),
        browser::real_browser::scenarios(),
        pagination::pages::scenarios(),
        lifecycle::confirm_and_submit::scenarios(),
        lifecycle::issue_bodies::scenarios(),
        replay::request_keys::scenarios(),
        tombstones::deleted_and_moved::scenarios(),
        withdrawal::in_every_state::scenarios(),
        boundaries::wrong_bot_and_scope::scenarios(),
        boundaries::separation::scenarios(),
        access_loss::mid_flow::scenarios(),
        adapter_faults::transport::scenarios(),
        adapter_faults::success_answers::scenarios(),
        adapter_faults::error_answers::scenarios(),
        privilege::own_token_only::scenarios(),
        authority::approval::scenarios(),
        authority::native_matrix::scenarios(),
        authority::setup_matrix::scenarios(),
        authority::browser_matrix::scenarios(),
        authority::other_repository::scenarios(),
        sessions::cookies_and_tokens::scenarios(),
        sessions::submission_limits::scenarios(),
        adapter_inputs::input_rule::scenarios(),
        adapter_inputs::tools::scenarios(),
        concurrency::in_flight::scenarios(),
        exact_replay::identical::scenarios(),
        exact_replay::access::scenarios(),
        envelope::evidence::scenarios(),
        envelope::refusals::scenarios(),
        consent::happy_paths::scenarios(),
        consent::callbacks::scenarios(),
        consent::core_rules::scenarios(),
        consent::consented_token::scenarios(),
        grammars::identifiers::scenarios(),
        grammars::text::scenarios(),
        grammars::credentials::scenarios(),
        grammars::oauth::scenarios(),
        grammars::token::scenarios(),
        grammars::envelope::scenarios(),
        grammars::native_segments::scenarios(),
        grammars::json::scenarios(),
        explore::sequences::scenarios(),
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
