//! Family 19: every grammar of the contract (spec §2, §3, §6), generated
//! valid and invalid classes on every surface that accepts the value.

files! { identifiers, text, credentials, oauth, token, envelope, native_segments, json, oauth_clients }
