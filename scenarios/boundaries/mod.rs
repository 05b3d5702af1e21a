//! Family 7 (spec §7.7): wrong bot, missing scope, ordinary activity, independence.

files! { wrong_bot_and_scope, separation }
