//! Family 3 (spec §7.3): confirm, approve, submit, read back.

pub(crate) mod confirm_and_submit;
pub(crate) mod issue_bodies;
