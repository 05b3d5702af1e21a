//! Repository grant envelopes (spec §8) as a human types them into the
//! new-grant form.

use grantgate_engine::prelude::*;

/// A version-1 envelope allowing `paths` with `min..=max` commits.
pub(crate) fn envelope(paths: &[&str], min: i64, max: i64) -> Value {
    json!({"version": "1", "allowed_paths": paths,
           "commit_count": {"min": min, "max": max}, "publish": false})
}

/// An envelope as a human types it into the form: JSON text.
pub(crate) fn typed(envelope: &Value) -> String {
    envelope.to_string()
}
