//! Family 10 (spec §7.10): the adapter holds only its own token.

pub(crate) mod own_token_only;
