//! Family 16 (spec §7.16, §10): exact replay.

pub(crate) mod access;
pub(crate) mod identical;
