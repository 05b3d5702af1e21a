//! Family 5 (spec §7.5): deleted and moved Issues.

pub(crate) mod deleted_and_moved;
