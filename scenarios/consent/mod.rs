//! Family 18 (spec §7.16, §9): delegated consent.

files! { happy_paths, callbacks, core_rules, consented_token, parked_calls }
