//! Family 6 (spec §7.6): withdrawal in every state.

files! { in_every_state }
