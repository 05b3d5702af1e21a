//! Verdicts: passed, failed and errored are kept apart everywhere.
//!
//! *Failed* means the system under test (Core or adapter) broke the contract:
//! an assertion did not hold, an answer had the wrong status. *Errored* means
//! the harness or its environment broke: a process would not start, a fixture
//! was invalid, a scenario panicked. JUnit reports them as `failure` and
//! `error`; only the first says anything about the Core.

use serde::{Deserialize, Serialize};

/// How one scenario on one backend ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Verdict {
    /// Every step ran and every assertion held.
    Passed,
    /// The Core or adapter broke the contract.
    Failed {
        /// The first broken expectation, in words.
        message: String,
    },
    /// The harness or environment broke; nothing is known about the Core.
    Errored {
        /// What broke, with a fix-it hint when there is one.
        message: String,
    },
}

impl Verdict {
    /// Short lowercase label: `passed`, `failed`, `errored`.
    pub fn label(&self) -> &'static str {
        match self {
            Verdict::Passed => "passed",
            Verdict::Failed { .. } => "failed",
            Verdict::Errored { .. } => "errored",
        }
    }

    /// The reason, if it did not pass.
    pub fn message(&self) -> Option<&str> {
        match self {
            Verdict::Passed => None,
            Verdict::Failed { message } | Verdict::Errored { message } => Some(message),
        }
    }
}

/// Why a scenario stopped early. Scenario steps return `Result<T, Abort>` and
/// use `?`: the first broken expectation ends the scenario, as data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Abort {
    /// The system under test broke the contract.
    Failed(String),
    /// The harness or environment broke.
    Errored(String),
}

impl Abort {
    /// A contract failure.
    pub fn failed(message: impl Into<String>) -> Self {
        Abort::Failed(message.into())
    }

    /// A harness or environment breakdown.
    pub fn errored(message: impl Into<String>) -> Self {
        Abort::Errored(message.into())
    }

    /// Turns the abort into the verdict it implies.
    pub fn into_verdict(self) -> Verdict {
        match self {
            Abort::Failed(message) => Verdict::Failed { message },
            Abort::Errored(message) => Verdict::Errored { message },
        }
    }
}

impl From<crate::error::HarnessError> for Abort {
    fn from(e: crate::error::HarnessError) -> Self {
        Abort::Errored(e.to_string())
    }
}

/// What a scenario function returns.
pub type Outcome = Result<(), Abort>;

/// What a scenario step returns.
pub type Step<T> = Result<T, Abort>;
