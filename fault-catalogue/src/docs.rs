//! `docs/faults.md`'s two catalogue tables are written from the catalogue:
//! `FAULTS_DOCS=write cargo test -p fault-catalogue docs_faults` writes
//! them, a plain run fails while they disagree.

use crate::{Spec, awg_mcp, refcore};

const PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/faults.md");

/// The comment above each table, naming its source, then its header.
fn tables() -> [(String, String); 2] {
    [
        (
            marker("refcore.rs"),
            table("what it breaks (spec section)", refcore::ALL),
        ),
        (
            marker("awg_mcp.rs"),
            table("what it breaks (spec §6, §9)", awg_mcp::ALL),
        ),
    ]
}

fn marker(file: &str) -> String {
    format!(
        "<!-- Written from fault-catalogue/src/{file}: edit there, then \
         `FAULTS_DOCS=write cargo test -p fault-catalogue docs_faults`. -->"
    )
}

fn table<F>(breaks: &str, all: &[Spec<F>]) -> String {
    let mut out = format!("| name | {breaks} | catches |\n|---|---|---|\n");
    for s in all {
        out.push_str(&format!(
            "| `{}` | {} | {} |\n",
            s.name, s.breaks, s.catches
        ));
    }
    out
}

/// `text` with the table after each marker replaced by the catalogue's.
fn rewritten(text: &str) -> String {
    let mut out = text.to_owned();
    for (marker, table) in tables() {
        let start = out
            .find(&format!("{marker}\n"))
            .unwrap_or_else(|| panic!("docs/faults.md lacks the line {marker}"))
            + marker.len()
            + 1;
        let len: usize = out[start..]
            .split_inclusive('\n')
            .take_while(|l| l.starts_with('|'))
            .map(str::len)
            .sum();
        out.replace_range(start..start + len, &table);
    }
    out
}

#[test]
fn docs_faults_tables_agree_with_the_catalogue() {
    let text = std::fs::read_to_string(PATH).expect("docs/faults.md");
    let wanted = rewritten(&text);
    if std::env::var_os("FAULTS_DOCS").is_some_and(|v| v == "write") {
        std::fs::write(PATH, &wanted).expect("writing docs/faults.md");
    } else {
        assert!(
            text == wanted,
            "docs/faults.md's fault tables differ from fault-catalogue/src: \
             FAULTS_DOCS=write cargo test -p fault-catalogue docs_faults"
        );
    }
}
