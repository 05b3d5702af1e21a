//! Family 18 (spec §7.16, §9): delegated consent.

pub(crate) mod callbacks;
pub(crate) mod consented_token;
pub(crate) mod core_rules;
pub(crate) mod happy_paths;
