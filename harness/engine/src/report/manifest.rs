//! `manifest.json`: the SHA-256 of every other file of the report, so an
//! auditor can check that nothing was changed after the run.

use serde::Serialize;
use sha2::{Digest, Sha256};

/// One file of the report.
#[derive(Debug, Serialize)]
pub struct ManifestEntry {
    /// Path relative to the report directory.
    pub path: String,
    /// Size in bytes.
    pub bytes: usize,
    /// Lowercase hex SHA-256.
    pub sha256: String,
}

/// Renders the manifest of `files` (`(relative path, contents)`).
pub fn render(run_id: &str, files: &[(String, Vec<u8>)]) -> String {
    let entries: Vec<ManifestEntry> = files
        .iter()
        .map(|(path, bytes)| ManifestEntry {
            path: path.clone(),
            bytes: bytes.len(),
            sha256: hex::encode(Sha256::digest(bytes)),
        })
        .collect();
    serde_json::to_string_pretty(&serde_json::json!({
        "run_id": run_id,
        "algorithm": "sha256",
        "files": entries,
    }))
    .expect("manifest serialises")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_manifest_lists_the_sha256_of_each_file() {
        let text = render("r1", &[("a.txt".into(), b"abc".to_vec())]);
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["files"][0]["path"], "a.txt");
        assert_eq!(v["files"][0]["bytes"], 3);
        assert_eq!(
            v["files"][0]["sha256"],
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
