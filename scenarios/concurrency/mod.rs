//! Family 15 (spec §7.15): concurrent submissions and approvals.

pub(crate) mod in_flight;
