//! Family 12 (spec §7.12): preparing and confirming are not approval; only admins decide.

files! { approval, native_matrix, setup_matrix, browser_matrix, other_repository, callers }
