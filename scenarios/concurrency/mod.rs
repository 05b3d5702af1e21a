//! Family 15 (spec §7.15): concurrent submissions and approvals.

files! { in_flight }
