//! Strict input rules of spec §6, applied before any upstream request.
//!
//! The raw `arguments` object is read by hand rather than deserialised into a
//! struct, so that every refusal is a tool error that names the offending
//! field (a typed deserialisation failure would surface as a protocol error
//! without one). The rules mirror the JSON Schemas in [`crate::schema`].

use rmcp::model::JsonObject;
use serde_json::Value;

use crate::edges::{Edge, Edges};
use crate::error::ToolError;

/// The only accepted `proposal_schema`.
pub const PROPOSAL_SCHEMA: &str = "agent_work_grant.v1";
/// The only accepted `proposal_version`.
pub const PROPOSAL_VERSION: i64 = 1;
/// Pattern of `owner` and `repo`: one path segment of name characters, not `.` or `..`.
pub const SEGMENT_PATTERN: &str = r"^(?!\.\.?$)[A-Za-z0-9_.-]{1,100}$";
/// Pattern of `proposal_digest`.
pub const DIGEST_PATTERN: &str = "^[0-9a-f]{64}$";
/// Pattern of `request_key`: a canonical lowercase UUIDv4.
pub const REQUEST_KEY_PATTERN: &str =
    "^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$";
/// Accepted values of the list `state` filter.
pub const STATES: &[&str] = &[
    "awaiting_agent",
    "awaiting_human",
    "active",
    "revoked",
    "all",
];

/// A view over one call's arguments that knows which names are allowed.
#[derive(Debug)]
pub struct Args<'a> {
    map: Option<&'a JsonObject>,
}

impl<'a> Args<'a> {
    /// Refuses any argument whose name is not in `allowed` (the first one in name order).
    pub fn new(map: Option<&'a JsonObject>, allowed: &[&str]) -> Result<Self, ToolError> {
        if let Some(map) = map {
            let mut unknown: Vec<&String> = map
                .iter()
                .filter(|(k, _)| !allowed.contains(&k.as_str()))
                .filter(|(k, v)| Edge::refuses_unknown_input(allowed, k, v))
                .map(|(k, _)| k)
                .collect();
            unknown.sort();
            if let Some(name) = unknown.first() {
                return Err(ToolError::invalid(
                    name,
                    format!(
                        "unknown input {:?}: this tool accepts only {}",
                        truncate(name, 40),
                        allowed.join(", ")
                    ),
                ));
            }
        }
        Ok(Self { map })
    }

    fn get(&self, name: &str) -> Option<&'a Value> {
        self.map.and_then(|m| m.get(name))
    }

    fn required(&self, name: &str) -> Result<&'a Value, ToolError> {
        self.get(name)
            .ok_or_else(|| ToolError::invalid(name, format!("{name} is required")))
    }

    /// A required positive native ID: a JSON integer in 1..=i64::MAX.
    pub fn id(&self, name: &str) -> Result<i64, ToolError> {
        positive(name, self.required(name)?)
    }

    /// An optional page number (default 1), same rule as IDs.
    pub fn page(&self) -> Result<i64, ToolError> {
        match self.get("page") {
            None => Ok(1),
            Some(value) => positive("page", value),
        }
    }

    /// A required `owner` or `repo`: exactly one path segment.
    pub fn segment(&self, name: &str) -> Result<String, ToolError> {
        let text = string(name, self.required(name)?)?;
        if !Edge::is_segment(text, is_segment(text)) {
            return Err(ToolError::invalid(
                name,
                format!(
                    "{name} must be one path segment of 1-100 characters A-Z a-z 0-9 _ . - (not . or ..)"
                ),
            ));
        }
        Ok(text.to_owned())
    }

    /// A required string kept whole (title, body): no trimming, no cap.
    pub fn text(&self, name: &str) -> Result<String, ToolError> {
        Ok(string(name, self.required(name)?)?.to_owned())
    }

    /// The proposal triple, each member exactly as the Core published it.
    pub fn proposal(&self) -> Result<Proposal, ToolError> {
        let schema = string("proposal_schema", self.required("proposal_schema")?)?;
        if schema != PROPOSAL_SCHEMA {
            return Err(ToolError::invalid(
                "proposal_schema",
                format!("proposal_schema must be exactly {PROPOSAL_SCHEMA:?}"),
            ));
        }
        let version = self.required("proposal_version")?;
        if version.as_f64() != Some(PROPOSAL_VERSION as f64) || !Edge::is_integer_version(version) {
            return Err(ToolError::invalid(
                "proposal_version",
                "proposal_version must be the JSON integer 1",
            ));
        }
        let digest = string("proposal_digest", self.required("proposal_digest")?)?;
        if digest.len() != 64
            || !digest
                .bytes()
                .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        {
            return Err(ToolError::invalid(
                "proposal_digest",
                "proposal_digest must be 64 lowercase hex characters",
            ));
        }
        Ok(Proposal {
            digest: digest.to_owned(),
        })
    }

    /// A required request key: a canonical lowercase UUIDv4, never invented here.
    pub fn request_key(&self) -> Result<String, ToolError> {
        if self.get("request_key").is_none()
            && let Some(key) = Edge::unsent_request_key(self.map)
        {
            return Ok(key);
        }
        let key = string("request_key", self.required("request_key")?)?;
        if !is_uuid_v4(key) {
            return Err(ToolError::invalid(
                "request_key",
                "request_key must be a canonical lowercase UUIDv4 (xxxxxxxx-xxxx-4xxx-[89ab]xxx-xxxxxxxxxxxx)",
            ));
        }
        Ok(key.to_owned())
    }

    /// The optional list `state` filter.
    pub fn state(&self) -> Result<Option<String>, ToolError> {
        match self.get("state") {
            None => Ok(None),
            Some(value) => {
                let state = string("state", value)?;
                if !STATES.contains(&state) {
                    return Err(ToolError::invalid(
                        "state",
                        format!("state must be one of {}", STATES.join(", ")),
                    ));
                }
                Ok(Some(state.to_owned()))
            }
        }
    }
}

/// The checked proposal triple; schema and version are constants once checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proposal {
    /// The 64-hex digest.
    pub digest: String,
}

impl Proposal {
    /// The triple as the Core's request body expects it.
    pub fn to_body(&self) -> serde_json::Map<String, Value> {
        let mut body = serde_json::Map::new();
        body.insert("proposal_schema".into(), PROPOSAL_SCHEMA.into());
        body.insert("proposal_version".into(), PROPOSAL_VERSION.into());
        body.insert("proposal_digest".into(), self.digest.clone().into());
        body
    }
}

fn positive(name: &str, value: &Value) -> Result<i64, ToolError> {
    let id = value.as_i64().filter(|_| value.is_i64());
    match id.or_else(|| Edge::id_from_non_integer(value)) {
        Some(n) if n >= 1 => Ok(n),
        _ => Err(ToolError::invalid(
            name,
            format!(
                "{name} must be a JSON integer from 1 to 9223372036854775807 (not a string, float or boolean)"
            ),
        )),
    }
}

fn string<'v>(name: &str, value: &'v Value) -> Result<&'v str, ToolError> {
    value
        .as_str()
        .ok_or_else(|| ToolError::invalid(name, format!("{name} must be a JSON string")))
}

/// Whether `text` is one path segment of 1-100 characters A-Z a-z 0-9 _ . -,
/// not `.` or `..`, which URL normalisation would fold (§6).
pub(crate) fn is_segment(text: &str) -> bool {
    !matches!(text, "." | "..")
        && (1..=100).contains(&text.len())
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// Whether `key` is a canonical lowercase UUIDv4 (RFC 9562 variant bits).
pub fn is_uuid_v4(key: &str) -> bool {
    let bytes = key.as_bytes();
    bytes.len() == 36
        && bytes.iter().enumerate().all(|(i, b)| match i {
            8 | 13 | 18 | 23 => *b == b'-',
            14 => *b == b'4',
            19 => matches!(b, b'8' | b'9' | b'a' | b'b'),
            _ => matches!(b, b'0'..=b'9' | b'a'..=b'f'),
        })
}

fn truncate(s: &str, max: usize) -> String {
    s.chars().take(max).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn args(value: Value) -> JsonObject {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn ids_are_positive_json_integers() {
        for bad in [
            json!(0),
            json!(-1),
            json!(1.0),
            json!("1"),
            json!(true),
            json!(9_223_372_036_854_775_808u64),
            json!(null),
        ] {
            let map = args(json!({ "grant_id": bad }));
            let error = Args::new(Some(&map), &["grant_id"])
                .unwrap()
                .id("grant_id")
                .unwrap_err();
            assert_eq!(error.field.as_deref(), Some("grant_id"));
        }
        let map = args(json!({ "grant_id": i64::MAX }));
        assert_eq!(
            Args::new(Some(&map), &["grant_id"])
                .unwrap()
                .id("grant_id")
                .unwrap(),
            i64::MAX
        );
    }

    #[test]
    fn request_keys_are_canonical_v4() {
        assert!(is_uuid_v4("9b2f3c4d-1e2f-4a3b-8c4d-5e6f7a8b9c0d"));
        for bad in [
            "9B2F3C4D-1E2F-4A3B-8C4D-5E6F7A8B9C0D",
            "9b2f3c4d-1e2f-1a3b-8c4d-5e6f7a8b9c0d",
            "9b2f3c4d-1e2f-4a3b-cc4d-5e6f7a8b9c0d",
            "{9b2f3c4d-1e2f-4a3b-8c4d-5e6f7a8b9c0d}",
            "9b2f3c4d1e2f4a3b8c4d5e6f7a8b9c0d",
        ] {
            assert!(!is_uuid_v4(bad), "{bad}");
        }
    }

    #[test]
    fn unknown_inputs_are_named() {
        let map = args(json!({ "owner": "a", "state_revision": 2 }));
        let error = Args::new(Some(&map), &["owner"]).unwrap_err();
        assert_eq!(error.field.as_deref(), Some("state_revision"));
    }

    #[test]
    fn an_unknown_name_is_quoted_cut_to_40_characters() {
        let name = format!("{}OVERFLOW", "n".repeat(40));
        let map = args(json!({ name.as_str(): 1 }));
        let error = Args::new(Some(&map), &["owner", "repo"]).unwrap_err();
        assert_eq!(
            error.message,
            format!(
                "unknown input {:?}: this tool accepts only owner, repo",
                "n".repeat(40)
            )
        );
    }
}
