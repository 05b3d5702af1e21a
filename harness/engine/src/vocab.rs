//! The engine's vocabulary: verdicts, aborts and the records a scenario's
//! journal holds (steps, assertions, exchanges, observations). A leaf module:
//! the runner, the actors, the journal and the reports all speak it, and it
//! depends on none of them, so the engine has no import cycle.

use serde::{Deserialize, Serialize};

/// The pseudo-backend of a parity result (`parity::scenario`).
pub const PARITY: &str = "parity";

/// The observation a seeded scenario (family 20, the explorer) records its
/// seed under, and the variable that makes a run use that seed: a trial
/// that recorded one is reproduced with it, since a seed drawn per process
/// would not give the same sequences again.
pub const SEED_OBSERVATION: &str = "seed";
/// See [`SEED_OBSERVATION`].
pub const SEED_ENV: &str = "GRANTGATE_EXPLORE_SEED";

/// How one scenario on one backend ended.
///
/// *Failed* means the system under test (Core or adapter) broke the contract:
/// an assertion did not hold, an answer had the wrong status. *Errored* means
/// the harness or its environment broke: a process would not start, a
/// fixture was invalid, a scenario panicked. *Not applicable* means the
/// scenario relies on an optional launch extension the Core does not
/// declare: nothing is known either way, and it never counts as passed.
/// *Not run* means the trial was not run because of another result (a
/// parity check whose backend trial failed, a run stopped early): it counts
/// neither way, and the result that stopped it is counted once, where it is.
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
    /// The scenario needs an optional extension the Core does not declare.
    NotApplicable {
        /// Which extension, and how a Core declares it.
        message: String,
    },
    /// Not run because of another result, named in the message.
    NotRun {
        /// Which result, and why it leaves this trial nothing to do.
        message: String,
    },
}

impl Verdict {
    /// Short lowercase label: `passed`, `failed`, `errored`, `not applicable`,
    /// `not run`.
    pub fn label(&self) -> &'static str {
        match self {
            Verdict::Passed => "passed",
            Verdict::Failed { .. } => "failed",
            Verdict::Errored { .. } => "errored",
            Verdict::NotApplicable { .. } => "not applicable",
            Verdict::NotRun { .. } => "not run",
        }
    }

    /// The reason, if it did not pass.
    pub fn message(&self) -> Option<&str> {
        match self {
            Verdict::Passed => None,
            Verdict::Failed { message }
            | Verdict::Errored { message }
            | Verdict::NotApplicable { message }
            | Verdict::NotRun { message } => Some(message),
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
    /// A contract failure. The message is cut to a readable size
    /// ([`crate::limits::cut`]): it often quotes what the Core sent.
    pub fn failed(message: impl Into<String>) -> Self {
        Abort::Failed(crate::limits::cut(&message.into()))
    }

    /// A harness or environment breakdown (its message cut likewise).
    pub fn errored(message: impl Into<String>) -> Self {
        Abort::Errored(crate::limits::cut(&message.into()))
    }

    /// Turns the abort into the verdict it implies.
    pub fn into_verdict(self) -> Verdict {
        match self {
            Abort::Failed(message) => Verdict::Failed { message },
            Abort::Errored(message) => Verdict::Errored { message },
        }
    }
}

/// The message as a person reads it (`Failed("…")` is for debugging only).
impl std::fmt::Display for Abort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Abort::Failed(m) => write!(f, "{m}"),
            Abort::Errored(m) => write!(f, "harness error: {m}"),
        }
    }
}

impl From<crate::error::HarnessError> for Abort {
    fn from(e: crate::error::HarnessError) -> Self {
        match e {
            crate::error::HarnessError::AdapterStart(_) => Abort::failed(e.to_string()),
            _ => Abort::errored(e.to_string()),
        }
    }
}

/// What a scenario function returns.
pub type Outcome = Result<(), Abort>;

/// What a scenario step returns.
pub type Step<T> = Result<T, Abort>;

/// One page of a real browser's trail (`--browser chromium`): where it was
/// and what it showed. The screenshot is written next to the report, as
/// `file`, never inlined.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Picture {
    /// The human whose browser it was.
    pub actor: String,
    /// The step it was taken in.
    pub step: String,
    /// The page's URL (redacted).
    pub url: String,
    /// The page's title (redacted).
    pub title: String,
    /// Whether it shows a browser step that failed, or the page a failed
    /// trial ended on.
    pub failed: bool,
    /// The screenshot's path in the report directory, once written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The PNG, until the report writes it.
    #[serde(skip)]
    pub png: Option<Vec<u8>>,
}

/// One observable result a scenario recorded with `ctx.observe`, compared
/// across backends by the parity check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Observation {
    /// The step it was made in.
    pub step: String,
    /// What was observed, in words.
    pub key: String,
    /// The value, as canonical JSON.
    pub value: String,
}

/// A log of one named process.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NamedLog {
    /// Whose log.
    pub name: String,
    /// The redacted text.
    pub text: String,
}

/// One named step of a scenario.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct StepRecord {
    /// The step in domain words, e.g. `alice approves the grant`.
    pub name: String,
    /// Assertions made during the step, in order.
    pub assertions: Vec<AssertionRecord>,
    /// Exchanges made during the step, in order.
    pub exchanges: Vec<Exchange>,
}

/// One checked expectation.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AssertionRecord {
    /// What was checked, in words.
    pub what: String,
    /// The expected value, rendered.
    pub expected: String,
    /// The actual value, rendered.
    pub actual: String,
    /// Whether it held.
    pub passed: bool,
}

/// One recorded exchange: an HTTP request and its answer, or an MCP tool call.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Exchange {
    /// Who made it: a human's, bot's or the setup client's name.
    pub actor: String,
    /// `http` or `mcp`.
    pub kind: String,
    /// HTTP method, or `tools/call`.
    pub method: String,
    /// The URL, or the tool name.
    pub target: String,
    /// Request headers worth seeing (credentials removed).
    pub request_headers: Vec<(String, String)>,
    /// Request body, truncated and redacted.
    pub request_body: String,
    /// HTTP status, or 0 for MCP and for transport failures.
    pub status: u16,
    /// Response headers worth seeing (cookies removed).
    pub response_headers: Vec<(String, String)>,
    /// Response body, truncated and redacted.
    pub response_body: String,
    /// Milliseconds from send to the full answer.
    pub elapsed_ms: u64,
}
