//! A run's failures judged against a baseline file (`run
//! --expected-failures`, [`crate::baseline`]): part of the report, so every
//! report format and the exit code read them from the report alone.

use serde::{Deserialize, Serialize};

/// One known failure, as the file lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// One trial, `backend::scenario` (`parity::scenario` for a parity check).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trial: Option<String>,
    /// A scenario id: its trials on every backend, parity included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario: Option<String>,
    /// Only a failure in this step, by its name as the report shows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<String>,
    /// Why the failure is known and accepted for now.
    pub reason: String,
    /// `YYYY-MM-DD`: from this day on (UTC) the entry waives nothing and is
    /// itself a failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires: Option<String>,
}

impl Entry {
    /// The entry in words: `trial sqlite::x`, `scenario x, step `s``.
    pub fn label(&self) -> String {
        let what = match (&self.trial, &self.scenario) {
            (Some(t), _) => format!("trial {t}"),
            (None, Some(s)) => format!("scenario {s}"),
            (None, None) => "nothing".into(),
        };
        match &self.check {
            Some(step) => format!("{what}, step `{step}`"),
            None => what,
        }
    }

    /// Whether the entry has expired on `today` (`YYYY-MM-DD`; the ISO form
    /// orders as text).
    pub fn expired_on(&self, today: &str) -> bool {
        self.expires.as_deref().is_some_and(|e| e <= today)
    }
}

/// A waived failure: the trial, the step it failed in, and the entry that
/// waives it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Waiver {
    /// The trial that failed.
    pub trial: String,
    /// The step it failed in, if it recorded one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<String>,
    /// The entry's index in [`Judged::entries`].
    pub entry: usize,
    /// The entry's reason, repeated for readers of this record alone.
    pub reason: String,
}

/// A baseline entry that broke the gate: stale or expired.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Problem {
    /// The entry's index in [`Judged::entries`].
    pub entry: usize,
    /// What is wrong, in words, with what to do.
    pub why: String,
}

/// A run's failures judged against a baseline file: part of the report.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Judged {
    /// The file's name (not its path: reports hold no path of the machine).
    pub file: String,
    /// SHA-256 of the file, `sha256:<hex>`.
    pub digest: String,
    /// The day it was judged on, `YYYY-MM-DD` (UTC).
    pub today: String,
    /// The entries, in the file's order.
    pub entries: Vec<Entry>,
    /// Each failure an entry in force waives.
    pub waived: Vec<Waiver>,
    /// Entries whose trials now pass (remove them).
    pub stale: Vec<Problem>,
    /// Entries past their `expires` date.
    pub expired: Vec<Problem>,
}

impl Judged {
    /// The waiver of the trial named `trial`, if its failure is waived.
    pub fn waiver(&self, trial: &str) -> Option<&Waiver> {
        self.waived.iter().find(|w| w.trial == trial)
    }

    /// Stale and expired entries: each fails the gate.
    pub fn problems(&self) -> impl Iterator<Item = &Problem> {
        self.stale.iter().chain(&self.expired)
    }
}
