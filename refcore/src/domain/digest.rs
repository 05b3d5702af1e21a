//! The proposal digest of spec §2: lowercase hex SHA-256 of the RFC 8785
//! (JCS) serialisation of the seven-member proposal object.

use serde::Serialize;
use sha2::{Digest, Sha256};

use super::edges::edges;

/// The schema name every proposal carries.
pub const SCHEMA: &str = "agent_work_grant.v1";
/// The proposal version every proposal carries.
pub const VERSION: i64 = 1;

/// The members the digest covers. Field names are the JSON member names;
/// JCS sorts them, so declaration order does not matter.
#[derive(Serialize)]
struct Proposal<'a> {
    agent_id: i64,
    grant_id: i64,
    repository_id: i64,
    schema: &'a str,
    summary: &'a str,
    task: &'a str,
    version: i64,
}

/// Computes the digest of a grant's proposal.
pub fn proposal_digest(
    grant_id: i64,
    repository_id: i64,
    agent_id: i64,
    task: &str,
    summary: &str,
) -> String {
    let proposal = Proposal {
        agent_id,
        grant_id,
        repository_id,
        schema: SCHEMA,
        summary,
        task: edges().bound_task(task),
        version: VERSION,
    };
    // Serialising plain integers and strings cannot fail.
    let canonical = serde_json_canonicalizer::to_vec(&proposal).unwrap_or_default();
    hex::encode(Sha256::digest(&canonical))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Vector computed by hand: the JCS text below was written out literally
    /// (sorted keys, no whitespace, `\u001f` for the control character, UTF-8
    /// kept as is) and hashed with an independent SHA-256 (`hashlib`).
    #[test]
    fn digest_matches_hand_computed_vector() {
        let digest = proposal_digest(17, 3, 9, "line1\r\nline2\t", "Café \u{1f}\"q\"");
        assert_eq!(
            digest,
            "ce7a8cdb9b948c0462aa069d82c956129250a81c86a4e44107d955d72c9abe12"
        );
    }

    #[test]
    fn digest_changes_with_every_member() {
        let base = proposal_digest(1, 2, 3, "t", "s");
        assert_ne!(base, proposal_digest(4, 2, 3, "t", "s"));
        assert_ne!(base, proposal_digest(1, 4, 3, "t", "s"));
        assert_ne!(base, proposal_digest(1, 2, 4, "t", "s"));
        assert_ne!(base, proposal_digest(1, 2, 3, "t ", "s"));
        assert_ne!(base, proposal_digest(1, 2, 3, "t", "s "));
        assert_eq!(base.len(), 64);
        assert!(
            base.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        );
    }
}
