//! Family 13 (spec §7.13): session cookies, logout, tokens, text limits.

files! { cookies_and_tokens, submission_limits }
