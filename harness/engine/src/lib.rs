//! grantgate: the end-to-end acceptance harness for agent-work-grant Cores.
//!
//! A tour, in the order a run uses the pieces:
//!
//! - [`config`] turns the command line into a [`config::RunConfig`];
//!   [`binaries`] finds (or has cargo build) the Core and adapter.
//! - [`runner`] turns the catalogue it is given (the `grantgate-scenarios`
//!   crate, in `scenarios/`) into trials (`backend::scenario`), runs each on
//!   a fresh [`stack`] (a Core process plus its own database; [`postgres`] is
//!   the run's ephemeral cluster), and emits typed [`runner::events`].
//! - A scenario sees only the [`prelude`]: its [`ctx::Ctx`], the [`actors`]
//!   (humans with browsers, bots with their own `awg-mcp`, the setup client
//!   holding the admin credential), the typed [`views`] of the contract, the
//!   [`proxy`] for faults, and assertions recorded in the [`journal`].
//!   [`core_api`] is the one module that knows the Core's routes, bodies and
//!   form names; [`family`] names the catalogue's families.
//! - [`vocab`] is the vocabulary everything speaks (verdicts, steps,
//!   exchanges): a leaf, so the engine has no import cycle.
//! - [`fixtures`] are the TOML worlds scenarios start from.
//! - [`baseline`] judges a run's failures against a file of known ones
//!   (`--expected-failures`): waived, regressions, stale or expired entries.
//! - [`report`] renders the finished [`report::model::RunReport`] (JUnit,
//!   JSON, HTML, manifest); [`secrets`] redacts every writer and scans the
//!   result; [`progress`] prints events to the terminal.
//! - [`selftest`] runs the catalogue against every built-in fault of
//!   `refcore`/`awg-mcp` and writes the kill matrix.
//! - [`error`] is the engine's error: the harness broke, not the Core.
//! - [`limits`] names every bound on what is read from a Core (body, head,
//!   JSON and HTML depth, line length, report values).
//! - [`lifeline`] ties every child to the harness (they die with it, even
//!   after SIGKILL); [`sweep`] removes what dead runs left before a run.

#![warn(missing_docs)]

pub mod actors;
pub mod attest;
pub mod baseline;
pub mod binaries;
pub mod browser;
pub mod child;
mod chromium;
pub mod clauses;
pub mod config;
pub mod core_api;
pub mod ctx;
pub mod error;
pub mod family;
pub mod fixtures;
pub mod journal;
pub mod lifeline;
pub mod limits;
pub mod ports;
pub mod postgres;
pub mod prelude;
pub mod progress;
pub mod proxy;
pub mod report;
pub mod runner;
pub mod secrets;
pub mod selftest;
pub mod stack;
pub mod sweep;
pub mod views;
pub mod vocab;
