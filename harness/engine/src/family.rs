//! The catalogue's families: one per line of spec §7, as a type, so a
//! scenario names its family by a word the compiler checks and reports sort
//! in catalogue order.

use std::fmt;

/// A family of the acceptance catalogue (spec §7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Family {
    /// The engine's own probes (never in a real run).
    Engine,
    /// §7.1 login, the real forms, CSRF and stale revisions.
    Browser,
    /// §7.2 31 grants, totals, `Link`, clamped pages.
    Pagination,
    /// §7.3 confirm, approve, submit, read back.
    Lifecycle,
    /// §7.4 same key and payload, changed payload, distinct keys.
    Replay,
    /// §7.5 deleted and moved Issues.
    Tombstones,
    /// §7.6 withdrawal in every state.
    Withdrawal,
    /// §7.7 wrong bot, missing scope, ordinary activity, independence.
    Boundaries,
    /// §7.8 collaborator removed, repository private, scope reduced.
    AccessLoss,
    /// §7.9 faults between adapter and Core.
    AdapterFaults,
    /// §7.10 the adapter holds only its own token.
    Privilege,
    /// §7.11 the same observable results on every backend.
    Parity,
    /// §7.12 preparing and confirming are not approval; only admins decide.
    Authority,
    /// §7.13 session cookies, logout, tokens, text limits.
    Sessions,
    /// §7.14 the adapter's whole input rule.
    AdapterInputs,
    /// §7.15 concurrent submissions and approvals.
    Concurrency,
    /// §7.16 / §10 exact replay.
    ExactReplay,
    /// §7.16 / §8 the repository grant envelope.
    Envelope,
    /// §7.16 / §9 delegated consent.
    Consent,
    /// Every grammar of the contract (§2, §3, §6), generated valid and
    /// invalid classes on every surface that accepts the value.
    Grammars,
    /// Seeded random sequences of every actor's operations, compared with
    /// a model of the contract and shrunk on a difference.
    Exploration,
}

impl Family {
    /// The spec §7 line and the family's name, zero-padded so that labels
    /// sort in catalogue order: `01 browser`.
    pub const fn label(self) -> &'static str {
        match self {
            Family::Engine => "00 engine",
            Family::Browser => "01 browser",
            Family::Pagination => "02 pagination",
            Family::Lifecycle => "03 full lifecycle",
            Family::Replay => "04 replay",
            Family::Tombstones => "05 tombstones",
            Family::Withdrawal => "06 withdrawal",
            Family::Boundaries => "07 boundaries",
            Family::AccessLoss => "08 access loss",
            Family::AdapterFaults => "09 adapter faults",
            Family::Privilege => "10 privilege separation",
            Family::Parity => "11 backend parity",
            Family::Authority => "12 authority",
            Family::Sessions => "13 sessions and validation",
            Family::AdapterInputs => "14 adapter input rule",
            Family::Concurrency => "15 concurrency",
            Family::ExactReplay => "16 exact replay",
            Family::Envelope => "17 authority envelope",
            Family::Consent => "18 delegated consent",
            Family::Grammars => "19 grammars",
            Family::Exploration => "20 exploration",
        }
    }
}

impl Family {
    /// The spec §7 line: the number of [`label`](Self::label).
    pub fn line(self) -> u8 {
        self.label()[..2].parse().unwrap_or(0)
    }
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}
