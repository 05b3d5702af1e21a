//! The repository grant envelope of spec §8 (seed 001): an explicit
//! authority envelope a human may attach when preparing a grant, for a future
//! bounded local Git mutation. Version 1 is parsed and validated strictly but
//! is not execution-enabled: a grant that carries one never accepts a
//! submission.
//!
//! Only the human's own `repository_grant` form field is ever read as an
//! envelope; task prose, summaries, labels and anything a bot sends never
//! are. What leaves the Core is bounded evidence: the digest and the path
//! count. The raw patterns stay in the database and on the admin's page.

use serde::Serialize;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::edges::edges;
use crate::error::AppError;

/// The one envelope version the contract defines (a JSON string).
pub const VERSION: &str = "1";
pub use super::model::MAX_COMMITS;
/// Largest envelope text, in bytes (refcore's choice, docs/contract.md):
/// far above any honest envelope, small enough to keep grants bounded.
pub const MAX_TEXT_BYTES: usize = 65_536;
/// The four members of version 1.
const MEMBERS: [&str; 4] = ["version", "allowed_paths", "commit_count", "publish"];
/// The two members of `commit_count`.
const COUNT_MEMBERS: [&str; 2] = ["min", "max"];

/// A valid envelope in canonical form: paths sorted by byte order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Envelope {
    /// The allowed path patterns, sorted by byte order, unique.
    pub allowed_paths: Vec<String>,
    /// Fewest commits.
    pub min: i64,
    /// Most commits.
    pub max: i64,
    /// The digest, computed once at parse time from the canonical form.
    pub digest: String,
}

/// The JSON object the digest covers; JCS orders the members.
#[derive(Serialize)]
struct Canonical<'a> {
    allowed_paths: &'a [String],
    commit_count: Count,
    publish: bool,
    version: &'static str,
}

#[derive(Serialize)]
struct Count {
    max: i64,
    min: i64,
}

/// An envelope as a grant stores it: canonical text, digest, path count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stored {
    /// The canonical JCS text (sorted paths).
    pub canonical: String,
    /// Lowercase hex SHA-256 of the canonical text.
    pub digest: String,
    /// How many patterns it allows.
    pub path_count: i64,
}

impl Stored {
    /// The patterns, for the admin's grant page only (and the
    /// `envelope-patterns-exposed` fault).
    pub fn patterns(&self) -> Vec<String> {
        serde_json::from_str::<Value>(&self.canonical)
            .ok()
            .and_then(|v| v.get("allowed_paths").cloned())
            .and_then(|v| serde_json::from_value(v).ok())
            .unwrap_or_default()
    }
}

fn jcs_digest(paths: &[String], min: i64, max: i64) -> (String, String) {
    let canonical = Canonical {
        allowed_paths: paths,
        commit_count: Count { max, min },
        publish: false,
        version: VERSION,
    };
    // Serialising strings, integers and a boolean cannot fail.
    let bytes = serde_json_canonicalizer::to_vec(&canonical).unwrap_or_default();
    let digest = hex::encode(Sha256::digest(&bytes));
    (String::from_utf8(bytes).unwrap_or_default(), digest)
}

impl Envelope {
    /// The form a grant stores.
    pub fn stored(&self) -> Stored {
        let (canonical, _) = jcs_digest(&self.allowed_paths, self.min, self.max);
        Stored {
            canonical,
            digest: self.digest.clone(),
            path_count: self.allowed_paths.len() as i64,
        }
    }
}

fn refuse(rule: impl Into<String>) -> AppError {
    AppError::invalid(format!("repository_grant: {}", rule.into()))
}

/// Parses the prepare form's `repository_grant` field. `None` and the empty
/// string mean no envelope; anything else must be a valid version-1
/// envelope, or a 422 naming the rule it breaks (never quoting a pattern).
pub fn parse(text: Option<&str>) -> Result<Option<Envelope>, AppError> {
    let Some(text) = text.filter(|t| !t.is_empty()) else {
        return Ok(None);
    };
    if text.len() > MAX_TEXT_BYTES {
        return Err(refuse(format!("must be at most {MAX_TEXT_BYTES} bytes")));
    }
    if text.contains('\0') {
        return Err(refuse("must not contain NUL"));
    }
    let value = strict_json(text)?;
    from_value(&value).map(Some)
}

/// Decodes JSON text, refusing a member name that appears twice in one
/// object (a plain decoder keeps the last one silently).
fn strict_json(text: &str) -> Result<Value, AppError> {
    let value: Value = serde_json::from_str(text).map_err(|_| refuse("must be one JSON object"))?;
    let mut de = serde_json::Deserializer::from_str(text);
    serde::de::Deserializer::deserialize_any(&mut de, strict::Visitor)
        .map_err(|_| refuse("a member name appears twice in one object"))?;
    Ok(value)
}

/// A visitor that walks any JSON value and fails on a repeated member name.
mod strict {
    use std::collections::BTreeSet;
    use std::fmt;

    use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess};

    /// Walks a JSON value; errors on duplicate member names.
    pub struct Visitor;

    impl<'de> DeserializeSeed<'de> for Visitor {
        type Value = ();
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
            d.deserialize_any(Visitor)
        }
    }

    impl<'de> de::Visitor<'de> for Visitor {
        type Value = ();
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("any JSON value")
        }
        fn visit_bool<E>(self, _: bool) -> Result<(), E> {
            Ok(())
        }
        fn visit_i64<E>(self, _: i64) -> Result<(), E> {
            Ok(())
        }
        fn visit_u64<E>(self, _: u64) -> Result<(), E> {
            Ok(())
        }
        fn visit_f64<E>(self, _: f64) -> Result<(), E> {
            Ok(())
        }
        fn visit_str<E>(self, _: &str) -> Result<(), E> {
            Ok(())
        }
        fn visit_unit<E>(self) -> Result<(), E> {
            Ok(())
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
            while seq.next_element_seed(Visitor)?.is_some() {}
            Ok(())
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            let mut seen = BTreeSet::new();
            while let Some(key) = map.next_key::<String>()? {
                if !seen.insert(key) {
                    return Err(de::Error::custom("duplicate member"));
                }
                map.next_value_seed(Visitor)?;
            }
            Ok(())
        }
    }
}

/// Refuses members other than `allowed` and missing ones.
fn members(object: &Map<String, Value>, allowed: &[&str], what: &str) -> Result<(), AppError> {
    if object.keys().any(|k| !edges().admits_member(allowed, k)) {
        return Err(refuse(format!(
            "{what} has an unknown member; only {} are allowed",
            allowed.join(", ")
        )));
    }
    if let Some(missing) = allowed.iter().find(|m| !object.contains_key(**m)) {
        return Err(refuse(format!("{what} must have the member {missing}")));
    }
    Ok(())
}

/// A JSON integer (its edge: [`Edges::integer`](super::edges::Edges::integer)).
fn integer(value: &Value, name: &str) -> Result<i64, AppError> {
    edges().integer(value, json_integer(value, name))
}

/// A JSON integer (not `1.5`, `1.0` or `"1"`): the honest edge of [`integer`].
pub fn json_integer(value: &Value, name: &str) -> Result<i64, AppError> {
    match value {
        Value::Number(n) if n.is_i64() || n.is_u64() => n
            .as_i64()
            .ok_or_else(|| refuse(format!("commit_count.{name} must be at most {MAX_COMMITS}"))),
        _ => Err(refuse(format!(
            "commit_count.{name} must be a JSON integer"
        ))),
    }
}

/// Validates a decoded envelope and puts it in canonical form.
pub fn from_value(value: &Value) -> Result<Envelope, AppError> {
    let object = value
        .as_object()
        .ok_or_else(|| refuse("must be one JSON object"))?;
    members(object, &MEMBERS, "the envelope")?;
    if object["version"].as_str() != Some(VERSION) {
        return Err(refuse("version must be the string \"1\""));
    }
    if !edges().publish_ok(&object["publish"]) {
        return Err(refuse(
            "publish must be false: version 1 grants local commits only",
        ));
    }
    let count = object["commit_count"]
        .as_object()
        .ok_or_else(|| refuse("commit_count must be an object {min, max}"))?;
    members(count, &COUNT_MEMBERS, "commit_count")?;
    let (min, max) = (
        integer(&count["min"], "min")?,
        integer(&count["max"], "max")?,
    );
    let ceiling = edges().max_commits();
    if min < 1 {
        return Err(refuse("commit_count.min must be at least 1"));
    }
    if max > ceiling {
        return Err(refuse(format!(
            "commit_count.max must be at most {MAX_COMMITS}"
        )));
    }
    if min > max {
        return Err(refuse("commit_count.min must not exceed commit_count.max"));
    }
    let paths = object["allowed_paths"]
        .as_array()
        .ok_or_else(|| refuse("allowed_paths must be an array of strings"))?;
    if paths.is_empty() {
        return Err(refuse("allowed_paths must not be empty"));
    }
    let mut given = Vec::with_capacity(paths.len());
    for (i, path) in paths.iter().enumerate() {
        let path = path
            .as_str()
            .ok_or_else(|| refuse(format!("allowed_paths[{i}] must be a string")))?;
        check_pattern(path).map_err(|rule| refuse(format!("allowed_paths[{i}] {rule}")))?;
        given.push(path.to_owned());
    }
    let mut sorted = given.clone();
    sorted.sort();
    if sorted.windows(2).any(|w| w[0] == w[1]) {
        return Err(refuse("allowed_paths must be unique"));
    }
    let (_, digest) = jcs_digest(edges().digest_order(&given, &sorted), min, max);
    Ok(Envelope {
        allowed_paths: sorted,
        min,
        max,
        digest,
    })
}

/// The rule a pattern breaks, if any (spec §8): an empty pattern, a leading
/// `/`, a backslash, a `.` or `..` segment, an empty segment, or a `.git`
/// segment (any letter case: on a case-insensitive file system `.GIT` is the
/// same directory). One trailing `/` marks a subtree.
pub fn check_pattern(pattern: &str) -> Result<(), &'static str> {
    if pattern.is_empty() {
        return Err("must not be empty");
    }
    if pattern.starts_with('/') {
        return Err("must be relative (no leading /)");
    }
    if pattern.contains('\\') {
        return Err("must not contain a backslash");
    }
    let body = pattern.strip_suffix('/').unwrap_or(pattern);
    for segment in body.split('/') {
        if let Some(rule) = edges().refused_segment(segment) {
            return Err(rule);
        }
        if segment.is_empty() {
            return Err("must not have an empty segment");
        }
    }
    Ok(())
}

/// Whether `pattern` (already valid) grants the repository-relative `path`:
/// an exact path grants that path; a trailing `/` grants everything below
/// that directory; `*` matches any run of characters inside one segment;
/// a segment that is exactly `**` matches any number of segments, none
/// included (elsewhere `**` is a plain `*`, as in gitignore). Nothing ever
/// grants a path with a `.git` segment. Version 1 is not execution-enabled:
/// this states what a pattern means, for the unit tests and a later version.
pub fn grants(pattern: &str, path: &str) -> bool {
    let path_segments: Vec<&str> = path.split('/').collect();
    if path.is_empty()
        || path_segments
            .iter()
            .any(|s| s.is_empty() || matches!(*s, "." | "..") || s.eq_ignore_ascii_case(".git"))
    {
        return false;
    }
    let (body, subtree) = match pattern.strip_suffix('/') {
        Some(body) => (body, true),
        None => (pattern, false),
    };
    let pattern_segments: Vec<&str> = body.split('/').collect();
    if subtree {
        // The directory itself is not a file to commit: at least one more segment.
        (1..path_segments.len()).any(|n| match_segments(&pattern_segments, &path_segments[..n]))
    } else {
        match_segments(&pattern_segments, &path_segments)
    }
}

fn match_segments(pattern: &[&str], path: &[&str]) -> bool {
    match pattern.split_first() {
        None => path.is_empty(),
        Some((&"**", rest)) => (0..=path.len()).any(|skip| match_segments(rest, &path[skip..])),
        Some((first, rest)) => match path.split_first() {
            Some((segment, path_rest)) => {
                match_one(first.as_bytes(), segment.as_bytes()) && match_segments(rest, path_rest)
            }
            None => false,
        },
    }
}

/// `*` (or any run of them) matches any bytes of one segment.
fn match_one(pattern: &[u8], text: &[u8]) -> bool {
    match pattern.split_first() {
        None => text.is_empty(),
        Some((b'*', rest)) => (0..=text.len()).any(|skip| match_one(rest, &text[skip..])),
        Some((c, rest)) => text.first() == Some(c) && match_one(rest, &text[1..]),
    }
}

#[cfg(test)]
mod tests;
