//! `awg-mcp`: the thin MCP adapter for agent work grants.
//!
//! It holds no authority of its own. It forwards one bot's tool calls to one
//! fixed Core origin and refuses everything else before any upstream request.
//!
//! A tour:
//! - [`config`]: command line, environment, the fixed Core origin, credentials.
//! - [`server`]: the rmcp `ServerHandler` (hand-written `tools/list` and `tools/call`).
//! - [`http`]: the Streamable HTTP transport at `/mcp` and its guards.
//! - [`tools`]: the nine tools, one file per family.
//! - [`validate`] and [`schema`]: the strict input rules and the JSON Schemas that state them.
//! - [`upstream`]: the one-request-per-call HTTP client and status mapping.
//! - [`check`] and [`pagination`]: consistency of native answers and list continuation.
//! - [`consent`]: consent mode (spec §9): park, authorize URL, callback, token per session.
//! - [`error`]: configuration errors and the bounded tool error.
//! - `edges`: the points of those rules a fault may bend, each defaulting to the contract.
//! - `model`: the credential, operation, refusal reason and bounds that the rules and `edges` share.
//! - [`faults`]: the built-in faults of the harness's self-test (feature `faults`).

pub mod check;
pub mod config;
pub mod consent;
mod edges;
pub mod error;
pub mod faults;
pub mod http;
mod model;
pub mod pagination;
pub mod schema;
pub mod server;
pub mod tools;
pub mod upstream;
pub mod validate;

pub use config::{Cli, Config, Transport};
pub use error::{ConfigError, ErrorCode, ToolError};
pub use server::AdapterServer;
