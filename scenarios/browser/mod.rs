//! Family 1 (spec §7.1): login, the real forms, CSRF and stale revisions.

pub(crate) mod csrf_matrix;
pub(crate) mod forms;
pub(crate) mod real_browser;
pub(crate) mod refusals;
