//! The contract's rules, free of HTTP and SQL so both backends and both
//! surfaces (API and browser) share one definition.
//!
//! - [`edges`]: the points where a rule's answer is decided, honest by default.
//! - [`digest`]: the RFC 8785 proposal digest.
//! - [`envelope`]: the repository grant envelope of spec §8 (parsed, not execution-enabled).
//! - [`grant`]: grant states, transitions and the grant JSON.
//! - [`submission`]: receipts and their read-time status.
//! - [`scopes`]: Forgejo token scopes and their implication.
//! - [`permission`]: repository permission levels.
//! - [`validate`]: text, name and request-key rules.
//! - [`json`]: the shared JSON shapes of users, repositories and issues.
//! - [`model`]: a grant's state and the contract's fixed values, shared by the rules and their edges.
//! - [`oauth`]: delegated consent (spec §9): authorization requests, PKCE, codes.

pub mod digest;
pub mod edges;
pub mod envelope;
pub mod grant;
pub mod json;
pub mod model;
pub mod oauth;
pub mod permission;
pub mod scopes;
pub mod submission;
pub mod validate;
