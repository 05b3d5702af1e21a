//! Family 4 (spec §7.4): same key and payload, changed payload, distinct keys.

files! { request_keys }
