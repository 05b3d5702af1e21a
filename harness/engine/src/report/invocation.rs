//! What was gated and how the run was asked for: enough to reproduce any
//! trial exactly (the Core as given, its environment, the runtime) and to
//! say whether the run was the whole gate or part of it.

use serde::{Deserialize, Serialize};

/// The run's settings as given, and the gated Core's identity.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Invocation {
    /// `process` or `docker`.
    pub runtime: String,
    /// `--core-bin` or `--core-image` as given; empty for the default.
    pub core_arg: String,
    /// SHA-256 of the Core binary, or the Core image's id.
    pub core_digest: String,
    /// `--adapter-bin` as given; empty for the default.
    pub adapter_arg: String,
    /// SHA-256 of the adapter binary the bots ran (`sha256:<hex>`), recorded
    /// at the run so that a merge on another machine attests the same one;
    /// empty in older reports.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub adapter_digest: String,
    /// `--core-env` pairs as given (`KEY=VALUE`).
    pub core_env: Vec<String>,
    /// `--adapter-env` pairs as given.
    pub adapter_env: Vec<String>,
    /// `--postgres-url` was given (the URL itself may hold a password).
    pub postgres_url_given: bool,
    /// Backends selected.
    pub backends: Vec<String>,
    /// `--filter`, `--exact`, `--skip`, `--shard` as given, in words.
    pub selection: Vec<String>,
    /// Trials selected (parity included).
    pub selected_trials: usize,
    /// Trials the whole catalogue has on every backend (parity included).
    pub catalogue_trials: usize,
}

/// SHA-256 of a file, hex; `unknown (…)` when it cannot be read.
pub fn file_digest(path: &std::path::Path) -> String {
    use sha2::{Digest, Sha256};
    match std::fs::read(path) {
        Ok(bytes) => format!("sha256:{}", hex::encode(Sha256::digest(&bytes))),
        Err(e) => format!("unknown ({e})"),
    }
}
