//! Family 19: every grammar of the contract (spec §2, §3, §6), generated
//! valid and invalid classes on every surface that accepts the value.

pub(crate) mod credentials;
pub(crate) mod envelope;
pub(crate) mod identifiers;
pub(crate) mod json;
pub(crate) mod native_segments;
pub(crate) mod oauth;
pub(crate) mod text;
pub(crate) mod token;
