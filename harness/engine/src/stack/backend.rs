//! The database backends a Core runs on: every trial runs on one, and the
//! whole gate on each.

use serde::{Deserialize, Serialize};

/// A database backend the Core runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// A SQLite file in the stack's directory.
    Sqlite,
    /// A PostgreSQL database of its own.
    Postgres,
}

impl Backend {
    /// Every backend, in the order trials are listed.
    pub const ALL: [Backend; 2] = [Backend::Sqlite, Backend::Postgres];

    /// The lowercase name used in trial names and reports.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
        }
    }
}

impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
