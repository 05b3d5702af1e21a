//! Family 12 (spec §7.12): preparing and confirming are not approval; only admins decide.

pub(crate) mod approval;
pub(crate) mod browser_matrix;
pub(crate) mod callers;
pub(crate) mod native_matrix;
pub(crate) mod other_repository;
pub(crate) mod setup_matrix;
