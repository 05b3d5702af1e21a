//! The scenario context: what a scenario sees of its stack. Actors by name
//! (`ctx.human("alice")`, `ctx.bot("lab-bot")`), the setup client, the fault
//! proxy, named steps and assertions. The plumbing (URLs, credentials,
//! processes) stays in here, out of the scenario's sight.
//!
//! One file per facet of the context, each an `impl Ctx` of its own:
//! `stack.rs` (the context, its stack, the clock), `humans.rs`, `bots.rs`
//! (their adapters and native clients), `credentials.rs` (tokens and
//! `Authorization` values, behind `ctx.tokens()`), `consent.rs` (the fault
//! proxy, and spec §9 behind `ctx.consent()`), and `checks.rs` (steps,
//! observations, assertions).

mod bots;
mod checks;
mod consent;
mod credentials;
mod humans;
mod stack;

pub use bots::BotBuilder;
pub use checks::stable;
pub use consent::Consent;
pub use credentials::{BotToken, Credentials, Tokens, basic};
pub use stack::Ctx;
