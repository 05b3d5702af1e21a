//! Family 9 (spec §7.9): faults between adapter and Core.

pub(crate) mod error_answers;
pub(crate) mod success_answers;
pub(crate) mod transport;
