//! What a scenario records and asserts: named steps, observations for
//! backend parity, and the checks whose failure ends it as failed.

use serde_json::Value;

use super::stack::Ctx;
use crate::actors::bot::ToolReply;
use crate::journal::json_text;
use crate::vocab::{Abort, Step};

impl Ctx {
    /// Starts a named step; what follows is reported under it.
    pub fn step(&self, name: &str) {
        self.journal.step(name);
    }

    /// Registers a value the scenario made up as a secret (e.g. a fake
    /// credential planted in a faulted answer), so no report shows it even
    /// if a Core or adapter leaks it.
    pub fn register_secret(&self, value: &str) {
        self.journal.secrets().register(value);
    }

    /// Records an observable result for the backend-parity check: a trial
    /// of a parity scenario must observe the same values, in the same order,
    /// on every backend. Observe only what the contract makes deterministic
    /// (states, texts, statuses, ids of a fresh stack), never timestamps,
    /// ports or random keys.
    ///
    /// Values pass through [`stable`] first, so timestamps, origins and
    /// random keys inside a grant or submission do not need picking out.
    pub fn observe<T: serde::Serialize>(&self, key: &str, value: &T) {
        let json = serde_json::to_value(value)
            .map(stable)
            .and_then(|v| serde_json_canonicalizer::to_string(&v))
            .unwrap_or_else(|e| format!("unserialisable observation: {e}"));
        self.journal.observe(key, json);
    }

    /// Checks that `actual == expected`; a mismatch ends the scenario as
    /// failed. Values are recorded as JSON, the contract's own notation
    /// (`null`, `{"grant_id": 1}`), in which invisible characters (`\r`,
    /// trailing spaces inside quotes) still show.
    pub fn expect_eq<T: PartialEq + serde::Serialize>(
        &self,
        what: &str,
        actual: T,
        expected: T,
    ) -> Step<()> {
        let passed = actual == expected;
        let (a, e) = (json_text(&actual), json_text(&expected));
        self.journal.assertion(what, &e, &a, passed);
        if passed {
            Ok(())
        } else {
            Err(Abort::failed(self.journal.secrets().redact(&format!(
                "{what}: expected {}, got {}",
                crate::journal::truncate(&e),
                crate::journal::truncate(&a)
            ))))
        }
    }

    /// Checks a condition; `detail` says what was seen.
    pub fn expect(&self, what: &str, condition: bool, detail: &str) -> Step<()> {
        self.journal.assertion(what, "true", detail, condition);
        if condition {
            Ok(())
        } else {
            Err(Abort::failed(
                self.journal.secrets().redact(&format!("{what}: {detail}")),
            ))
        }
    }

    /// Checks an HTTP status.
    pub fn expect_status(&self, what: &str, actual: u16, expected: u16) -> Step<()> {
        self.expect_eq(what, actual, expected)
    }

    /// Checks that a tool call succeeded and returns its structured content.
    pub fn expect_tool_ok(&self, what: &str, reply: &ToolReply) -> Step<Value> {
        let ok = !reply.is_error && reply.structured.is_some();
        let detail = if ok {
            "success with structured content".to_owned()
        } else {
            format!("isError={} text={}", reply.is_error, reply.text)
        };
        self.expect(what, ok, &detail)?;
        Ok(reply.structured.clone().unwrap_or(Value::Null))
    }

    /// Checks that a tool call failed with `code`.
    pub fn expect_tool_error(&self, what: &str, reply: &ToolReply, code: &str) -> Step<()> {
        self.expect_eq(
            what,
            (reply.is_error, reply.error_code()),
            (true, Some(code)),
        )
    }
}

/// Makes a JSON value comparable across stacks: every `*_at` timestamp
/// becomes `"<timestamp>"`, every absolute `http://host:port` origin in a
/// string is cut to its path, and every UUID becomes `"<uuid>"`. What is left
/// (states, texts, ids of a fresh stack, statuses) must agree across backends.
pub fn stable(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| {
                    let v = if k.ends_with("_at") && v.is_string() {
                        Value::String("<timestamp>".into())
                    } else {
                        stable(v)
                    };
                    (k, v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(stable).collect()),
        Value::String(s) => {
            if uuid::Uuid::parse_str(&s).is_ok() && s.len() == 36 {
                Value::String("<uuid>".into())
            } else if let Some(rest) = s.strip_prefix("http://") {
                Value::String(
                    rest.find('/')
                        .map(|i| rest[i..].to_owned())
                        .unwrap_or_default(),
                )
            } else {
                Value::String(s)
            }
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn stable_values_drop_what_differs_between_stacks_and_keep_the_rest() {
        let v = json!({
            "state": "active",
            "created_at": "2026-01-01T00:00:00Z",
            "approved_at": null,
            "issue": {"id": 3, "html_url": "http://127.0.0.1:41234/alice/lab/issues/1"},
            "request_key": "9b2f0c1e-4a6b-4c8d-9e0f-1a2b3c4d5e6f",
            "body": "text http://example.test/x stays a path",
        });
        assert_eq!(
            stable(v),
            json!({
                "state": "active",
                "created_at": "<timestamp>",
                "approved_at": null,
                "issue": {"id": 3, "html_url": "/alice/lab/issues/1"},
                "request_key": "<uuid>",
                "body": "text http://example.test/x stays a path",
            })
        );
    }
}
