//! Family 14 (spec §7.14): the adapter's whole input rule.

pub(crate) mod input_rule;
pub(crate) mod tools;
