//! Family 16 (spec §7.16, §10): exact replay.

files! { identical, access, replay_checks }
