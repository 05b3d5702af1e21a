//! Family 13 (spec §7.13): session cookies, logout, tokens, text limits.

pub(crate) mod cookies_and_tokens;
pub(crate) mod submission_limits;
