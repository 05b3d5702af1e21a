//! The contract's clauses as data: every normative sentence of
//! `docs/spec.md` ends with its id in brackets (`[S3.list.order]`), and each
//! scenario names the ids it verifies (`#[scenario(.., clauses = [..])]`).
//! A clause whose id is followed by one of the [`Cover`] reasons
//! (`[S5.version — every trial: …]`) is covered as the reason says rather
//! than by scenarios of its own.

use std::sync::OnceLock;

/// The contract, as compiled into this harness.
pub const SPEC: &str = include_str!("../../../docs/spec.md");

/// How a clause is covered.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case", tag = "by", content = "why")]
pub enum Cover {
    /// By the scenarios that name it.
    Scenarios,
    /// By every trial (the launch and setup the harness needs), as said.
    EveryTrial(String),
    /// It leaves the Core a freedom; the honest variants named prove the
    /// gate allows it.
    Freedom(String),
    /// It cannot be seen from outside a Core, for the reason given.
    NotObservable(String),
}

/// One clause of the contract.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Clause {
    /// Its id, e.g. `S3.list.order`; the number is the spec's section.
    pub id: String,
    /// How it is covered.
    pub cover: Cover,
}

/// Every clause of [`SPEC`], in the order the spec states them.
pub fn all() -> &'static [Clause] {
    static CLAUSES: OnceLock<Vec<Clause>> = OnceLock::new();
    CLAUSES.get_or_init(|| parse(SPEC))
}

/// The clause with id `id`.
pub fn find(id: &str) -> Option<&'static Clause> {
    all().iter().find(|c| c.id == id)
}

/// Every clause, a line each: its id, then the scenarios of `catalogue`
/// that verify it, or how it is covered otherwise (`grantgate list
/// --clauses`).
pub fn listing(catalogue: &[crate::runner::catalogue::Scenario]) -> String {
    let width = all().iter().map(|c| c.id.len()).max().unwrap_or(0);
    let mut out = String::new();
    for clause in all() {
        let by = match &clause.cover {
            Cover::Scenarios => {
                let names: Vec<&str> = (catalogue.iter())
                    .filter(|s| s.clauses.contains(&clause.id.as_str()))
                    .map(|s| s.id)
                    .collect();
                match names.is_empty() {
                    true => "NO SCENARIO".to_owned(),
                    false => names.join(", "),
                }
            }
            Cover::EveryTrial(why) => format!("(every trial: {why})"),
            Cover::Freedom(why) => format!("(a freedom of the Core: {why})"),
            Cover::NotObservable(why) => format!("(not observable by a gate: {why})"),
        };
        out.push_str(&format!("{:width$}  {by}\n", clause.id));
    }
    out
}

/// The clauses of `text`: every `[S<n>.<name>]` or `[S<n>.<name> — <reason>:
/// <why>]`.
pub fn parse(text: &str) -> Vec<Clause> {
    let mut clauses = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("[S") {
        rest = &rest[start + 1..];
        let Some(end) = rest.find(']') else { break };
        let inner = &rest[..end];
        let (id, note) = match inner.split_once(" — ") {
            Some((id, note)) => (id, Some(note)),
            None => (inner, None),
        };
        if !is_id(id) {
            continue;
        }
        let cover = match note.and_then(|n| n.split_once(": ")) {
            None => Cover::Scenarios,
            Some(("every trial", why)) => Cover::EveryTrial(why.to_owned()),
            Some(("a freedom of the Core", why)) => Cover::Freedom(why.to_owned()),
            Some(("not observable by a gate", why)) => Cover::NotObservable(why.to_owned()),
            Some(_) => continue,
        };
        clauses.push(Clause {
            id: id.to_owned(),
            cover,
        });
        rest = &rest[end..];
    }
    clauses
}

/// `S<digits>.<lowercase, digits, '.', '-'>`.
fn is_id(id: &str) -> bool {
    let Some((section, name)) = id.strip_prefix('S').and_then(|s| s.split_once('.')) else {
        return false;
    };
    !section.is_empty()
        && section.bytes().all(|b| b.is_ascii_digit())
        && !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.' || b == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_their_covers_are_read_from_the_text() {
        let text = "A rule. [S3.list.order] Another [S5.version — every trial: read first] \
                    [S4.wording — a freedom of the Core: variant `x`] \
                    [S5.stop — not observable by a gate: why] [not an id] [S9 nope] [S2.bad — other: x]";
        let got: Vec<(String, Cover)> = parse(text).into_iter().map(|c| (c.id, c.cover)).collect();
        assert_eq!(
            got,
            vec![
                ("S3.list.order".into(), Cover::Scenarios),
                ("S5.version".into(), Cover::EveryTrial("read first".into())),
                ("S4.wording".into(), Cover::Freedom("variant `x`".into())),
                ("S5.stop".into(), Cover::NotObservable("why".into())),
            ]
        );
    }

    #[test]
    fn the_spec_states_each_clause_once() {
        let mut ids: Vec<&str> = all().iter().map(|c| c.id.as_str()).collect();
        assert!(
            ids.len() > 100,
            "only {} clauses read from docs/spec.md",
            ids.len()
        );
        ids.sort();
        let twice: Vec<_> = ids.windows(2).filter(|w| w[0] == w[1]).collect();
        assert!(twice.is_empty(), "clause ids stated twice: {twice:?}");
    }
}
