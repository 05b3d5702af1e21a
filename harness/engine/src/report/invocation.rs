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
///
/// Remembered per path, inode, size and modification time (a rebuilt
/// binary is a new file): a self-test writes a report per pass, 200 of them
/// over the same two binaries of 30 MB each.
pub fn file_digest(path: &std::path::Path) -> String {
    use sha2::{Digest, Sha256};
    use std::collections::HashMap;
    use std::os::unix::fs::MetadataExt;
    use std::sync::{Mutex, OnceLock};
    type Key = (std::path::PathBuf, u64, u64, std::time::SystemTime);
    static SEEN: OnceLock<Mutex<HashMap<Key, String>>> = OnceLock::new();
    let key = std::fs::metadata(path)
        .and_then(|m| Ok((path.to_owned(), m.ino(), m.len(), m.modified()?)))
        .ok();
    let seen = SEEN.get_or_init(Default::default);
    if let Some(digest) = key.as_ref().and_then(|k| seen.lock().ok()?.get(k).cloned()) {
        return digest;
    }
    match std::fs::read(path) {
        Ok(bytes) => {
            let digest = format!("sha256:{}", hex::encode(Sha256::digest(&bytes)));
            if let (Some(k), Ok(mut seen)) = (key, seen.lock()) {
                seen.insert(k, digest.clone());
            }
            digest
        }
        Err(e) => format!("unknown ({e})"),
    }
}

#[cfg(test)]
mod tests {
    use super::file_digest;

    /// The digest is remembered, but a binary rebuilt in its place (a new
    /// file: cargo links a fresh one) is digested again, even at the same
    /// size and within the same clock tick.
    #[test]
    fn a_file_replaced_in_place_gets_its_new_digest() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bin");
        std::fs::write(&path, b"first").unwrap();
        let first = file_digest(&path);
        assert_eq!(first, file_digest(&path));
        let fresh = dir.path().join("bin.new");
        std::fs::write(&fresh, b"other").unwrap();
        std::fs::rename(&fresh, &path).unwrap();
        let second = file_digest(&path);
        assert_ne!(first, second);
        assert!(second.starts_with("sha256:"), "{second}");
        assert!(file_digest(&dir.path().join("missing")).starts_with("unknown ("));
    }
}
