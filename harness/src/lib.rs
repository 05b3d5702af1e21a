//! grantgate: the end-to-end acceptance harness for agent-work-grant Cores.
//!
//! A tour, in the order a run uses the pieces:
//!
//! - [`config`] turns the command line into a [`config::RunConfig`];
//!   [`binaries`] finds (or has cargo build) the Core and adapter.
//! - [`runner`] discovers trials (`backend::scenario`) from the catalogue in
//!   `scenarios/` ([`scenarios`]), runs each on a fresh [`stack`] (a Core
//!   process plus its own database; [`postgres`] is the run's ephemeral
//!   cluster), and emits typed [`runner::events`].
//! - A scenario sees only its [`ctx::Ctx`]: [`actors`] (humans with browsers,
//!   bots with their own `awg-mcp`, the setup client holding the admin
//!   credential), the [`proxy`] for faults, and assertions recorded in the
//!   [`journal`].
//! - [`fixtures`] are the TOML worlds scenarios start from.
//! - [`report`] renders the finished [`report::model::RunReport`] (JUnit,
//!   JSON, HTML, manifest); [`secrets`] redacts every writer and scans the
//!   result; [`progress`] prints events to the terminal.
//! - [`selftest`] runs the catalogue against every built-in fault of
//!   `refcore`/`awg-mcp` and writes the kill matrix.
//! - [`error`] is the engine's error: the harness broke, not the Core.

#![warn(missing_docs)]

pub mod actors;
pub mod binaries;
pub mod child;
pub mod config;
pub mod ctx;
pub mod error;
pub mod fixtures;
pub mod journal;
pub mod postgres;
pub mod progress;
pub mod proxy;
pub mod report;
pub mod runner;
pub mod secrets;
pub mod selftest;
pub mod stack;

/// The acceptance catalogue, kept in the top-level `scenarios/` folder so
/// that auditors read it on its own.
#[path = "../../scenarios/mod.rs"]
pub mod scenarios;
