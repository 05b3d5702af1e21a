//! Family 1 (spec §7.1): login, the real forms, CSRF and stale revisions.

files! { forms, refusals, csrf_matrix, real_browser }
