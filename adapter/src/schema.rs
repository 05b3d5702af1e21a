//! JSON Schema fragments for the tools' inputs and outputs.
//!
//! Inputs are closed (`additionalProperties: false`) and say exactly what
//! [`crate::validate`] accepts. Outputs describe the envelope the adapter
//! builds; the native objects inside are open, because a Core may add fields
//! and the adapter passes the native object through whole.

use std::sync::Arc;

use rmcp::model::JsonObject;
use serde_json::{Value, json};

use crate::validate::{
    DIGEST_PATTERN, PROPOSAL_SCHEMA, PROPOSAL_VERSION, REQUEST_KEY_PATTERN, SEGMENT_PATTERN, STATES,
};

/// A closed object schema with the given properties, all of `required` mandatory.
pub fn closed(properties: &[(&str, Value)], required: &[&str]) -> Arc<JsonObject> {
    let props: serde_json::Map<String, Value> = properties
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect();
    let schema = json!({
        "type": "object",
        "properties": props,
        "required": required,
        "additionalProperties": false,
    });
    Arc::new(schema.as_object().cloned().unwrap_or_default())
}

/// `owner` of a repository.
pub fn owner() -> Value {
    json!({"type": "string", "pattern": SEGMENT_PATTERN, "minLength": 1, "maxLength": 100,
           "description": "Repository owner login (one path segment)."})
}

/// `repo` name.
pub fn repo() -> Value {
    json!({"type": "string", "pattern": SEGMENT_PATTERN, "minLength": 1, "maxLength": 100,
           "description": "Repository name (one path segment)."})
}

/// A positive native ID (also used for issue indexes and pages).
pub fn positive(description: &str) -> Value {
    json!({"type": "integer", "minimum": 1, "maximum": i64::MAX, "description": description})
}

/// The optional list `state` filter.
pub fn state() -> Value {
    json!({"type": "string", "enum": STATES,
           "description": "Filter by state; omit for every non-revoked state."})
}

/// The three proposal-triple properties.
pub fn triple() -> [(&'static str, Value); 3] {
    [
        (
            "proposal_schema",
            json!({"type": "string", "const": PROPOSAL_SCHEMA,
            "description": "Exactly the grant's proposal.schema."}),
        ),
        (
            "proposal_version",
            json!({"type": "integer", "const": PROPOSAL_VERSION,
            "description": "Exactly the grant's proposal.version (the integer 1)."}),
        ),
        (
            "proposal_digest",
            json!({"type": "string", "pattern": DIGEST_PATTERN,
            "description": "Exactly the grant's proposal.digest (64 lowercase hex)."}),
        ),
    ]
}

/// The caller's durable request key.
pub fn request_key() -> Value {
    json!({"type": "string", "pattern": REQUEST_KEY_PATTERN,
           "description": "Canonical lowercase UUIDv4 chosen by the caller once per intended Issue and reused for every retry and read-back."})
}

/// Whole text, no cap.
pub fn text(description: &str) -> Value {
    json!({"type": "string", "description": description})
}

fn user() -> Value {
    json!({"type": "object", "required": ["id", "login"],
           "properties": {"id": {"type": "integer"}, "login": {"type": "string"}}})
}

/// A native grant (open: extra Core fields pass through).
pub fn grant() -> Value {
    json!({
        "type": "object",
        "required": ["id", "repository", "agent", "state", "state_revision", "task", "summary", "proposal"],
        "properties": {
            "id": {"type": "integer"},
            "repository": {"type": "object", "required": ["id", "owner", "name"],
                "properties": {"id": {"type": "integer"}, "owner": {"type": "string"},
                               "name": {"type": "string"}, "full_name": {"type": "string"}}},
            "agent": user(),
            "state": {"type": "string", "enum": ["awaiting_agent", "awaiting_human", "active", "revoked"]},
            "state_revision": {"type": "integer"},
            "task": {"type": "string"},
            "summary": {"type": "string"},
            "proposal": {"type": "object", "required": ["schema", "version", "digest"],
                "properties": {"schema": {"type": "string"}, "version": {"type": "integer"},
                               "digest": {"type": "string"}}}
        }
    })
}

/// A native submission receipt.
pub fn submission() -> Value {
    json!({
        "type": "object",
        "required": ["grant_id", "request_key", "status", "review_state", "submitted_by", "issue"],
        "properties": {
            "grant_id": {"type": "integer"},
            "request_key": {"type": "string"},
            "status": {"type": "string", "enum": ["submitted", "issue_deleted", "issue_binding_changed"]},
            "review_state": {"type": "string", "const": "awaiting_review"},
            "submitted_by": user(),
            "issue": {"type": "object", "required": ["id", "index", "repository_id", "html_url"],
                "properties": {"id": {"type": "integer"}, "index": {"type": "integer"},
                               "repository_id": {"type": "integer"}, "html_url": {"type": "string"}}}
        }
    })
}

/// A native repository.
pub fn repository() -> Value {
    json!({
        "type": "object",
        "required": ["id", "owner", "name", "full_name"],
        "properties": {"id": {"type": "integer"}, "owner": user(), "name": {"type": "string"},
                       "full_name": {"type": "string"}, "private": {"type": "boolean"},
                       "html_url": {"type": "string"}}
    })
}

/// A native issue.
pub fn issue() -> Value {
    json!({
        "type": "object",
        "required": ["id", "index", "title", "body", "repository_id"],
        "properties": {"id": {"type": "integer"}, "index": {"type": "integer"},
                       "title": {"type": "string"}, "body": {"type": "string"},
                       "user": user(), "html_url": {"type": "string"},
                       "repository_id": {"type": "integer"},
                       "agent_work_grant": {"type": ["object", "null"]}}
    })
}

fn status() -> Value {
    json!({"type": "integer", "description": "The Core's HTTP status."})
}

/// Output `{<key>: <item>, native_status}`.
pub fn single(key: &str, item: Value) -> Arc<JsonObject> {
    closed(
        &[(key, item), ("native_status", status())],
        &[key, "native_status"],
    )
}

/// Output `{grant, submission, native_status}`.
pub fn receipt() -> Arc<JsonObject> {
    closed(
        &[
            ("grant", grant()),
            ("submission", submission()),
            ("native_status", status()),
        ],
        &["grant", "submission", "native_status"],
    )
}

/// Output `{<key>: [item], page, has_more, next_page, snapshot: false}`.
pub fn page(key: &str, item: Value) -> Arc<JsonObject> {
    closed(
        &[
            (key, json!({"type": "array", "items": item})),
            ("page", json!({"type": "integer", "minimum": 1})),
            ("has_more", json!({"type": "boolean"})),
            (
                "next_page",
                json!({"type": ["integer", "null"], "minimum": 2,
                "description": "Page to ask next; null at the end."}),
            ),
            (
                "snapshot",
                json!({"type": "boolean", "const": false,
                "description": "Always false: each page is a fresh observation."}),
            ),
        ],
        &[key, "page", "has_more", "next_page", "snapshot"],
    )
}
