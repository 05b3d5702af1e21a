//! Typed views of what the contract defines, so a scenario reads members by
//! name instead of indexing JSON by hand. Each view holds exactly the members
//! the contract names (spec §2, §3, §5); a Core may send more, and they are
//! ignored here (whole objects are still compared across backends by
//! parity, through `raw`). A missing member or a member of the wrong JSON
//! type is the Core's failure, reported with the object it was read from.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::vocab::{Abort, Step};

/// The four grant states of spec §2, by their contract names.
pub mod state {
    /// Prepared by a human, waiting for the bot's confirmation.
    pub const AWAITING_AGENT: &str = "awaiting_agent";
    /// Confirmed by the bot, waiting for a human's approval.
    pub const AWAITING_HUMAN: &str = "awaiting_human";
    /// Approved: the bot may submit.
    pub const ACTIVE: &str = "active";
    /// Withdrawn (final).
    pub const REVOKED: &str = "revoked";
}

/// Reads a contract object out of `value`, or fails naming `what` and the
/// first member that does not match.
pub fn read<T: DeserializeOwned>(what: &str, value: &Value) -> Step<T> {
    T::deserialize(value).map_err(|e| {
        Abort::failed(format!(
            "{what} does not match the contract ({e}): {}",
            crate::journal::truncate(&value.to_string())
        ))
    })
}

/// A timestamp member (spec §2, §3 "RFC 3339"), parsed strictly by RFC
/// 3339's grammar (`T`, seconds, an offset or `Z`); `None` for anything
/// else, `xyzzy` and SQL's `2026-01-01 10:00:00` included.
pub fn rfc3339(text: &str) -> Option<time::OffsetDateTime> {
    time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).ok()
}

/// `{id, login}` of a user as grants and receipts name them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserRef {
    /// The user's id.
    pub id: i64,
    /// The user's login.
    pub login: String,
}

/// A grant's repository.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct RepoRef {
    /// The repository's id.
    pub id: i64,
    /// The owner's login.
    pub owner: String,
    /// The repository's name.
    pub name: String,
    /// `owner/name`.
    pub full_name: String,
}

/// A repository as the native API shows it (spec §1). Its `owner` is left
/// out: a Forgejo-like Core shows a user object there, and `full_name`
/// already names the owner.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Repository {
    /// Its id.
    pub id: i64,
    /// Its name.
    pub name: String,
    /// `owner/name`.
    pub full_name: String,
    /// Whether it is private.
    pub private: bool,
}

impl Repository {
    /// Reads a repository object.
    pub fn from_json(value: &Value) -> Step<Repository> {
        read("the repository", value)
    }
}

/// The proposal triple a bot must repeat exactly to confirm or submit.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, serde::Serialize)]
pub struct Proposal {
    /// `agent_work_grant.v1`.
    pub schema: String,
    /// 1.
    pub version: i64,
    /// 64 lowercase hex.
    pub digest: String,
}

/// A grant (spec §2).
#[derive(Debug, Clone, Deserialize)]
pub struct Grant {
    /// Native id.
    pub id: i64,
    /// Its repository.
    pub repository: RepoRef,
    /// The bot it is for.
    pub agent: UserRef,
    /// The human who prepared it.
    pub prepared_by: UserRef,
    /// The human who approved it, once approved.
    pub approved_by: Option<UserRef>,
    /// One of [`state`].
    pub state: String,
    /// Starts at 1, one more on every state change.
    pub state_revision: i64,
    /// The whole task text.
    pub task: String,
    /// The whole summary text.
    pub summary: String,
    /// The triple.
    pub proposal: Proposal,
    /// When the bot confirmed, if it did.
    pub confirmed_at: Option<String>,
    /// When a human approved, if one did.
    pub approved_at: Option<String>,
    /// When it was withdrawn, if it was.
    pub revoked_at: Option<String>,
    /// The repository grant envelope's evidence (spec §8), `null` when the
    /// grant has none. Read it through [`Grant::envelope`], which also
    /// insists that the member is there.
    #[serde(default)]
    pub repository_grant: Option<EnvelopeEvidence>,
    /// Whether the Core sent a `repository_grant` member at all.
    #[serde(skip)]
    pub has_repository_grant: bool,
    /// The object as the Core sent it, extra members included (for parity).
    #[serde(skip)]
    pub raw: Value,
}

/// `repository_grant` of a grant (spec §8): bounded evidence only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnvelopeEvidence {
    /// Lowercase hex SHA-256 of the canonical envelope's JCS text.
    pub digest: String,
    /// How many path patterns the envelope allows.
    pub path_count: i64,
}

impl Grant {
    /// Reads a grant object.
    pub fn from_json(value: &Value) -> Step<Grant> {
        let mut grant: Grant = read("the grant", value)?;
        grant.has_repository_grant = value.get("repository_grant").is_some();
        grant.raw = value.clone();
        Ok(grant)
    }

    /// The envelope evidence (spec §8): `None` for a grant without one. A
    /// grant object without the `repository_grant` member is the Core's
    /// failure: the contract makes it `null` or `{digest, path_count}`.
    pub fn envelope(&self) -> Step<Option<&EnvelopeEvidence>> {
        if !self.has_repository_grant {
            return Err(Abort::failed(format!(
                "grant {} has no `repository_grant` member (spec §8: null or {{digest, path_count}})",
                self.id
            )));
        }
        Ok(self.repository_grant.as_ref())
    }

    /// Which grant this is, for further calls.
    pub fn grant_ref(&self) -> GrantRef {
        GrantRef {
            owner: self.repository.owner.clone(),
            repo: self.repository.name.clone(),
            id: self.id,
        }
    }

    /// `(state, state_revision)`: what a "nothing changed" witness compares.
    pub fn status(&self) -> (String, i64) {
        (self.state.clone(), self.state_revision)
    }
}

/// The Issue a receipt names, as it was at submission.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IssueRef {
    /// Global Issue id.
    pub id: i64,
    /// Per-repository index.
    pub index: i64,
    /// Repository id.
    pub repository_id: i64,
    /// The Issue's page.
    pub html_url: String,
}

/// A submission receipt (spec §3).
#[derive(Debug, Clone, Deserialize)]
pub struct Receipt {
    /// The grant it was submitted through.
    pub grant_id: i64,
    /// The bot's key.
    pub request_key: String,
    /// `submitted`, `issue_deleted` or `issue_binding_changed`.
    pub status: String,
    /// Always `awaiting_review`.
    pub review_state: String,
    /// The bot.
    pub submitted_by: UserRef,
    /// The Issue at submission.
    pub issue: IssueRef,
    /// The object as the Core sent it.
    #[serde(skip)]
    pub raw: Value,
}

impl Receipt {
    /// Reads a submission object.
    pub fn from_json(value: &Value) -> Step<Receipt> {
        let mut receipt: Receipt = read("the submission", value)?;
        receipt.raw = value.clone();
        Ok(receipt)
    }
}

/// `{grant, submission}`: what submit and readback answer.
#[derive(Debug, Clone)]
pub struct Submitted {
    /// The grant now.
    pub grant: Grant,
    /// The receipt.
    pub receipt: Receipt,
}

impl Submitted {
    /// Reads `{grant, submission}`.
    pub fn from_json(value: &Value) -> Step<Submitted> {
        Ok(Submitted {
            grant: Grant::from_json(member(value, "grant")?)?,
            receipt: Receipt::from_json(member(value, "submission")?)?,
        })
    }
}

/// The grant marker of an Issue created through a grant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GrantMarker {
    /// The grant.
    pub grant_id: i64,
    /// The submission's key.
    pub request_key: String,
}

/// An Issue as the native API shows it (spec §1).
#[derive(Debug, Clone, Deserialize)]
pub struct Issue {
    /// Global id.
    pub id: i64,
    /// Per-repository index.
    pub index: i64,
    /// Title, whole.
    pub title: String,
    /// Body, whole.
    pub body: String,
    /// The poster.
    pub user: UserRef,
    /// Its page.
    pub html_url: String,
    /// Its repository.
    pub repository_id: i64,
    /// Set only for grant submissions.
    pub agent_work_grant: Option<GrantMarker>,
    /// The object as the Core sent it.
    #[serde(skip)]
    pub raw: Value,
}

impl Issue {
    /// Reads an Issue object.
    pub fn from_json(value: &Value) -> Step<Issue> {
        let mut issue: Issue = read("the Issue", value)?;
        issue.raw = value.clone();
        Ok(issue)
    }
}

/// A native error body: `{"message": ...}` at least. Its wording is the
/// Core's own and never compared.
#[derive(Debug, Clone, Deserialize)]
pub struct ErrorBody {
    /// The message.
    pub message: String,
}

/// What `list_agent_work_grants` returns (spec §6).
#[derive(Debug, Clone)]
pub struct GrantListPage {
    /// The grants of this page.
    pub grants: Vec<Grant>,
    /// The page number.
    pub page: i64,
    /// Whether another page follows.
    pub has_more: bool,
    /// The next page, if any.
    pub next_page: Option<i64>,
    /// Always false: a list is not a snapshot.
    pub snapshot: bool,
}

impl GrantListPage {
    /// Reads a list tool result.
    pub fn from_json(value: &Value) -> Step<GrantListPage> {
        #[derive(Deserialize)]
        struct Shape {
            grants: Vec<Value>,
            page: i64,
            has_more: bool,
            next_page: Option<i64>,
            snapshot: bool,
        }
        let shape: Shape = read("the grant list result", value)?;
        Ok(GrantListPage {
            grants: shape
                .grants
                .iter()
                .map(Grant::from_json)
                .collect::<Step<_>>()?,
            page: shape.page,
            has_more: shape.has_more,
            next_page: shape.next_page,
            snapshot: shape.snapshot,
        })
    }

    /// The listed ids, in order.
    pub fn ids(&self) -> Vec<i64> {
        self.grants.iter().map(|g| g.id).collect()
    }
}

/// Names one grant: its repository and native id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GrantRef {
    /// Repository owner's login.
    pub owner: String,
    /// Repository name.
    pub repo: String,
    /// The grant's native id.
    pub id: i64,
}

impl GrantRef {
    /// `owner/repo`.
    pub fn full_name(&self) -> String {
        format!("{}/{}", self.owner, self.repo)
    }
}

/// What a bot submits through a grant.
#[derive(Debug, Clone)]
pub struct NewIssue {
    /// Canonical lowercase UUIDv4, chosen by the bot.
    pub request_key: String,
    /// Issue title.
    pub title: String,
    /// Issue body, kept whole.
    pub body: String,
}

impl NewIssue {
    /// A submission with a fresh request key.
    pub fn new(title: &str, body: &str) -> Self {
        NewIssue {
            request_key: uuid::Uuid::new_v4().to_string(),
            title: title.to_owned(),
            body: body.to_owned(),
        }
    }

    /// The same text under another key.
    pub fn with_key(&self, request_key: &str) -> Self {
        NewIssue {
            request_key: request_key.to_owned(),
            ..self.clone()
        }
    }
}

/// A member of a JSON object, or a contract failure naming it.
pub fn member<'a>(value: &'a Value, name: &str) -> Step<&'a Value> {
    value
        .get(name)
        .ok_or_else(|| Abort::failed(format!("the answer has no `{name}` member: {value}")))
}

/// The digest a grant's proposal must carry, computed independently of the
/// Core: lowercase hex SHA-256 of the JCS (RFC 8785) serialisation of
/// `{agent_id, grant_id, repository_id, schema, summary, task, version}`.
pub fn expected_digest(grant: &Grant) -> Step<String> {
    use sha2::{Digest, Sha256};
    let proposal = serde_json::json!({
        "agent_id": grant.agent.id,
        "grant_id": grant.id,
        "repository_id": grant.repository.id,
        "schema": grant.proposal.schema,
        "summary": grant.summary,
        "task": grant.task,
        "version": grant.proposal.version,
    });
    let canonical = serde_json_canonicalizer::to_vec(&proposal)
        .map_err(|e| Abort::errored(format!("JCS serialisation: {e}")))?;
    Ok(hex::encode(Sha256::digest(&canonical)))
}

/// The digest of a repository grant envelope (spec §8), computed by the
/// harness on its own: `allowed_paths` sorted by byte order, then the
/// lowercase hex SHA-256 of the envelope's JCS (RFC 8785) serialisation.
/// `envelope` is the envelope object a human typed (any path order).
pub fn envelope_digest(envelope: &Value) -> Step<String> {
    use sha2::{Digest, Sha256};
    let mut canonical = envelope.clone();
    let paths = canonical
        .get_mut("allowed_paths")
        .and_then(Value::as_array_mut)
        .ok_or_else(|| Abort::errored(format!("not an envelope: {envelope}")))?;
    let mut sorted: Vec<String> = paths
        .iter()
        .map(|p| p.as_str().map(str::to_owned))
        .collect::<Option<_>>()
        .ok_or_else(|| Abort::errored(format!("allowed_paths are not strings: {envelope}")))?;
    // Byte order: Rust orders `String`s by their UTF-8 bytes.
    sorted.sort();
    *paths = sorted.into_iter().map(Value::String).collect();
    let bytes = serde_json_canonicalizer::to_vec(&canonical)
        .map_err(|e| Abort::errored(format!("JCS serialisation: {e}")))?;
    Ok(hex::encode(Sha256::digest(&bytes)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn grant_json() -> Value {
        json!({
            "id": 17, "state": "active", "state_revision": 3,
            "repository": {"id": 3, "owner": "alice", "name": "lab", "full_name": "alice/lab"},
            "agent": {"id": 9, "login": "lab-bot"},
            "prepared_by": {"id": 2, "login": "alice"}, "approved_by": null,
            "task": "t", "summary": "s",
            "proposal": {"schema": "agent_work_grant.v1", "version": 1, "digest": "ab"},
            "created_at": "x", "updated_at": "x",
            "confirmed_at": null, "approved_at": null, "revoked_at": null,
        })
    }

    #[test]
    fn extra_members_are_allowed_and_kept_in_raw() {
        let mut v = grant_json();
        v["x_extra"] = json!({"nested": true});
        let g = Grant::from_json(&v).unwrap();
        assert_eq!(g.status(), ("active".to_owned(), 3));
        assert_eq!(g.raw["x_extra"]["nested"], true);
    }

    #[test]
    fn a_missing_or_mistyped_member_is_the_cores_failure() {
        let mut v = grant_json();
        v.as_object_mut().unwrap().remove("state");
        assert!(matches!(Grant::from_json(&v), Err(Abort::Failed(m)) if m.contains("state")));
        let mut v = grant_json();
        v["state_revision"] = json!("3");
        assert!(matches!(Grant::from_json(&v), Err(Abort::Failed(_))));
    }

    #[test]
    fn the_digest_is_sha256_of_the_canonical_proposal() {
        let g = Grant::from_json(&grant_json()).unwrap();
        let canonical = r#"{"agent_id":9,"grant_id":17,"repository_id":3,"schema":"agent_work_grant.v1","summary":"s","task":"t","version":1}"#;
        use sha2::{Digest, Sha256};
        assert_eq!(
            expected_digest(&g).unwrap(),
            hex::encode(Sha256::digest(canonical.as_bytes()))
        );
    }

    /// The canonical texts were written out by hand (members and paths
    /// sorted, no whitespace) and hashed with Python's hashlib.
    #[test]
    fn the_envelope_digest_matches_hand_computed_vectors() {
        let envelope = json!({"version": "1", "allowed_paths": ["docs/", "README.md"],
                              "commit_count": {"min": 1, "max": 1}, "publish": false});
        // {"allowed_paths":["README.md","docs/"],"commit_count":{"max":1,"min":1},"publish":false,"version":"1"}
        assert_eq!(
            envelope_digest(&envelope).unwrap(),
            "af2e7c8275c9ba8c8f78485067f9608e21b20204e738d64767d7dcbdac918599"
        );
        let envelope = json!({"publish": false, "commit_count": {"max": 32, "min": 2},
                              "allowed_paths": ["été/", "src/", "Zeta/**/*.md"], "version": "1"});
        // {"allowed_paths":["Zeta/**/*.md","src/","été/"],"commit_count":{"max":32,"min":2},"publish":false,"version":"1"}
        assert_eq!(
            envelope_digest(&envelope).unwrap(),
            "87d02a7c4fbcecf78d5c317172059e905c13c0d2ac9e7553efecb950b2605005"
        );
    }

    #[test]
    fn the_envelope_member_must_be_there_and_may_be_null() {
        let g = Grant::from_json(&grant_json()).unwrap();
        assert!(matches!(g.envelope(), Err(Abort::Failed(_))));
        let mut v = grant_json();
        v["repository_grant"] = json!(null);
        assert_eq!(Grant::from_json(&v).unwrap().envelope().unwrap(), None);
        v["repository_grant"] = json!({"digest": "ab", "path_count": 2, "x": 1});
        let g = Grant::from_json(&v).unwrap();
        assert_eq!(g.envelope().unwrap().map(|e| e.path_count), Some(2));
        v["repository_grant"] = json!({"digest": "ab", "path_count": "2"});
        assert!(Grant::from_json(&v).is_err());
    }
}
