//! The built-in faults of `refcore` and `awg-mcp` as data (issue #43,
//! `docs/faults.md`).
//!
//! Each fault is one entry of a table: its Rust name, its kebab-case name
//! (the value of `CORE_FAULT` or `AWG_FAULT`), where it is active, whether
//! only a real browser shows it, what it breaks and which trials catch it.
//! The enum, the name table, the parser, the `--list-faults` listing and
//! the tables of `docs/faults.md` all come from that one table, so a fault
//! is written down once.
//!
//! - [`refcore`]: refcore's faults (`CORE_FAULT`).
//! - [`awg_mcp`]: awg-mcp's faults (`AWG_FAULT`).
//!
//! Only a faults build links this crate (both programs depend on it through
//! their `faults` feature): a default build carries no fault names at all.

use std::sync::OnceLock;

pub mod awg_mcp;
#[cfg(test)]
mod docs;
pub mod refcore;

/// Where a fault is active: every backend, or one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActiveOn {
    /// Every backend (and every adapter fault).
    Any,
    /// Only a Core on SQLite.
    Sqlite,
    /// Only a Core on PostgreSQL.
    Postgres,
}

impl ActiveOn {
    /// The word `--list-faults` prints: `any`, or the backend's name.
    pub fn name(self) -> &'static str {
        match self {
            ActiveOn::Any => "any",
            ActiveOn::Sqlite => "sqlite",
            ActiveOn::Postgres => "postgres",
        }
    }

    /// Whether the fault is active on the backend called `backend`.
    pub fn includes(self, backend: &str) -> bool {
        self == ActiveOn::Any || self.name() == backend
    }
}

/// One fault of the catalogue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spec<F> {
    /// The program's enum value, for `fault!(Name)` hooks.
    pub fault: F,
    /// The name its variable takes (`replay-answers-201`).
    pub name: &'static str,
    /// Where it is active.
    pub active_on: ActiveOn,
    /// Whether only a real browser shows it (its self-test pass runs with
    /// `--browser chromium`).
    pub browser: bool,
    /// What it breaks, with the spec section (Markdown: a table cell).
    pub breaks: &'static str,
    /// Which spec §7 lines' trials catch it, and what they look at
    /// (Markdown; the self-test reads the leading line numbers).
    pub catches: &'static str,
}

/// The fault with `name` in `all`.
pub fn find<F: Copy>(all: &[Spec<F>], name: &str) -> Option<Spec<F>> {
    all.iter().find(|s| s.name == name).copied()
}

/// Every name in `all`, comma-separated (for an unknown name's error).
pub fn names<F>(all: &[Spec<F>]) -> String {
    all.iter().map(|s| s.name).collect::<Vec<_>>().join(", ")
}

/// What `--list-faults` prints, so the self-test finds the faults in the
/// binary itself: one line per fault, `name<TAB>active-on`, then
/// `<TAB>browser` when only a real browser shows it (the self-test's
/// `parse_listing` reads exactly this).
pub fn listing<F>(all: &[Spec<F>]) -> String {
    all.iter()
        .map(|s| {
            let browser = if s.browser { "\tbrowser" } else { "" };
            format!("{}\t{}{browser}\n", s.name, s.active_on.name())
        })
        .collect()
}

/// The one active fault of a process, set once at start.
#[derive(Debug)]
pub struct Switch<F>(OnceLock<F>);

impl<F: PartialEq> Switch<F> {
    /// No fault active yet.
    pub const fn new() -> Self {
        Switch(OnceLock::new())
    }

    /// Makes `fault` the active one; a second call changes nothing.
    pub fn set(&self, fault: F) {
        let _ = self.0.set(fault);
    }

    /// Whether `fault` is the active one.
    pub fn is(&self, fault: &F) -> bool {
        self.0.get() == Some(fault)
    }
}

impl<F: PartialEq> Default for Switch<F> {
    fn default() -> Self {
        Self::new()
    }
}

/// Writes one program's catalogue: its `Fault` enum (each variant
/// documented by what it breaks), `ALL` in listing order, and the process's
/// switch (`activate`, `active`).
///
/// An entry: `Variant = "name" { on: Sqlite, browser: true, breaks: "…",
/// catches: "…" }`, where `on` (default `Any`) and `browser` (default
/// `false`) may be left out.
macro_rules! catalogue {
    ($(
        $variant:ident = $name:literal {
            $(on: $on:ident,)?
            $(browser: $browser:literal,)?
            breaks: $breaks:literal,
            catches: $catches:literal $(,)?
        }
    ),* $(,)?) => {
        /// Every fault of this program; the text is `docs/faults.md`'s.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Fault {
            $(
                #[doc = $breaks]
                $variant,
            )*
        }

        /// Every fault, in the order `--list-faults` prints them.
        pub const ALL: &[$crate::Spec<Fault>] = &[$(
            $crate::Spec {
                fault: Fault::$variant,
                name: $name,
                active_on: $crate::catalogue!(@on $($on)?),
                browser: $crate::catalogue!(@browser $($browser)?),
                breaks: $breaks,
                catches: $catches,
            },
        )*];

        static ACTIVE: $crate::Switch<Fault> = $crate::Switch::new();

        /// Makes `fault` this process's active fault (once, at start).
        pub fn activate(fault: Fault) {
            ACTIVE.set(fault);
        }

        /// Whether `fault` is this process's active fault.
        pub fn active(fault: Fault) -> bool {
            ACTIVE.is(&fault)
        }
    };
    (@on) => { $crate::ActiveOn::Any };
    (@on $on:ident) => { $crate::ActiveOn::$on };
    (@browser) => { false };
    (@browser $browser:literal) => { $browser };
}
pub(crate) use catalogue;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_kebab_case_and_listed_once() {
        let mut seen = std::collections::HashSet::new();
        for name in refcore::ALL
            .iter()
            .map(|s| s.name)
            .chain(awg_mcp::ALL.iter().map(|s| s.name))
        {
            assert!(seen.insert(name), "{name} twice");
            assert!(
                name.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
                "{name}"
            );
        }
        for s in awg_mcp::ALL {
            assert!(
                s.name.starts_with("adapter-") || s.name.starts_with("consent-"),
                "{}",
                s.name
            );
            assert_eq!(
                (s.active_on, s.browser),
                (ActiveOn::Any, false),
                "{}",
                s.name
            );
        }
    }

    #[test]
    fn the_listing_says_where_each_fault_is_active() {
        let listing = listing(refcore::ALL);
        assert_eq!(listing.lines().count(), refcore::ALL.len());
        assert!(
            listing.contains("nul-accepted-on-sqlite\tsqlite\n"),
            "{listing}"
        );
        assert!(
            listing.contains("basic-nul-reaches-database\tpostgres\n"),
            "{listing}"
        );
        assert!(
            listing.contains("decision-button-covered\tany\tbrowser\n"),
            "{listing}"
        );
        assert!(listing.contains("replay-answers-201\tany\n"), "{listing}");
        assert!(super::listing(awg_mcp::ALL).contains("adapter-retries-post\tany\n"));
    }

    #[test]
    fn a_name_finds_its_fault_and_only_its() {
        for s in refcore::ALL {
            assert_eq!(find(refcore::ALL, s.name).map(|f| f.fault), Some(s.fault));
        }
        assert!(find(refcore::ALL, "replay-answers-202").is_none());
        assert!(names(awg_mcp::ALL).contains("adapter-retries-post, "));
    }

    #[test]
    fn one_fault_at_most_is_active() {
        let switch = Switch::new();
        switch.set(refcore::Fault::LinkMissing);
        switch.set(refcore::Fault::LinkWrong);
        assert!(switch.is(&refcore::Fault::LinkMissing));
        assert!(!switch.is(&refcore::Fault::LinkWrong));
    }
}
