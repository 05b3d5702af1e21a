//! Family 6 (spec §7.6): withdrawal in every state.

pub(crate) mod in_every_state;
