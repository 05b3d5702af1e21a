//! The catalogue's own layout: what `#[scenario]` registered, the family
//! folders, their imports, and the spec's clauses and faults each names.
//! (An integration test, not the library's unit tests: those would compile
//! the whole catalogue a second time, in test mode.)

use std::collections::BTreeSet;
use std::path::Path;

use grantgate_engine::clauses::{self, Cover};
use grantgate_engine::runner::registry::SCENARIOS;

use grantgate_scenarios::{FOLDERS, catalogue, file_rank};

/// The catalogue is exactly what `#[scenario]` registered, once each;
/// every scenario sits in a file its family's folder names, and no
/// family is empty.
#[test]
fn every_registered_scenario_is_catalogued_in_its_family_folder() {
    let catalogue = catalogue();
    assert_eq!(SCENARIOS.len(), catalogue.len());
    let ids: BTreeSet<&str> = catalogue.iter().map(|s| s.id).collect();
    assert_eq!(ids.len(), catalogue.len(), "a scenario id is used twice");
    for r in SCENARIOS.iter() {
        let s = (r.scenario)();
        let folder = FOLDERS.iter().find(|(_, family, _)| *family == s.family);
        let (name, _, _) = folder.unwrap_or_else(|| panic!("{}: {} has no folder", s.id, s.family));
        assert!(
            r.module
                .starts_with(&format!("grantgate_scenarios::{name}::"))
                && file_rank(r) != usize::MAX,
            "{} ({}) is in {}, not in a file that {name}/mod.rs names",
            s.id,
            s.family,
            r.module
        );
    }
    let families: BTreeSet<_> = FOLDERS.iter().map(|(_, family, _)| *family).collect();
    assert_eq!(families.len(), FOLDERS.len(), "two folders for one family");
    for (folder, family, _) in FOLDERS {
        assert!(
            catalogue.iter().any(|s| s.family == *family),
            "family {family} ({folder}/) has no scenario"
        );
    }
}

/// Every built-in fault's "catches" cell (`docs/faults.md`) names a
/// scenario of the catalogue: the self-test runs it first in that
/// fault's pass, which usually ends there (`selftest::faults::named`).
#[test]
fn every_built_in_fault_names_a_scenario_of_the_catalogue() {
    use grantgate_engine::selftest::faults::named;
    let catalogue = catalogue();
    let names = (fault_catalogue::refcore::ALL.iter().map(|f| f.name))
        .chain(fault_catalogue::awg_mcp::ALL.iter().map(|f| f.name));
    let unnamed: Vec<&str> = names
        .filter(|name| {
            !named(name)
                .iter()
                .any(|n| catalogue.iter().any(|s| s.id == n))
        })
        .collect();
    assert!(
        unnamed.is_empty(),
        "these faults name no scenario in their catches cell: {unnamed:?}"
    );
}

/// No family imports another: a family's files name only `support/`
/// (`crate::support::..`), their own folder (`super::..`) and the
/// engine's prelude; `support/` names only itself and the prelude.
#[test]
fn families_import_only_support_and_the_prelude() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let folders = FOLDERS.iter().map(|(f, _, _)| *f).chain(["support"]);
    let mut wrong = Vec::new();
    for folder in folders {
        for entry in std::fs::read_dir(root.join(folder)).expect("a family folder") {
            let path = entry.expect("a directory entry").path();
            let text = std::fs::read_to_string(&path).expect("a source file");
            let file = path
                .strip_prefix(root)
                .unwrap_or(&path)
                .display()
                .to_string();
            let named = |needle: &str, allowed: &[&str]| {
                (names_after(&text, needle).into_iter())
                    .filter(|m| !allowed.contains(m))
                    .map(|m| format!("{file} names {needle}{m}"))
                    .collect::<Vec<_>>()
            };
            wrong.extend(named("crate::", &["support"]));
            wrong.extend(named("grantgate_engine::", &["prelude"]));
            wrong.extend(named("super::super", &[]));
        }
    }
    assert!(
        wrong.is_empty(),
        "imports past support/ and the prelude: {wrong:#?}"
    );
}

/// Every clause a scenario names is a clause of the spec, and every
/// clause of the spec covered by scenarios has at least one: a rule
/// without a scenario must say in the spec why (`— not observable by a
/// gate: …`, `— every trial: …`, `— a freedom of the Core: …`).
#[test]
fn every_clause_of_the_spec_has_a_scenario_or_a_reason() {
    let catalogue = catalogue();
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

/// The identifiers that follow each `needle` in `text`.
fn names_after<'a>(text: &'a str, needle: &str) -> Vec<&'a str> {
    (text.match_indices(needle))
        .map(|(at, _)| &text[at + needle.len()..])
        .map(|rest| {
            let end = rest
                .find(|c: char| !c.is_alphanumeric() && c != '_')
                .unwrap_or(rest.len());
            &rest[..end]
        })
        .collect()
}
