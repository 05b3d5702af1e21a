//! Family 7 (spec §7.7): wrong bot, missing scope, ordinary activity, independence.

pub(crate) mod separation;
pub(crate) mod wrong_bot_and_scope;
