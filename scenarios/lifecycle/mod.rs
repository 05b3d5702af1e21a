//! Family 3 (spec §7.3): confirm, approve, submit, read back.

files! { confirm_and_submit, issue_bodies, issue_text }
