//! refcore: the reference Core of the agent work grant contract
//! (`docs/spec.md` §1–§5) on SQLite and
//! PostgreSQL.
//!
//! A tour, from the outside in:
//! - [`config`]: the `CORE_*` environment; [`server`]: start-up and stop.
//! - [`app`]: the router; [`api`] (JSON) and [`web`] (HTML) hold thin
//!   handlers; [`extract`] decodes requests strictly; [`auth`] says who calls.
//! - [`service`]: one function per use case, one transaction per change.
//! - [`domain`]: the contract's rules, shared by both backends.
//! - [`db`]: every SQL statement, over the sqlx `Any` driver.
//! - [`error`]: how failures become 4xx/5xx answers without leaking internals.
//! - [`faults`]: the built-in faults of the harness's self-test (feature `faults`).
//! - [`variants`]: its honest variants, refcore's output changed only where
//!   the contract leaves room (feature `faults`).
//! - [`hostile`]: Cores broken badly on purpose, for the harness's
//!   self-test of its own bounds (feature `faults`).

pub mod api;
pub mod app;
pub mod auth;
pub mod config;
pub mod db;
pub mod domain;
pub mod error;
pub mod extract;
pub mod faults;
pub mod hostile;
pub mod server;
pub mod service;
pub mod state;
pub mod variants;
pub mod web;

pub use config::Config;
pub use server::run;
