//! Family 10 (spec §7.10): the adapter holds only its own token.

files! { own_token_only }
