//! Operations: each is one use case of the contract, composed of domain
//! rules and queries, with every state change in one transaction. Handlers
//! of both surfaces call these and only translate HTTP.
//!
//! - [`access`]: who may see or change a repository.
//! - [`agent`]: the bot's five grant routes.
//! - [`human`]: preparing, approving and withdrawing through the browser.
//! - [`issues`]: ordinary Issues, deletion and moves.
//! - [`model`]: the agent's submission request, shared with the edges.
//! - [`oauth`]: delegated consent: clients, consent, code exchange.
//! - [`setup`]: users, tokens, repositories and collaborators.

pub mod access;
pub mod agent;
pub mod edges;
pub mod human;
pub mod issues;
pub mod model;
pub mod oauth;
pub mod setup;
