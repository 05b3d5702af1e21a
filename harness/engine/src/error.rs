//! The engine's error type.
//!
//! A `HarnessError` always means the harness or its environment broke: a
//! missing binary, a database that would not start, a report that could not be
//! written. A Core that breaks the contract is never an error here; that is a
//! failed scenario, recorded as data in the run report.

use std::path::PathBuf;

/// Everything that can stop the engine itself.
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    /// The command line or environment asks for something impossible.
    #[error("configuration: {0}")]
    Config(String),
    /// A program the harness needs is not where it looked; the message says
    /// how to build or install it.
    #[error("{what} not found at {path}: {fix}")]
    MissingBinary {
        /// Which program.
        what: String,
        /// Where the harness looked.
        path: PathBuf,
        /// What to run to get it.
        fix: String,
    },
    /// The ephemeral PostgreSQL cluster failed.
    #[error("postgresql: {0}")]
    Postgres(#[from] crate::postgres::PgError),
    /// A database operation on an existing server (`--postgres-url`) failed.
    #[error("postgresql server {url}: {source}")]
    PostgresServer {
        /// The server URL, without credentials.
        url: String,
        /// What sqlx said.
        source: sqlx::Error,
    },
    /// A child process (Core, adapter) could not be started or did not come up.
    #[error("{what}: {message}")]
    Process {
        /// Which process.
        what: String,
        /// What went wrong, with its log tail when there is one.
        message: String,
    },
    /// The Docker engine does not answer, an image is missing, or a
    /// container or network operation failed; the message says what to run.
    #[error("docker: {0}")]
    Docker(String),
    /// The Core started but broke the launch contract (spec §5): it exited,
    /// never printed its listening line, or never became healthy. This is
    /// the Core's failure, reported as a failed trial.
    #[error("the core broke the launch contract (spec §5): {0}")]
    LaunchContract(String),
    /// The adapter under test exited, or never printed its listening line,
    /// started with a configuration spec §6 allows: its failure, reported
    /// as a failed trial.
    #[error("the adapter did not start (spec §6): {0}")]
    AdapterStart(String),
    /// A fixture file is not valid.
    #[error("fixture {file}: {message}")]
    Fixture {
        /// The fixture file.
        file: String,
        /// What is wrong with it.
        message: String,
    },
    /// An expected-failures file (`--expected-failures`) is not valid.
    #[error("expected failures {file}: {message}")]
    Baseline {
        /// The file.
        file: String,
        /// What is wrong with it.
        message: String,
    },
    /// A file or directory operation failed.
    #[error("{path}: {source}")]
    Io {
        /// The path involved.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The report directory contains a registered secret.
    #[error("report {path} contains {count} registered secret(s); the run fails")]
    SecretLeak {
        /// The first file holding a secret.
        path: PathBuf,
        /// How many secret occurrences the scan found.
        count: usize,
    },
    /// The run was interrupted (Ctrl-C) before it finished.
    #[error("interrupted")]
    Interrupted,
}

impl HarnessError {
    /// Wraps an I/O error with the path it concerns.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        HarnessError::Io {
            path: path.into(),
            source,
        }
    }

    /// Wraps a process failure.
    pub fn process(what: impl Into<String>, message: impl Into<String>) -> Self {
        HarnessError::Process {
            what: what.into(),
            message: message.into(),
        }
    }
}

/// Why the secret registry refused a value: a Core that hands out secrets
/// (cookies, `_csrf` fields, tokens) past these caps broke the contract in
/// a way the harness cannot redact. Says how long, never what.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SecretRefused {
    /// One value is longer than [`crate::limits::SECRET_MAX_LEN`].
    #[error(
        "the Core handed out a secret (a cookie, a `_csrf` field or a token) of {len} bytes, \
         over the harness's cap of {max} bytes per secret (SECRET_MAX_LEN)"
    )]
    TooLong {
        /// The value's length.
        len: usize,
        /// The cap.
        max: usize,
    },
    /// One trial registered more than [`crate::limits::SECRETS_PER_TRIAL`].
    #[error(
        "the Core handed out more than {max} distinct secrets (cookies, `_csrf` fields, tokens, \
         with their encodings) in one trial, the harness's cap (SECRETS_PER_TRIAL)"
    )]
    TooMany {
        /// The cap.
        max: usize,
    },
    /// The run's values passed [`crate::limits::RUN_SECRET_BYTES`].
    #[error(
        "the secrets the Core handed out in this run passed the harness's budget of {max} bytes \
         (RUN_SECRET_BYTES)"
    )]
    RunBudget {
        /// The budget.
        max: usize,
    },
}

/// The engine's result type.
pub type Result<T, E = HarnessError> = std::result::Result<T, E>;
