//! The few domain values actors pass between each other: which grant, and
//! its proposal triple.

use serde_json::Value;

use crate::runner::outcome::{Abort, Step};

/// Names one grant: its repository and native id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrantRef {
    /// Repository owner's login.
    pub owner: String,
    /// Repository name.
    pub repo: String,
    /// The grant's native id.
    pub id: i64,
}

impl GrantRef {
    /// Path of the grant's browser page.
    pub fn page_path(&self) -> String {
        format!(
            "/{}/{}/agent-work-grants/{}",
            self.owner, self.repo, self.id
        )
    }
}

/// The proposal triple a bot must repeat exactly to confirm or submit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proposal {
    /// `proposal.schema`, `agent_work_grant.v1`.
    pub schema: String,
    /// `proposal.version`, 1.
    pub version: i64,
    /// `proposal.digest`, 64 lowercase hex.
    pub digest: String,
}

impl Proposal {
    /// Reads the triple out of a grant JSON object; a grant without one is a
    /// contract failure.
    pub fn of_grant(grant: &Value) -> Step<Proposal> {
        let p = &grant["proposal"];
        match (
            p["schema"].as_str(),
            p["version"].as_i64(),
            p["digest"].as_str(),
        ) {
            (Some(schema), Some(version), Some(digest)) => Ok(Proposal {
                schema: schema.to_owned(),
                version,
                digest: digest.to_owned(),
            }),
            _ => Err(Abort::failed(format!(
                "grant has no complete proposal triple: {}",
                p
            ))),
        }
    }
}

/// What a bot submits through a grant.
#[derive(Debug, Clone)]
pub struct Submission {
    /// Canonical lowercase UUIDv4, chosen by the bot.
    pub request_key: String,
    /// Issue title.
    pub title: String,
    /// Issue body, kept whole.
    pub body: String,
}

impl Submission {
    /// A submission with a fresh request key.
    pub fn new(title: &str, body: &str) -> Self {
        Submission {
            request_key: uuid::Uuid::new_v4().to_string(),
            title: title.to_owned(),
            body: body.to_owned(),
        }
    }
}

/// The digest a grant's proposal must carry, computed independently of the
/// Core: lowercase hex SHA-256 of the JCS (RFC 8785) serialisation of
/// `{agent_id, grant_id, repository_id, schema, summary, task, version}`.
pub fn expected_digest(grant: &Value) -> Step<String> {
    use sha2::{Digest, Sha256};
    let proposal = serde_json::json!({
        "agent_id": grant["agent"]["id"],
        "grant_id": grant["id"],
        "repository_id": grant["repository"]["id"],
        "schema": grant["proposal"]["schema"],
        "summary": grant["summary"],
        "task": grant["task"],
        "version": grant["proposal"]["version"],
    });
    let canonical = serde_json_canonicalizer::to_vec(&proposal)
        .map_err(|e| Abort::errored(format!("JCS serialisation: {e}")))?;
    Ok(hex::encode(Sha256::digest(&canonical)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_digest_is_sha256_of_the_canonical_proposal() {
        let grant = serde_json::json!({
            "id": 17, "agent": {"id": 9}, "repository": {"id": 3},
            "task": "t", "summary": "s",
            "proposal": {"schema": "agent_work_grant.v1", "version": 1},
        });
        let canonical = r#"{"agent_id":9,"grant_id":17,"repository_id":3,"schema":"agent_work_grant.v1","summary":"s","task":"t","version":1}"#;
        use sha2::{Digest, Sha256};
        assert_eq!(
            expected_digest(&grant).unwrap(),
            hex::encode(Sha256::digest(canonical.as_bytes()))
        );
    }
}
