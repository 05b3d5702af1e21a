//! Everything a scenario may use, and nothing more: the context, the actors,
//! the typed views of the contract, the fault proxy, and the `#[scenario]`
//! attribute. The catalogue (`scenarios/`) imports this prelude only, never
//! an engine module, so the engine can change underneath it.
//!
//! A scenario, in full:
//!
//! ```ignore
//! use grantgate_engine::prelude::*;
//!
//! /// Preparing is not approval: a bot's submission waits for the human.
//! #[scenario(Authority, parity)]
//! async fn submit_waits_for_approval(ctx: &mut Ctx) -> Outcome {
//!     let alice = ctx.human("alice")?;
//!     alice.login().await?;
//!     let bot = ctx.bot("lab-bot").await?;
//!     let grant = alice.prepare_grant("alice/lab", bot.login(), "task", "summary").await?;
//!     ...
//! }
//! ```

/// MCP messages written by hand, for a transport's own rules.
pub use crate::actors::bot::{initialize, rpc_message};
pub use crate::actors::{
    Answer, Bot, ConsentRedirect, ConsentToken, ConsentUrl, Elicitation, Form, Human, Links,
    NativeClient, Page, PendingCall, SetupClient, TokenPost, ToolReply,
};
pub use crate::core_api::{self, Decision, fields, oauth};
pub use crate::ctx::{BotBuilder, BotToken, Consent, Credentials, Ctx, Tokens, basic};
pub use crate::family::Family;
pub use crate::journal::json_text;
pub use crate::proxy::{Canned, CapturedRequest, Fault, FaultProxy};
pub use crate::runner::catalogue::Scenario;
/// What `#[scenario]` expands to: its registration in the catalogue's
/// distributed slice. Not for scenarios to name.
#[doc(hidden)]
pub mod __registry {
    pub use crate::runner::registry::{Registration, SCENARIOS, linkme};
}
pub use crate::stack::Backend;
pub use crate::views::{
    EnvelopeEvidence, ErrorBody, Grant, GrantListPage, GrantMarker, GrantRef, Issue, IssueRef,
    NewIssue, Proposal, Receipt, RepoRef, Repository, Submitted, UserRef, envelope_digest,
    expected_digest, rfc3339, state,
};
pub use crate::vocab::{Abort, Outcome, SEED_ENV, SEED_OBSERVATION, Step};
/// Runs several futures at once and waits for all (concurrency scenarios).
pub use futures::future::join_all;
pub use grantgate_macros::scenario;
pub use serde::Serialize;
pub use serde_json::{Value, json};
/// A timestamp, as [`rfc3339`] reads it.
pub use time::OffsetDateTime;
pub use time::format_description::well_known::Rfc3339;
/// Waits without blocking the runtime (e.g. to let a token age past its lifetime).
pub use tokio::time::sleep;
/// An absolute URL (consent URLs, callbacks).
pub use url::Url;
